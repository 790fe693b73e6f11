package committer_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/committer"
)

// fake is a commit target: each commit covers what was logged when it
// started and makes the next generation. A fault injector (fail) may
// refuse attempts.
type fake struct {
	mu      sync.Mutex
	logged  map[string]uint64
	gen     map[string]uint64
	commits int
	fail    error
}

func newFake() *fake { return &fake{logged: map[string]uint64{}, gen: map[string]uint64{}} }

func (f *fake) log(c *committer.Committer, sb string, n int) uint64 {
	f.mu.Lock()
	f.logged[sb]++
	seq := f.logged[sb]
	f.mu.Unlock()
	c.Logged(sb, seq, n)
	return seq
}

func (f *fake) commit(ctx context.Context, sb string) (committer.Result, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.fail != nil {
		return committer.Result{}, f.fail
	}
	f.commits++
	f.gen[sb]++
	return committer.Result{Seq: f.logged[sb], Generation: f.gen[sb]}, nil
}

func TestThresholds(t *testing.T) {
	for _, tc := range []struct {
		name  string
		opts  committer.Options
		bytes int
		// within is how soon the commit must come
		within time.Duration
	}{
		{"size", committer.Options{MaxBytes: 100, MaxDelay: time.Hour}, 200, 2 * time.Second},
		{"time", committer.Options{MaxBytes: 1 << 30, MaxDelay: 50 * time.Millisecond}, 1, 3 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake()
			c := committer.New(f.commit, tc.opts)
			defer c.Close()
			seq := f.log(c, "a", tc.bytes)
			deadline := time.Now().Add(tc.within)
			for c.Position("a").Seq < seq {
				if time.Now().After(deadline) {
					t.Fatalf("no commit within %v (position %+v)", tc.within, c.Position("a"))
				}
				time.Sleep(5 * time.Millisecond)
			}
			if p := c.Position("a"); p.Generation != 1 {
				t.Fatalf("position %+v, want generation 1", p)
			}
		})
	}
}

func TestNoThresholdNoCommit(t *testing.T) {
	f := newFake()
	c := committer.New(f.commit, committer.Options{MaxBytes: 1 << 20, MaxDelay: time.Hour})
	defer c.Close()
	f.log(c, "a", 10)
	time.Sleep(100 * time.Millisecond)
	f.mu.Lock()
	n := f.commits
	f.mu.Unlock()
	if n != 0 {
		t.Fatalf("%d commits below both thresholds", n)
	}
}

func TestWaitCommitsNow(t *testing.T) {
	f := newFake()
	c := committer.New(f.commit, committer.Options{MaxDelay: time.Hour})
	defer c.Close()
	var seq uint64
	for range 3 {
		seq = f.log(c, "a", 10)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	g, err := c.Wait(ctx, "a", seq)
	if err != nil || g != 1 {
		t.Fatalf("Wait: generation %d, %v; want 1", g, err)
	}
	// Already covered: no new commit.
	if g, err := c.Wait(ctx, "a", seq-1); err != nil || g != 1 {
		t.Fatalf("second Wait: %d, %v", g, err)
	}
	if f.commits != 1 {
		t.Fatalf("%d commits, want 1", f.commits)
	}
}

func TestFailIsPermanent(t *testing.T) {
	f := newFake()
	c := committer.New(f.commit, committer.Options{MaxDelay: time.Hour})
	defer c.Close()
	fenced := errors.New("fenced: another node owns it")
	seq := f.log(c, "a", 1)
	c.Fail("a", fenced)
	if _, err := c.Wait(context.Background(), "a", seq); !errors.Is(err, fenced) {
		t.Fatalf("Wait after Fail: %v", err)
	}
	if f.commits != 0 {
		t.Fatal("a failed sandbox was committed")
	}
}

func TestTransientErrorReachesWaiterThenRetries(t *testing.T) {
	f := newFake()
	down := errors.New("store down")
	f.fail = down
	c := committer.New(f.commit, committer.Options{MaxDelay: 20 * time.Millisecond, Retry: 20 * time.Millisecond})
	defer c.Close()
	seq := f.log(c, "a", 1)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := c.Wait(ctx, "a", seq); !errors.Is(err, down) {
		t.Fatalf("Wait during an outage: %v; want the store's error", err)
	}
	f.mu.Lock()
	f.fail = nil
	f.mu.Unlock()
	deadline := time.Now().Add(5 * time.Second)
	for c.Position("a").Seq < seq {
		if time.Now().After(deadline) {
			t.Fatal("the commit was not retried after the outage")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestForgetAndClose(t *testing.T) {
	block := make(chan struct{})
	c := committer.New(func(ctx context.Context, sb string) (committer.Result, error) {
		select {
		case <-block:
		case <-ctx.Done():
		}
		return committer.Result{}, ctx.Err()
	}, committer.Options{MaxDelay: time.Hour, Retry: time.Hour})
	done := make(chan error, 1)
	go func() { _, err := c.Wait(context.Background(), "b", 1); done <- err }()
	time.Sleep(20 * time.Millisecond)
	c.Forget("b")
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("Wait on a forgotten sandbox returned no error")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Wait on a forgotten sandbox did not return")
	}
	close(block)
	c.Close()
	if _, err := c.Wait(context.Background(), "a", 1); !errors.Is(err, committer.ErrClosed) {
		t.Fatalf("Wait after Close: %v; want ErrClosed", err)
	}
}
