// Package drive is warren's shared filesystem: a tree that many sandboxes,
// in many processes and on many nodes, mount read-write at once
// (vfs.RemoteFS; docs/drive.md has the semantics).
//
// A drive's metadata lives in a Meta (drive/boltmeta on one node,
// drive/pgmeta for a fleet) as inode rows, one transaction per operation;
// its file content lives in the blob store as content-addressed chunks
// under drives/<id>/chunks/. A file opened for writing collects its writes
// in a local buffer (memory, then a spill file) and commits them at Close:
// chunks first, then one metadata transaction, so no reader ever sees a
// torn file, and every open revalidates its metadata (close-to-open).
//
// Chunks no version refers to any more (overwritten, truncated, removed
// files) are deleted by Registry.Sweep after a grace period (sweep.go).
// Left out: hard links, symlinks, xattrs, access times.
package drive

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"path"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/containerd/errdefs"
	"github.com/warren-sandbox/warren/chunkcache"
	"github.com/warren-sandbox/warren/store"
	"github.com/warren-sandbox/warren/vfs"
)

// ChunkSize is the size of a file's slots: content is stored, cached and
// fetched a slot at a time. 1 MiB keeps a random small read to one modest
// GET while a sequential stream still makes few requests.
const ChunkSize = 1 << 20

// Defaults of Options.
const (
	DefaultWriteBuffer = 8 << 20
	DefaultLockTTL     = 30 * time.Second
	DefaultMountTTL    = 60 * time.Second
	DefaultUploads     = 4
)

// MaxNameLen bounds one path component, as Linux does.
const MaxNameLen = 255

// Options tune a node's drives. The zero value works (no chunk cache,
// spill files in os.TempDir()).
type Options struct {
	// Cache is the node's chunk cache, shared by all its drives (chunks
	// are immutable, so it needs no invalidation). nil: none, every open
	// fetches what it reads (a handle keeps the last chunk it read).
	Cache *chunkcache.Cache
	// SpillDir holds the temporary files of write buffers past
	// WriteBuffer ("" = os.TempDir()).
	SpillDir string
	// WriteBuffer is how many bytes of written data one open file keeps
	// in memory before the rest goes to a spill file.
	WriteBuffer int64
	// LockTTL is how long a lock row outlives its holder's last renewal
	// (renewed every TTL/3 while held): a dead holder's lock is free at
	// most this long after it died.
	LockTTL time.Duration
	// MountTTL is the same for a Drive's mount lease (Registry.Delete
	// refuses a drive with a live one).
	MountTTL time.Duration
	// Uploads is how many chunks one Close uploads at once.
	Uploads int
	// Grace is how long Registry.Sweep keeps a chunk no entry refers to
	// (DefaultGrace): an open handle reads its version at least that long
	// after it was replaced. Every node of a drive must use the same.
	Grace  time.Duration
	Logger *slog.Logger
}

