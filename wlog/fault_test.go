package wlog

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// faultFS wraps the host's file system (real files, real fsyncs) and
// injects faults: slow or failing fsyncs, short writes, failing truncates,
// and a crash that keeps of each file what was fsynced plus an arbitrary,
// possibly garbled, part of what was not.
type faultFS struct {
	OSFS
	syncDelay time.Duration
	syncHook  func(path string) error                // before a file's fsync
	writeHook func(f *os.File, p []byte) (int, bool) // true: handled
	truncErr  error

	mu      sync.Mutex
	crashed bool
	synced  map[string]int64 // durable length per file
}

var errCrashed = errors.New("simulated crash: the machine is down")

func (fsys *faultFS) OpenFile(name string, flag int, perm os.FileMode) (File, error) {
	fsys.mu.Lock()
	crashed := fsys.crashed
	fsys.mu.Unlock()
	if crashed {
		return nil, errCrashed
	}
	f, err := os.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return &faultFile{File: f, fs: fsys}, nil
}

func (fsys *faultFS) SyncDir(dir string) error {
	if fsys.isCrashed() {
		return errCrashed
	}
	return fsys.OSFS.SyncDir(dir)
}

func (fsys *faultFS) isCrashed() bool {
	fsys.mu.Lock()
	defer fsys.mu.Unlock()
	return fsys.crashed
}

