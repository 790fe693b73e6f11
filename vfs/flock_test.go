package vfs_test

import (
	"context"
	"errors"
	"io/fs"
	"syscall"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/vfs"
	"github.com/warren-sandbox/warren/vfs/memdrive"
)

// lockTrees are the three places a lock lives: the sandbox's own lock
// table, a volume's (Mount), a drive's (MountRemote). Each opener opens
// the same file twice from two sandboxes sharing the volume or drive
// (for the sandbox's own tree, twice in one sandbox).
func lockTrees(t *testing.T) map[string][2]func() *vfs.File {
	t.Helper()
	own := vfs.New(vfs.Options{})
	vol := vfs.New(vfs.Options{})
	d := memdrive.New(0)
	a, b := vfs.New(vfs.Options{}), vfs.New(vfs.Options{})
	for _, root := range []*vfs.FS{a, b} {
		if err := root.Mount("/vol", vol, vfs.MountOptions{Name: "volume v"}); err != nil {
			t.Fatal(err)
		}
		if err := root.MountRemote("/drive", d, vfs.MountOptions{Name: "drive d"}); err != nil {
			t.Fatal(err)
		}
	}
	opener := func(fsys *vfs.FS, name string) func() *vfs.File {
		return func() *vfs.File {
			h, err := fsys.OpenFile(name, vfs.O_CREATE|vfs.O_RDWR, 0o644)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { h.Close() })
			return h
		}
	}
	return map[string][2]func() *vfs.File{
		"own":    {opener(own, "/lock"), opener(own, "/lock")},
		"volume": {opener(a, "/vol/lock"), opener(b, "/vol/lock")},
		"drive":  {opener(a, "/drive/lock"), opener(b, "/drive/lock")},
	}
}

func TestFlock(t *testing.T) {
	ctx := context.Background()
	const (
		sh, ex, un, nb = vfs.LOCK_SH, vfs.LOCK_EX, vfs.LOCK_UN, vfs.LOCK_NB
	)
	type step struct {
		h    int // which handle (0, 1, 2)
		how  int
		want syscall.Errno
	}
	for _, tc := range []struct {
		name  string
		steps []step
	}{
		{"shared with shared", []step{{0, sh, 0}, {1, sh | nb, 0}, {2, sh | nb, 0}}},
		{"shared blocks exclusive", []step{{0, sh, 0}, {1, ex | nb, syscall.EWOULDBLOCK}, {0, un, 0}, {1, ex | nb, 0}}},
		{"exclusive blocks both", []step{{0, ex, 0}, {1, ex | nb, syscall.EWOULDBLOCK}, {1, sh | nb, syscall.EWOULDBLOCK}}},
		{"relock is a no-op", []step{{0, ex, 0}, {0, ex | nb, 0}, {1, sh | nb, syscall.EWOULDBLOCK}}},
		{"downgrade lets readers in", []step{{0, ex, 0}, {0, sh | nb, 0}, {1, sh | nb, 0}}},
		{"upgrade alone is in place", []step{{0, sh, 0}, {0, ex | nb, 0}, {1, sh | nb, syscall.EWOULDBLOCK}}},
		// A conversion that must wait drops the old lock (Linux): after
		// the failed upgrade of 0, 2 gets the exclusive lock once 1 goes.
		{"failed upgrade drops the lock", []step{{0, sh, 0}, {1, sh, 0}, {0, ex | nb, syscall.EWOULDBLOCK},
			{2, ex | nb, syscall.EWOULDBLOCK}, {1, un, 0}, {2, ex | nb, 0}}},
		{"unlock without a lock", []step{{0, un, 0}, {1, ex | nb, 0}}},
		{"bad operation", []step{{0, sh | ex, syscall.EINVAL}, {0, 0, syscall.EINVAL}, {0, nb, syscall.EINVAL}}},
	} {
		for kind, open := range lockTrees(t) {
			t.Run(tc.name+"/"+kind, func(t *testing.T) {
				hs := []*vfs.File{open[0](), open[1](), open[1]()}
				for i, s := range tc.steps {
					err := hs[s.h].Flock(ctx, s.how)
					if got := errnoOf(err); got != s.want {
						t.Fatalf("step %d (handle %d, how %#x): %v, want %v", i, s.h, s.how, err, s.want)
					}
				}
			})
		}
	}
}

