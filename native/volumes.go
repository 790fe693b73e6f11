package native

import (
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/warren-sandbox/warren/vfs"
	"golang.org/x/sys/unix"
)

// Volumes in the native tier (issue 15).
//
// Every tree mounted into the sandbox's vfs (vfs.FS.Mounts: the sandbox's
// volumes) is materialized into a tmpfs of its own, RunDir/ws/N/vol/I, by
// the same sync that fills the overlay (sync.go: vfs.Diff from the version
// synced last, so a volume unchanged since the last exec costs nothing and
// a changed one costs what changed), and bind-mounted by the init at the
// volume's path in the workspace's mount namespace, nosuid and nodev. So a
// native process reads and writes a volume at kernel speed, and its writes
// never reach the overlay's upper layer, hence never the sandbox's delta.
// After each exec (and at every Workspace.Harvest) the tmpfs is harvested
// into the volume's own vfs tree like upper/ into the delta: writes,
// removals, renames, modes, owners, mtimes.
//
// Read-only volume: its tmpfs is remounted read-only once filled, so the
// bind inside is read-only and locked (a copy into the less privileged
// mount namespace cannot be made writable, nor the superblock remounted
// from there, even in the relaxed security mode); writes fail with EROFS.
//
// Quota: the tmpfs is sized to the volume's quota plus a page per inode of
// the volume and volumeSlackPages (tmpfs charges whole pages, the vfs bytes,
// so a volume of many small files that fits its quota must still fit its
// tmpfs); a write far past the quota meets ENOSPC in the process itself.
// The exact limit is the vfs's, at the harvest: what it refuses is put back
// as it was on both sides and the exec reports it (QuotaRefusal, stderr,
// status 1), nothing is kept past the quota and nothing vanishes silently.
//
// Memory: a volume's tmpfs pages are RAM. What the host materializes is
// charged to warren's cgroup, what a native process writes to the
// sandbox's memory limit (as for the overlay's tmpfs).
//
// The mount table is read once, when the workspace starts: an Exec after
// the sandbox's mounts changed fails with ErrMountsChanged (the sandbox
// recreates its workspace then; its volumes only change at resume).

// ErrMountsChanged means the sandbox's vfs mount table is no longer the one
// the workspace was made with: close it and make a new one.
var ErrMountsChanged = errors.New("native: the sandbox's volume mounts changed since the workspace started")

// volumeSlackPages is the room, in tmpfs pages, for new small files of a
// volume beyond one page per existing inode (4 MiB).
const volumeSlackPages = 1024

const pageSize = 4096

// volume is one mounted tree of the sandbox's vfs, as the native tier
// sees it.
type volume struct {
	info vfs.MountInfo
	dir  string     // the host tmpfs
	mu   sync.Mutex // one syncIn at a time (concurrent execs); guards size, ro
	size int64      // its size= now
	ro   bool       // the superblock is read-only now
	sy   *syncState
}

// volMount is one volume as the init binds it (setupMsg.Volumes).
type volMount struct {
	Src      string // host directory (the volume's tmpfs)
	Path     string // mount path in the sandbox
	ReadOnly bool
}

