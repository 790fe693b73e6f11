package drivetest

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/vfs"
)

// The checker: workers on several nodes (Drives of one drive) run a
// random mix of operations on a few files and record what they did and
// saw, with wall-clock intervals (one machine, so one clock); Check then
// verifies the log:
//
//   - no torn reads: every file's content carries a header (writer,
//     sequence, body length, sha256 of the body) that must match;
//   - close-to-open: a read of /fN returns the content of a mutation m
//     of /fN (a write closed, or a rename over it) such that no other
//     mutation of /fN started after m ended and ended before the read
//     began (otherwise the read was stale);
//   - atomic rename: /fN is replaced by renames and written in place but
//     never removed, so an open of it never fails and never finds it
//     empty; /dir0 is renamed to /dir1 and back while listers check that
//     the root lists exactly one of them, with all its files.
const (
	checkFiles   = 5 // /f0 .. /f4: never removed
	checkRemoved = 3 // /r0 .. /r2: written and removed
	checkDirKids = 3 // files in /dir0 (or /dir1)
)

// Event is one logged operation.
type Event struct {
	Kind    string // "mut" (write or rename over File), "read"
	File    string
	Content string // writer.seq of the content written or read
	Start   int64  // unix ns before the operation
	End     int64  // unix ns after it returned
}

// Log is what a worker (or a process of workers) did.
type Log struct {
	Events   []Event
	Failures []string // violations seen on the spot, unexpected errors
	Ops      int
}

// Setup creates the checker's files on d.
func Setup(d vfs.RemoteFS) error {
	for i := range checkFiles {
		if err := WriteFile(d, fmt.Sprintf("/f%d", i), content("init", uint64(i), 64)); err != nil {
			return err
		}
	}
	for _, dir := range []string{"/tmp", "/dir0"} {
		if err := d.Mkdir(dir, 0o755); err != nil {
			return err
		}
	}
	for i := range checkDirKids {
		if err := WriteFile(d, fmt.Sprintf("/dir0/k%d", i), content("init", uint64(100+i), 10)); err != nil {
			return err
		}
	}
	return nil
}

// InitialEvents are the mutations Setup made (before every worker).
func InitialEvents() []Event {
	var out []Event
	for i := range checkFiles {
		out = append(out, Event{Kind: "mut", File: fmt.Sprintf("/f%d", i), Content: "init." + strconv.Itoa(i)})
	}
	return out
}

// content makes a self-checking file body.
func content(writer string, seq uint64, n int) []byte {
	body := make([]byte, n)
	r := rand.NewChaCha8(sha256.Sum256([]byte(writer + strconv.FormatUint(seq, 10))))
	r.Read(body)
	sum := sha256.Sum256(body)
	return append([]byte(fmt.Sprintf("DRV1 %s.%d %d %s\n", writer, seq, n, hex.EncodeToString(sum[:]))), body...)
}

// verify checks a content's header against its body and returns its id.
func verify(b []byte) (string, error) {
	nl := bytes.IndexByte(b, '\n')
	if nl < 0 {
		return "", fmt.Errorf("no header in %d bytes (%.40q)", len(b), b)
	}
	f := strings.Fields(string(b[:nl]))
	if len(f) != 4 || f[0] != "DRV1" {
		return "", fmt.Errorf("bad header %q", b[:nl])
	}
	body := b[nl+1:]
	if n, err := strconv.Atoi(f[2]); err != nil || n != len(body) {
		return "", fmt.Errorf("torn: %s says %s body bytes, file has %d", f[1], f[2], len(body))
	}
	sum := sha256.Sum256(body)
	if hex.EncodeToString(sum[:]) != f[3] {
		return "", fmt.Errorf("torn: %s body does not hash to its header", f[1])
	}
	return f[1], nil
}

