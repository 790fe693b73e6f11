package retry_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/store"
	"github.com/warren-sandbox/warren/store/mem"
	"github.com/warren-sandbox/warren/store/retry"
	"github.com/warren-sandbox/warren/store/s3"
	"github.com/warren-sandbox/warren/store/storetest"
)

var ctx = context.Background()

// fast keeps the unit tests quick: backoff in microseconds.
var fast = retry.Policy{BaseDelay: 50 * time.Microsecond, MaxDelay: time.Millisecond}

// faultStore injects planned errors in front of a mem.Store: each call of
// an op takes the next error planned for it (nil when none is left). A
// failing Put reads its whole body first, as a backend that failed while
// uploading would. readFault cuts readers of a key once after n bytes.
type faultStore struct {
	*mem.Store
	mu        sync.Mutex
	plan      map[string][]error
	calls     map[string]int
	readFault map[string]readFault
}

type readFault struct {
	after int
	err   error
}

func newFaultStore() *faultStore {
	return &faultStore{Store: mem.New(), plan: map[string][]error{}, calls: map[string]int{}, readFault: map[string]readFault{}}
}

func (f *faultStore) next(op string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls[op]++
	if len(f.plan[op]) == 0 {
		return nil
	}
	err := f.plan[op][0]
	f.plan[op] = f.plan[op][1:]
	return err
}

func (f *faultStore) count(op string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls[op]
}

func (f *faultStore) Put(ctx context.Context, key string, r io.Reader) error {
	if err := f.next("put"); err != nil {
		if _, rerr := io.Copy(io.Discard, r); rerr != nil {
			return &store.Error{Op: "put", Key: key, Err: rerr}
		}
		return &store.Error{Op: "put", Key: key, Err: err}
	}
	return f.Store.Put(ctx, key, r)
}

func (f *faultStore) Has(ctx context.Context, key string) (bool, error) {
	if err := f.next("has"); err != nil {
		return false, err
	}
	return f.Store.Has(ctx, key)
}

func (f *faultStore) Delete(ctx context.Context, key string) error {
	if err := f.next("delete"); err != nil {
		return err
	}
	return f.Store.Delete(ctx, key)
}

func (f *faultStore) Get(ctx context.Context, key string) (io.ReadCloser, error) {
	if err := f.next("get"); err != nil {
		return nil, err
	}
	rc, err := f.Store.Get(ctx, key)
	return f.cut(key, rc), err
}

func (f *faultStore) GetRange(ctx context.Context, key string, off, n int64) (io.ReadCloser, error) {
	if err := f.next("get-range"); err != nil {
		return nil, err
	}
	rc, err := f.Store.GetRange(ctx, key, off, n)
	return f.cut(key, rc), err
}

func (f *faultStore) cut(key string, rc io.ReadCloser) io.ReadCloser {
	f.mu.Lock()
	defer f.mu.Unlock()
	rf, ok := f.readFault[key]
	if !ok || rc == nil {
		return rc
	}
	delete(f.readFault, key)
	return &cutReader{rc: rc, left: rf.after, err: rf.err}
}

type cutReader struct {
	rc   io.ReadCloser
	left int
	err  error
}

func (c *cutReader) Read(p []byte) (int, error) {
	if c.left == 0 {
		return 0, c.err
	}
	p = p[:min(len(p), c.left)]
	n, err := c.rc.Read(p)
	c.left -= n
	return n, err
}
func (c *cutReader) Close() error { return c.rc.Close() }

// listFault fails List once after it has reported n keys.
func (f *faultStore) List(ctx context.Context, prefix string, fn func(string, int64) error) error {
	err := f.next("list")
	if err == nil {
		return f.Store.List(ctx, prefix, fn)
	}
	n := 0
	stop := errors.New("stop")
	lerr := f.Store.List(ctx, prefix, func(k string, size int64) error {
		if n == 3 {
			return stop
		}
		n++
		return fn(k, size)
	})
	if lerr != nil && lerr != stop {
		return lerr
	}
	return err
}

// Errors as backends give them.
var (
	err503     = &store.Error{Op: "x", Key: "k", Err: &s3.ResponseError{StatusCode: 503, Code: "ServiceUnavailable"}}
	err500     = &s3.ResponseError{StatusCode: 500, Code: "InternalError"}
	errSlow    = &s3.ResponseError{StatusCode: 503, Code: "SlowDown"}
	err403     = &store.Error{Op: "x", Key: "k", Err: &s3.ResponseError{StatusCode: 403, Code: "AccessDenied"}}
	errReset   = &store.Error{Op: "x", Key: "k", Err: &s3.TransportError{Err: &url.Error{Op: "Get", URL: "http://x", Err: syscall.ECONNRESET}}}
	errTimeout = &net.OpError{Op: "read", Net: "tcp", Err: os.ErrDeadlineExceeded}
)