// TestFlockWaits: a blocking lock waits for the holder, a close releases,
// a cancelled ctx ends the wait with EINTR, a handle closed while it waits
// gets EBADF (own and volume trees) or the drive's closed error.
func TestFlockWaits(t *testing.T) {
	for kind, open := range lockTrees(t) {
		t.Run(kind, func(t *testing.T) {
			a, b := open[0](), open[1]()
			if err := a.Flock(context.Background(), vfs.LOCK_EX); err != nil {
				t.Fatal(err)
			}
			got := make(chan error, 1)
			go func() { got <- b.Flock(context.Background(), vfs.LOCK_EX) }()
			time.Sleep(20 * time.Millisecond)
			select {
			case err := <-got:
				t.Fatalf("the second exclusive lock did not wait: %v", err)
			default:
			}
			if err := a.Close(); err != nil { // Close releases
				t.Fatal(err)
			}
			if err := recv(t, got); err != nil {
				t.Fatalf("waiter after the close: %v", err)
			}
			// b holds it now: a cancelled wait ends with EINTR.
			c := open[0]()
			ctx, cancel := context.WithCancel(context.Background())
			go func() { got <- c.Flock(ctx, vfs.LOCK_SH) }()
			time.Sleep(20 * time.Millisecond)
			cancel()
			if err := recv(t, got); errnoOf(err) != syscall.EINTR {
				t.Fatalf("cancelled wait: %v, want EINTR", err)
			}
			// Closing the waiting handle ends its wait.
			go func() { got <- c.Flock(context.Background(), vfs.LOCK_SH) }()
			time.Sleep(20 * time.Millisecond)
			c.Close()
			select {
			case err := <-got:
				if err == nil {
					t.Fatalf("a closed handle got the lock")
				}
			case <-time.After(5 * time.Second):
				t.Fatalf("closing the waiting handle did not end its wait")
			}
			if err := c.Flock(context.Background(), vfs.LOCK_SH); !errors.Is(err, syscall.EBADF) && !errors.Is(err, fs.ErrClosed) {
				t.Errorf("flock on a closed handle: %v", err)
			}
			// b still holds the lock; after its close a new handle gets it.
			d := open[1]()
			if err := d.Flock(context.Background(), vfs.LOCK_SH|vfs.LOCK_NB); errnoOf(err) != syscall.EWOULDBLOCK {
				t.Fatalf("b's lock lost: %v", err)
			}
			b.Close()
			if err := d.Flock(context.Background(), vfs.LOCK_EX|vfs.LOCK_NB); err != nil {
				t.Fatalf("after b's close: %v", err)
			}
		})
	}
}

// recv waits for a Flock's result, failing the test after 5 s (a wait
// that never ends is the bug it looks for).
func recv(t *testing.T, got chan error) error {
	t.Helper()
	select {
	case err := <-got:
		return err
	case <-time.After(5 * time.Second):
		t.Fatalf("the lock wait did not end")
		return nil
	}
}

// TestFlockScope: a fork is another filesystem (no shared locks); other
// files and other handles' unlocks do not touch a lock.
func TestFlockScope(t *testing.T) {
	ctx := context.Background()
	root := vfs.New(vfs.Options{})
	if err := root.WriteFile("/l", nil, 0o644); err != nil {
		t.Fatal(err)
	}
	a, err := root.Open("/l")
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if err := a.Flock(ctx, vfs.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	fk := root.Fork()
	f, err := fk.Open("/l")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := f.Flock(ctx, vfs.LOCK_EX|vfs.LOCK_NB); err != nil {
		t.Errorf("a fork shares the parent's locks: %v", err)
	}
	if err := root.WriteFile("/other", nil, 0o644); err != nil {
		t.Fatal(err)
	}
	o, err := root.Open("/other")
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	if err := o.Flock(ctx, vfs.LOCK_EX|vfs.LOCK_NB); err != nil {
		t.Errorf("another file is locked too: %v", err)
	}
	b, err := root.Open("/l")
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if err := b.Flock(ctx, vfs.LOCK_UN); err != nil {
		t.Fatal(err)
	}
	if err := b.Flock(ctx, vfs.LOCK_SH|vfs.LOCK_NB); errnoOf(err) != syscall.EWOULDBLOCK {
		t.Errorf("another handle's unlock released a's lock: %v", err)
	}
	// A rename does not move the lock off the file (it is the inode's).
	if err := root.Rename("/l", "/l2"); err != nil {
		t.Fatal(err)
	}
	c, err := root.Open("/l2")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Flock(ctx, vfs.LOCK_SH|vfs.LOCK_NB); errnoOf(err) != syscall.EWOULDBLOCK {
		t.Errorf("after a rename the lock is gone: %v", err)
	}
}

// ctxDrive is a drive whose ended lock waits answer ctx.Err() instead of
// EINTR, as a drive client over a network call might.
type ctxDrive struct{ *memdrive.Drive }

type ctxFile struct{ vfs.RemoteFile }

func (d ctxDrive) OpenFile(name string, flag int, perm fs.FileMode) (vfs.RemoteFile, error) {
	f, err := d.Drive.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return ctxFile{f}, nil
}

func (f ctxFile) Flock(ctx context.Context, how int) error {
	if err := f.RemoteFile.Flock(ctx, how); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return err
	}
	return nil
}

// TestFlockRemoteEndedWait: whatever error a drive gives for a wait its
// ctx ended, the handle answers EINTR (what flock -w looks for); a
// conflict under LOCK_NB stays EWOULDBLOCK.
func TestFlockRemoteEndedWait(t *testing.T) {
	root := vfs.New(vfs.Options{})
	if err := root.MountRemote("/drive", ctxDrive{memdrive.New(0)}, vfs.MountOptions{}); err != nil {
		t.Fatal(err)
	}
	open := func() *vfs.File {
		h, err := root.OpenFile("/drive/l", vfs.O_CREATE|vfs.O_RDWR, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { h.Close() })
		return h
	}
	a, b := open(), open()
	if err := a.Flock(context.Background(), vfs.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if err := b.Flock(ctx, vfs.LOCK_EX); errnoOf(err) != syscall.EINTR {
		t.Errorf("ended wait: %v, want EINTR", err)
	}
	if err := b.Flock(context.Background(), vfs.LOCK_EX|vfs.LOCK_NB); errnoOf(err) != syscall.EWOULDBLOCK {
		t.Errorf("LOCK_NB conflict: %v, want EWOULDBLOCK", err)
	}
}