// prepareVolumes makes a tmpfs per mount of fs (before the init starts, so
// its mount namespace has them) and returns what the init binds.
func (w *Workspace) prepareVolumes(fs *vfs.FS) error {
	if fs == nil {
		return nil
	}
	mounts := fs.Mounts()
	w.mounts = mounts
	if len(mounts) == 0 {
		return nil
	}
	w.sy.mounts = map[string]bool{}
	vdir := filepath.Join(w.dir, "vol")
	if err := os.Mkdir(vdir, 0o711); err != nil {
		return err
	}
	for i, mi := range mounts {
		if mi.FS == nil {
			// A drive (vfs.RemoteFS) is not materialized: the native tier
			// sees the sandbox's own directory at its mount point, and
			// what a process writes there reaches the drive through the
			// vfs when the overlay is harvested (DESIGN.md, drives).
			continue
		}
		p := path.Clean(mi.Path)
		top, _, _ := strings.Cut(strings.TrimPrefix(p, "/"), "/")
		if !strings.HasPrefix(mi.Path, "/") || p == "/" || skipTop[top] {
			return fmt.Errorf("%s at %s: the native tier cannot mount a volume there (not under /proc, /dev or /sys)", mountName(mi), mi.Path)
		}
		v := &volume{info: mi, dir: filepath.Join(vdir, strconv.Itoa(i))}
		if err := os.Mkdir(v.dir, 0o711); err != nil {
			return err
		}
		v.size = v.wantSize(w.lim.Disk)
		if err := unix.Mount("tmpfs", v.dir, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV,
			fmt.Sprintf("size=%d,mode=0700", v.size)); err != nil {
			return fmt.Errorf("%s: cannot mount its tmpfs: %w", mountName(mi), err)
		}
		v.sy = newSyncState(mi.FS, v.dir, v.dir, nil)
		v.sy.at, v.sy.name = p, mi.Name
		w.sy.mounts[p] = true
		w.vols = append(w.vols, v)
		w.volMounts = append(w.volMounts, volMount{Src: v.dir, Path: p, ReadOnly: mi.ReadOnly})
	}
	return nil
}

func mountName(mi vfs.MountInfo) string {
	if mi.Name != "" {
		return mi.Name
	}
	return "the tree mounted"
}

// wantSize is the tmpfs size for v now (see the quota rule above).
func (v *volume) wantSize(disk int64) int64 {
	q, _ := v.info.FS.Quota()
	if q <= 0 {
		q = disk
	}
	n := q + pageSize*(v.info.FS.Usage().Inodes+volumeSlackPages)
	return (n + pageSize - 1) / pageSize * pageSize
}

// syncIn brings the volume's vfs changes into its tmpfs: nothing when the
// tree is the version synced last.
func (v *volume) syncIn(w *Workspace) error {
	v.mu.Lock()
	defer v.mu.Unlock()
	unchanged := v.sy.synced != nil && v.info.FS.Mark() == v.sy.synced.Mark()
	if v.info.ReadOnly {
		// Never written from inside; writable only while the host fills it
		// (a read-only volume's tree does not change in a sandbox: it is
		// the last commit).
		if unchanged {
			return nil
		}
		if v.ro {
			if err := v.remount(v.size, false); err != nil {
				return err
			}
		}
		if err := v.sy.syncIn(w); err != nil {
			return fmt.Errorf("%s at %s: %w", mountName(v.info), v.sy.at, err)
		}
		return v.remount(v.size, true)
	}
	// Grown: a resize (SetQuota) or more files. Sizes only grow: a tmpfs
	// refuses a size below what it holds.
	if want := v.wantSize(w.lim.Disk); want > v.size {
		if err := v.remount(want, false); err != nil {
			return err
		}
	}
	if unchanged {
		return nil
	}
	if err := v.sy.syncIn(w); err != nil {
		return fmt.Errorf("%s at %s: %w", mountName(v.info), v.sy.at, err)
	}
	return nil
}

// remount sets the tmpfs's size and whether its superblock is read-only.
func (v *volume) remount(size int64, ro bool) error {
	flags := uintptr(unix.MS_REMOUNT | unix.MS_NOSUID | unix.MS_NODEV)
	if ro {
		flags |= unix.MS_RDONLY
	}
	if size < v.size {
		size = v.size
	}
	if err := unix.Mount("", v.dir, "", flags, fmt.Sprintf("size=%d", size)); err != nil {
		return fmt.Errorf("%s: cannot remount its tmpfs (size %d, read-only %v): %w", mountName(v.info), size, ro, err)
	}
	v.size, v.ro = size, ro
	return nil
}

