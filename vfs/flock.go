package vfs

import (
	"context"
	"errors"
	"syscall"
)

// Advisory locks, as flock(2): a lock belongs to a handle (an open file
// description), not to a path or a process. Handles on the same FS share
// one lock table keyed by inode, so two shells of a sandbox (or a command
// and a background job) exclude each other; a Fork starts with no locks
// (it is another filesystem). Under a volume (Mount) the volume's FS keeps
// the table; under a drive (MountRemote) the RemoteFile does, so locks
// there hold between sandboxes. Closing a handle releases its lock.

// lockState is one inode's locks.
type lockState struct {
	shared  map[*File]bool
	excl    *File
	waiters int
	wake    chan struct{} // closed and replaced when a lock goes
}

// Flock takes or releases an advisory lock on the handle's file: how is
// LOCK_SH, LOCK_EX or LOCK_UN, optionally | LOCK_NB (then EWOULDBLOCK when
// another handle holds a conflicting lock). A blocking call waits until
// the lock is free or ctx is done (then EINTR, as flock(2) interrupted by
// a signal). A handle holds one lock: asking for the other kind converts
// it, in place when nothing conflicts, otherwise by dropping it first and
// waiting, as Linux does (so a failed LOCK_NB conversion leaves none).
func (h *File) Flock(ctx context.Context, how int) error {
	op := how &^ LOCK_NB
	if op != LOCK_SH && op != LOCK_EX && op != LOCK_UN {
		return perr("flock", h.name, syscall.EINVAL)
	}
	h.mu.Lock()
	closed := h.closed
	h.mu.Unlock()
	if closed {
		return perr("flock", h.name, syscall.EBADF)
	}
	if h.rf != nil {
		// The RemoteFile may wait: h.mu is not held, so the handle's
		// other calls (and Close) go on meanwhile.
		if err := h.rf.Flock(ctx, how); err != nil {
			if ctx.Err() != nil && !errors.Is(err, syscall.EWOULDBLOCK) {
				// One answer for an ended wait, whatever the drive's.
				return perr("flock", h.name, syscall.EINTR)
			}
			return h.rm.rerr("flock", h.name, err)
		}
		h.mu.Lock()
		h.locked = op != LOCK_UN
		h.mu.Unlock()
		return nil
	}
	return h.fs.flock(ctx, h, op, how&LOCK_NB != 0)
}

func (f *FS) flock(ctx context.Context, h *File, op int, nb bool) error {
	f.lockMu.Lock()
	defer f.lockMu.Unlock()
	if h.lkClosed {
		return perr("flock", h.name, syscall.EBADF)
	}
	if op == LOCK_UN {
		f.release(h)
		return nil
	}
	if f.locks == nil {
		f.locks = map[uint64]*lockState{}
	}
	st := f.locks[h.ino]
	if st == nil {
		st = &lockState{wake: make(chan struct{})}
		f.locks[h.ino] = st
	}
	for {
		if st.free(h, op) {
			st.excl = nil
			delete(st.shared, h)
			if op == LOCK_EX {
				st.excl = h
			} else {
				if st.shared == nil {
					st.shared = map[*File]bool{}
				}
				st.shared[h] = true
			}
			return nil
		}
		f.release(h) // a conversion that must wait drops the old lock
		if nb {
			f.forget(h.ino, st)
			return perr("flock", h.name, syscall.EWOULDBLOCK)
		}
		st.waiters++
		wake := st.wake
		f.lockMu.Unlock()
		var done bool
		select {
		case <-wake:
		case <-ctx.Done():
			done = true
		}
		f.lockMu.Lock()
		st.waiters--
		switch {
		case h.lkClosed:
			f.forget(h.ino, st)
			return perr("flock", h.name, syscall.EBADF)
		case done:
			f.forget(h.ino, st)
			return perr("flock", h.name, syscall.EINTR)
		}
	}
}

// free reports whether h may hold an op lock (other handles only count).
func (st *lockState) free(h *File, op int) bool {
	if st.excl != nil && st.excl != h {
		return false
	}
	if op == LOCK_EX {
		for o := range st.shared {
			if o != h {
				return false
			}
		}
	}
	return true
}

// release drops h's lock, if any, and wakes the inode's waiters
// (f.lockMu held).
func (f *FS) release(h *File) {
	st := f.locks[h.ino]
	if st == nil || st.excl != h && !st.shared[h] {
		return
	}
	if st.excl == h {
		st.excl = nil
	}
	delete(st.shared, h)
	close(st.wake)
	st.wake = make(chan struct{})
	f.forget(h.ino, st)
}

// forget drops an inode's state once nothing holds or waits for it.
func (f *FS) forget(ino uint64, st *lockState) {
	if st.excl == nil && len(st.shared) == 0 && st.waiters == 0 && f.locks[ino] == st {
		delete(f.locks, ino)
	}
}

// unlockOnClose releases the handle's lock as it closes (h.mu held): its
// own waits end with EBADF.
func (h *File) unlockOnClose() {
	if h.rf != nil {
		if h.locked {
			h.rf.Flock(context.Background(), LOCK_UN)
			h.locked = false
		}
		return
	}
	f := h.fs
	f.lockMu.Lock()
	defer f.lockMu.Unlock()
	h.lkClosed = true
	if st := f.locks[h.ino]; st != nil {
		f.release(h)
		if st.waiters > 0 {
			close(st.wake) // a wait of h itself ends
			st.wake = make(chan struct{})
		}
	}
}