// crash stops every later operation and rewrites each segment as a power
// loss could leave it.
func (fsys *faultFS) crash(t *testing.T, dir string, rng *rand.Rand) {
	fsys.mu.Lock()
	fsys.crashed = true
	synced := fsys.synced
	fsys.mu.Unlock()
	for _, path := range segFiles(t, dir) {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		keep := synced[path]
		if keep > int64(len(b)) {
			t.Fatalf("%s: fsynced %d bytes but holds %d", path, keep, len(b))
		}
		cut := keep + rng.Int64N(int64(len(b))-keep+1)
		tail := b[keep:cut]
		switch rng.IntN(3) {
		case 1: // unwritten blocks read as zeros
			if len(tail) > 0 {
				i := rng.IntN(len(tail))
				clear(tail[i:min(len(tail), i+rng.IntN(600)+1)])
			}
		case 2: // garbage
			for i := range tail {
				if rng.IntN(50) == 0 {
					tail[i] = byte(rng.Uint32())
				}
			}
		}
		if err := os.WriteFile(path, b[:cut], 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

type faultFile struct {
	*os.File
	fs *faultFS
}

func (f *faultFile) Write(p []byte) (int, error) {
	if f.fs.isCrashed() {
		return 0, errCrashed
	}
	if f.fs.writeHook != nil {
		if n, ok := f.fs.writeHook(f.File, p); ok {
			return n, nil
		}
	}
	return f.File.Write(p)
}

func (f *faultFile) Sync() error {
	if f.fs.syncDelay > 0 {
		time.Sleep(f.fs.syncDelay)
	}
	if f.fs.syncHook != nil {
		if err := f.fs.syncHook(f.Name()); err != nil {
			return err
		}
	}
	if f.fs.isCrashed() {
		return errCrashed
	}
	if err := f.File.Sync(); err != nil {
		return err
	}
	fi, err := f.File.Stat()
	if err != nil {
		return err
	}
	f.fs.mu.Lock()
	if f.fs.synced == nil {
		f.fs.synced = map[string]int64{}
	}
	f.fs.synced[f.Name()] = fi.Size()
	f.fs.mu.Unlock()
	return nil
}

func (f *faultFile) Truncate(n int64) error {
	if f.fs.isCrashed() {
		return errCrashed
	}
	if f.fs.truncErr != nil {
		return f.fs.truncErr
	}
	return f.File.Truncate(n)
}

// writeN appends n records of sandbox "a", each in its own group, and
// returns them and the offset where the last one starts.
func writeN(t *testing.T, dir string, n int) ([]Record, int64) {
	t.Helper()
	_, _, l := replayAll(t, dir, Options{})
	var recs []Record
	var last int64
	for i := 1; i <= n; i++ {
		if i == n {
			last = l.Stats().Bytes + segHeaderSize
		}
		r := rec("a", uint64(i), fmt.Sprintf("payload %d of the test", i))
		if err := l.Append(context.Background(), r); err != nil {
			t.Fatal(err)
		}
		recs = append(recs, r)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	return recs, last
}

func oneSegment(t *testing.T, dir string) string {
	t.Helper()
	files := segFiles(t, dir)
	if len(files) != 1 {
		t.Fatalf("want one segment, have %v", files)
	}
	return files[0]
}

// replayMutated writes seg (the bytes of the only segment) into a fresh
// log and replays it.
func replayMutated(t *testing.T, name string, seg []byte) ([]Record, ReplayStats, int64, error) {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, seg, 0o600); err != nil {
		t.Fatal(err)
	}
	l := open(t, dir, Options{})
	defer l.Close()
	var got []Record
	st, err := l.Replay(context.Background(), func(r Record) error {
		got = append(got, r)
		return nil
	})
	size := int64(-1)
	if fi, err := os.Stat(path); err == nil {
		size = fi.Size()
	}
	return got, st, size, err
}

// TestReplay_TornTailEveryOffset cuts the last record at every byte
// offset: Replay keeps the others, cuts the segment back to where the last
// record began, and the log takes appends again.
func TestReplay_TornTailEveryOffset(t *testing.T) {
	src := t.TempDir()
	recs, last := writeN(t, src, 5)
	path := oneSegment(t, src)
	seg, _ := os.ReadFile(path)
	name := filepath.Base(path)
	for cut := last; cut < int64(len(seg)); cut++ {
		got, st, size, err := replayMutated(t, name, seg[:cut])
		if err != nil {
			t.Fatalf("cut at %d: %v", cut, err)
		}
		sameRecords(t, got, recs[:4])
		if size != last || st.TornBytes != cut-last {
			t.Fatalf("cut at %d: segment is %d bytes after replay (want %d), torn %d", cut, size, last, st.TornBytes)
		}
	}
	got, _, _, err := replayMutated(t, name, seg)
	if err != nil {
		t.Fatal(err)
	}
	sameRecords(t, got, recs)
}

// TestReplay_BadChecksumAtTail flips each byte of the last record.
func TestReplay_BadChecksumAtTail(t *testing.T) {
	src := t.TempDir()
	recs, last := writeN(t, src, 5)
	path := oneSegment(t, src)
	seg, _ := os.ReadFile(path)
	for i := last; i < int64(len(seg)); i++ {
		bad := bytes.Clone(seg)
		bad[i] ^= 0x41
		got, st, size, err := replayMutated(t, filepath.Base(path), bad)
		if err != nil {
			t.Fatalf("byte %d flipped: %v", i, err)
		}
		sameRecords(t, got, recs[:4])
		if size != last || st.TornBytes != int64(len(seg))-last {
			t.Fatalf("byte %d flipped: segment %d bytes after replay, want %d", i, size, last)
		}
	}
}

// TestReplay_TornGroup: a group of three written by one write, its first
// record damaged, its others intact: none was acknowledged, all three go.
func TestReplay_TornGroup(t *testing.T) {
	src := t.TempDir()
	recs, _ := writeN(t, src, 2)
	path := oneSegment(t, src)
	seg, _ := os.ReadFile(path)
	start := int64(len(seg))
	for i := uint64(3); i <= 5; i++ {
		seg = appendRecord(seg, &Record{Sandbox: "a", Seq: i, Payload: []byte("in flight")}, start)
	}
	seg[start+recHeaderSize+2] ^= 1 // the first one's payload
	got, st, size, err := replayMutated(t, filepath.Base(path), seg)
	if err != nil {
		t.Fatal(err)
	}
	sameRecords(t, got, recs)
	if st.TornRecords != 2 || size != start {
		t.Fatalf("torn records %d (want 2), segment %d bytes (want %d)", st.TornRecords, size, start)
	}
}

// TestReplay_Corrupt: damage that a torn write cannot explain is an
// error naming the segment and offset, and Replay changes nothing.
func TestReplay_Corrupt(t *testing.T) {
	t.Run("last segment, a later group follows", func(t *testing.T) {
		src := t.TempDir()
		_, _ = writeN(t, src, 5)
		path := oneSegment(t, src)
		seg, _ := os.ReadFile(path)
		h, _ := parseHeader(seg[segHeaderSize:])
		second := segHeaderSize + h.size()
		seg[second+recHeaderSize] ^= 0xff
		_, _, size, err := replayMutated(t, filepath.Base(path), seg)
		var ce *CorruptError
		if !errors.As(err, &ce) || ce.Offset != second || filepath.Base(ce.Segment) != filepath.Base(path) {
			t.Fatalf("got %v, want a CorruptError at offset %d of %s", err, second, filepath.Base(path))
		}
		if size != int64(len(seg)) {
			t.Fatalf("replay of a corrupt log changed it (%d -> %d bytes)", len(seg), size)
		}
	})
	t.Run("earlier segment", func(t *testing.T) {
		dir := t.TempDir()
		_, _, l := replayAll(t, dir, Options{SegmentBytes: 200})
		for i := uint64(1); i <= 6; i++ {
			if err := l.Append(context.Background(), rec("a", i, "0123456789012345678901234567890123456789")); err != nil {
				t.Fatal(err)
			}
		}
		l.Close()
		files := segFiles(t, dir)
		if len(files) < 2 {
			t.Fatalf("want two segments, have %d", len(files))
		}
		b, _ := os.ReadFile(files[0])
		b[len(b)-1] ^= 1 // the tail of a segment that is not the last
		os.WriteFile(files[0], b, 0o600)
		l = open(t, dir, Options{})
		defer l.Close()
		_, err := l.Replay(context.Background(), nil)
		var ce *CorruptError
		if !errors.As(err, &ce) || ce.Segment != files[0] || ce.Offset < segHeaderSize {
			t.Fatalf("got %v, want a CorruptError in %s", err, files[0])
		}
	})
	t.Run("unknown version", func(t *testing.T) {
		src := t.TempDir()
		_, _ = writeN(t, src, 1)
		path := oneSegment(t, src)
		seg, _ := os.ReadFile(path)
		seg[4] = 9
		copy(seg[20:], appendSegHeader(nil, 0)[20:]) // keep it a header
		h := bytes.Clone(seg[:20])
		seg = append(append(h, le32(crc(h))...), seg[24:]...)
		_, _, _, err := replayMutated(t, filepath.Base(path), seg)
		if err == nil || !bytes.Contains([]byte(err.Error()), []byte("format version 9, this build reads 1")) {
			t.Fatalf("got %v", err)
		}
	})
}

func TestReplay_TornSegmentHeader(t *testing.T) {
	src := t.TempDir()
	recs, _ := writeN(t, src, 2)
	// A crash while rolling: the next segment has half a header.
	next := filepath.Join(src, segName(1))
	os.WriteFile(next, appendSegHeader(nil, 1)[:10], 0o600)
	got, _, l := replayAll(t, src, Options{})
	defer l.Close()
	sameRecords(t, got, recs)
	if _, err := os.Stat(next); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the torn segment is still there: %v", err)
	}
	if err := l.Append(context.Background(), rec("a", 3, "x")); err != nil {
		t.Fatal(err)
	}
}

// TestFsyncError_FailsWholeGroup: when the fsync of a group fails, every
// waiter of that group gets an error, none an acknowledgement, and the
// log refuses later appends.
func TestFsyncError_FailsWholeGroup(t *testing.T) {
	dir := t.TempDir()
	ffs := &faultFS{}
	_, _, l := replayAll(t, dir, Options{FS: ffs})
	ctx := context.Background()
	if err := l.Append(ctx, rec("first", 1, "x")); err != nil {
		t.Fatal(err)
	}
	var n atomic.Int32
	blocked, release := make(chan struct{}), make(chan struct{})
	ffs.syncHook = func(string) error {
		switch n.Add(1) {
		case 1:
			close(blocked)
			<-release
		case 2:
			return &os.PathError{Op: "fdatasync", Path: "seg", Err: syscall.EIO}
		}
		return nil
	}
	acked := make(chan error, 1)
	go func() { acked <- l.Append(ctx, rec("held", 1, "x")) }()
	<-blocked
	const group = 10
	errs := make(chan error, group)
	for i := 0; i < group; i++ {
		go func() { errs <- l.Append(ctx, rec(fmt.Sprintf("g%d", i), 1, "x")) }()
	}
	for {
		l.mu.Lock()
		q := len(l.queue)
		l.mu.Unlock()
		if q == group {
			break
		}
		time.Sleep(time.Millisecond)
	}
	close(release)
	if err := <-acked; err != nil {
		t.Fatalf("the group before the failing one: %v", err)
	}
	for i := 0; i < group; i++ {
		if err := <-errs; !errors.Is(err, ErrBroken) || !errors.Is(err, syscall.EIO) {
			t.Fatalf("waiter %d of the failed group got %v, want ErrBroken wrapping EIO", i, err)
		}
	}
	if err := l.Append(ctx, rec("later", 1, "x")); !errors.Is(err, ErrBroken) {
		t.Fatalf("append after a failed fsync: %v", err)
	}
	if st := l.Stats(); st.Appends != 2 {
		t.Fatalf("%d appends acknowledged, want 2", st.Appends)
	}
	l.Close()
	got, _, l := replayAll(t, dir, Options{})
	defer l.Close()
	if len(got) < 2 || got[0].Sandbox != "first" || got[1].Sandbox != "held" {
		t.Fatalf("acknowledged records lost: %v", got)
	}
}

// TestShortWrite_TornTail: a short write fails its group; when cutting it
// back fails too, Replay cuts the torn tail.
func TestShortWrite_TornTail(t *testing.T) {
	dir := t.TempDir()
	ffs := &faultFS{truncErr: syscall.EIO}
	_, _, l := replayAll(t, dir, Options{FS: ffs})
	ctx := context.Background()
	var want []Record
	for i := uint64(1); i <= 3; i++ {
		r := rec("a", i, "acknowledged")
		if err := l.Append(ctx, r); err != nil {
			t.Fatal(err)
		}
		want = append(want, r)
	}
	ffs.writeHook = func(f *os.File, p []byte) (int, bool) {
		n, _ := f.Write(p[:len(p)/2])
		return n, true
	}
	if err := l.Append(ctx, rec("a", 4, "torn by a short write")); !errors.Is(err, ErrBroken) || !errors.Is(err, io.ErrShortWrite) {
		t.Fatalf("short write: %v", err)
	}
	l.Close()
	got, st, l := replayAll(t, dir, Options{})
	defer l.Close()
	sameRecords(t, got, want)
	if st.TornBytes == 0 {
		t.Fatal("no torn tail reported")
	}
}

// TestCrash: concurrent appenders, a crash at a random fsync, the files
// left as a power loss could leave them; every acknowledged record is
// replayed intact, and nothing else but records that were appended.
func TestCrash(t *testing.T) {
	for seed := uint64(1); seed <= 12; seed++ {
		t.Run(fmt.Sprint("seed=", seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 99))
			dir := t.TempDir()
			ffs := &faultFS{}
			crashAt := int32(rng.IntN(40) + 1)
			var syncs atomic.Int32
			var once sync.Once
			ffs.syncHook = func(string) error {
				if syncs.Add(1) == crashAt {
					once.Do(func() { ffs.crash(t, dir, rng) })
					return errCrashed
				}
				return nil
			}
			_, _, l := replayAll(t, dir, Options{FS: ffs, SegmentBytes: 1 << 10})
			payload := func(sb string, i uint64) []byte {
				return []byte(fmt.Sprintf("%s:%d:%0*d", sb, i, int(i*7%90), 0))
			}
			var mu sync.Mutex
			acked := map[string]uint64{}
			var wg sync.WaitGroup
			for w := 0; w < 6; w++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					sb := fmt.Sprint("w", w)
					for i := uint64(1); i <= 30; i++ {
						if err := l.Append(context.Background(), Record{Sandbox: sb, Seq: i, Payload: payload(sb, i)}); err != nil {
							return
						}
						mu.Lock()
						acked[sb] = i
						mu.Unlock()
					}
				}()
			}
			wg.Wait()
			l.Close()
			once.Do(func() { ffs.crash(t, dir, rng) })
			got, _, l2 := replayAll(t, dir, Options{})
			defer l2.Close()
			last := map[string]uint64{}
			for _, r := range got {
				if r.Seq != last[r.Sandbox]+1 {
					t.Fatalf("%s: replayed seq %d after %d (a gap or a reorder)", r.Sandbox, r.Seq, last[r.Sandbox])
				}
				if !bytes.Equal(r.Payload, payload(r.Sandbox, r.Seq)) {
					t.Fatalf("%s/%d: payload %q", r.Sandbox, r.Seq, r.Payload)
				}
				last[r.Sandbox] = r.Seq
			}
			lost := 0
			for sb, n := range acked {
				if last[sb] < n {
					lost += int(n - last[sb])
				}
			}
			if lost != 0 {
				t.Fatalf("%d acknowledged records lost (acked %v, replayed up to %v)", lost, acked, last)
			}
			if err := l2.Append(context.Background(), Record{Sandbox: "after", Seq: 1}); err != nil {
				t.Fatalf("append after recovery: %v", err)
			}
		})
	}
}

func le32(v uint32) []byte { return []byte{byte(v), byte(v >> 8), byte(v >> 16), byte(v >> 24)} }

func crc(b []byte) uint32 { return crc32.Checksum(b, castagnoli) }
