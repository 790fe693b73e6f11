package shell

import (
	"errors"
	"fmt"
	"io/fs"

	"github.com/warren-sandbox/warren/vfs"
)

// MakeDev creates the device nodes and links of the virtual /dev in a
// sandbox filesystem, so that ls and test -c see what the shell serves
// (the shell answers opens of these paths itself; the nodes carry no data).
func MakeDev(fsys *vfs.FS) error {
	if err := fsys.MkdirAll("/dev", 0o755); err != nil {
		return fmt.Errorf("cannot create /dev: %w", err)
	}
	nodes := []struct {
		name         string
		major, minor uint64
	}{{"null", 1, 3}, {"zero", 1, 5}, {"full", 1, 7}, {"random", 1, 8}, {"urandom", 1, 9}}
	for _, n := range nodes {
		err := fsys.Mknod("/dev/"+n.name, fs.ModeDevice|fs.ModeCharDevice|0o666, n.major<<8|n.minor)
		if err != nil && !errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("cannot create /dev/%s: %w", n.name, err)
		}
	}
	links := map[string]string{"fd": "/proc/self/fd", "stdin": "/proc/self/fd/0", "stdout": "/proc/self/fd/1", "stderr": "/proc/self/fd/2"}
	for name, target := range links {
		if err := fsys.Symlink(target, "/dev/"+name); err != nil && !errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("cannot create /dev/%s: %w", name, err)
		}
	}
	return nil
}
