package native

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/warren-sandbox/warren/vfs"
	"golang.org/x/sys/unix"
)

// Keeping the vfs and the overlay in step.
//
// Into the overlay (syncIn, before an exec): the host writes through the
// overlay's merged view, as root, so the overlay itself creates copy-ups,
// whiteouts (char 0/0) and opaque directories, and its dentry caches stay
// coherent with the running init. Every path is resolved with openat2
// RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS|RESOLVE_NO_XDEV under the merged
// root, so a symlink planted by a sandboxed process never redirects a host
// write. Only what vfs.Diff reports between the version synced last and
// now is visited (the whole delta on a workspace's first sync), and each
// visited path is compared with the overlay before it is written, so
// visiting an unchanged path costs a stat.
//
// Back into the vfs (harvest, after an exec): upper/ is walked with
// O_NOFOLLOW openat/fstatat from an fd of upper/ itself, never a host path
// walk, and only entries whose (inode, ctime) differ from what was recorded
// at the last sync or harvest are read. Whiteouts become removals, opaque
// directories (trusted.overlay.opaque=y) replace the vfs directory, upper
// entries that vanished are removed, files/dirs/symlinks/fifos are copied
// with mode, owner (shifted back by UIDBase) and mtime.
//
// Consistency rule: the vfs sees a native process's writes at the end of
// each Exec, and whenever Workspace.Harvest is called (the sandbox calls it
// before resident reads while a background native process runs).

// skipTop are top-level names that are mount points inside the sandbox
// (/proc, /dev) or never synced (/sys); neither side copies them.
var skipTop = map[string]bool{"proc": true, "dev": true, "sys": true}

type rec struct {
	ino    uint64
	ctime  int64
	opaque bool
}

// syncState keeps a host directory and a vfs tree in step: the overlay's
// merged view and upper layer with the sandbox's own tree, or a volume's
// tmpfs with the volume's tree (volumes.go; there root and upper are the
// same directory and nothing is skipped).
type syncState struct {
	fs    *vfs.FS
	root  string          // where syncIn writes (the overlay's merged view)
	upper string          // what harvest reads (the overlay's upper layer)
	top   map[string]bool // top-level names neither side copies
	// mounts are the volume mount points of the sandbox's tree: the harvest
	// of upper/ never descends into them (the volume is what its own tmpfs
	// holds, harvested by its own syncState).
	mounts map[string]bool
	at     string // where the tree is mounted in the sandbox ("" = the root), for messages
	name   string // the mounted tree's name in quota errors (vfs.MountOptions.Name)
	mu     sync.Mutex
	synced *vfs.FS                   // the vfs version last written into the overlay
	record map[string]map[string]rec // upper entries as last seen: dir -> name -> rec
	// harvested holds, for files the harvest wrote into the vfs, the vfs
	// ctime they got: when the next diff reports them with that ctime,
	// their content is already in the overlay.
	harvested map[string]time.Time
	// pending are the paths the harvest created or changed since the last
	// sync. synced predates them, so a diff from it misses one the vfs
	// then removed again (a native mkdir, a resident rm -r): the next sync
	// visits each of them as well.
	pending map[string]bool
}

func newSyncState(fs *vfs.FS, root, upper string, top map[string]bool) *syncState {
	return &syncState{fs: fs, root: root, upper: upper, top: top,
		record: map[string]map[string]rec{}, harvested: map[string]time.Time{}, pending: map[string]bool{}}
}

// skipped reports whether p is one of the top-level names not copied.
func (s *syncState) skipped(p string) bool {
	if len(s.top) == 0 {
		return false
	}
	d, n := splitPath(p)
	return d == "/" && s.top[n]
}

// show names the vfs path p as the sandbox sees it (inside a volume, below
// its mount path).
func (s *syncState) show(p string) string {
	if s.at == "" {
		return p
	}
	return path.Join(s.at, p)
}

const beneath = unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS | unix.RESOLVE_NO_XDEV

// openDir opens dir (a sandbox path) under rootFD without following any
// symlink and without leaving rootFD's mount.
func openDir(rootFD int, dir string, flags uint64) (int, error) {
	rel := strings.TrimPrefix(path.Clean("/"+dir), "/")
	if rel == "" {
		rel = "."
	}
	for {
		fd, err := unix.Openat2(rootFD, rel, &unix.OpenHow{Flags: flags | unix.O_DIRECTORY | unix.O_CLOEXEC, Resolve: beneath})
		if err == unix.EAGAIN || err == unix.EINTR {
			continue
		}
		if err != nil {
			return -1, &fs.PathError{Op: "openat2", Path: dir, Err: err}
		}
		return fd, nil
	}
}