func (o Options) withDefaults() Options {
	if o.WriteBuffer <= 0 {
		o.WriteBuffer = DefaultWriteBuffer
	}
	if o.LockTTL <= 0 {
		o.LockTTL = DefaultLockTTL
	}
	if o.MountTTL <= 0 {
		o.MountTTL = DefaultMountTTL
	}
	if o.Uploads <= 0 {
		o.Uploads = DefaultUploads
	}
	if o.Grace <= 0 {
		o.Grace = DefaultGrace
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return o
}

// Drive is one mounted drive: a vfs.RemoteFS over its Meta and blob store.
// Safe for concurrent use; several Drives of one drive (other processes,
// other nodes) see each other's closed files at their next open.
type Drive struct {
	rec   Record // ID, Tenant, Name, Quota as of Open
	meta  Meta
	store store.Store
	opts  Options
	mount string // this instance's mount lease id; prefixes its lock owners

	ctx    context.Context // every operation's; cancelled by Close
	cancel context.CancelFunc
	done   chan struct{}

	uploads  chan struct{} // early uploads in flight (Options.Uploads)
	prefetch chan struct{} // read-ahead fetches in flight (as many)
	fmu      sync.Mutex
	flights  map[[32]byte]*flight

	mu     sync.Mutex
	held   map[string]Lock // owner -> lock this instance holds
	used   int64           // last Usage read
	closed bool
	ownerN uint64
}

var (
	_ vfs.RemoteFS   = (*Drive)(nil)
	_ vfs.RemoteFile = (*File)(nil)
)

// open starts a Drive: it takes a mount lease and renews it (and the
// locks it holds) until Close.
func open(ctx context.Context, m Meta, s store.Store, rec Record, o Options) (*Drive, error) {
	o = o.withDefaults()
	d := &Drive{rec: rec, meta: m, store: s, opts: o, mount: randomID(), held: map[string]Lock{}, done: make(chan struct{}), used: rec.Used,
		uploads: make(chan struct{}, o.Uploads), prefetch: make(chan struct{}, o.Uploads), flights: map[[32]byte]*flight{}}
	err := m.Update(ctx, rec.ID, func(tx Tx) error {
		now, err := tx.Now()
		if err != nil {
			return err
		}
		return tx.PutMount(Mount{ID: d.mount, Expires: now.Add(o.MountTTL)})
	})
	if err != nil {
		return nil, fmt.Errorf("cannot mount drive %q: %w", rec.Name, err)
	}
	d.ctx, d.cancel = context.WithCancel(context.Background())
	go d.renew()
	return d, nil
}

// Name is the drive's name; ID names its blob prefix.
func (d *Drive) Name() string { return d.rec.Name }
func (d *Drive) ID() string   { return d.rec.ID }

// Close releases the mount lease and every lock this instance holds. Files
// still open are not committed.
func (d *Drive) Close() error {
	d.mu.Lock()
	if d.closed {
		d.mu.Unlock()
		return nil
	}
	d.closed = true
	held := d.held
	d.held = map[string]Lock{}
	d.mu.Unlock()
	d.cancel()
	<-d.done
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err := d.meta.Update(ctx, d.rec.ID, func(tx Tx) error {
		for _, l := range held {
			if err := tx.DeleteLock(l.Inode, l.Owner); err != nil {
				return err
			}
		}
		return tx.DeleteMount(d.mount)
	})
	if err != nil && !errors.Is(err, errdefs.ErrNotFound) {
		return fmt.Errorf("cannot release drive %q: %w", d.rec.Name, err)
	}
	return nil
}

// renew keeps the mount lease and the held locks alive.
func (d *Drive) renew() {
	defer close(d.done)
	period := min(d.opts.LockTTL, d.opts.MountTTL) / 3
	t := time.NewTicker(period)
	defer t.Stop()
	for {
		select {
		case <-d.ctx.Done():
			return
		case <-t.C:
		}
		if err := d.renewOnce(); err != nil && d.ctx.Err() == nil {
			d.opts.Logger.Warn("drive: cannot renew leases", "drive", d.rec.Name, "err", err)
		}
	}
}

func (d *Drive) renewOnce() error {
	d.mu.Lock()
	held := make([]Lock, 0, len(d.held))
	for _, l := range d.held {
		held = append(held, l)
	}
	d.mu.Unlock()
	var lost []Lock
	err := d.meta.Update(d.ctx, d.rec.ID, func(tx Tx) error {
		lost = lost[:0]
		now, err := tx.Now()
		if err != nil {
			return err
		}
		if err := tx.PutMount(Mount{ID: d.mount, Expires: now.Add(d.opts.MountTTL)}); err != nil {
			return err
		}
		for _, l := range held {
			ls, err := tx.Locks(l.Inode)
			if err != nil {
				return err
			}
			if conflict(ls, l.Owner, l.Exclusive, now) {
				// Our row expired and someone else took the lock: it is
				// theirs now; renewing would make two holders.
				lost = append(lost, l)
				continue
			}
			l.Expires = now.Add(d.opts.LockTTL)
			if err := tx.PutLock(l); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	if len(lost) > 0 {
		d.mu.Lock()
		for _, l := range lost {
			if h, ok := d.held[l.Owner]; ok && h.Inode == l.Inode {
				delete(d.held, l.Owner)
			}
		}
		d.mu.Unlock()
		for _, l := range lost {
			d.opts.Logger.Warn("drive: lock lost (expired and taken by another holder)", "drive", d.rec.Name, "inode", l.Inode)
		}
	}
	return nil
}

func randomID() string {
	var b [16]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// chunkKey is a chunk's blob key.
func chunkKey(driveID string, sum [32]byte) string {
	return "drives/" + driveID + "/chunks/" + hex.EncodeToString(sum[:])
}

// Prefix is the blob prefix of a drive's objects.
func Prefix(driveID string) string { return "drives/" + driveID + "/" }

// ---- errors

// pathErr turns an operation's error into the *fs.PathError carrying a
// syscall.Errno that vfs.RemoteFS promises.
func (d *Drive) pathErr(op, name string, err error) error {
	if err == nil {
		return nil
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return err
	}
	var qe *vfs.QuotaError
	if errors.As(err, &qe) {
		return &fs.PathError{Op: op, Path: name, Err: qe}
	}
	var en syscall.Errno
	if errors.As(err, &en) {
		return &fs.PathError{Op: op, Path: name, Err: err}
	}
	if errors.Is(err, errdefs.ErrNotFound) {
		return &fs.PathError{Op: op, Path: name, Err: fmt.Errorf("%w: drive %q was deleted", syscall.ESTALE, d.rec.Name)}
	}
	if d.ctx.Err() != nil {
		return &fs.PathError{Op: op, Path: name, Err: fmt.Errorf("%w: drive %q is closed", syscall.EIO, d.rec.Name)}
	}
	return &fs.PathError{Op: op, Path: name, Err: fmt.Errorf("%w: drive %q: %w", syscall.EIO, d.rec.Name, err)}
}

// checkName validates an absolute clean path and returns its components.
func checkName(name string) ([]string, error) {
	if name == "" || name[0] != '/' || path.Clean(name) != name {
		return nil, fmt.Errorf("%w: %q is not an absolute clean path", syscall.EINVAL, name)
	}
	if name == "/" {
		return nil, nil
	}
	parts := strings.Split(name[1:], "/")
	for _, p := range parts {
		if len(p) > MaxNameLen {
			return nil, syscall.ENAMETOOLONG
		}
		if strings.IndexByte(p, 0) >= 0 {
			return nil, fmt.Errorf("%w: NUL in a name", syscall.EINVAL)
		}
	}
	return parts, nil
}

// walk resolves name inside tx.
func walk(tx Tx, parts []string) (Entry, error) {
	e, err := tx.Entry(RootID)
	if err != nil {
		return e, err
	}
	for _, p := range parts {
		if !e.Dir {
			return e, syscall.ENOTDIR
		}
		e, err = tx.Lookup(e.ID, p)
		if IsNoEntry(err) {
			return e, syscall.ENOENT
		}
		if err != nil {
			return e, err
		}
	}
	return e, nil
}

// walkParent resolves the directory that holds name's last component.
func walkParent(tx Tx, parts []string) (Entry, string, error) {
	if len(parts) == 0 {
		return Entry{}, "", syscall.EBUSY // the root has no parent
	}
	dir, err := walk(tx, parts[:len(parts)-1])
	if err != nil {
		return dir, "", err
	}
	if !dir.Dir {
		return dir, "", syscall.ENOTDIR
	}
	return dir, parts[len(parts)-1], nil
}

// lookup resolves base in dir: ok false when absent.
func lookup(tx Tx, dir uint64, base string) (Entry, bool, error) {
	e, err := tx.Lookup(dir, base)
	if IsNoEntry(err) {
		return e, false, nil
	}
	return e, err == nil, err
}

// touchDir records a change of dir's entries (its mtime, as POSIX has it).
func touchDir(tx Tx, dir Entry, now time.Time) error {
	dir.MTime = now
	dir.Version++
	return tx.Put(dir)
}

func (d *Drive) view(op, name string, fn func(tx Tx, parts []string) error) error {
	parts, err := checkName(name)
	if err != nil {
		return d.pathErr(op, name, err)
	}
	return d.pathErr(op, name, d.meta.View(d.ctx, d.rec.ID, func(tx Tx) error { return fn(tx, parts) }))
}

func (d *Drive) update(op, name string, fn func(tx Tx, parts []string, now time.Time) error) error {
	parts, err := checkName(name)
	if err != nil {
		return d.pathErr(op, name, err)
	}
	return d.pathErr(op, name, d.meta.Update(d.ctx, d.rec.ID, func(tx Tx) error {
		now, err := tx.Now()
		if err != nil {
			return err
		}
		return fn(tx, parts, now)
	}))
}

// ---- vfs.RemoteFS

func (d *Drive) Stat(name string) (fs.FileInfo, error) {
	var e Entry
	err := d.view("stat", name, func(tx Tx, parts []string) (err error) {
		e, err = walk(tx, parts)
		return err
	})
	if err != nil {
		return nil, err
	}
	return newInfo(e, path.Base(name)), nil
}

func (d *Drive) ReadDir(name string) ([]fs.DirEntry, error) {
	var kids []Entry
	err := d.view("readdir", name, func(tx Tx, parts []string) error {
		e, err := walk(tx, parts)
		if err != nil {
			return err
		}
		if !e.Dir {
			return syscall.ENOTDIR
		}
		kids, err = tx.Children(e.ID)
		return err
	})
	if err != nil {
		return nil, err
	}
	return dirEntries(kids), nil
}

func dirEntries(kids []Entry) []fs.DirEntry {
	out := make([]fs.DirEntry, len(kids))
	for i, k := range kids {
		out[i] = fs.FileInfoToDirEntry(newInfo(k, k.Name))
	}
	return out
}

const modeBits = fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky

func (d *Drive) Mkdir(name string, perm fs.FileMode) error {
	return d.update("mkdir", name, func(tx Tx, parts []string, now time.Time) error {
		if len(parts) == 0 {
			return syscall.EEXIST
		}
		dir, base, err := walkParent(tx, parts)
		if err != nil {
			return err
		}
		if _, ok, err := lookup(tx, dir.ID, base); err != nil || ok {
			if ok {
				return syscall.EEXIST
			}
			return err
		}
		id, err := tx.NewID()
		if err != nil {
			return err
		}
		if err := tx.Put(Entry{ID: id, Parent: dir.ID, Name: base, Dir: true, Mode: perm & modeBits, MTime: now, Version: 1}); err != nil {
			return err
		}
		return touchDir(tx, dir, now)
	})
}

func (d *Drive) Remove(name string) error {
	return d.update("remove", name, func(tx Tx, parts []string, now time.Time) error {
		dir, base, err := walkParent(tx, parts)
		if err != nil {
			return err
		}
		e, ok, err := lookup(tx, dir.ID, base)
		if err != nil {
			return err
		}
		if !ok {
			return syscall.ENOENT
		}
		if err := d.unlink(tx, e); err != nil {
			return err
		}
		return touchDir(tx, dir, now)
	})
}

// unlink deletes e (an empty directory or a file) and gives its bytes back.
func (d *Drive) unlink(tx Tx, e Entry) error {
	if e.Dir {
		has, err := tx.HasChildren(e.ID)
		if err != nil {
			return err
		}
		if has {
			return syscall.ENOTEMPTY
		}
		return tx.DeleteEntry(e.ID)
	}
	if err := tx.DeleteEntry(e.ID); err != nil {
		return err
	}
	return addUsed(tx, -e.Size, d.rec.Name)
}

// addUsed charges delta bytes to the drive, refusing growth past the quota.
func addUsed(tx Tx, delta int64, name string) error {
	if delta == 0 {
		return nil
	}
	r, err := tx.Record()
	if err != nil {
		return err
	}
	used := max(r.Used+delta, 0)
	if delta > 0 && r.Quota > 0 && used > r.Quota {
		return &vfs.QuotaError{Errno: syscall.ENOSPC, Limit: "bytes", Max: r.Quota, Want: used, Name: "drive " + name}
	}
	return tx.SetUsed(used)
}

func (d *Drive) Rename(oldname, newname string) error {
	newParts, err := checkName(newname)
	if err != nil {
		return d.pathErr("rename", newname, err)
	}
	return d.update("rename", oldname, func(tx Tx, parts []string, now time.Time) error {
		if len(parts) == 0 || len(newParts) == 0 {
			return syscall.EBUSY
		}
		if oldname == newname {
			_, err := walk(tx, parts)
			return err
		}
		// No links: a path names one place, so the lexical check finds
		// every move of a directory into its own subtree.
		if strings.HasPrefix(newname, oldname+"/") {
			return syscall.EINVAL
		}
		odir, obase, err := walkParent(tx, parts)
		if err != nil {
			return err
		}
		src, ok, err := lookup(tx, odir.ID, obase)
		if err != nil {
			return err
		}
		if !ok {
			return syscall.ENOENT
		}
		ndir, nbase, err := walkParent(tx, newParts)
		if err != nil {
			return err
		}
		dst, exists, err := lookup(tx, ndir.ID, nbase)
		if err != nil {
			return err
		}
		if exists {
			switch {
			case dst.Dir && !src.Dir:
				return syscall.EISDIR
			case !dst.Dir && src.Dir:
				return syscall.ENOTDIR
			}
			if err := d.unlink(tx, dst); err != nil {
				return err
			}
		}
		src.Parent, src.Name = ndir.ID, nbase
		if err := tx.Put(src); err != nil {
			return err
		}
		if err := touchDir(tx, odir, now); err != nil {
			return err
		}
		if ndir.ID != odir.ID {
			ndir, err = tx.Entry(ndir.ID) // touchDir may have changed it (nested)
			if err != nil {
				return err
			}
			return touchDir(tx, ndir, now)
		}
		return nil
	})
}

func (d *Drive) change(op, name string, fn func(e *Entry, now time.Time) error) error {
	return d.update(op, name, func(tx Tx, parts []string, now time.Time) error {
		e, err := walk(tx, parts)
		if err != nil {
			return err
		}
		if err := fn(&e, now); err != nil {
			return err
		}
		e.Version++
		return tx.Put(e)
	})
}

func (d *Drive) Chmod(name string, mode fs.FileMode) error {
	return d.change("chmod", name, func(e *Entry, _ time.Time) error {
		e.Mode = mode & modeBits
		return nil
	})
}

// Chtimes sets the modification time (a zero mtime leaves it); a drive
// keeps no access time.
func (d *Drive) Chtimes(name string, _, mtime time.Time) error {
	return d.change("chtimes", name, func(e *Entry, _ time.Time) error {
		if !mtime.IsZero() {
			e.MTime = mtime
		}
		return nil
	})
}

func (d *Drive) Truncate(name string, size int64) error {
	if size < 0 {
		return d.pathErr("truncate", name, syscall.EINVAL)
	}
	return d.update("truncate", name, func(tx Tx, parts []string, now time.Time) error {
		e, err := walk(tx, parts)
		if err != nil {
			return err
		}
		if e.Dir {
			return syscall.EISDIR
		}
		if err := addUsed(tx, size-e.Size, d.rec.Name); err != nil {
			return err
		}
		e.Chunks = truncateChunks(e.Chunks, size)
		e.Size, e.MTime = size, now
		e.Version++
		return tx.Put(e)
	})
}

// truncateChunks cuts a chunk list at size: a slot beyond it goes, the
// slot it ends in keeps only the bytes before it (Len), so growing the
// file again shows zeros, never old bytes.
func truncateChunks(cs []Chunk, size int64) []Chunk {
	n := (size + ChunkSize - 1) / ChunkSize
	if int64(len(cs)) > n {
		cs = cs[:n]
	}
	out := append([]Chunk(nil), cs...)
	if n > 0 && int64(len(out)) == n {
		last := size - (n-1)*ChunkSize
		if int64(out[n-1].Len) > last {
			out[n-1].Len = uint32(last)
		}
	}
	return trimHoles(out)
}

// trimHoles drops trailing holes: slots past the list are holes anyway.
func trimHoles(cs []Chunk) []Chunk {
	for len(cs) > 0 && (cs[len(cs)-1].Hole() || cs[len(cs)-1].Len == 0) {
		cs = cs[:len(cs)-1]
	}
	if len(cs) == 0 {
		return nil
	}
	return cs
}

// Usage is the drive's bytes in use (file content, logical sizes) and its
// quota, read from the meta; on a meta error the last value read.
func (d *Drive) Usage() (used, quota int64) {
	var r Record
	err := d.meta.View(d.ctx, d.rec.ID, func(tx Tx) (err error) {
		r, err = tx.Record()
		return err
	})
	d.mu.Lock()
	defer d.mu.Unlock()
	if err == nil {
		d.used = r.Used
		d.rec.Quota = r.Quota
	}
	return d.used, d.rec.Quota
}

// ---- FileInfo

type info struct {
	e    Entry
	name string
}

func newInfo(e Entry, name string) *info {
	if name == "" {
		name = "/"
	}
	return &info{e: e, name: name}
}

func (i *info) Name() string { return i.name }
func (i *info) Size() int64 {
	if i.e.Dir {
		return 0
	}
	return i.e.Size
}
func (i *info) Mode() fs.FileMode {
	if i.e.Dir {
		return fs.ModeDir | i.e.Mode
	}
	return i.e.Mode
}
func (i *info) ModTime() time.Time { return i.e.MTime }
func (i *info) IsDir() bool        { return i.e.Dir }
func (i *info) Sys() any {
	nlink := uint32(1)
	if i.e.Dir {
		nlink = 2
	}
	return &vfs.Stat{Ino: i.e.ID, Nlink: nlink, Ctime: i.e.MTime, Atime: i.e.MTime, Blocks: (i.Size() + 511) / 512}
}

// Version is the entry's version: a FileInfo from this package is a
// *info; Version reads it (the checker and tests use it).
func Version(fi fs.FileInfo) (uint64, bool) {
	i, ok := fi.(*info)
	if !ok {
		return 0, false
	}
	return i.e.Version, true
}
