package s3

import (
	"context"
	"fmt"
	"io"
	"os"
	"sync/atomic"
	"time"
)

// watchdog cancels a request's context once the request has made no
// progress for d: net/http bounds neither a stalled body upload nor a
// stalled download, and callers' contexts often have no deadline.
type watchdog struct {
	d      time.Duration
	t      *time.Timer
	fired  atomic.Bool
	cancel context.CancelFunc
}

// watch returns the context for one request and its watchdog; stop it when
// the request (and its response body) is done.
func (s *Store) watch(ctx context.Context) (context.Context, *watchdog) {
	rctx, cancel := context.WithCancel(ctx)
	w := &watchdog{d: s.idle, cancel: cancel}
	w.t = time.AfterFunc(s.idle, func() { w.fired.Store(true); cancel() })
	return rctx, w
}

func (w *watchdog) kick()  { w.t.Reset(w.d) }
func (w *watchdog) pause() { w.t.Stop() }
func (w *watchdog) stop()  { w.t.Stop(); w.cancel() }

func (w *watchdog) timeout() error {
	return &TransportError{Err: fmt.Errorf("no progress for %v (server stalled): %w", w.d, os.ErrDeadlineExceeded)}
}

// reader counts reads of a request body as progress.
func (w *watchdog) reader(r io.Reader) io.Reader { return &kickReader{r, w} }

type kickReader struct {
	r io.Reader
	w *watchdog
}

func (k *kickReader) Read(p []byte) (int, error) {
	n, err := k.r.Read(p)
	if n > 0 {
		k.w.kick()
	}
	return n, err
}

// timed runs one request under a watchdog and maps its error.
func (s *Store) timed(ctx context.Context, fn func(rctx context.Context, w *watchdog) error) error {
	rctx, w := s.watch(ctx)
	defer w.stop()
	if err := fn(rctx, w); err != nil {
		return s.mapErrW(ctx, w, err)
	}
	return nil
}

// mapErrW is mapErr for a request under w: a cancel by the watchdog (not
// by the caller) is a transient timeout.
func (s *Store) mapErrW(ctx context.Context, w *watchdog, err error) error {
	if ctx.Err() == nil && w.fired.Load() {
		return w.timeout()
	}
	return s.mapErr(ctx, err)
}
