package wlog

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
)

// ReplayStats says what Replay found.
type ReplayStats struct {
	Segments int   // segment files read
	Records  int   // intact records yielded
	Bytes    int64 // bytes of those segments kept
	// TornBytes were cut from the tail of the last segment (a write in
	// flight at a crash, never acknowledged); TornRecords counts intact
	// records among them (the rest of the same unacknowledged group).
	TornBytes   int64
	TornRecords int
}

// Replay yields every intact record in log order to fn (which may keep
// rec.Payload), then readies the log for Append. A torn tail of the last
// segment — a partial record, or a bad one followed only by records of
// the same write group, which therefore never was acknowledged — is cut
// off and the loss logged. Damage anywhere else stops Replay with a
// *CorruptError naming the segment and offset. An error of fn stops
// Replay and is returned. Replay runs once per Open.
func (l *Log) Replay(ctx context.Context, fn func(rec Record) error) (ReplayStats, error) {
	var st ReplayStats
	l.mu.Lock()
	switch {
	case l.closed:
		l.mu.Unlock()
		return st, ErrClosed
	case l.replayed:
		l.mu.Unlock()
		return st, errors.New("wlog: Replay runs once per Open")
	}
	segs := append([]*segment(nil), l.segs...)
	l.mu.Unlock()
	for i, s := range segs {
		if err := ctx.Err(); err != nil {
			return st, err
		}
		if err := l.replaySegment(ctx, s, i == len(segs)-1, fn, &st); err != nil {
			return st, err
		}
	}
	l.mu.Lock()
	l.replayed = true
	l.mu.Unlock()
	// Segments left empty (a torn tail, an unused roll) go now.
	return st, l.collect()
}

func (l *Log) replaySegment(ctx context.Context, s *segment, last bool, fn func(Record) error, st *ReplayStats) error {
	f, err := l.fs.OpenFile(s.path, os.O_RDONLY, 0)
	if err != nil {
		return fmt.Errorf("wlog: cannot open %s: %w", s.path, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return fmt.Errorf("wlog: cannot stat %s: %w", s.path, err)
	}
	size := fi.Size()
	st.Segments++
	hdr := make([]byte, segHeaderSize)
	k, _ := f.ReadAt(hdr, 0)
	if torn, err := checkSegHeader(hdr[:k], s.n); err != nil {
		if torn && last {
			// A crash while the segment was being created: nothing in
			// it was ever acknowledged.
			l.log.Warn("wlog: removing a segment whose header was never completed", "segment", s.path, "bytes", size)
			st.TornBytes += size
			return l.cut(s, 0)
		}
		return &CorruptError{Segment: s.path, Offset: 0, Reason: err.Error()}
	}
	off := int64(segHeaderSize)
	head := make([]byte, recHeaderSize)
	for off < size {
		rec, n, why := readRecord(f, off, size, head)
		if why != "" {
			return l.bad(f, s, off, size, last, why, st)
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if fn != nil {
			if err := fn(rec); err != nil {
				return err
			}
		}
		l.mu.Lock()
		s.seqs[rec.Sandbox] = append(s.seqs[rec.Sandbox], rec.Seq)
		l.last[rec.Sandbox] = max(l.last[rec.Sandbox], rec.Seq)
		l.mu.Unlock()
		st.Records++
		off += n
	}
	s.size = off
	st.Bytes += off
	return nil
}

// readRecord reads the record at off, or says why there is none.
func readRecord(f io.ReaderAt, off, size int64, head []byte) (Record, int64, string) {
	k, _ := f.ReadAt(head, off)
	h, err := parseHeader(head[:k])
	if err != nil {
		return Record{}, 0, err.Error()
	}
	n := h.size()
	if off+n > size {
		return Record{}, 0, fmt.Sprintf("partial record (%d of %d bytes)", size-off, n)
	}
	b := make([]byte, n)
	if k, err := f.ReadAt(b, off); int64(k) != n {
		return Record{}, 0, fmt.Sprintf("short read: %v", err)
	}
	rec, err := parseRecord(h, b)
	if err != nil {
		return Record{}, 0, err.Error()
	}
	return rec, n, ""
}

// bad decides whether a bad record at off is a torn tail (cut it) or
// corruption (an error). In the last segment it is torn when every intact
// record after it belongs to a write group that began at or before off:
// that group was in flight at the crash, so none of it was acknowledged.
// An intact record of a later group means the group holding off was
// fsynced, and its damage is real.
func (l *Log) bad(f File, s *segment, off, size int64, last bool, why string, st *ReplayStats) error {
	if !last {
		return &CorruptError{Segment: s.path, Offset: off, Reason: why}
	}
	rest := make([]byte, size-off)
	if k, err := f.ReadAt(rest, off); int64(k) != size-off {
		return fmt.Errorf("wlog: cannot read %s: %w", s.path, err)
	}
	intact := 0
	head := make([]byte, recHeaderSize)
	for i := 1; i < len(rest); {
		j := bytes.Index(rest[i:], []byte(recMagic))
		if j < 0 {
			break
		}
		p := off + int64(i+j)
		rec, n, bad := readRecord(f, p, size, head)
		if bad != "" {
			i += j + 1
			continue
		}
		if h, _ := parseHeader(rest[i+j:]); h.batch > off {
			return &CorruptError{Segment: s.path, Offset: off,
				Reason: fmt.Sprintf("%s, and a later write group follows at offset %d (%s/%d)", why, p, rec.Sandbox, rec.Seq)}
		}
		intact++
		i += j + int(n)
	}
	l.log.Warn("wlog: cutting a torn tail (a write in flight at a crash, never acknowledged)",
		"segment", s.path, "offset", off, "bytes", size-off, "reason", why, "intact_records_dropped", intact)
	st.TornBytes += size - off
	st.TornRecords += intact
	st.Bytes += off
	return l.cut(s, off)
}

// cut truncates s to size durably.
func (l *Log) cut(s *segment, size int64) error {
	f, err := l.fs.OpenFile(s.path, os.O_WRONLY, 0)
	if err != nil {
		return fmt.Errorf("wlog: cannot open %s to cut its torn tail: %w", s.path, err)
	}
	defer f.Close()
	if err := f.Truncate(size); err != nil {
		return fmt.Errorf("wlog: cannot cut the torn tail of %s: %w", s.path, err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("wlog: cannot fsync %s: %w", s.path, err)
	}
	s.size = size
	return nil
}