func TestTransient(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		want bool
	}{
		{"nil", nil, false},
		{"503", err503, true},
		{"500", err500, true},
		{"SlowDown", errSlow, true},
		{"429", &s3.ResponseError{StatusCode: http.StatusTooManyRequests}, true},
		{"403 AccessDenied", err403, false},
		{"400", &s3.ResponseError{StatusCode: 400, Code: "InvalidArgument"}, false},
		{"transport reset", errReset, true},
		{"bare ECONNRESET", fmt.Errorf("read: %w", syscall.ECONNRESET), true},
		{"ECONNREFUSED", &net.OpError{Op: "dial", Err: syscall.ECONNREFUSED}, true},
		{"EPIPE", syscall.EPIPE, true},
		{"net timeout", errTimeout, true},
		{"unexpected EOF", io.ErrUnexpectedEOF, true},
		{"not found", &store.Error{Op: "get", Key: "k", Err: store.ErrNotFound}, false},
		{"invalid key", store.ValidateKey("a//b"), false},
		{"corrupt", &store.CorruptError{Key: "k"}, false},
		{"too large", store.ErrTooLarge, false},
		{"canceled", context.Canceled, false},
		{"deadline", fmt.Errorf("x: %w", context.DeadlineExceeded), false},
		{"canceled inside a transport error", &s3.TransportError{Err: context.Canceled}, false},
		{"plain error", errors.New("boom"), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := retry.Transient(tc.err); got != tc.want {
				t.Fatalf("Transient(%v) = %v, want %v", tc.err, got, tc.want)
			}
		})
	}
}

// TestOps runs each operation against planned faults: transient ones are
// retried until success or the attempt bound, final ones are not retried.
func TestOps(t *testing.T) {
	type op struct {
		name string
		run  func(s store.Store) error
	}
	ops := []op{
		{"has", func(s store.Store) error {
			ok, err := s.Has(ctx, "obj")
			if err == nil && !ok {
				return errors.New("has = false")
			}
			return err
		}},
		{"delete", func(s store.Store) error { return s.Delete(ctx, "gone") }},
		{"put", func(s store.Store) error {
			// Not a seeker: the wrapper replays from its copy.
			return s.Put(ctx, "new", io.MultiReader(strings.NewReader("new "), strings.NewReader("content")))
		}},
		{"get", func(s store.Store) error {
			b, err := store.ReadAll(ctx, s, "obj")
			if err == nil && string(b) != "object content" {
				return fmt.Errorf("read %q", b)
			}
			return err
		}},
		{"get-range", func(s store.Store) error {
			rc, err := store.GetRange(ctx, s, "obj", 7, 4)
			if err != nil {
				return err
			}
			defer rc.Close()
			b, err := io.ReadAll(rc)
			if err == nil && string(b) != "cont" {
				return fmt.Errorf("read %q", b)
			}
			return err
		}},
		{"list", func(s store.Store) error {
			var keys []string
			err := s.List(ctx, "", func(k string, _ int64) error { keys = append(keys, k); return nil })
			if err == nil && len(keys) != 6 {
				return fmt.Errorf("listed %v", keys)
			}
			return err
		}},
	}
	for _, o := range ops {
		for _, tc := range []struct {
			name      string
			plan      []error
			wantCalls int
			wantErr   error // nil: success
			gaveUp    bool  // a *retry.Error
		}{
			{"clean", nil, 1, nil, false},
			{"two 503s", []error{err503, err503}, 3, nil, false},
			{"reset then timeout", []error{errReset, errTimeout}, 3, nil, false},
			{"403 is final", []error{err403}, 1, err403, false},
			{"not found is final", []error{&store.Error{Op: o.name, Key: "k", Err: store.ErrNotFound}}, 1, store.ErrNotFound, false},
			{"503 then 403", []error{err503, err403}, 2, err403, false},
			{"always 503", slices.Repeat([]error{err503}, 10), 4, err503, true},
		} {
			t.Run(o.name+"/"+tc.name, func(t *testing.T) {
				f := newFaultStore()
				store.PutBytes(ctx, f.Store, "obj", []byte("object content"))
				for i := range 5 {
					store.PutBytes(ctx, f.Store, fmt.Sprintf("k%d", i), nil)
				}
				f.plan[o.name] = slices.Clone(tc.plan)
				p := fast
				p.Attempts = 4
				err := o.run(retry.Wrap(f, p))
				switch {
				case tc.wantErr == nil && err != nil:
					t.Fatalf("%s: %v, want success", o.name, err)
				case tc.wantErr != nil && !errors.Is(err, tc.wantErr):
					t.Fatalf("%s: %v, want %v", o.name, err, tc.wantErr)
				}
				var re *retry.Error
				if errors.As(err, &re) != tc.gaveUp {
					t.Fatalf("%s: %v: a *retry.Error = %v, want %v", o.name, err, !tc.gaveUp, tc.gaveUp)
				}
				if tc.gaveUp && re.Attempts != 4 {
					t.Fatalf("gave up after %d attempts, want 4", re.Attempts)
				}
				if got := f.count(o.name); got != tc.wantCalls {
					t.Fatalf("%s called %d times, want %d", o.name, got, tc.wantCalls)
				}
				if o.name == "put" && tc.wantErr == nil {
					if b, err := store.ReadAll(ctx, f.Store, "new"); err != nil || string(b) != "new content" {
						t.Fatalf("stored %q, %v after retries", b, err)
					}
				}
			})
		}
	}
}

