// Package retry wraps a store.Store so that operations failing with a
// transient error are tried again after a jittered exponential backoff,
// within a bounded number of attempts and a bounded total time, and never
// past the caller's context.
//
// What is transient (Transient): an error that says so (a Transient() bool
// method anywhere in its chain, as store/s3's ResponseError and
// TransportError have: 5xx, throttling, timeouts, refused, reset or cut
// connections), and, for any backend, network timeouts, ECONNRESET,
// ECONNREFUSED, EPIPE and io.ErrUnexpectedEOF. Everything else is final:
// not found, invalid keys and ranges, corrupt content, size limits, 4xx
// answers such as AccessDenied, the context's end, and the Put reader's own
// errors.
//
// Every wrapped operation is idempotent, and the wrapper keeps it so:
//
//   - Has, Delete: repeated as they are (a DELETE of a gone object is nil).
//   - Put: repeated with the same bytes, which S3 and the other backends
//     turn into the same object (a lost answer to a Put that landed is
//     harmless). The body is replayed by seeking back if the reader is an
//     io.Seeker (bytes.Reader, os.File), else from a copy of what was read,
//     kept up to Policy.ReplayBuffer bytes; a failure after more than that
//     was consumed is returned, not retried.
//   - Get, GetRange: opening is repeated. A read that fails mid-stream is
//     resumed with a ranged read from where it stopped, only for
//     content-addressed keys (store.SHA256Digest): their content cannot
//     change between the attempts, so the bytes cannot mix two versions.
//     A whole Get of another key (tags, heads: small documents that may
//     change) reads up to mutableWhole bytes inside the retry loop and
//     starts over on a transient failure, so a cut never mixes versions
//     either; past that size, and for ranges of such keys, the read error
//     is returned.
//   - List: repeated, skipping the keys fn has already seen (List reports
//     keys in ascending order), so fn sees each key once. An error from fn
//     is returned as is.
//
// Conditional writes are not wrapped (a retried PutIfAbsent whose first
// attempt landed would report a conflict with itself).
package retry

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"syscall"
	"time"

	"github.com/warren-sandbox/warren/store"
)

// Policy bounds the retries. Zero fields take the defaults.
type Policy struct {
	// Attempts is the most tries of one operation, the first included
	// (default 6).
	Attempts int
	// MaxElapsed bounds the time from the first try to the start of the
	// last (default 30 s): no wait is begun that would end past it.
	MaxElapsed time.Duration
	// BaseDelay and MaxDelay shape the backoff: before retry n (1, 2, ...)
	// the wrapper waits a uniformly random time in [d/2, d] with
	// d = min(MaxDelay, BaseDelay·2^(n-1)) (defaults 50 ms and 2 s).
	BaseDelay, MaxDelay time.Duration
	// ReplayBuffer is how many bytes of a non-seekable Put body are kept to
	// replay it (default 16 MiB).
	ReplayBuffer int64
	// OnRetry, if set, is told of each retry before its wait (for logs and
	// metrics). attempt is the number of the failed try (1 = first).
	OnRetry func(op, key string, attempt int, err error, wait time.Duration)
}

// Defaults.
const (
	DefaultAttempts     = 6
	DefaultMaxElapsed   = 30 * time.Second
	DefaultBaseDelay    = 50 * time.Millisecond
	DefaultMaxDelay     = 2 * time.Second
	DefaultReplayBuffer = 16 << 20
)

func (p Policy) withDefaults() Policy {
	if p.Attempts <= 0 {
		p.Attempts = DefaultAttempts
	}
	if p.MaxElapsed <= 0 {
		p.MaxElapsed = DefaultMaxElapsed
	}
	if p.BaseDelay <= 0 {
		p.BaseDelay = DefaultBaseDelay
	}
	if p.MaxDelay <= 0 {
		p.MaxDelay = DefaultMaxDelay
	}
	if p.MaxDelay < p.BaseDelay {
		p.MaxDelay = p.BaseDelay
	}
	if p.ReplayBuffer <= 0 {
		p.ReplayBuffer = DefaultReplayBuffer
	}
	return p
}

// delay is the wait before retry n (n >= 1): "equal jitter", so waits
// grow even when the random draws are small.
func (p Policy) delay(n int) time.Duration {
	d := p.MaxDelay
	if n < 32 && p.BaseDelay<<(n-1) < d && p.BaseDelay<<(n-1) > 0 {
		d = p.BaseDelay << (n - 1)
	}
	return d/2 + rand.N(d/2+1)
}

