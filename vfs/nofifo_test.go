package vfs

import (
	"errors"
	"io/fs"
	"syscall"
	"testing"
	"testing/fstest"
)

// nofifoFS has a fifo in the delta (/fifo), one in base directories
// (/srv/q/p, which a writing walk would copy up), a link to the latter
// and a regular file.
func nofifoFS(t *testing.T) *FS {
	t.Helper()
	f := New(Options{Base: fstest.MapFS{
		"srv/q/p":   {Mode: fs.ModeNamedPipe | 0o644},
		"srv/q/reg": {Mode: 0o644, Data: []byte("base\n")},
	}})
	must(t, f.Mknod("/fifo", fs.ModeNamedPipe|0o600, 0))
	must(t, f.Symlink("/srv/q/p", "/lf"))
	must(t, f.WriteFile("/log", []byte("a\n"), 0o644))
	return f
}

// TestOpenNoFifo: with O_NOFIFO every open of a fifo, whatever its other
// flags, is ErrIsFifo in a PathError naming the path, and publishes
// nothing; without it a writing open of the same fifo does publish (what
// the shell avoided with a Stat first).
func TestOpenNoFifo(t *testing.T) {
	f := nofifoFS(t)
	flags := []struct {
		what string
		flag int
	}{
		{"read", O_RDONLY},
		{"read dir", O_RDONLY | O_DIRECTORY},
		{"write", O_WRONLY},
		{"append", O_WRONLY | O_APPEND | O_CREATE},
		{"rdwr", O_RDWR},
		{"trunc", O_WRONLY | O_CREATE | O_TRUNC},
		{"excl", O_WRONLY | O_CREATE | O_EXCL},
	}
	for _, name := range []string{"/fifo", "/srv/q/p", "/lf", "/srv/../srv/q/p"} {
		for _, c := range flags {
			cur := f.cur.Load()
			h, err := f.OpenFile(name, c.flag|O_NOFIFO, 0o644)
			var pe *fs.PathError
			if name == "/lf" && c.flag&O_EXCL != 0 {
				// O_EXCL does not follow the link, which exists.
				if !errors.Is(err, syscall.EEXIST) {
					t.Errorf("%s %s: %v, want EEXIST", name, c.what, err)
				}
			} else if !errors.Is(err, ErrIsFifo) || !errors.As(err, &pe) || pe.Path != name || pe.Op != "open" {
				t.Errorf("%s %s: %v (handle %v), want a PathError open %s carrying ErrIsFifo", name, c.what, err, h, name)
			}
			if f.cur.Load() != cur {
				t.Errorf("%s %s: refused open published a tree", name, c.what)
			}
		}
	}
	if n := len(f.open); n != 0 {
		t.Errorf("refused opens left %d inodes registered open", n)
	}
	// The test can fail: without the flag the open publishes.
	cur := f.cur.Load()
	h, err := f.OpenFile("/srv/q/p", O_WRONLY, 0)
	must(t, err)
	h.Close()
	if f.cur.Load() == cur {
		t.Errorf("a writing open of a base fifo without O_NOFIFO published nothing: the check above proves nothing")
	}
}

// TestOpenNoFifoFiles: for anything but a fifo O_NOFIFO changes nothing:
// the same results, the same errors, and the handle does not carry it.
func TestOpenNoFifoFiles(t *testing.T) {
	for _, c := range []struct {
		what string
		name string
		flag int
		err  error
		read string // content after writing "b\n" (writing opens)
	}{
		{"append", "/log", O_WRONLY | O_APPEND | O_CREATE, nil, "a\nb\n"},
		{"trunc", "/log", O_WRONLY | O_TRUNC, nil, "b\n"},
		{"create", "/new", O_WRONLY | O_CREATE, nil, "b\n"},
		{"base file", "/srv/q/reg", O_WRONLY | O_APPEND, nil, "base\nb\n"},
		{"read", "/log", O_RDONLY, nil, "a\n"},
		{"missing", "/none", O_WRONLY, syscall.ENOENT, ""},
		{"missing read", "/none", O_RDONLY, syscall.ENOENT, ""},
		{"dir", "/srv", O_WRONLY, syscall.EISDIR, ""},
		{"excl", "/log", O_WRONLY | O_CREATE | O_EXCL, syscall.EEXIST, ""},
		{"nofollow link", "/lf", O_WRONLY | O_NOFOLLOW, syscall.ELOOP, ""},
	} {
		for _, nf := range []int{0, O_NOFIFO} {
			f := nofifoFS(t)
			h, err := f.OpenFile(c.name, c.flag|nf, 0o644)
			if c.err != nil {
				if !errors.Is(err, c.err) {
					t.Errorf("%s (nofifo %v): %v, want %v", c.what, nf != 0, err, c.err)
				}
				continue
			}
			must(t, err)
			if h.flag != c.flag {
				t.Errorf("%s: handle flag %#x, want %#x", c.what, h.flag, c.flag)
			}
			if c.flag&O_ACCMODE != O_RDONLY {
				if _, err := h.Write([]byte("b\n")); err != nil {
					t.Errorf("%s: write: %v", c.what, err)
				}
			}
			must(t, h.Close())
			if b, err := f.ReadFile(c.name); err != nil || string(b) != c.read {
				t.Errorf("%s (nofifo %v): %q %v, want %q", c.what, nf != 0, b, err, c.read)
			}
		}
	}
}