func splitPath(p string) (dir, name string) {
	p = path.Clean("/" + p)
	return path.Dir(p), path.Base(p)
}

// syncIn writes the vfs changes made since the last sync into the overlay.
func (s *syncState) syncIn(w *Workspace) error {
	if s.fs == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	snap := s.fs.Fork()
	m, err := newMerged(w, s)
	if err != nil {
		return err
	}
	defer m.close()
	// A file the diff reports is rewritten even when size, mtime and mode
	// match (a same-size write with its mtime restored, as tar -x or cp -p
	// do), unless it is the harvest's own write coming back.
	m.force, m.harvested = true, s.harvested
	// vfs.Diff skips what the two versions share, so a one-file change costs
	// one file. With old == nil (first sync) it reports the whole delta; the
	// overlay then shows the bare image, and a copied-up directory gets its
	// entry list compared (that is where its whiteouts show).
	first := s.synced == nil
	var visited map[string]bool // the diff's paths, when pending ones follow
	if len(s.pending) > 0 {
		visited = map[string]bool{}
	}
	err = vfs.Diff(s.synced, snap, func(p string, kind vfs.ChangeKind) error {
		if s.skipped(p) {
			return nil
		}
		if visited != nil {
			visited[p] = true
		}
		if p == "/" {
			// The root is never new; a fresh FS reports it as added because
			// its table holds a copy of the base root.
			kind = vfs.Modified
		}
		switch kind {
		case vfs.Added:
			// A new (or renamed-in) directory comes with everything under
			// it; one that hides the base directory at its path is
			// recreated through the overlay, which marks it opaque.
			if di, err := snap.DeltaEntry(p); err == nil && di.Opaque {
				if err := m.remove(p); err != nil {
					return err
				}
			}
			return m.reconcile(snap, p, deep)
		case vfs.Modified:
			if first {
				return m.reconcile(snap, p, listing)
			}
			return m.reconcile(snap, p, shallow)
		default: // Deleted (or replaced: its Added follows)
			return m.reconcile(snap, p, shallow)
		}
	})
	if err != nil {
		return err
	}
	if len(s.pending) > 0 {
		ps := make([]string, 0, len(s.pending))
		for p := range s.pending {
			ps = append(ps, p)
		}
		sort.Strings(ps) // parents first: a removed one takes its children along
		for _, p := range ps {
			if visited[p] {
				continue
			}
			if err := m.reconcile(snap, p, shallow); err != nil {
				return err
			}
		}
		clear(s.pending)
	}
	// The overlay created or copied up these entries: remember them so the
	// harvest does not mistake them for the process's work.
	s.recordPaths(w, m.touched)
	// Harvested changes are not applied to synced: the next diff reports
	// them again and reconcile finds them equal, which costs a stat each.
	s.synced = snap
	return nil
}

// recordPaths records the upper entries of paths and of their ancestors,
// opening each upper directory once.
func (s *syncState) recordPaths(w *Workspace, paths map[string]bool) {
	if len(paths) == 0 {
		return
	}
	ufd, err := unix.Open(s.upper, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return
	}
	defer unix.Close(ufd)
	byDir := map[string][]string{}
	for p := range paths {
		for p != "/" && p != "." {
			dir, name := splitPath(p)
			byDir[dir] = append(byDir[dir], name)
			if paths[dir] {
				break // its ancestors are queued by its own walk
			}
			paths[dir] = true
			p = dir
		}
	}
	for dir, names := range byDir {
		dfd, err := openDir(ufd, dir, unix.O_PATH)
		if err != nil {
			continue
		}
		for _, name := range names {
			var st unix.Stat_t
			if unix.Fstatat(dfd, name, &st, unix.AT_SYMLINK_NOFOLLOW) != nil {
				s.del(dir, name)
				continue
			}
			r := rec{ino: st.Ino, ctime: st.Ctim.Nano()}
			if st.Mode&unix.S_IFMT == unix.S_IFDIR {
				r.opaque = isOpaque(dfd, name)
			}
			s.put(dir, name, r)
		}
		unix.Close(dfd)
	}
}