// TestSuite: the wrapper is itself a conforming store.
func TestSuite(t *testing.T) {
	storetest.RunSuite(t, func(t *testing.T) store.Store { return retry.Wrap(mem.New(), fast) })
}

// TestPut_Body covers what can and cannot be replayed.
func TestPut_Body(t *testing.T) {
	big := bytes.Repeat([]byte("x"), 1000)
	errBody := errors.New("body failed")
	for _, tc := range []struct {
		name      string
		body      func() io.Reader
		replay    int64
		wantCalls int
		wantErr   error
	}{
		{"seeker", func() io.Reader { return bytes.NewReader(big) }, 10, 2, nil},
		{"seeker read from the middle", func() io.Reader {
			r := bytes.NewReader(append([]byte("skip"), big...))
			r.Seek(4, io.SeekStart)
			return r
		}, 10, 2, nil},
		{"stream within the buffer", func() io.Reader { return io.MultiReader(bytes.NewReader(big)) }, 1000, 2, nil},
		{"stream past the buffer", func() io.Reader { return io.MultiReader(bytes.NewReader(big)) }, 999, 1, err503},
		{"failing body is final", func() io.Reader { return io.MultiReader(bytes.NewReader(big[:10]), errorReader{errBody}) }, 1000, 1, errBody},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFaultStore()
			f.plan["put"] = []error{err503}
			p := fast
			p.ReplayBuffer = tc.replay
			err := retry.Wrap(f, p).Put(ctx, "k", tc.body())
			if tc.wantErr == nil && err != nil || tc.wantErr != nil && !errors.Is(err, tc.wantErr) {
				t.Fatalf("put: %v, want %v", err, tc.wantErr)
			}
			if got := f.count("put"); got != tc.wantCalls {
				t.Fatalf("put called %d times, want %d", got, tc.wantCalls)
			}
			if tc.wantErr == nil {
				if b, _ := store.ReadAll(ctx, f.Store, "k"); !bytes.Equal(b, big) {
					t.Fatalf("stored %d bytes, want the %d of the body", len(b), len(big))
				}
			}
		})
	}
}

type errorReader struct{ err error }

func (e errorReader) Read([]byte) (int, error) { return 0, e.err }

func sha(b []byte) string { h := sha256.Sum256(b); return hex.EncodeToString(h[:]) }

// TestRead_Resume: a content-addressed object's read survives a cut
// connection; other keys report it.
func TestRead_Resume(t *testing.T) {
	data := bytes.Repeat([]byte("0123456789"), 10000)
	ca := "packs/" + sha(data)
	for _, tc := range []struct {
		name    string
		key     string
		ranged  bool
		cutErr  error
		wantErr error
	}{
		{"content-addressed get", ca, false, io.ErrUnexpectedEOF, nil},
		{"content-addressed range", ca, true, errReset, nil},
		{"mutable key, read again whole", "heads/x", false, io.ErrUnexpectedEOF, nil},
		{"mutable key range", "heads/x", true, io.ErrUnexpectedEOF, io.ErrUnexpectedEOF},
		{"final read error", ca, false, err403, err403},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFaultStore()
			store.PutBytes(ctx, f.Store, tc.key, data)
			f.readFault[tc.key] = readFault{after: 12345, err: tc.cutErr}
			s := retry.Wrap(f, fast)
			want := data
			var rc io.ReadCloser
			var err error
			if tc.ranged {
				rc, err = s.(store.RangeGetter).GetRange(ctx, tc.key, 100, 50000)
				want = data[100:50100]
			} else {
				rc, err = s.Get(ctx, tc.key)
			}
			if err != nil {
				t.Fatal(err)
			}
			got, err := io.ReadAll(rc)
			rc.Close()
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("read: %v, want %v", err, tc.wantErr)
				}
				return
			}
			if err != nil || !bytes.Equal(got, want) {
				t.Fatalf("read %d bytes (equal %v), %v; want %d bytes", len(got), bytes.Equal(got, want), err, len(want))
			}
			if calls := f.count("get") + f.count("get-range"); calls != 2 {
				t.Fatalf("%d opens, want 2 (one resume)", calls)
			}
		})
	}
}