// TestOpenNoFifoGate: the gate is not asked for a fifo (opening one adds
// nothing); for a file it is, a refusal leaves the tree as it was, and a
// tree changed while the gate ran is walked again.
func TestOpenNoFifoGate(t *testing.T) {
	f := nofifoFS(t)
	refuse := errors.New("over budget")
	calls := 0
	var gateErr error
	var during func()
	f.SetWriteGate(func() error {
		calls++
		if during != nil {
			d := during
			during = nil
			d()
		}
		return gateErr
	})
	gateErr = refuse
	if _, err := f.OpenFile("/srv/q/p", O_WRONLY|O_NOFIFO, 0); !errors.Is(err, ErrIsFifo) || calls != 0 {
		t.Errorf("fifo under a refusing gate: %v after %d gate calls, want ErrIsFifo and none", err, calls)
	}
	cur := f.cur.Load()
	if _, err := f.OpenFile("/log", O_WRONLY|O_APPEND|O_NOFIFO, 0); !errors.Is(err, refuse) || calls != 1 {
		t.Errorf("file under a refusing gate: %v after %d gate calls, want the gate's error after one", err, calls)
	}
	if f.cur.Load() != cur || len(f.open) != 0 {
		t.Errorf("a refused open published a tree or left an inode open (%d)", len(f.open))
	}
	gateErr = nil
	// The gate passes and nothing changed: the walk's copy is published.
	h, err := f.OpenFile("/new", O_WRONLY|O_CREATE|O_NOFIFO, 0o644)
	must(t, err)
	if _, err := h.Write([]byte("n")); err != nil {
		t.Error(err)
	}
	must(t, h.Close())
	// Another writer changes the tree while the gate runs: the open is
	// walked again on that tree, keeping both changes.
	during = func() { must(t, f.WriteFile("/other", []byte("o"), 0o644)) }
	h, err = f.OpenFile("/srv/q/reg", O_WRONLY|O_TRUNC|O_NOFIFO, 0)
	must(t, err)
	if !f.isOpen(h.ino) {
		t.Errorf("handle opened after a second walk is not registered open")
	}
	if _, err := h.Write([]byte("t")); err != nil {
		t.Error(err)
	}
	must(t, h.Close())
	for name, want := range map[string]string{"/new": "n", "/other": "o", "/srv/q/reg": "t"} {
		if b, err := f.ReadFile(name); err != nil || string(b) != want {
			t.Errorf("%s: %q %v, want %q", name, b, err, want)
		}
	}
}

// TestOpenNoFifoQuota: quotas hold on the gated path (the copy published
// after the gate is checked) and the ungated one.
func TestOpenNoFifoQuota(t *testing.T) {
	for _, gate := range []bool{false, true} {
		f := nofifoFS(t)
		if gate {
			f.SetWriteGate(func() error { return nil })
		}
		f.SetQuota(0, f.Usage().Inodes)
		cur := f.cur.Load()
		_, err := f.OpenFile("/new", O_WRONLY|O_CREATE|O_NOFIFO, 0o644)
		var qe *QuotaError
		if !errors.As(err, &qe) || !errors.Is(err, syscall.EDQUOT) {
			t.Errorf("gate %v: %v, want an inode QuotaError", gate, err)
		}
		if f.cur.Load() != cur || len(f.open) != 0 {
			t.Errorf("gate %v: a refused open published a tree or left an inode open", gate)
		}
		if _, err := f.OpenFile("/fifo", O_WRONLY|O_CREATE|O_NOFIFO, 0o644); !errors.Is(err, ErrIsFifo) {
			t.Errorf("gate %v: fifo at the quota: %v, want ErrIsFifo", gate, err)
		}
	}
}

// TestOpenNoFifoMounts: a mounted tree refuses its fifos (the error names
// the path as opened) and a read-only mount still says EROFS first (the
// remote mount: TestOpenNoFifoRemote).
func TestOpenNoFifoMounts(t *testing.T) {
	root := New(Options{})
	vol := nofifoFS(t)
	ro := nofifoFS(t)
	must(t, root.Mount("/vol", vol, MountOptions{Name: "volume v"}))
	must(t, root.Mount("/ro", ro, MountOptions{Name: "volume r", ReadOnly: true}))
	vcur := vol.cur.Load()
	_, err := root.OpenFile("/vol/srv/q/p", O_WRONLY|O_APPEND|O_CREATE|O_NOFIFO, 0o644)
	var pe *fs.PathError
	if !errors.Is(err, ErrIsFifo) || !errors.As(err, &pe) || pe.Path != "/vol/srv/q/p" {
		t.Errorf("volume fifo: %v, want ErrIsFifo naming /vol/srv/q/p", err)
	}
	if vol.cur.Load() != vcur {
		t.Errorf("volume fifo: the volume's tree was published")
	}
	h, err := root.OpenFile("/vol/log", O_WRONLY|O_APPEND|O_NOFIFO, 0)
	must(t, err)
	h.Write([]byte("v\n"))
	must(t, h.Close())
	if b, _ := vol.ReadFile("/log"); string(b) != "a\nv\n" {
		t.Errorf("volume file: %q", b)
	}
	if _, err := root.OpenFile("/ro/fifo", O_WRONLY|O_NOFIFO, 0); !errors.Is(err, syscall.EROFS) {
		t.Errorf("read-only volume: %v, want EROFS", err)
	}
	if _, err := root.OpenFile("/ro/fifo", O_RDONLY|O_NOFIFO, 0); !errors.Is(err, ErrIsFifo) {
		t.Errorf("read-only volume, reading: %v, want ErrIsFifo", err)
	}

}