func (s *syncState) put(dir, name string, r rec) {
	m := s.record[dir]
	if m == nil {
		m = map[string]rec{}
		s.record[dir] = m
	}
	m[name] = r
}

func (s *syncState) del(dir, name string) {
	delete(s.record[dir], name)
	p := path.Join(dir, name)
	for k := range s.record {
		if k == p || strings.HasPrefix(k, p+"/") {
			delete(s.record, k)
		}
	}
}

func isOpaque(dirfd int, name string) bool {
	fd, err := unix.Openat(dirfd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return false
	}
	defer unix.Close(fd)
	buf := make([]byte, 8)
	n, err := unix.Fgetxattr(fd, "trusted.overlay.opaque", buf)
	return err == nil && n == 1 && buf[0] == 'y'
}

// merged writes into the overlay's merged view (or a volume's tmpfs).
type merged struct {
	w         *Workspace
	s         *syncState
	rootFD    int
	touched   map[string]bool
	dirs      map[string]int // cached O_PATH fds of overlay directories
	force     bool           // rewrite regular files even if they look equal
	harvested map[string]time.Time
}

// mustWrite reports whether the regular file p must be written although
// size, mtime, mode and owner match the overlay's.
func (m *merged) mustWrite(p string, vi fs.FileInfo) bool {
	if !m.force {
		return false
	}
	c, ok := m.harvested[p]
	delete(m.harvested, p)
	st, isStat := vi.Sys().(*vfs.Stat)
	return !ok || !isStat || !st.Ctime.Equal(c)
}

func newMerged(w *Workspace, s *syncState) (*merged, error) {
	fd, err := unix.Open(s.root, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", s.root, err)
	}
	return &merged{w: w, s: s, rootFD: fd, touched: map[string]bool{}, dirs: map[string]int{}}, nil
}

func (m *merged) close() {
	m.forget("")
	unix.Close(m.rootFD)
}

// depth says how far below a directory reconcile looks.
type depth int

const (
	// shallow: the entry itself (a missing directory is still filled whole).
	shallow depth = iota
	// listing: also the directory's entry names: extra names go, missing
	// ones are created; entries on both sides are left to their own visit
	// (what a diff reports for a directory whose entries changed, including
	// a directory replaced by an opaque one).
	listing
	// deep: the whole subtree (the full comparison).
	deep
)

// reconcile makes the merged entry at p equal to the vfs entry at p, to the
// given depth.
func (m *merged) reconcile(v *vfs.FS, p string, d depth) error {
	p = path.Clean("/" + p)
	if m.s.skipped(p) {
		return nil
	}
	vi, err := lstatVFS(v, p)
	if err != nil {
		return err
	}
	if p == "/" {
		if vi == nil {
			return nil
		}
		if err := m.setAttrs(m.rootFD, "", vi, false); err != nil {
			return err
		}
		if d == shallow {
			return nil
		}
		return m.reconcileChildren(v, p, m.rootFD, d)
	}
	dir, _ := splitPath(p)
	dfd, err := m.dirFD(dir)
	if err != nil {
		if errors.Is(err, unix.ENOENT) && vi == nil {
			return nil // neither side has it
		}
		if errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ENOTDIR) || errors.Is(err, unix.ELOOP) {
			// The parent is missing, or not a dir, or a symlink (planted by a
			// sandbox process) in the overlay: make it what the vfs says first.
			if err := m.reconcile(v, dir, shallow); err != nil {
				return err
			}
			dfd, err = m.dirFD(dir)
		}
		if err != nil {
			return err
		}
	}
	return m.reconcileIn(v, dfd, p, vi, d)
}

// remove deletes p from the overlay (recursively), if it is there.
func (m *merged) remove(p string) error {
	if p == "/" {
		return nil
	}
	dir, name := splitPath(p)
	dfd, err := m.dirFD(dir)
	if errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ENOTDIR) {
		return nil
	}
	if err != nil {
		return err
	}
	m.forget(p)
	m.touched[p] = true
	return removeAt(dfd, name)
}

