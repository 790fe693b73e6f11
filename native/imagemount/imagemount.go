// Package imagemount mounts EROFS image files with the kernel: one read-only
// mount per image per node, shared by every workspace that uses the image and
// released when the last user lets go.
//
// Kernels >= 6.12 mount an image file directly (file-backed EROFS); older
// ones get a read-only loop device that the kernel frees on unmount
// (LO_FLAGS_AUTOCLEAR). Each mount can hand out a detached, idmapped clone of
// itself (open_tree + mount_setattr(MOUNT_ATTR_IDMAP)) for use as an overlay
// lower layer; the clone is never attached on the host (recipe A3 of
// shared/notes/native-userns.md).
//
// A Table owns one directory; New unmounts and removes whatever a previous
// process left there, so a crash leaks nothing past the next start.
package imagemount

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"golang.org/x/sys/unix"
)

// forceLoop makes tests take the loop-device path on a kernel that could
// mount the file directly.
var forceLoop bool

// Table is the set of image mounts under one directory.
type Table struct {
	dir string

	mu     sync.Mutex
	mounts map[string]*Mount // by cleaned absolute image path
	closed bool
}

// Mount is one kernel mount of an image, shared by reference.
type Mount struct {
	t     *Table
	key   string
	Dir   string // where the image is mounted (read-only)
	Loop  bool   // mounted through a loop device
	refs  int
	idmap map[string]int // detached idmapped clones by mapping key
}

// New returns a table rooted at dir, after unmounting and removing anything
// a previous process left there.
func New(dir string) (*Table, error) {
	if !filepath.IsAbs(dir) {
		return nil, fmt.Errorf("imagemount: directory %q is not absolute", dir)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("imagemount: cannot create %s: %w", dir, err)
	}
	if err := CleanDir(dir); err != nil {
		return nil, err
	}
	return &Table{dir: dir, mounts: map[string]*Mount{}}, nil
}

// Acquire returns the mount of imagePath, mounting it on first use.
// Every successful Acquire must be paired with a Release.
func (t *Table) Acquire(imagePath string) (*Mount, error) {
	abs, err := filepath.Abs(imagePath)
	if err != nil {
		return nil, fmt.Errorf("imagemount: image %q: %w", imagePath, err)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return nil, fmt.Errorf("imagemount: table %s is closed", t.dir)
	}
	if m := t.mounts[abs]; m != nil {
		m.refs++
		return m, nil
	}
	st, err := os.Stat(abs)
	if err != nil {
		return nil, fmt.Errorf("imagemount: image: %w", err)
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("imagemount: image %s is not a regular file", abs)
	}
	sum := sha256.Sum256([]byte(abs))
	dir := filepath.Join(t.dir, hex.EncodeToString(sum[:12]))
	if err := os.Mkdir(dir, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
		return nil, fmt.Errorf("imagemount: cannot create mount point: %w", err)
	}
	loop, err := mountImage(abs, dir)
	if err != nil {
		os.Remove(dir)
		return nil, err
	}
	m := &Mount{t: t, key: abs, Dir: dir, Loop: loop, refs: 1, idmap: map[string]int{}}
	t.mounts[abs] = m
	return m, nil
}

// mountImage mounts the EROFS image file at dir: file-backed first, then
// through a loop device when the kernel cannot mount a regular file.
func mountImage(image, dir string) (loop bool, err error) {
	const flags = unix.MS_RDONLY | unix.MS_NODEV | unix.MS_NOSUID
	if forceLoop {
		err = unix.ENOTBLK
	} else {
		err = unix.Mount(image, dir, "erofs", flags, "")
	}
	if err == nil {
		return false, nil
	}
	if !errors.Is(err, unix.ENOTBLK) && !errors.Is(err, unix.EINVAL) && !errors.Is(err, unix.EOPNOTSUPP) {
		return false, fmt.Errorf("imagemount: cannot mount %s: %w", image, err)
	}
	dev, hold, lerr := attachLoop(image)
	if lerr != nil {
		return false, fmt.Errorf("imagemount: cannot mount %s (file-backed: %v; loop: %w)", image, err, lerr)
	}
	// hold stays open until the mount holds the device: with AUTOCLEAR the
	// last close of an unmounted loop device detaches it.
	defer hold.Close()
	if merr := unix.Mount(dev, dir, "erofs", flags, ""); merr != nil {
		return false, fmt.Errorf("imagemount: cannot mount %s via %s: %w", image, dev, merr)
	}
	return true, nil
}

// attachLoop binds image to a free loop device that frees itself when the
// returned handle is closed and no mount uses it.
func attachLoop(image string) (string, *os.File, error) {
	ctl, err := os.OpenFile("/dev/loop-control", os.O_RDWR, 0)
	if err != nil {
		return "", nil, err
	}
	defer ctl.Close()
	img, err := os.Open(image)
	if err != nil {
		return "", nil, err
	}
	defer img.Close()
	for try := 0; try < 8; try++ {
		n, err := unix.IoctlRetInt(int(ctl.Fd()), unix.LOOP_CTL_GET_FREE)
		if err != nil {
			return "", nil, fmt.Errorf("LOOP_CTL_GET_FREE: %w", err)
		}
		dev := fmt.Sprintf("/dev/loop%d", n)
		f, err := os.OpenFile(dev, os.O_RDONLY, 0)
		if err != nil {
			return "", nil, err
		}
		cfg := unix.LoopConfig{Fd: uint32(img.Fd())}
		cfg.Info.Flags = unix.LO_FLAGS_READ_ONLY | unix.LO_FLAGS_AUTOCLEAR
		err = unix.IoctlLoopConfigure(int(f.Fd()), &cfg)
		if errors.Is(err, unix.EBUSY) {
			f.Close()
			continue // another process took it between GET_FREE and CONFIGURE
		}
		if err != nil {
			f.Close()
			return "", nil, fmt.Errorf("LOOP_CONFIGURE %s: %w", dev, err)
		}
		return dev, f, nil
	}
	return "", nil, errors.New("no free loop device after 8 tries")
}

// IDMapped returns a detached clone of the mount whose owners are shifted
// through the user namespace usernsFD; key names the mapping (e.g.
// "0:100000:65536") so clones are cached per mapping. The fd stays owned by
// the Mount and is closed by the last Release; callers must not close it.
func (m *Mount) IDMapped(key string, usernsFD int) (int, error) {
	m.t.mu.Lock()
	defer m.t.mu.Unlock()
	if fd, ok := m.idmap[key]; ok {
		return fd, nil
	}
	fd, err := unix.OpenTree(unix.AT_FDCWD, m.Dir, unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC)
	if err != nil {
		return -1, fmt.Errorf("imagemount: open_tree %s: %w", m.Dir, err)
	}
	attr := unix.MountAttr{Attr_set: unix.MOUNT_ATTR_IDMAP, Userns_fd: uint64(usernsFD)}
	if err := unix.MountSetattr(fd, "", unix.AT_EMPTY_PATH, &attr); err != nil {
		unix.Close(fd)
		return -1, fmt.Errorf("imagemount: idmap %s: %w", m.Dir, err)
	}
	m.idmap[key] = fd
	return fd, nil
}

// Release drops one reference; the last one unmounts the image.
func (m *Mount) Release() error {
	t := m.t
	t.mu.Lock()
	defer t.mu.Unlock()
	if m.refs <= 0 {
		return fmt.Errorf("imagemount: %s released more often than acquired", m.key)
	}
	m.refs--
	if m.refs > 0 {
		return nil
	}
	delete(t.mounts, m.key)
	return m.unmountLocked()
}

func (m *Mount) unmountLocked() error {
	for k, fd := range m.idmap {
		unix.Close(fd)
		delete(m.idmap, k)
	}
	if err := unix.Unmount(m.Dir, unix.MNT_DETACH); err != nil && !errors.Is(err, unix.EINVAL) {
		return fmt.Errorf("imagemount: cannot unmount %s: %w", m.Dir, err)
	}
	os.Remove(m.Dir)
	return nil
}

// Refs reports how many users the mount of imagePath has (0: not mounted).
func (t *Table) Refs(imagePath string) int {
	abs, _ := filepath.Abs(imagePath)
	t.mu.Lock()
	defer t.mu.Unlock()
	if m := t.mounts[abs]; m != nil {
		return m.refs
	}
	return 0
}

// Close unmounts every image regardless of references; later Acquires fail.
func (t *Table) Close() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.closed = true
	var errs []error
	for k, m := range t.mounts {
		errs = append(errs, m.unmountLocked())
		m.refs = 0
		delete(t.mounts, k)
	}
	return errors.Join(errs...)
}
