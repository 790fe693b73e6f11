package wlog

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sync"

	"golang.org/x/sys/unix"
)

// Options configure a Log. The zero value is usable.
type Options struct {
	// SegmentBytes is the size at which the active segment is closed
	// and a new one started (default 64 MiB). A segment is deleted only
	// whole, so smaller segments free disk sooner after a Trim.
	SegmentBytes int64
	// MaxPayload bounds one record's payload (default 64 MiB); larger
	// appends fail with ErrTooLarge.
	MaxPayload int
	// Logger receives the loss reports of Replay and Abandon (default
	// slog.Default()).
	Logger *slog.Logger
	// FS is the file system (default OSFS).
	FS FS
}

const (
	defaultSegmentBytes = 64 << 20
	defaultMaxPayload   = 64 << 20
)

var (
	// ErrBroken is wrapped by every Append error after a write or fsync
	// of the log failed.
	ErrBroken = errors.New("wlog: the log is broken by a failed write or fsync (reopen it)")
	// ErrClosed is returned by calls after Close.
	ErrClosed = errors.New("wlog: the log is closed")
	// ErrNotReplayed is returned by Append before Replay.
	ErrNotReplayed = errors.New("wlog: Append before Replay")
	// ErrTooLarge is wrapped by an Append whose payload exceeds
	// Options.MaxPayload.
	ErrTooLarge = errors.New("wlog: record too large")
	// ErrSequence is wrapped by an Append whose sequence number is not
	// above the sandbox's last one.
	ErrSequence = errors.New("wlog: sequence number out of order")
)

// CorruptError is a record that is damaged where a torn write cannot
// explain it (not at the tail of the last segment). Replay stops there.
type CorruptError struct {
	Segment string // the segment file's path
	Offset  int64  // where the bad record starts
	Reason  string
}

func (e *CorruptError) Error() string {
	return fmt.Sprintf("wlog: segment %s is corrupt at offset %d: %s", e.Segment, e.Offset, e.Reason)
}

// Log is an open write log. Its methods are safe for concurrent use.
type Log struct {
	dir  string
	opts Options
	fs   FS
	lock *os.File
	log  *slog.Logger

	mu       sync.Mutex
	wake     *sync.Cond // the flusher waits on it for work
	queue    []*request
	replayed bool
	closed   bool
	broken   error
	segs     []*segment // ascending; the last is active once appending started
	active   *segment
	nextSeg  uint64
	last     map[string]uint64 // last sequence number per sandbox
	trim     map[string]uint64 // obsolete up to (inclusive) per sandbox
	stats    Stats

	file  File // the active segment, touched by the flusher only
	flush chan struct{}
}

// segment is one segment file's accounting.
type segment struct {
	n    uint64
	path string
	size int64
	seqs map[string][]uint64 // per sandbox, ascending
}

// live counts the records of s not yet obsolete under trim.
func (s *segment) live(trim map[string]uint64) int {
	n := 0
	for sb, seqs := range s.seqs {
		t, ok := trim[sb]
		if !ok {
			n += len(seqs)
			continue
		}
		i, _ := slices.BinarySearch(seqs, t+1)
		n += len(seqs) - i
	}
	return n
}

type request struct {
	rec  Record
	done chan error
}

// Stats are counters of a Log, for /metrics.
type Stats struct {
	Appends   int64 // records acknowledged
	Syncs     int64 // fsyncs of record data (Appends/Syncs is the group size)
	Bytes     int64 // record bytes written
	Segments  int   // segment files now
	Deleted   int64 // segments deleted after Trim or Abandon
	Abandoned int64 // records dropped by Abandon
}