// dirFD returns an O_PATH fd of the overlay directory dir, cached for the
// rest of this sync (a diff visits many entries of one directory).
func (m *merged) dirFD(dir string) (int, error) {
	if fd, ok := m.dirs[dir]; ok {
		return fd, nil
	}
	fd, err := openDir(m.rootFD, dir, unix.O_PATH)
	if err != nil {
		return -1, err
	}
	m.dirs[dir] = fd
	return fd, nil
}

// forget drops cached fds of p and below (p was removed or replaced).
func (m *merged) forget(p string) {
	for d, fd := range m.dirs {
		if d == p || strings.HasPrefix(d, p+"/") {
			unix.Close(fd)
			delete(m.dirs, d)
		}
	}
}

// lstatVFS is v.Lstat with "not there" (also under a non-directory) as nil.
func lstatVFS(v *vfs.FS, p string) (fs.FileInfo, error) {
	vi, err := v.Lstat(p)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
		return nil, nil
	}
	return vi, err
}

// reconcileIn is reconcile with the overlay directory holding p open as
// dfd and the vfs entry already looked up (nil: absent).
func (m *merged) reconcileIn(v *vfs.FS, dfd int, p string, vi fs.FileInfo, d depth) error {
	name := path.Base(p)
	var st unix.Stat_t
	exists := unix.Fstatat(dfd, name, &st, unix.AT_SYMLINK_NOFOLLOW) == nil
	if vi == nil {
		if exists {
			m.touched[p] = true
			m.forget(p)
			return removeAt(dfd, name)
		}
		return nil
	}
	want := unixMode(vi.Mode())
	if exists && st.Mode&unix.S_IFMT != want&unix.S_IFMT {
		m.forget(p)
		if err := removeAt(dfd, name); err != nil {
			return err
		}
		exists = false
		m.touched[p] = true
	}
	attrsEqual := exists && st.Mode&0o7777 == want&0o7777 && sameOwner(&st, vi, m.w.r.cfg.UIDBase)
	switch {
	case vi.IsDir():
		created := false
		if !exists {
			if err := unix.Mkdirat(dfd, name, 0o700); err != nil {
				return &fs.PathError{Op: "mkdir", Path: p, Err: err}
			}
			created = true
		}
		if created {
			d = deep
		}
		if d != shallow {
			sub, err := unix.Openat(dfd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
			if err != nil {
				return &fs.PathError{Op: "open", Path: p, Err: err}
			}
			err = m.reconcileChildren(v, p, sub, d)
			unix.Close(sub)
			if err != nil {
				return err
			}
		}
		if attrsEqual {
			return nil
		}
		m.touched[p] = true
		return m.setAttrs(dfd, name, vi, false)
	case vi.Mode()&fs.ModeSymlink != 0:
		target, err := v.Readlink(p)
		if err != nil {
			return err
		}
		if exists {
			buf := make([]byte, 4096)
			n, _ := unix.Readlinkat(dfd, name, buf)
			if string(buf[:n]) == target && sameOwner(&st, vi, m.w.r.cfg.UIDBase) {
				return nil
			}
			if err := unix.Unlinkat(dfd, name, 0); err != nil {
				return &fs.PathError{Op: "unlink", Path: p, Err: err}
			}
		}
		m.touched[p] = true
		if err := unix.Symlinkat(target, dfd, name); err != nil {
			return &fs.PathError{Op: "symlink", Path: p, Err: err}
		}
		return m.setAttrs(dfd, name, vi, true)
	case vi.Mode().IsRegular():
		if attrsEqual && st.Size == vi.Size() && st.Mtim.Nano() == vi.ModTime().UnixNano() && !m.mustWrite(p, vi) {
			return nil
		}
		m.touched[p] = true
		return m.writeFile(v, dfd, name, p, vi)
	default:
		// fifos and sockets; device nodes are not created for a sandbox.
		if vi.Mode()&(fs.ModeNamedPipe|fs.ModeSocket) == 0 {
			return nil
		}
		if attrsEqual {
			return nil
		}
		m.touched[p] = true
		if !exists {
			if err := unix.Mknodat(dfd, name, want&(unix.S_IFMT|0o777), 0); err != nil {
				return &fs.PathError{Op: "mknod", Path: p, Err: err}
			}
		}
		return m.setAttrs(dfd, name, vi, false)
	}
}

// reconcileChildren makes the entries of directory p (open as dfd in the
// overlay) match the vfs's: names only (listing) or recursively (deep).
func (m *merged) reconcileChildren(v *vfs.FS, p string, dfd int, d depth) error {
	ents, err := v.ReadDir(p)
	if err != nil {
		return err
	}
	want := make(map[string]bool, len(ents))
	for _, e := range ents {
		want[e.Name()] = true
	}
	have, err := readDirNames(dfd)
	if err != nil {
		return fmt.Errorf("list %s: %w", p, err)
	}
	had := make(map[string]bool, len(have))
	for _, n := range have {
		had[n] = true
		cp := path.Join(p, n)
		if !want[n] && !m.s.skipped(cp) {
			if err := m.reconcileIn(v, dfd, cp, nil, shallow); err != nil {
				return err
			}
		}
	}
	for _, e := range ents {
		cp := path.Join(p, e.Name())
		if m.s.skipped(cp) || d == listing && had[e.Name()] {
			continue
		}
		vi, err := e.Info()
		if err != nil {
			return err
		}
		if err := m.reconcileIn(v, dfd, cp, vi, deep); err != nil {
			return err
		}
	}
	return nil
}

// readDirNames lists dfd (O_PATH is fine) through a fresh open of ".", so
// the listing never depends on an offset shared with dfd.
func readDirNames(dfd int) ([]string, error) {
	fd, err := unix.Openat(dfd, ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	f := os.NewFile(uintptr(fd), "dir")
	defer f.Close()
	return f.Readdirnames(-1)
}

func (m *merged) writeFile(v *vfs.FS, dfd int, name, p string, vi fs.FileInfo) error {
	src, err := v.Open(p)
	if err != nil {
		return err
	}
	defer src.Close()
	// O_NONBLOCK: a fifo swapped in by a running sandbox process must not
	// block the host; anything but a regular file is refused after open.
	fd, err := unix.Openat(dfd, name, unix.O_WRONLY|unix.O_CREAT|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return &fs.PathError{Op: "open", Path: p, Err: err}
	}
	f := os.NewFile(uintptr(fd), p)
	defer f.Close()
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFREG {
		return &fs.PathError{Op: "open", Path: p, Err: unix.EEXIST}
	}
	if err := unix.Ftruncate(fd, 0); err != nil {
		return &fs.PathError{Op: "truncate", Path: p, Err: err}
	}
	if err := copyData(f, src); err != nil {
		return fmt.Errorf("copy %s into the overlay: %w", p, err)
	}
	// The fd is the file itself: set owner, mode (after chown, which clears
	// setuid), times on it directly.
	uid, gid := vfsOwner(vi)
	base := m.w.r.cfg.UIDBase
	if err := unix.Fchown(fd, int(base+uid), int(base+gid)); err != nil {
		return &fs.PathError{Op: "chown", Path: p, Err: err}
	}
	if err := unix.Fchmod(fd, unixMode(vi.Mode())&0o7777); err != nil {
		return &fs.PathError{Op: "chmod", Path: p, Err: err}
	}
	ts := []unix.Timespec{unix.NsecToTimespec(vi.ModTime().UnixNano()), unix.NsecToTimespec(vi.ModTime().UnixNano())}
	if err := unix.UtimesNanoAt(fd, "", ts, unix.AT_EMPTY_PATH); err != nil {
		return &fs.PathError{Op: "utimes", Path: p, Err: err}
	}
	return nil
}

// setAttrs sets owner, mode and mtime of name in dfd ("" = dfd itself).
// Everything goes through an O_PATH|O_NOFOLLOW fd of the entry, so a symlink
// swapped in by a running sandbox process is never followed to the host.
func (m *merged) setAttrs(dfd int, name string, vi fs.FileInfo, symlink bool) error {
	fd := dfd
	if name != "" {
		var err error
		fd, err = unix.Openat(dfd, name, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != nil {
			return &fs.PathError{Op: "open", Path: vi.Name(), Err: err}
		}
		defer unix.Close(fd)
	}
	uid, gid := vfsOwner(vi)
	base := m.w.r.cfg.UIDBase
	if err := unix.Fchownat(fd, "", int(base+uid), int(base+gid), unix.AT_EMPTY_PATH); err != nil {
		return &fs.PathError{Op: "chown", Path: vi.Name(), Err: err}
	}
	if symlink {
		return nil
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil || st.Mode&unix.S_IFMT == unix.S_IFLNK {
		return &fs.PathError{Op: "chmod", Path: vi.Name(), Err: unix.ELOOP}
	}
	// chown cleared setuid/setgid: mode goes after it. The magic link of an
	// O_PATH fd reaches exactly that inode.
	mode := unixMode(vi.Mode()) & 0o7777
	if err := unix.Fchmodat(unix.AT_FDCWD, fmt.Sprintf("/proc/self/fd/%d", fd), mode, 0); err != nil {
		return &fs.PathError{Op: "chmod", Path: vi.Name(), Err: err}
	}
	if vi.IsDir() {
		return nil // directory mtimes follow their entries; not worth a write
	}
	ts := []unix.Timespec{unix.NsecToTimespec(vi.ModTime().UnixNano()), unix.NsecToTimespec(vi.ModTime().UnixNano())}
	if err := unix.UtimesNanoAt(fd, "", ts, unix.AT_EMPTY_PATH); err != nil {
		return &fs.PathError{Op: "utimes", Path: vi.Name(), Err: err}
	}
	return nil
}

// removeAt removes name (recursively) from the directory dfd, never
// following a symlink.
func removeAt(dfd int, name string) error {
	err := unix.Unlinkat(dfd, name, 0)
	if err == nil || errors.Is(err, unix.ENOENT) {
		return nil
	}
	if !errors.Is(err, unix.EISDIR) {
		return &fs.PathError{Op: "unlink", Path: name, Err: err}
	}
	sub, err := unix.Openat(dfd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return &fs.PathError{Op: "open", Path: name, Err: err}
	}
	names, err := readDirNames(sub)
	if err == nil {
		for _, n := range names {
			if err = removeAt(sub, n); err != nil {
				break
			}
		}
	}
	unix.Close(sub)
	if err != nil {
		return err
	}
	if err := unix.Unlinkat(dfd, name, unix.AT_REMOVEDIR); err != nil && !errors.Is(err, unix.ENOENT) {
		return &fs.PathError{Op: "rmdir", Path: name, Err: err}
	}
	return nil
}

func vfsOwner(vi fs.FileInfo) (uint32, uint32) {
	if st, ok := vi.Sys().(*vfs.Stat); ok {
		return st.Uid, st.Gid
	}
	return 0, 0
}

func sameOwner(st *unix.Stat_t, vi fs.FileInfo, base uint32) bool {
	uid, gid := vfsOwner(vi)
	return st.Uid == base+uid && st.Gid == base+gid
}

func unixMode(m fs.FileMode) uint32 {
	u := uint32(m.Perm())
	switch {
	case m.IsDir():
		u |= unix.S_IFDIR
	case m&fs.ModeSymlink != 0:
		u |= unix.S_IFLNK
	case m&fs.ModeNamedPipe != 0:
		u |= unix.S_IFIFO
	case m&fs.ModeSocket != 0:
		u |= unix.S_IFSOCK
	case m&fs.ModeCharDevice != 0:
		u |= unix.S_IFCHR
	case m&fs.ModeDevice != 0:
		u |= unix.S_IFBLK
	default:
		u |= unix.S_IFREG
	}
	if m&fs.ModeSetuid != 0 {
		u |= unix.S_ISUID
	}
	if m&fs.ModeSetgid != 0 {
		u |= unix.S_ISGID
	}
	if m&fs.ModeSticky != 0 {
		u |= unix.S_ISVTX
	}
	return u
}

func fsMode(u uint32) fs.FileMode {
	m := fs.FileMode(u & 0o777)
	switch u & unix.S_IFMT {
	case unix.S_IFDIR:
		m |= fs.ModeDir
	case unix.S_IFLNK:
		m |= fs.ModeSymlink
	case unix.S_IFIFO:
		m |= fs.ModeNamedPipe
	case unix.S_IFSOCK:
		m |= fs.ModeSocket
	case unix.S_IFCHR:
		m |= fs.ModeDevice | fs.ModeCharDevice
	case unix.S_IFBLK:
		m |= fs.ModeDevice
	}
	if u&unix.S_ISUID != 0 {
		m |= fs.ModeSetuid
	}
	if u&unix.S_ISGID != 0 {
		m |= fs.ModeSetgid
	}
	if u&unix.S_ISVTX != 0 {
		m |= fs.ModeSticky
	}
	return m
}
