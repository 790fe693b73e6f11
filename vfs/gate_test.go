package vfs

import (
	"errors"
	"io/fs"
	"testing"
)

func TestWriteGate(t *testing.T) {
	f := New(Options{})
	if err := f.WriteFile("/keep", []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	refuse := errors.New("over budget")
	calls := 0
	f.SetWriteGate(func() error { calls++; return refuse })
	g := f.Fork()
	cases := []struct {
		name    string
		op      func() error
		refused bool
	}{
		{"writefile", func() error { return f.WriteFile("/a", []byte("data"), 0o644) }, true},
		{"mkdir", func() error { return f.Mkdir("/d", 0o755) }, true},
		{"symlink", func() error { return f.Symlink("/keep", "/l") }, true},
		{"truncate", func() error { return f.Truncate("/keep", 1<<20) }, true},
		{"rename", func() error { return f.Rename("/keep", "/kept") }, false},
		{"remove", func() error { return f.Remove("/kept") }, false},
		{"fork not gated", func() error { return g.WriteFile("/a", []byte("data"), 0o644) }, false},
	}
	for _, c := range cases {
		before := calls
		err := c.op()
		if c.refused {
			var pe *fs.PathError
			if !errors.Is(err, refuse) || !errors.As(err, &pe) {
				t.Errorf("%s: err %v, want a PathError carrying the gate's error", c.name, err)
			}
			if calls == before {
				t.Errorf("%s: gate not called", c.name)
			}
		} else if err != nil {
			t.Errorf("%s: %v, want it to pass the gate", c.name, err)
		}
	}
	if _, err := f.Stat("/a"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a refused write left /a: %v", err)
	}
	f.SetWriteGate(nil)
	if err := f.WriteFile("/a", []byte("data"), 0o644); err != nil {
		t.Errorf("gate removed: %v", err)
	}
}