// harvest brings what native processes wrote in a read-write volume into
// its vfs tree.
func (v *volume) harvest(w *Workspace) error {
	if v.info.ReadOnly {
		return nil
	}
	if err := v.sy.harvest(w); err != nil {
		var qr *QuotaRefusal
		if errors.As(err, &qr) {
			return err
		}
		return fmt.Errorf("%s at %s: %w", mountName(v.info), v.sy.at, err)
	}
	return nil
}

// mountsChanged reports whether fs's mount table differs from the one the
// workspace was made with.
func (w *Workspace) mountsChanged() bool {
	if w.sy.fs == nil {
		return false
	}
	now := w.sy.fs.Mounts()
	if len(now) != len(w.mounts) {
		return true
	}
	for i := range now {
		a, b := now[i], w.mounts[i]
		if a.Path != b.Path || a.FS != b.FS || a.ReadOnly != b.ReadOnly {
			return true
		}
	}
	return false
}

// MountsChanged reports whether the sandbox's vfs mount table changed since
// the workspace started (its Execs then fail with ErrMountsChanged).
func (w *Workspace) MountsChanged() bool { return w.mountsChanged() }

// syncAll runs the pre-exec sync of the sandbox's tree and every volume.
func (w *Workspace) syncAll() error {
	if w.mountsChanged() {
		return ErrMountsChanged
	}
	if err := w.sy.syncIn(w); err != nil {
		return err
	}
	for _, v := range w.vols {
		if err := v.syncIn(w); err != nil {
			return err
		}
	}
	return nil
}

// harvestAll harvests the sandbox's tree and every read-write volume. A
// quota's refusal does not stop the others; the refusals are merged.
func (w *Workspace) harvestAll() error {
	var refusal *QuotaRefusal
	note := func(err error) error {
		var qr *QuotaRefusal
		if !errors.As(err, &qr) {
			return err
		}
		if refusal == nil {
			refusal = &QuotaRefusal{Err: qr.Err}
		}
		refusal.Paths = append(refusal.Paths, qr.Paths...)
		return nil
	}
	if err := w.sy.harvest(w); err != nil {
		if err := note(err); err != nil {
			return err
		}
	}
	for _, v := range w.vols {
		if err := v.harvest(w); err != nil {
			if err := note(err); err != nil {
				return err
			}
		}
	}
	if refusal != nil {
		return refusal
	}
	return nil
}

// bindVolumes mounts each volume's tmpfs at its path under root (in the
// init, before pivot_root, while the host paths are visible). The mount
// point is resolved beneath root without following symlinks, so a symlink
// in the image cannot send the bind elsewhere.
func bindVolumes(root string, vols []volMount) error {
	if len(vols) == 0 {
		return nil
	}
	rfd, err := unix.Open(root, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("open root: %w", err)
	}
	defer unix.Close(rfd)
	for _, v := range vols {
		if err := bindVolume(rfd, v); err != nil {
			return fmt.Errorf("volume at %s: %w", v.Path, err)
		}
	}
	return nil
}

func bindVolume(rfd int, v volMount) error {
	tree, err := unix.OpenTree(unix.AT_FDCWD, v.Src, unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC)
	if err != nil {
		return fmt.Errorf("open_tree: %w", err)
	}
	defer unix.Close(tree)
	attr := uint64(unix.MOUNT_ATTR_NOSUID | unix.MOUNT_ATTR_NODEV)
	if v.ReadOnly {
		attr |= unix.MOUNT_ATTR_RDONLY
	}
	if err := unix.MountSetattr(tree, "", unix.AT_EMPTY_PATH, &unix.MountAttr{Attr_set: attr}); err != nil {
		return fmt.Errorf("mount_setattr: %w", err)
	}
	target, err := openDir(rfd, v.Path, unix.O_PATH)
	if err != nil {
		return fmt.Errorf("mount point: %w", err)
	}
	defer unix.Close(target)
	if err := unix.MoveMount(tree, "", target, "", unix.MOVE_MOUNT_F_EMPTY_PATH|unix.MOVE_MOUNT_T_EMPTY_PATH); err != nil {
		return fmt.Errorf("move_mount: %w", err)
	}
	return nil
}