// Work runs ops random operations on d as writer id and logs them.
func Work(d vfs.RemoteFS, id string, ops int, seed uint64) Log {
	rng := rand.New(rand.NewPCG(seed, 0x64726976))
	var log Log
	var seq uint64
	now := func() int64 { return time.Now().UnixNano() }
	fail := func(format string, args ...any) {
		if len(log.Failures) < 50 {
			log.Failures = append(log.Failures, fmt.Sprintf("%s: ", id)+fmt.Sprintf(format, args...))
		}
	}
	size := func() int {
		if rng.IntN(100) == 0 {
			return 1<<20 + rng.IntN(3<<19) // a few chunks
		}
		return rng.IntN(4096)
	}
	for range ops {
		log.Ops++
		file := fmt.Sprintf("/f%d", rng.IntN(checkFiles))
		switch p := rng.IntN(100); {
		case p < 30: // write in place (O_TRUNC; committed at Close)
			seq++
			c := content(id, seq, size())
			start := now()
			if err := WriteFile(d, file, c); err != nil {
				fail("write %s: %v", file, err)
				continue
			}
			log.Events = append(log.Events, Event{Kind: "mut", File: file, Content: id + "." + strconv.FormatUint(seq, 10), Start: start, End: now()})
		case p < 45: // write aside, rename over
			seq++
			tmp := fmt.Sprintf("/tmp/%s.%d", id, seq)
			if err := WriteFile(d, tmp, content(id, seq, size())); err != nil {
				fail("write %s: %v", tmp, err)
				continue
			}
			start := now()
			if err := d.Rename(tmp, file); err != nil {
				fail("rename %s over %s: %v", tmp, file, err)
				continue
			}
			log.Events = append(log.Events, Event{Kind: "mut", File: file, Content: id + "." + strconv.FormatUint(seq, 10), Start: start, End: now()})
		case p < 80: // read
			start := now()
			b, err := ReadFile(d, file)
			end := now()
			if err != nil {
				fail("read %s: %v (it is never removed)", file, err)
				continue
			}
			cid, err := verify(b)
			if err != nil {
				fail("read %s: %v", file, err)
				continue
			}
			log.Events = append(log.Events, Event{Kind: "read", File: file, Content: cid, Start: start, End: end})
		case p < 85: // the removed files: whole or absent
			rf := fmt.Sprintf("/r%d", rng.IntN(checkRemoved))
			b, err := ReadFile(d, rf)
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			if err != nil {
				fail("read %s: %v", rf, err)
				continue
			}
			if len(b) == 0 {
				continue // created by a writer whose Close has not returned
			}
			if _, err := verify(b); err != nil {
				fail("read %s: %v", rf, err)
			}
		case p < 90:
			rf := fmt.Sprintf("/r%d", rng.IntN(checkRemoved))
			if rng.IntN(2) == 0 {
				seq++
				if err := WriteFile(d, rf, content(id, seq, size())); err != nil && !errors.Is(err, fs.ErrNotExist) {
					fail("write %s: %v", rf, err)
				}
			} else if err := d.Remove(rf); err != nil && !errors.Is(err, fs.ErrNotExist) {
				fail("remove %s: %v", rf, err)
			}
		case p < 95: // move the directory
			from, to := "/dir0", "/dir1"
			if _, err := d.Stat(from); errors.Is(err, fs.ErrNotExist) {
				from, to = to, from
			}
			if err := d.Rename(from, to); err != nil && !errors.Is(err, fs.ErrNotExist) {
				fail("rename %s to %s: %v", from, to, err)
			}
		default: // list: exactly one of the two names, with all its files
			es, err := d.ReadDir("/")
			if err != nil {
				fail("readdir /: %v", err)
				continue
			}
			var dirs []string
			for _, e := range es {
				if strings.HasPrefix(e.Name(), "dir") {
					dirs = append(dirs, e.Name())
				}
			}
			if len(dirs) != 1 {
				fail("readdir / lists %v: a directory rename was not atomic", dirs)
				continue
			}
			kids, err := d.ReadDir("/" + dirs[0])
			if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
				continue // moved since
			}
			if err != nil {
				fail("readdir /%s: %v", dirs[0], err)
			} else if len(kids) != checkDirKids {
				fail("readdir /%s: %d entries, want %d", dirs[0], len(kids), checkDirKids)
			}
		}
	}
	return log
}

// Check verifies the merged logs and returns the violations (nil: none)
// and how many reads it checked.
func Check(logs []Log) (failures []string, reads int) {
	type mut struct{ start, end int64 }
	byContent := map[string]map[string]mut{} // file -> content -> its mutation
	var muts = map[string][]mut{}
	var rs []Event
	for _, l := range logs {
		failures = append(failures, l.Failures...)
		for _, e := range l.Events {
			switch e.Kind {
			case "mut":
				if byContent[e.File] == nil {
					byContent[e.File] = map[string]mut{}
				}
				byContent[e.File][e.Content] = mut{e.Start, e.End}
				muts[e.File] = append(muts[e.File], mut{e.Start, e.End})
			case "read":
				rs = append(rs, e)
			}
		}
	}
	// Per file: mutations by end, with the latest start among those
	// ending at or before each.
	type index struct {
		ends     []int64
		maxStart []int64
	}
	idx := map[string]index{}
	for f, ms := range muts {
		sort.Slice(ms, func(i, j int) bool { return ms[i].end < ms[j].end })
		ix := index{}
		best := int64(0)
		for _, m := range ms {
			best = max(best, m.start)
			ix.ends = append(ix.ends, m.end)
			ix.maxStart = append(ix.maxStart, best)
		}
		idx[f] = ix
	}
	for _, r := range rs {
		m, ok := byContent[r.File][r.Content]
		if !ok {
			failures = append(failures, fmt.Sprintf("read of %s returned %s, never written there", r.File, r.Content))
			continue
		}
		ix := idx[r.File]
		// Mutations that ended before the read started.
		n := sort.Search(len(ix.ends), func(i int) bool { return ix.ends[i] >= r.Start })
		if n > 0 && ix.maxStart[n-1] > m.end {
			failures = append(failures, fmt.Sprintf("stale read of %s: got %s (committed by %d), but a mutation started at %d and ended before the read began at %d",
				r.File, r.Content, m.end, ix.maxStart[n-1], r.Start))
		}
	}
	return failures, len(rs)
}

