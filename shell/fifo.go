package shell

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"sync"

	"github.com/warren-sandbox/warren/vfs"
)

// FIFOs. The vfs stores a fifo as an inode with fs.ModeNamedPipe and no
// semantics (it would open as an empty file, so a read returned nothing at
// once). The shell gives them Linux's: opening for reading waits for a
// writer and opening for writing waits for a reader (both bounded by the
// Run's deadline and cancellation, since the only other party is inside
// the same Run); O_RDWR does not wait. Readers and writers of one fifo
// meet in one of the shell's pipes: a read after the last writer closed is
// end of file, a write after the last reader closed is EPIPE. Fifos are
// per session: a Run and the background jobs of earlier Runs meet in them.

type fifo struct {
	mu      sync.Mutex
	cond    sync.Cond
	readers int
	writers int
	p       *pipe // the current pipe; nil when nobody has it open
	ropens  int   // opens so far, so that a side that came and went counts
	wopens  int
}

// maxIdleFifos is how many fifos a session keeps before it forgets the
// ones nobody holds open.
const maxIdleFifos = 256

// fifoTable is a session's fifos by path: its Runs and its background
// jobs (which outlive Runs) meet in them.
type fifoTable struct {
	mu sync.Mutex
	m  map[string]*fifo
}

// fifoFor returns the session's fifo for path.
func (r *runner) fifoFor(path string) *fifo {
	t := &r.sh.fifos
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.m == nil {
		t.m = map[string]*fifo{}
	}
	f := t.m[path]
	if f == nil {
		if len(t.m) >= maxIdleFifos {
			// Forget the fifos nobody holds open (a session lives long).
			for k, g := range t.m {
				g.mu.Lock()
				if g.readers == 0 && g.writers == 0 && g.p == nil {
					delete(t.m, k)
				}
				g.mu.Unlock()
			}
		}
		f = &fifo{}
		f.cond.L = &f.mu
		t.m[path] = f
	}
	return f
}

// isFifo reports whether path (following symlinks) is a fifo of the vfs.
func (r *runner) isFifo(path string) bool {
	fi, err := r.sh.cfg.FS.Stat(path)
	return err == nil && fi.Mode()&fs.ModeNamedPipe != 0
}

// readOnlyOpen: flag opens for reading only, which leaves the tree as it
// is (no O_CREATE, no O_TRUNC).
func readOnlyOpen(flag int) bool {
	return flag&vfs.O_ACCMODE == vfs.O_RDONLY && flag&(vfs.O_CREATE|vfs.O_TRUNC) == 0
}

// openVFS opens path of the vfs in one walk instead of isFifo's Stat and
// then the open: with vfs.O_NOFIFO the vfs refuses a fifo (ErrIsFifo)
// before it publishes anything or asks its write gate, where a plain open
// for writing would publish a new tree (and copy base directories up)
// even on a fifo, and make the session look changed. fifo: path is a
// fifo (f is nil; open it with openFifo). Another error is the vfs's;
// only then is isFifo asked, as before, so that a fifo the vfs refuses
// for another reason (a read-only mount, a closed write gate, O_NOFOLLOW
// on a link to one) still opens as a fifo.
func (r *runner) openVFS(path string, flag int, perm fs.FileMode) (f *vfs.File, fifo bool, err error) {
	f, err = r.sh.cfg.FS.OpenFile(path, flag|vfs.O_NOFIFO, perm)
	switch {
	case err == nil:
		return f, false, nil
	case errors.Is(err, vfs.ErrIsFifo):
		return nil, true, nil
	}
	return nil, r.isFifo(path), err
}

// openFifo opens the fifo at path as flag says.
func (r *runner) openFifo(path string, flag int) (any, error) {
	f := r.fifoFor(path)
	rd := flag&(vfs.O_WRONLY|vfs.O_RDWR) == 0 || flag&vfs.O_RDWR != 0
	wr := flag&(vfs.O_WRONLY|vfs.O_RDWR) != 0
	ctx := r.context()
	stop := context.AfterFunc(ctx, func() {
		f.mu.Lock()
		f.cond.Broadcast()
		f.mu.Unlock()
	})
	defer stop()
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.p == nil {
		f.p = r.newPipe()
	}
	p := f.p
	r0, w0 := f.ropens, f.wopens
	if rd {
		f.readers++
		f.ropens++
	}
	if wr {
		f.writers++
		f.wopens++
	}
	f.cond.Broadcast()
	// Wait for the other side (not for O_RDWR, which is both); one that
	// opened and closed meanwhile counts.
	for !(rd && wr) && ((rd && f.writers == 0 && f.wopens == w0) || (wr && f.readers == 0 && f.ropens == r0)) {
		if err := ctx.Err(); err != nil {
			if rd {
				f.readers--
			}
			if wr {
				f.writers--
			}
			f.settle()
			return nil, &fs.PathError{Op: "open", Path: path, Err: context.Cause(ctx)}
		}
		f.cond.Wait()
	}
	return &fifoEnd{f: f, p: p, rd: rd, wr: wr}, nil
}

// settle gives the pipe up when nobody holds the fifo; f.mu is held.
func (f *fifo) settle() {
	if f.readers == 0 && f.writers == 0 && f.p != nil {
		f.p.CloseWrite()
		f.p.CloseRead()
		f.p = nil
		f.cond.Broadcast()
	}
}

// fifoEnd is one open of a fifo.
type fifoEnd struct {
	f      *fifo
	p      *pipe
	rd, wr bool
	once   sync.Once
}

func (e *fifoEnd) Read(b []byte) (int, error) {
	if !e.rd {
		return 0, &fs.PathError{Op: "read", Path: "fifo", Err: fs.ErrPermission}
	}
	return e.p.Read(b)
}

func (e *fifoEnd) Write(b []byte) (int, error) {
	if !e.wr {
		return 0, &fs.PathError{Op: "write", Path: "fifo", Err: fs.ErrPermission}
	}
	return e.p.Write(b)
}

func (e *fifoEnd) Close() error {
	e.once.Do(func() {
		f := e.f
		f.mu.Lock()
		defer f.mu.Unlock()
		if e.rd {
			f.readers--
			if f.readers == 0 && f.p == e.p {
				e.p.CloseRead()
			}
		}
		if e.wr {
			f.writers--
			if f.writers == 0 && f.p == e.p {
				e.p.CloseWrite()
			}
		}
		if f.p == e.p {
			f.settle()
		}
	})
	return nil
}

var _ io.ReadWriteCloser = (*fifoEnd)(nil)
