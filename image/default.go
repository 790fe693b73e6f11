package image

import (
	"bytes"
	"context"
	"io"
	"io/fs"
	"time"
)

// DefaultName is the tag of the embedded default image.
const DefaultName = "default"

// defaultMtime pins every timestamp of the default image so its digest is
// the same on every machine and every start.
var defaultMtime = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

var defaultFiles = []struct {
	path     string
	mode     fs.FileMode
	uid, gid uint32
	content  string // file content, or symlink target
	rdev     uint32 // device number (new_encode_dev form: major<<8 | minor)
}{
	{"bin", fs.ModeDir | 0o755, 0, 0, "", 0},
	{"dev", fs.ModeDir | 0o755, 0, 0, "", 0},
	// The device nodes live in the image, not in each sandbox's delta: the
	// shell serves them virtually, the native tier mounts its own /dev.
	{"dev/full", charDev | 0o666, 0, 0, "", 1<<8 | 7},
	{"dev/null", charDev | 0o666, 0, 0, "", 1<<8 | 3},
	{"dev/random", charDev | 0o666, 0, 0, "", 1<<8 | 8},
	{"dev/urandom", charDev | 0o666, 0, 0, "", 1<<8 | 9},
	{"dev/zero", charDev | 0o666, 0, 0, "", 1<<8 | 5},
	{"dev/fd", fs.ModeSymlink | 0o777, 0, 0, "/proc/self/fd", 0},
	{"dev/stdin", fs.ModeSymlink | 0o777, 0, 0, "/proc/self/fd/0", 0},
	{"dev/stdout", fs.ModeSymlink | 0o777, 0, 0, "/proc/self/fd/1", 0},
	{"dev/stderr", fs.ModeSymlink | 0o777, 0, 0, "/proc/self/fd/2", 0},
	{"etc", fs.ModeDir | 0o755, 0, 0, "", 0},
	{"etc/group", 0o644, 0, 0, "root:x:0:\nusers:x:100:user\nuser:x:1000:\nnogroup:x:65534:\n", 0},
	{"etc/hostname", 0o644, 0, 0, "warren\n", 0},
	{"etc/hosts", 0o644, 0, 0, "127.0.0.1\tlocalhost\n::1\tlocalhost\n127.0.1.1\twarren\n", 0},
	{"etc/os-release", 0o644, 0, 0, "NAME=\"warren\"\nID=warren\nPRETTY_NAME=\"warren sandbox\"\nVERSION_ID=\"1\"\nHOME_URL=\"https://github.com/warren-sandbox/warren\"\n", 0},
	{"etc/passwd", 0o644, 0, 0, "root:x:0:0:root:/root:/bin/sh\nuser:x:1000:1000:user:/home/user:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n", 0},
	{"etc/profile", 0o644, 0, 0, "export PATH=/usr/local/bin:/usr/bin:/bin\n", 0},
	{"home", fs.ModeDir | 0o755, 0, 0, "", 0},
	{"home/user", fs.ModeDir | 0o755, 1000, 1000, "", 0},
	{"proc", fs.ModeDir | 0o555, 0, 0, "", 0},
	{"root", fs.ModeDir | 0o700, 0, 0, "", 0},
	{"sys", fs.ModeDir | 0o555, 0, 0, "", 0},
	{"tmp", fs.ModeDir | fs.ModeSticky | 0o777, 0, 0, "", 0},
	{"usr", fs.ModeDir | 0o755, 0, 0, "", 0},
	{"usr/bin", fs.ModeDir | 0o755, 0, 0, "", 0},
	{"usr/local", fs.ModeDir | 0o755, 0, 0, "", 0},
	{"usr/local/bin", fs.ModeDir | 0o755, 0, 0, "", 0},
	{"usr/sbin", fs.ModeDir | 0o755, 0, 0, "", 0},
	{"var", fs.ModeDir | 0o755, 0, 0, "", 0},
	{"var/tmp", fs.ModeDir | fs.ModeSticky | 0o777, 0, 0, "", 0},
}

const charDev = fs.ModeDevice | fs.ModeCharDevice

// DefaultConfig is the runtime config of the default image.
var DefaultConfig = Config{
	Env:        []string{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=/home/user"},
	WorkingDir: "/home/user",
	User:       "1000:1000",
}

func defaultTree() *tree {
	t := newTree(Limits{})
	t.root.ino.mtime = defaultMtime
	for _, f := range defaultFiles {
		ino := &inode{mode: f.mode, uid: f.uid, gid: f.gid, mtime: defaultMtime, rdev: f.rdev}
		if f.mode&fs.ModeSymlink != 0 {
			ino.target = f.content
			ino.size = int64(len(f.content))
		} else if f.mode.IsRegular() {
			data := []byte(f.content)
			ino.size = int64(len(data))
			ino.data = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil }
		}
		if err := t.put(f.path, ino); err != nil {
			panic("image: default tree: " + err.Error()) // static data: a bug, not input
		}
	}
	return t
}

// Default builds the embedded default image into the catalog if it is
// not there yet, tags it DefaultName and returns it opened. It is cheap
// enough (a few KiB) to call at every start.
func Default(ctx context.Context, c *Catalog) (*Image, error) {
	m, err := c.buildTree(ctx, defaultTree(), DefaultConfig, BuildOptions{})
	if err != nil {
		return nil, err
	}
	if err := c.Tag(ctx, DefaultName, m); err != nil {
		return nil, err
	}
	return c.Open(ctx, m)
}