// Transient reports whether err is worth another try (see the package doc).
func Transient(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	var t interface{ Transient() bool }
	if errors.As(err, &t) {
		return t.Transient()
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return true
	}
	for _, e := range []error{syscall.ECONNRESET, syscall.ECONNREFUSED, syscall.EPIPE, syscall.ECONNABORTED, io.ErrUnexpectedEOF} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// Error is the last error of an operation that ran out of attempts or
// time; it unwraps to that error.
type Error struct {
	Attempts int
	Elapsed  time.Duration
	Err      error
}

func (e *Error) Error() string {
	return fmt.Sprintf("%v (gave up after %d attempts in %v)", e.Err, e.Attempts, e.Elapsed.Round(time.Millisecond))
}
func (e *Error) Unwrap() error { return e.Err }

// Wrap returns s with retries under p. The result is a store.RangeGetter
// when s is one.
func Wrap(s store.Store, p Policy) store.Store {
	w := &Store{s: s, p: p.withDefaults()}
	if rg, ok := s.(store.RangeGetter); ok {
		return &rangeStore{w, rg}
	}
	return w
}

// Store is the wrapper (without GetRange; see Wrap).
type Store struct {
	s store.Store
	p Policy
}

type rangeStore struct {
	*Store
	rg store.RangeGetter
}

func (w *Store) do(ctx context.Context, name, key string, op func() error) error {
	return Do(ctx, w.p, name, key, op)
}

// Do runs op under p until it succeeds, fails for good (an error that is
// not Transient), or runs out of attempts or time; name and key label the
// retries for OnRetry and errors. Backends use it to retry a step in place
// (store/s3 retries multipart parts), where repeating the whole operation
// would cost more.
func Do(ctx context.Context, p Policy, name, key string, op func() error) error {
	w := struct{ p Policy }{p.withDefaults()}
	start := time.Now()
	for attempt := 1; ; attempt++ {
		err := op()
		if err == nil || !Transient(err) || ctx.Err() != nil {
			return err
		}
		elapsed := time.Since(start)
		wait := w.p.delay(attempt)
		if attempt >= w.p.Attempts || elapsed+wait > w.p.MaxElapsed {
			return &Error{Attempts: attempt, Elapsed: elapsed, Err: err}
		}
		if w.p.OnRetry != nil {
			w.p.OnRetry(name, key, attempt, err, wait)
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return &store.Error{Op: name, Key: key, Err: fmt.Errorf("%w (while waiting to retry after: %v)", ctx.Err(), err)}
		case <-t.C:
		}
	}
}

// Has implements store.Store.
func (w *Store) Has(ctx context.Context, key string) (ok bool, err error) {
	err = w.do(ctx, "has", key, func() (err error) {
		ok, err = w.s.Has(ctx, key)
		return err
	})
	return ok, err
}

// Delete implements store.Store.
func (w *Store) Delete(ctx context.Context, key string) error {
	return w.do(ctx, "delete", key, func() error { return w.s.Delete(ctx, key) })
}

// List implements store.Store; a retry skips the keys fn has seen.
func (w *Store) List(ctx context.Context, prefix string, fn func(key string, size int64) error) error {
	var last string
	seen := false
	var fnErr error
	err := w.do(ctx, "list", prefix, func() error {
		err := w.s.List(ctx, prefix, func(key string, size int64) error {
			if seen && key <= last {
				return nil
			}
			if err := fn(key, size); err != nil {
				fnErr = err
				return err
			}
			last, seen = key, true
			return nil
		})
		if fnErr != nil {
			return final{fnErr}
		}
		return err
	})
	if fnErr != nil {
		return fnErr // as is, even if it looks transient
	}
	return err
}

// Put implements store.Store, replaying the body on retries.
func (w *Store) Put(ctx context.Context, key string, r io.Reader) error {
	b := newReplay(r, w.p.ReplayBuffer)
	var last error
	return w.do(ctx, "put", key, func() error {
		if last != nil {
			if err := b.rewind(); err != nil {
				return final{fmt.Errorf("%w (not retried: %v)", last, err)}
			}
		}
		last = w.s.Put(ctx, key, b)
		if last != nil && b.srcErr != nil {
			return final{last}
		}
		return last
	})
}

// final hides an error's transience: a failed body is not cured by trying
// again.
type final struct{ error }

func (f final) Unwrap() error   { return f.error }
func (f final) Transient() bool { return false }

// Get implements store.Store.
func (w *Store) Get(ctx context.Context, key string) (io.ReadCloser, error) {
	return w.open(ctx, "get", key, 0, -1, func(off, n int64) (io.ReadCloser, error) {
		if off == 0 && n < 0 {
			return w.s.Get(ctx, key)
		}
		return store.GetRange(ctx, w.s, key, off, n)
	})
}

// GetRange implements store.RangeGetter.
func (w *rangeStore) GetRange(ctx context.Context, key string, off, n int64) (io.ReadCloser, error) {
	return w.open(ctx, "get-range", key, off, n, func(off, n int64) (io.ReadCloser, error) {
		return w.rg.GetRange(ctx, key, off, n)
	})
}

// open opens the range [off, off+n) (n < 0: to the end) with retries, and
// for content-addressed keys returns a reader that resumes after a failed
// read.
func (w *Store) open(ctx context.Context, name, key string, off, n int64, get func(off, n int64) (io.ReadCloser, error)) (io.ReadCloser, error) {
	var rc io.ReadCloser
	err := w.do(ctx, name, key, func() (err error) {
		rc, err = get(off, n)
		return err
	})
	if err != nil {
		return nil, err
	}
	if _, ok := store.SHA256Digest(key); !ok {
		if off != 0 || n >= 0 {
			return rc, nil
		}
		return w.whole(ctx, name, key, rc, get)
	}
	return &resumer{w: w, ctx: ctx, name: name, key: key, rc: rc, off: off, n: n, get: get}, nil
}

// mutableWhole bounds what whole keeps in memory of an object that is not
// content-addressed; such objects are documents of a few hundred bytes.
const mutableWhole = 1 << 20

// whole reads an object that may change (not content-addressed) from its
// start, up to mutableWhole bytes, and on a transient failure of the read
// opens it again and starts over: the bytes returned come from one
// version. A larger object returns what was read followed by the rest of
// the stream, whose failures are the caller's.
func (w *Store) whole(ctx context.Context, name, key string, rc io.ReadCloser, get func(off, n int64) (io.ReadCloser, error)) (io.ReadCloser, error) {
	var buf []byte
	first := true
	err := w.do(ctx, name, key, func() error {
		if !first {
			var err error
			if rc, err = get(0, -1); err != nil {
				return err
			}
		}
		first = false
		b, err := io.ReadAll(io.LimitReader(rc, mutableWhole+1))
		if err != nil {
			rc.Close()
			if !Transient(err) {
				return final{err}
			}
			return err
		}
		buf = b
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(buf) <= mutableWhole {
		rc.Close()
		return io.NopCloser(ctxReader{ctx, bytes.NewReader(buf)}), nil
	}
	return struct {
		io.Reader
		io.Closer
	}{io.MultiReader(bytes.NewReader(buf), rc), rc}, nil
}

// resumer reads a content-addressed object and, when a read fails with a
// transient error, reopens the rest of the range and goes on.
type resumer struct {
	w    *Store
	ctx  context.Context
	name string
	key  string
	rc   io.ReadCloser
	off  int64 // next offset to read
	n    int64 // bytes left (< 0: to the end)
	get  func(off, n int64) (io.ReadCloser, error)
}

func (r *resumer) Read(p []byte) (int, error) {
	if r.n == 0 {
		return 0, io.EOF
	}
	if r.n > 0 && int64(len(p)) > r.n {
		p = p[:r.n]
	}
	for {
		k, err := r.rc.Read(p)
		r.off += int64(k)
		if r.n > 0 {
			r.n -= int64(k)
		}
		if k > 0 || err == nil || err == io.EOF || !Transient(err) || r.ctx.Err() != nil {
			if k > 0 && err != nil && err != io.EOF {
				err = nil // report the bytes now, the error on the next read
			}
			return k, err
		}
		// Nothing read and a transient failure: reopen from r.off. do
		// counts the failed read as the first attempt.
		failed := err
		r.rc.Close()
		r.rc = nil
		first := true
		err = r.w.do(r.ctx, "read", r.key, func() (err error) {
			if first {
				first = false
				return failed
			}
			r.rc, err = r.get(r.off, r.n)
			return err
		})
		if err != nil {
			r.rc = io.NopCloser(errReader{err})
			return 0, err
		}
	}
}

func (r *resumer) Close() error {
	if r.rc == nil {
		return nil
	}
	return r.rc.Close()
}

// ctxReader stops at its next read once ctx is done, as a stream would.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }
