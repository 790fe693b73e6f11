package vfs

import (
	"errors"
	"io/fs"
	"path"
	"sort"
	"strings"
	"sync/atomic"
	"syscall"
)

// A mount table: other FS trees (volumes, Mount) and RemoteFSes (shared
// drives, MountRemote: remotemount.go) grafted at absolute paths of an
// FS. A path is routed to the mount with the longest matching prefix before
// the walk, lexically (after cleaning "." and ".."), and the rest of the
// path is resolved inside the mounted tree. So:
//
//   - writes under a mount point change the mounted FS only: they never
//     reach this FS's delta, its Changes, Persist, Fork or Snapshot (a Fork
//     starts with no mounts);
//   - the mounted FS keeps its own quota: exceeding it is ENOSPC/EDQUOT in a
//     *QuotaError naming the mount (MountOptions.Name);
//   - a rename or hard link between two trees is EXDEV (mv then copies and
//     removes, as on Linux); removing or renaming a mount point is EBUSY;
//   - a read-only mount refuses every change with EROFS.
//
// Inode numbers stay distinct across trees (a mounted tree's carry a tag in
// their top 16 bits), so cp, mv, du and tar, which compare inode numbers,
// never take a volume's file for one of the sandbox's own (there is no
// st_dev).
//
// Limits (documented, not hidden): a symlink is resolved within the tree
// that holds it, so a symlink outside a mount pointing into it (or an
// absolute symlink inside a volume pointing out) does not cross the
// boundary.

// MountOptions describe one mount.
type MountOptions struct {
	// Name names the mounted tree in errors and df (e.g. "volume data").
	Name     string
	ReadOnly bool
}

// MountInfo is one entry of the mount table, for df and the API.
type MountInfo struct {
	Path     string
	Name     string
	ReadOnly bool
	FS       *FS      // a mounted FS (Mount), or nil
	Remote   RemoteFS // a mounted RemoteFS (MountRemote), or nil
}

type mount struct {
	path string   // clean, absolute, not "/"
	fs   *FS      // a mounted FS, or nil for a remote mount
	rfs  RemoteFS // a remote mount (remotemount.go)
	tag  uint64   // a remote mount's inode tag
	opts MountOptions
}

// cleanAbs is name as an absolute clean path (relative = from "/").
func cleanAbs(name string) string {
	return path.Clean("/" + name)
}

// Mount grafts m at dir (created in this FS if missing). dir must be an
// absolute path other than "/" and not already a mount point; m must not be
// f itself.
func (f *FS) Mount(dir string, m *FS, opts MountOptions) error {
	if m == nil || m == f {
		return perr("mount", dir, syscall.EINVAL)
	}
	return f.graft(dir, mount{fs: m, opts: opts})
}

// graft adds nm (a mounted FS or RemoteFS) to the mount table at dir.
func (f *FS) graft(dir string, nm mount) error {
	p := cleanAbs(dir)
	if p == "/" || !strings.HasPrefix(dir, "/") {
		return perr("mount", dir, syscall.EINVAL)
	}
	if g, _, _ := f.route(p); g != f {
		// Nested mounts (a mount inside a volume) are not supported yet.
		return perr("mount", dir, syscall.EBUSY)
	}
	for _, x := range f.mountList() {
		if x.path == p {
			return perr("mount", dir, syscall.EBUSY)
		}
	}
	// The mount point exists in this tree, as on Linux, so listings of its
	// parent show it. That directory is not charged to a quota.
	if fi, err := f.Stat(p); err != nil || !fi.IsDir() {
		if err := f.MkdirAll(p, 0o755); err != nil {
			return err
		}
	}
	if m := nm.fs; m != nil {
		if nm.opts.Name != "" {
			m.qname.Store(&nm.opts.Name)
		}
		m.inoTag.CompareAndSwap(0, (mountTags.Add(1)%0xffff+1)<<48)
	}
	f.mmu.Lock()
	defer f.mmu.Unlock()
	nm.path = p
	ms := append([]mount(nil), f.mountList()...)
	ms = append(ms, nm)
	sort.Slice(ms, func(i, j int) bool { return len(ms[i].path) > len(ms[j].path) })
	f.mounts.Store(&ms)
	return nil
}

// Unmount removes the mount at dir (EINVAL when there is none). Open handles
// into the mounted FS keep working on it.
func (f *FS) Unmount(dir string) error {
	p := cleanAbs(dir)
	f.mmu.Lock()
	defer f.mmu.Unlock()
	old := f.mountList()
	ms := make([]mount, 0, len(old))
	for _, x := range old {
		if x.path != p {
			ms = append(ms, x)
		}
	}
	if len(ms) == len(old) {
		return perr("umount", dir, syscall.EINVAL)
	}
	f.mounts.Store(&ms)
	return nil
}

// Mounts lists the mount table, longest path first.
func (f *FS) Mounts() []MountInfo {
	ms := f.mountList()
	out := make([]MountInfo, len(ms))
	for i, x := range ms {
		out[i] = MountInfo{Path: x.path, Name: x.opts.Name, ReadOnly: x.opts.ReadOnly, FS: x.fs, Remote: x.rfs}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}

func (f *FS) mountList() []mount {
	if p := f.mounts.Load(); p != nil {
		return *p
	}
	return nil
}

// route finds the tree that holds name: f itself (rel = name) or a mounted
// FS (rel = the path inside it, keeping a trailing slash). For a remote
// mount the FS is nil and the mount's rfs holds rel.
func (f *FS) route(name string) (*FS, string, *mount) {
	ms := f.mountList()
	if len(ms) == 0 {
		return f, name, nil
	}
	p := cleanAbs(name)
	for i := range ms {
		m := &ms[i]
		if p == m.path || strings.HasPrefix(p, m.path+"/") {
			rel := "/" + strings.TrimPrefix(p[len(m.path):], "/")
			if strings.HasSuffix(name, "/") && rel != "/" {
				rel += "/"
			}
			return m.fs, rel, m
		}
	}
	return f, name, nil
}

// isMountPoint reports whether name is exactly a mount point.
func (f *FS) isMountPoint(name string) bool {
	ms := f.mountList()
	if len(ms) == 0 {
		return false
	}
	p := cleanAbs(name)
	for _, m := range ms {
		if m.path == p {
			return true
		}
	}
	return false
}

// mountErr rewrites an error of a mounted FS to name the caller's path and
// the mount.
func mountErr(err error, name string, m *mount) error {
	if err == nil {
		return nil
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		e := *pe
		e.Path = name
		var qe *QuotaError
		if errors.As(e.Err, &qe) && qe.Name == "" {
			q := *qe
			q.Name = m.opts.Name
			e.Err = &q
		}
		return &e
	}
	return err
}

// mountTags numbers mounted trees for their inode tags.
var mountTags atomic.Uint64

// tagged marks fi's inode number with f's mount tag (none for a tree that
// was never mounted).
func (f *FS) tagged(fi *fileInfo) *fileInfo {
	if t := f.inoTag.Load(); t != 0 {
		fi.st.Ino ^= t
	}
	return fi
}

func (f *FS) quotaName() string {
	if p := f.qname.Load(); p != nil {
		return *p
	}
	return ""
}

// roErr is the EROFS of a change under a read-only mount.
func roErr(op, name string) error { return perr(op, name, syscall.EROFS) }

// The routed forms of the public path operations. Each returns handled =
// false when name is in f's own tree.

func (f *FS) mountedRead(name string) (*FS, string, *mount) {
	g, rel, m := f.route(name)
	if m == nil {
		return nil, "", nil
	}
	return g, rel, m
}

// mountedWrite is mountedRead that also refuses read-only mounts.
func (f *FS) mountedWrite(op, name string) (*FS, string, *mount, error) {
	g, rel, m := f.mountedRead(name)
	if m != nil && m.opts.ReadOnly {
		return nil, "", m, roErr(op, name)
	}
	return g, rel, m, nil
}

// crossing handles the two-path operations (rename, link): both in one
// mounted tree are done there, two trees are EXDEV. done = false means both
// are in f's own tree.
func (f *FS) crossing(op, oldname, newname string, fn func(g *FS, o, n string) error) (bool, error) {
	g1, r1, m1 := f.route(oldname)
	_, r2, m2 := f.route(newname)
	if m1 == nil && m2 == nil {
		if f.isMountPoint(oldname) || f.isMountPoint(newname) {
			return true, perr(op, oldname, syscall.EBUSY)
		}
		return false, nil
	}
	if m1 != nil && r1 == "/" || m2 != nil && r2 == "/" {
		return true, perr(op, oldname, syscall.EBUSY)
	}
	if m1 == nil || m2 == nil || m1.path != m2.path {
		return true, perr(op, oldname, syscall.EXDEV)
	}
	if m1.opts.ReadOnly {
		return true, roErr(op, oldname)
	}
	if m1.rfs != nil {
		if op != "rename" {
			return true, perr(op, oldname, syscall.ENOTSUP)
		}
		return true, m1.rrename(oldname, r1, r2)
	}
	return true, mountErr(fn(g1, r1, r2), oldname, m1)
}

// realpathMounted maps a realpath inside a mount back to f's paths.
func realpathMounted(m *mount, p string, err error) (string, error) {
	if err != nil {
		return "", err
	}
	if p == "/" {
		return m.path, nil
	}
	return m.path + p, nil
}
