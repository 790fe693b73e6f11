package wlog

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

func open(t testing.TB, dir string, opts Options) *Log {
	t.Helper()
	if opts.Logger == nil {
		opts.Logger = quiet
	}
	l, err := Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// replayAll opens dir, replays it and returns the records and the log.
func replayAll(t testing.TB, dir string, opts Options) ([]Record, ReplayStats, *Log) {
	t.Helper()
	l := open(t, dir, opts)
	var got []Record
	st, err := l.Replay(context.Background(), func(r Record) error {
		got = append(got, r)
		return nil
	})
	if err != nil {
		l.Close()
		t.Fatalf("replay: %v", err)
	}
	return got, st, l
}

func rec(sb string, seq uint64, payload string) Record {
	return Record{Sandbox: sb, Epoch: 3, BaseGen: 7, Seq: seq, Payload: []byte(payload)}
}

func sameRecords(t *testing.T, got, want []Record) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %d records, want %d", len(got), len(want))
	}
	for i := range want {
		g, w := got[i], want[i]
		if g.Sandbox != w.Sandbox || g.Epoch != w.Epoch || g.BaseGen != w.BaseGen || g.Seq != w.Seq || !bytes.Equal(g.Payload, w.Payload) {
			t.Fatalf("record %d: got %s/%d e%d g%d %q, want %s/%d e%d g%d %q", i,
				g.Sandbox, g.Seq, g.Epoch, g.BaseGen, trunc(g.Payload), w.Sandbox, w.Seq, w.Epoch, w.BaseGen, trunc(w.Payload))
		}
	}
}

func trunc(b []byte) []byte {
	if len(b) > 16 {
		return b[:16]
	}
	return b
}

func segFiles(t testing.TB, dir string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, "*"+segExt))
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(m)
	return m
}