// Open opens (creating it if needed) the write log in dir. Call Replay
// before Append.
func Open(dir string, opts Options) (*Log, error) {
	if opts.SegmentBytes <= 0 {
		opts.SegmentBytes = defaultSegmentBytes
	}
	if opts.MaxPayload <= 0 {
		opts.MaxPayload = defaultMaxPayload
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.FS == nil {
		opts.FS = OSFS{}
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("wlog: cannot create %s: %w", dir, err)
	}
	lock, err := os.OpenFile(filepath.Join(dir, "LOCK"), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("wlog: cannot open the lock of %s: %w", dir, err)
	}
	if err := unix.Flock(int(lock.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		lock.Close()
		return nil, fmt.Errorf("wlog: %s is in use by another process: %w", dir, err)
	}
	l := &Log{dir: dir, opts: opts, fs: opts.FS, lock: lock, log: opts.Logger,
		last: map[string]uint64{}, trim: map[string]uint64{}, flush: make(chan struct{})}
	l.wake = sync.NewCond(&l.mu)
	ents, err := l.fs.ReadDir(dir)
	if err != nil {
		lock.Close()
		return nil, fmt.Errorf("wlog: cannot list %s: %w", dir, err)
	}
	for _, e := range ents {
		if n, ok := parseSegName(e.Name()); ok && e.Type().IsRegular() {
			l.segs = append(l.segs, &segment{n: n, path: filepath.Join(dir, e.Name()), seqs: map[string][]uint64{}})
			l.nextSeg = max(l.nextSeg, n+1)
		}
	}
	slices.SortFunc(l.segs, func(a, b *segment) int { return cmpU64(a.n, b.n) })
	go l.flusher()
	return l, nil
}

func cmpU64(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// Append writes rec and returns once it is fsynced (nil) or will never be
// acknowledged (an error). Appends of one sandbox must carry strictly
// increasing sequence numbers. rec.Payload must not change until Append
// returns. If ctx ends first, Append returns its error; the record may
// still reach the log (an unacknowledged write Replay will yield).
func (l *Log) Append(ctx context.Context, rec Record) error {
	switch {
	case rec.Sandbox == "" || len(rec.Sandbox) > MaxSandboxID:
		return fmt.Errorf("wlog: sandbox id of %d bytes (want 1 to %d)", len(rec.Sandbox), MaxSandboxID)
	case len(rec.Payload) > l.opts.MaxPayload:
		return fmt.Errorf("%w: payload of %d bytes for sandbox %s exceeds %d", ErrTooLarge, len(rec.Payload), rec.Sandbox, l.opts.MaxPayload)
	}
	req := &request{rec: rec, done: make(chan error, 1)}
	l.mu.Lock()
	switch {
	case l.closed:
		l.mu.Unlock()
		return ErrClosed
	case !l.replayed:
		l.mu.Unlock()
		return ErrNotReplayed
	case l.broken != nil:
		err := l.broken
		l.mu.Unlock()
		return err
	}
	if prev, ok := l.last[rec.Sandbox]; ok && rec.Seq <= prev {
		l.mu.Unlock()
		return fmt.Errorf("%w: sandbox %s: %d after %d", ErrSequence, rec.Sandbox, rec.Seq, prev)
	}
	l.last[rec.Sandbox] = rec.Seq
	l.queue = append(l.queue, req)
	l.wake.Signal()
	l.mu.Unlock()
	select {
	case err := <-req.done:
		return err
	case <-ctx.Done():
		return fmt.Errorf("wlog: append of %s/%d not acknowledged: %w", rec.Sandbox, rec.Seq, ctx.Err())
	}
}

// flusher writes the queued records in groups: one write and one fsync
// per group, so appenders that arrive during an fsync share the next one.
func (l *Log) flusher() {
	defer close(l.flush)
	var buf []byte
	for {
		l.mu.Lock()
		for len(l.queue) == 0 && !l.closed {
			l.wake.Wait()
		}
		if len(l.queue) == 0 {
			l.mu.Unlock()
			return
		}
		group := l.queue
		l.queue = nil
		err := l.broken
		l.mu.Unlock()
		var rolled bool
		if err == nil {
			rolled, err = l.write(group, &buf)
		}
		for _, r := range group {
			r.done <- err
		}
		if cap(buf) > 4<<20 {
			buf = nil // one large group must not pin its buffer for good
		}
		if rolled {
			if err := l.collect(); err != nil {
				l.log.Error("wlog: cannot delete obsolete segments", "err", err)
			}
		}
	}
}

// write appends one group to the active segment (starting a new one
// when it is full) and fsyncs it.
func (l *Log) write(group []*request, buf *[]byte) (rolled bool, err error) {
	l.mu.Lock()
	full := l.active == nil || l.active.size >= l.opts.SegmentBytes
	l.mu.Unlock()
	if full {
		if err := l.roll(); err != nil {
			return false, l.breakLog(err)
		}
		rolled = true
	}
	s := l.active
	start := s.size // only the flusher changes it
	b := (*buf)[:0]
	for _, r := range group {
		b = appendRecord(b, &r.rec, start)
	}
	*buf = b
	n, err := l.file.Write(b)
	if err == nil && n != len(b) {
		err = io.ErrShortWrite
	}
	if err == nil {
		err = l.file.Sync()
		if err != nil {
			err = fmt.Errorf("wlog: cannot fsync %s: %w", s.path, err)
		}
	} else {
		err = fmt.Errorf("wlog: cannot write %d bytes to %s: %w", len(b), s.path, err)
	}
	if err != nil {
		// Best effort: cut the torn group so the segment ends at a
		// record boundary; Replay handles it if this fails too.
		_ = l.file.Truncate(start)
		return rolled, l.breakLog(err)
	}
	l.mu.Lock()
	s.size += int64(len(b))
	for _, r := range group {
		s.seqs[r.rec.Sandbox] = append(s.seqs[r.rec.Sandbox], r.rec.Seq)
	}
	l.stats.Appends += int64(len(group))
	l.stats.Syncs++
	l.stats.Bytes += int64(len(b))
	l.mu.Unlock()
	return rolled, nil
}

func (l *Log) breakLog(err error) error {
	err = fmt.Errorf("%w: %w", ErrBroken, err)
	l.mu.Lock()
	if l.broken == nil {
		l.broken = err
	}
	l.mu.Unlock()
	l.log.Error("wlog: write log broken; appends fail until it is reopened", "dir", l.dir, "err", err)
	return err
}

// roll closes the active segment (its data is fsynced already) and
// creates the next one, durable (header fsynced, directory fsynced)
// before any record goes into it.
func (l *Log) roll() error {
	l.mu.Lock()
	n := l.nextSeg
	l.nextSeg++
	l.mu.Unlock()
	path := filepath.Join(l.dir, segName(n))
	f, err := l.fs.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("wlog: cannot create %s: %w", path, err)
	}
	hdr := appendSegHeader(nil, n)
	if k, err := f.Write(hdr); err != nil || k != len(hdr) {
		f.Close()
		return fmt.Errorf("wlog: cannot write the header of %s: %w", path, errors.Join(err, io.ErrShortWrite))
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("wlog: cannot fsync %s: %w", path, err)
	}
	if err := l.fs.SyncDir(l.dir); err != nil {
		f.Close()
		return fmt.Errorf("wlog: cannot fsync %s: %w", l.dir, err)
	}
	if l.file != nil {
		l.file.Close()
	}
	s := &segment{n: n, path: path, size: segHeaderSize, seqs: map[string][]uint64{}}
	l.mu.Lock()
	l.file, l.active = f, s
	l.segs = append(l.segs, s)
	l.mu.Unlock()
	return nil
}

// Stats returns the log's counters.
func (l *Log) Stats() Stats {
	l.mu.Lock()
	defer l.mu.Unlock()
	st := l.stats
	st.Segments = len(l.segs)
	return st
}

// Close waits for queued appends, closes the files and releases the
// directory. Appends after Close fail with ErrClosed.
func (l *Log) Close() error {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return ErrClosed
	}
	l.closed = true
	l.wake.Broadcast()
	l.mu.Unlock()
	<-l.flush
	var err error
	if l.file != nil {
		err = l.file.Close()
	}
	return errors.Join(err, l.lock.Close())
}
