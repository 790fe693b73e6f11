package vfs_test

import (
	"errors"
	"io/fs"
	"testing"

	"github.com/warren-sandbox/warren/vfs"
	"github.com/warren-sandbox/warren/vfs/memdrive"
)

// remoteSpy records the flags its RemoteFS is opened with.
type remoteSpy struct {
	vfs.RemoteFS
	flags []int
}

func (s *remoteSpy) OpenFile(name string, flag int, perm fs.FileMode) (vfs.RemoteFile, error) {
	s.flags = append(s.flags, flag)
	return s.RemoteFS.OpenFile(name, flag, perm)
}

// TestOpenNoFifoRemote: a RemoteFS has no fifos, so the mount keeps
// O_NOFIFO to itself; opens under it work as without the flag.
func TestOpenNoFifoRemote(t *testing.T) {
	root := vfs.New(vfs.Options{})
	spy := &remoteSpy{RemoteFS: memdrive.New(0)}
	if err := root.MountRemote("/drive", spy, vfs.MountOptions{Name: "drive d"}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		flag int
		want int
	}{
		{vfs.O_WRONLY | vfs.O_CREATE | vfs.O_APPEND, vfs.O_WRONLY | vfs.O_CREATE | vfs.O_APPEND},
		{vfs.O_WRONLY | vfs.O_APPEND, vfs.O_WRONLY | vfs.O_APPEND},
		{vfs.O_RDONLY, vfs.O_RDONLY},
	} {
		spy.flags = nil
		h, err := root.OpenFile("/drive/f", c.flag|vfs.O_NOFIFO, 0o644)
		if err != nil {
			t.Fatalf("open %#x: %v", c.flag, err)
		}
		if c.flag != vfs.O_RDONLY {
			if _, err := h.Write([]byte("d")); err != nil {
				t.Errorf("write %#x: %v", c.flag, err)
			}
		} else if b := make([]byte, 8); true {
			if n, err := h.Read(b); err != nil || string(b[:n]) != "dd" {
				t.Errorf("read: %q %v, want \"dd\"", b[:n], err)
			}
		}
		if err := h.Close(); err != nil {
			t.Error(err)
		}
		if len(spy.flags) != 1 || spy.flags[0] != c.want {
			t.Errorf("open %#x: the RemoteFS saw %#x, want [%#x]", c.flag, spy.flags, c.want)
		}
	}
	if _, err := root.OpenFile("/drive/none", vfs.O_WRONLY|vfs.O_NOFIFO, 0); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing drive file: %v, want ENOENT", err)
	}
}