// TestList_Resume: fn sees every key once, in order, across a retry.
func TestList_Resume(t *testing.T) {
	f := newFaultStore()
	var want []string
	for i := range 8 {
		k := fmt.Sprintf("k/%d", i)
		want = append(want, k)
		store.PutBytes(ctx, f.Store, k, nil)
	}
	f.plan["list"] = []error{err503, err503}
	var got []string
	if err := retry.Wrap(f, fast).List(ctx, "k/", func(k string, _ int64) error { got = append(got, k); return nil }); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("listed %v, want %v", got, want)
	}
	// An error from fn is returned as is, never retried.
	f.plan["list"] = nil
	stop := &s3.ResponseError{StatusCode: 503} // looks transient
	calls := f.count("list")
	err := retry.Wrap(f, fast).List(ctx, "k/", func(string, int64) error { return stop })
	if err != stop || f.count("list") != calls+1 {
		t.Fatalf("fn error: %v after %d calls, want the fn's error after 1", err, f.count("list")-calls)
	}
}

// TestBackoff: waits grow, stay jittered within [d/2, d], stop at
// MaxDelay, and no wait starts past MaxElapsed.
func TestBackoff(t *testing.T) {
	f := newFaultStore()
	f.plan["has"] = slices.Repeat([]error{err503}, 100)
	var waits []time.Duration
	p := retry.Policy{Attempts: 8, BaseDelay: time.Millisecond, MaxDelay: 8 * time.Millisecond,
		OnRetry: func(op, key string, attempt int, err error, wait time.Duration) { waits = append(waits, wait) }}
	_, err := retry.Wrap(f, p).Has(ctx, "k")
	var re *retry.Error
	if !errors.As(err, &re) || re.Attempts != 8 || !strings.Contains(err.Error(), "gave up after 8 attempts") {
		t.Fatalf("err %v, want a *retry.Error after 8 attempts", err)
	}
	if len(waits) != 7 {
		t.Fatalf("%d waits, want 7", len(waits))
	}
	for i, w := range waits {
		d := min(time.Millisecond<<i, 8*time.Millisecond)
		if w < d/2 || w > d {
			t.Fatalf("wait %d = %v, want in [%v, %v]", i+1, w, d/2, d)
		}
	}
	// MaxElapsed: with 100 ms waits and a 150 ms budget, one or two waits.
	f.plan["has"] = slices.Repeat([]error{err503}, 100)
	before := f.count("has")
	t0 := time.Now()
	_, err = retry.Wrap(f, retry.Policy{Attempts: 100, BaseDelay: 100 * time.Millisecond, MaxDelay: 100 * time.Millisecond, MaxElapsed: 150 * time.Millisecond}).Has(ctx, "k")
	if n := f.count("has") - before; !errors.As(err, &re) || n > 3 || time.Since(t0) > 2*time.Second {
		t.Fatalf("with a 150 ms budget: %d calls in %v, %v", n, time.Since(t0), err)
	}
}

// TestContext: a cancel during the wait ends it at once with ctx's error,
// and an ended context is never retried.
func TestContext(t *testing.T) {
	f := newFaultStore()
	f.plan["has"] = slices.Repeat([]error{err503}, 100)
	s := retry.Wrap(f, retry.Policy{BaseDelay: time.Hour, MaxDelay: time.Hour, MaxElapsed: 10 * time.Hour})
	c, cancel := context.WithCancel(ctx)
	time.AfterFunc(20*time.Millisecond, cancel)
	t0 := time.Now()
	_, err := s.Has(c, "k")
	if !errors.Is(err, context.Canceled) || time.Since(t0) > 5*time.Second {
		t.Fatalf("cancel while waiting: %v after %v", err, time.Since(t0))
	}
	if !strings.Contains(err.Error(), "ServiceUnavailable") {
		t.Fatalf("error %q does not say what was being retried", err)
	}
	if f.count("has") != 1 {
		t.Fatalf("%d calls, want 1", f.count("has"))
	}
	if _, err = s.Has(c, "k"); err == nil || f.count("has") != 2 {
		t.Fatalf("ended context: %v after %d calls, want an error after one more", err, f.count("has")-1)
	}
}