func TestLog_RoundTrip(t *testing.T) {
	big := bytes.Repeat([]byte("0123456789abcdef"), 1<<16) // 1 MiB
	long := string(bytes.Repeat([]byte("s"), MaxSandboxID))
	tests := []struct {
		name string
		recs []Record
	}{
		{"empty payload", []Record{rec("a", 1, "")}},
		{"one", []Record{rec("a", 1, "hello")}},
		{"large payload", []Record{{Sandbox: "a", Seq: 9, Payload: big}}},
		{"longest sandbox id", []Record{rec(long, 1, "x")}},
		{"interleaved sandboxes", []Record{rec("a", 1, "a1"), rec("b", 1, "b1"), rec("a", 2, "a2"), rec("b", 5, "b5")}},
		{"max fields", []Record{{Sandbox: "z", Epoch: ^uint64(0), BaseGen: ^uint64(0), Seq: ^uint64(0), Payload: []byte{0}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			_, _, l := replayAll(t, dir, Options{})
			for _, r := range tt.recs {
				if err := l.Append(context.Background(), r); err != nil {
					t.Fatal(err)
				}
			}
			if err := l.Close(); err != nil {
				t.Fatal(err)
			}
			got, st, l := replayAll(t, dir, Options{})
			defer l.Close()
			sameRecords(t, got, tt.recs)
			if st.TornBytes != 0 || st.Records != len(tt.recs) {
				t.Fatalf("stats %+v", st)
			}
		})
	}
}

func TestLog_AppendErrors(t *testing.T) {
	dir := t.TempDir()
	l := open(t, dir, Options{MaxPayload: 10})
	ctx := context.Background()
	if err := l.Append(ctx, rec("a", 1, "x")); !errors.Is(err, ErrNotReplayed) {
		t.Fatalf("append before replay: %v", err)
	}
	if _, err := l.Replay(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Replay(ctx, nil); err == nil {
		t.Fatal("second replay succeeded")
	}
	if err := l.Append(ctx, rec("a", 5, "x")); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		rec  Record
		is   error
		msg  string
	}{
		{"no sandbox", rec("", 1, "x"), nil, "sandbox id of 0 bytes"},
		{"sandbox too long", rec(string(make([]byte, MaxSandboxID+1)), 1, "x"), nil, "sandbox id of 1025 bytes"},
		{"payload too large", rec("a", 6, "01234567890"), ErrTooLarge, "payload of 11 bytes for sandbox a exceeds 10"},
		{"same sequence", rec("a", 5, "x"), ErrSequence, "sandbox a: 5 after 5"},
		{"lower sequence", rec("a", 4, "x"), ErrSequence, "sandbox a: 4 after 5"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := l.Append(ctx, tt.rec)
			if err == nil || (tt.is != nil && !errors.Is(err, tt.is)) || !bytes.Contains([]byte(err.Error()), []byte(tt.msg)) {
				t.Fatalf("got %v, want an error with %q", err, tt.msg)
			}
		})
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if err := l.Append(ctx, rec("a", 9, "x")); !errors.Is(err, ErrClosed) {
		t.Fatalf("append after close: %v", err)
	}
}

func TestOpen_Locked(t *testing.T) {
	dir := t.TempDir()
	l := open(t, dir, Options{})
	defer l.Close()
	if _, err := Open(dir, Options{Logger: quiet}); err == nil {
		t.Fatal("a second Open of a directory in use succeeded")
	}
}

func TestLog_SequenceContinuesAfterReplay(t *testing.T) {
	dir := t.TempDir()
	_, _, l := replayAll(t, dir, Options{})
	if err := l.Append(context.Background(), rec("a", 10, "x")); err != nil {
		t.Fatal(err)
	}
	l.Close()
	_, _, l = replayAll(t, dir, Options{})
	defer l.Close()
	if err := l.Append(context.Background(), rec("a", 10, "x")); !errors.Is(err, ErrSequence) {
		t.Fatalf("a replayed sequence number was accepted again: %v", err)
	}
	if err := l.Append(context.Background(), rec("a", 11, "x")); err != nil {
		t.Fatal(err)
	}
}

func TestLog_SegmentsRoll(t *testing.T) {
	dir := t.TempDir()
	opts := Options{SegmentBytes: 1 << 10}
	_, _, l := replayAll(t, dir, opts)
	var want []Record
	for i := 1; i <= 50; i++ {
		r := rec("a", uint64(i), fmt.Sprintf("%0100d", i))
		want = append(want, r)
		if err := l.Append(context.Background(), r); err != nil {
			t.Fatal(err)
		}
	}
	l.Close()
	files := segFiles(t, dir)
	if len(files) < 5 {
		t.Fatalf("%d segments for 50 records of ~150 bytes at 1 KiB each", len(files))
	}
	for _, f := range files {
		if fi, _ := os.Stat(f); fi.Size() > 1<<10+200 {
			t.Fatalf("%s has %d bytes, over the threshold by more than a record", f, fi.Size())
		}
	}
	got, st, l := replayAll(t, dir, opts)
	defer l.Close()
	sameRecords(t, got, want)
	if st.Segments != len(files) {
		t.Fatalf("replay read %d segments of %d", st.Segments, len(files))
	}
}

// TestLog_TrimDeletesSegments: a segment goes once every record in it is
// trimmed (or abandoned), never while one sandbox still needs it, and the
// active segment stays.
func TestLog_TrimDeletesSegments(t *testing.T) {
	dir := t.TempDir()
	opts := Options{SegmentBytes: 512}
	_, _, l := replayAll(t, dir, opts)
	defer l.Close()
	ctx := context.Background()
	pay := string(make([]byte, 200))
	// Segments: [a1 b1] [a2 b2] [a3 b3] [a4]...
	for i := uint64(1); i <= 4; i++ {
		for _, sb := range []string{"a", "b"} {
			if err := l.Append(ctx, rec(sb, i, pay)); err != nil {
				t.Fatal(err)
			}
		}
	}
	n0 := len(segFiles(t, dir))
	if n0 < 3 {
		t.Fatalf("want at least 3 segments, got %d", n0)
	}
	if err := l.Trim("a", 4); err != nil {
		t.Fatal(err)
	}
	if n := len(segFiles(t, dir)); n != n0 {
		t.Fatalf("trimming a alone deleted segments b still needs: %d -> %d", n0, n)
	}
	if err := l.Trim("b", 2); err != nil {
		t.Fatal(err)
	}
	n1 := len(segFiles(t, dir))
	if n1 >= n0 {
		t.Fatalf("trimming both sandboxes' first records deleted nothing (%d segments)", n1)
	}
	n, err := l.Abandon("b")
	if err != nil {
		t.Fatal(err)
	}
	if n != 2 {
		t.Fatalf("Abandon dropped %d records, want 2 (b3, b4)", n)
	}
	if files := segFiles(t, dir); len(files) != 1 {
		t.Fatalf("after everything is obsolete %d segments remain, want the active one: %v", len(files), files)
	}
	st := l.Stats()
	if st.Abandoned != 2 || st.Deleted != int64(n0-1) || st.Segments != 1 {
		t.Fatalf("stats %+v", st)
	}
	// The active segment rolls on the next full append and then goes.
	for i := uint64(5); i <= 8; i++ {
		if err := l.Append(ctx, rec("a", i, pay)); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Trim("a", 8); err != nil {
		t.Fatal(err)
	}
	if files := segFiles(t, dir); len(files) != 1 {
		t.Fatalf("%d segments after trimming everything, want the active one", len(files))
	}
}

// TestLog_TrimRecomputable asserts the documented rule: trims are not
// stored, so trimmed records in a surviving segment come back on Replay
// and the caller trims again.
func TestLog_TrimRecomputable(t *testing.T) {
	dir := t.TempDir()
	_, _, l := replayAll(t, dir, Options{})
	ctx := context.Background()
	for i := uint64(1); i <= 3; i++ {
		if err := l.Append(ctx, rec("a", i, "x")); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Trim("a", 2); err != nil {
		t.Fatal(err)
	}
	l.Close()
	got, _, l := replayAll(t, dir, Options{})
	defer l.Close()
	if len(got) != 3 {
		t.Fatalf("replayed %d records, want all 3 (trim state is recomputed by the caller)", len(got))
	}
	if n, err := l.Abandon("a"); err != nil || n != 3 {
		t.Fatalf("Abandon after restart: %d, %v (want 3)", n, err)
	}
}

func TestLog_ConcurrentAppends(t *testing.T) {
	dir := t.TempDir()
	// A slow fsync guarantees that appenders queue behind it and share
	// the next one.
	ffs := &faultFS{syncDelay: 2e6}
	_, _, l := replayAll(t, dir, Options{FS: ffs, SegmentBytes: 64 << 10})
	const workers, each = 16, 40
	var wg sync.WaitGroup
	errs := make(chan error, workers*each)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sb := fmt.Sprintf("sb%02d", w)
			for i := uint64(1); i <= each; i++ {
				if err := l.Append(context.Background(), rec(sb, i, fmt.Sprintf("%s-%d-%0200d", sb, i, 0))); err != nil {
					errs <- err
					return
				}
				if i%10 == 0 {
					if err := l.Trim(sb, i-5); err != nil {
						errs <- err
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	st := l.Stats()
	l.Close()
	if st.Appends != workers*each {
		t.Fatalf("%d appends acknowledged, want %d", st.Appends, workers*each)
	}
	if st.Syncs*2 > st.Appends {
		t.Fatalf("%d fsyncs for %d appends: concurrent appenders did not share fsyncs", st.Syncs, st.Appends)
	}
	got, _, l := replayAll(t, dir, Options{})
	defer l.Close()
	next := map[string]uint64{}
	for _, r := range got {
		if r.Seq <= next[r.Sandbox] {
			t.Fatalf("%s: seq %d after %d", r.Sandbox, r.Seq, next[r.Sandbox])
		}
		if want := fmt.Sprintf("%s-%d-%0200d", r.Sandbox, r.Seq, 0); string(r.Payload) != want {
			t.Fatalf("%s/%d: payload %q", r.Sandbox, r.Seq, trunc(r.Payload))
		}
		next[r.Sandbox] = r.Seq
	}
	for w := 0; w < workers; w++ {
		if sb := fmt.Sprintf("sb%02d", w); next[sb] != each {
			t.Fatalf("%s: last replayed seq %d, want %d", sb, next[sb], each)
		}
	}
}

func TestReplay_CallbackErrorStops(t *testing.T) {
	dir := t.TempDir()
	_, _, l := replayAll(t, dir, Options{})
	for i := uint64(1); i <= 3; i++ {
		if err := l.Append(context.Background(), rec("a", i, "x")); err != nil {
			t.Fatal(err)
		}
	}
	l.Close()
	l = open(t, dir, Options{})
	defer l.Close()
	stop := errors.New("stop here")
	n := 0
	_, err := l.Replay(context.Background(), func(Record) error {
		if n++; n == 2 {
			return stop
		}
		return nil
	})
	if !errors.Is(err, stop) || n != 2 {
		t.Fatalf("replay went on after its callback failed: %v after %d records", err, n)
	}
	if err := l.Append(context.Background(), rec("a", 9, "x")); !errors.Is(err, ErrNotReplayed) {
		t.Fatalf("append after a failed replay: %v", err)
	}
}

func TestAppend_ContextEnds(t *testing.T) {
	release := make(chan struct{})
	ffs := &faultFS{syncHook: func(string) error { <-release; return nil }}
	dir := t.TempDir()
	_, _, l := replayAll(t, dir, Options{FS: ffs})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	err := l.Append(ctx, rec("a", 1, "x"))
	close(release)
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "a/1 not acknowledged") {
		t.Fatalf("got %v", err)
	}
	l.Close()
}

// FuzzReplay: no segment content makes Replay panic; it yields records
// or fails with an error.
func FuzzReplay(f *testing.F) {
	seg := appendSegHeader(nil, 0)
	for i := uint64(1); i <= 3; i++ {
		seg = appendRecord(seg, &Record{Sandbox: "a", Seq: i, Payload: []byte("payload")}, int64(len(seg)))
	}
	f.Add(seg)
	f.Add(seg[:len(seg)-5])
	f.Add(seg[:30])
	f.Fuzz(func(t *testing.T, b []byte) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, segName(0)), b, 0o600); err != nil {
			t.Fatal(err)
		}
		l := open(t, dir, Options{})
		defer l.Close()
		n := 0
		_, err := l.Replay(context.Background(), func(r Record) error {
			if r.Sandbox == "" {
				t.Fatal("a record without a sandbox")
			}
			n++
			return nil
		})
		if err != nil {
			var ce *CorruptError
			if !errors.As(err, &ce) {
				t.Fatalf("replay failed without a CorruptError: %v", err)
			}
		}
	})
}