// Ops is the checker's total operation count: 10,000, or
// $WARREN_DRIVE_CHECK_OPS.
func Ops() int {
	if v, err := strconv.Atoi(os.Getenv("WARREN_DRIVE_CHECK_OPS")); err == nil && v > 0 {
		return v
	}
	return 10_000
}

// RunChecker sets the checker's files up on the first drive, runs
// workers goroutines per drive for ops operations in all, checks the
// logs and fails t on any violation.
func RunChecker(t testing.TB, drives []vfs.RemoteFS, workers, ops int) {
	t.Helper()
	RunCheckerWith(t, drives, workers, ops, nil)
}

// RunCheckerWith is RunChecker with background running meanwhile (until
// stop is closed; RunCheckerWith waits for it to return).
func RunCheckerWith(t testing.TB, drives []vfs.RemoteFS, workers, ops int, background func(stop <-chan struct{})) {
	t.Helper()
	start := time.Now()
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		if background != nil {
			background(stop)
		}
	}()
	logs := RunWorkers(t, drives, workers, ops)
	close(stop)
	<-done
	Report(t, logs, time.Since(start))
}

// RunWorkers is RunChecker without the check: it returns the logs,
// Setup's first.
func RunWorkers(t testing.TB, drives []vfs.RemoteFS, workers, ops int) []Log {
	t.Helper()
	if err := Setup(drives[0]); err != nil {
		t.Fatalf("checker setup: %v", err)
	}
	n := len(drives) * workers
	logs := make([]Log, n+1)
	logs[0] = Log{Events: InitialEvents()}
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			logs[i+1] = Work(drives[i%len(drives)], fmt.Sprintf("n%dw%d", i%len(drives), i), ops/n, uint64(i+1))
		}()
	}
	wg.Wait()
	return logs
}

// Report checks merged logs and fails t on a violation.
func Report(t testing.TB, logs []Log, took time.Duration) {
	t.Helper()
	failures, reads := Check(logs)
	ops, muts := 0, 0
	for _, l := range logs {
		ops += l.Ops
		for _, e := range l.Events {
			if e.Kind == "mut" {
				muts++
			}
		}
	}
	t.Logf("checker: %d operations (%d mutations of the checked files, %d checked reads) by %d workers in %v", ops, muts, reads, len(logs)-1, took.Round(time.Millisecond))
	if reads == 0 || muts <= checkFiles {
		t.Fatalf("checker: nothing to check (%d reads, %d mutations)", reads, muts)
	}
	for i, f := range failures {
		if i == 20 {
			t.Errorf("... and %d more", len(failures)-20)
			break
		}
		t.Error(f)
	}
}

// VerifyAll reads every file of d (a node that caches nothing, to see
// the store) and checks its header: after a run, every committed version
// must still be whole.
func VerifyAll(t testing.TB, d vfs.RemoteFS) int {
	t.Helper()
	n := 0
	var walk func(dir string)
	walk = func(dir string) {
		es, err := d.ReadDir(dir)
		if err != nil {
			t.Fatalf("readdir %s: %v", dir, err)
		}
		for _, e := range es {
			name := strings.TrimSuffix(dir, "/") + "/" + e.Name()
			if e.IsDir() {
				walk(name)
				continue
			}
			b, err := ReadFile(d, name)
			if err != nil {
				t.Errorf("read %s: %v", name, err)
				continue
			}
			if len(b) == 0 {
				continue
			}
			if _, err := verify(b); err != nil {
				t.Errorf("read %s: %v", name, err)
			}
			n++
		}
	}
	walk("/")
	return n
}
