package sqlite

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/ncruces/go-sqlite3"
	sqlvfs "github.com/ncruces/go-sqlite3/vfs"
	"github.com/warren-sandbox/warren/commands"
	"github.com/warren-sandbox/warren/vfs"
)

// sandboxVFS is SQLite's OS interface over one sandbox's vfs: database,
// journal and WAL files are vfs files (so they land in the delta, are
// visible to every other command at once and survive hibernate and fork);
// temporary files (sorter spills, temp tables) are in memory, charged to
// the sandbox's memory budget. It never reaches the host.
type sandboxVFS struct {
	fs  *vfs.FS
	dir string // the cwd relative names resolve from
	res *commands.Reservation
}

// vfsNames numbers the registrations: ncruces's VFS registry is global
// and by name, and every invocation has its own filesystem.
var vfsNames atomic.Uint64

// register makes v known to SQLite under a fresh name, returned with the
// function that forgets it.
func (v *sandboxVFS) register() (string, func()) {
	name := fmt.Sprintf("warren-%d", vfsNames.Add(1))
	sqlvfs.Register(name, v)
	return name, func() { sqlvfs.Unregister(name) }
}

func (v *sandboxVFS) abs(name string) string {
	if path.IsAbs(name) {
		return path.Clean(name)
	}
	return path.Join(v.dir, name)
}

// sysErr tags err with code unless it is a quota error, which SQLite
// reports as "database or disk is full".
func sysErr[T ~uint8 | ~uint16](err error, code T) error {
	if errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT) {
		return sqlvfs.SystemError(err, sqlite3.FULL)
	}
	return sqlvfs.SystemError(err, code)
}

func (v *sandboxVFS) Open(name string, flags sqlvfs.OpenFlag) (sqlvfs.File, sqlvfs.OpenFlag, error) {
	if name == "" {
		return &memFile{res: v.res}, flags, nil
	}
	name = v.abs(name)
	mode := vfs.O_RDONLY
	if flags&sqlvfs.OPEN_READWRITE != 0 {
		mode = vfs.O_RDWR
	}
	if flags&sqlvfs.OPEN_CREATE != 0 {
		mode |= vfs.O_CREATE
	}
	if flags&sqlvfs.OPEN_EXCLUSIVE != 0 {
		mode |= vfs.O_EXCL
	}
	h, err := v.fs.OpenFile(name, mode, 0o644)
	if err != nil && mode&vfs.O_RDWR != 0 && flags&sqlvfs.OPEN_MAIN_DB != 0 &&
		(errors.Is(err, fs.ErrPermission) || errors.Is(err, syscall.EROFS)) {
		// A database the sandbox may only read opens read-only, as
		// SQLite's unix VFS does.
		if h, err = v.fs.OpenFile(name, vfs.O_RDONLY, 0); err == nil {
			flags = flags&^(sqlvfs.OPEN_READWRITE|sqlvfs.OPEN_CREATE) | sqlvfs.OPEN_READONLY
		}
	}
	if err != nil {
		return nil, 0, sysErr(err, sqlite3.CANTOPEN)
	}
	if fi, err := h.Stat(); err == nil && fi.IsDir() {
		h.Close()
		return nil, 0, sqlite3.CANTOPEN_ISDIR
	}
	f := &vfsFile{h: h, fs: v.fs, name: name, lock: acquireLocks(v.fs, name)}
	if flags&sqlvfs.OPEN_DELETEONCLOSE != 0 {
		f.deleteOnClose = true
	}
	return f, flags, nil
}

func (v *sandboxVFS) Delete(name string, _ bool) error {
	err := v.fs.Remove(v.abs(name))
	if errors.Is(err, fs.ErrNotExist) {
		return sqlite3.IOERR_DELETE_NOENT
	}
	if err != nil {
		return sysErr(err, sqlite3.IOERR_DELETE)
	}
	return nil
}

func (v *sandboxVFS) Access(name string, flags sqlvfs.AccessFlag) (bool, error) {
	fi, err := v.fs.Stat(v.abs(name))
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, sysErr(err, sqlite3.IOERR_ACCESS)
	}
	if flags == sqlvfs.ACCESS_READWRITE {
		return fi.Mode().Perm()&0o200 != 0, nil
	}
	return true, nil
}

func (v *sandboxVFS) FullPathname(name string) (string, error) { return v.abs(name), nil }

// vfsFile is a database, journal or WAL file in the sandbox's vfs.
type vfsFile struct {
	h             *vfs.File
	fs            *vfs.FS
	name          string
	deleteOnClose bool

	lock  *lockState
	level sqlvfs.LockLevel
}

var (
	_ sqlvfs.File          = (*vfsFile)(nil)
	_ sqlvfs.FileLockState = (*vfsFile)(nil)
)

func (f *vfsFile) Close() error {
	f.Unlock(sqlvfs.LOCK_NONE)
	releaseLocks(f.lock)
	err := f.h.Close()
	if f.deleteOnClose {
		f.fs.Remove(f.name)
	}
	return err
}

func (f *vfsFile) ReadAt(p []byte, off int64) (int, error) {
	n, err := f.h.ReadAt(p, off)
	if err != nil && !errors.Is(err, io.EOF) {
		return n, sysErr(err, sqlite3.IOERR_READ)
	}
	return n, err
}

func (f *vfsFile) WriteAt(p []byte, off int64) (int, error) {
	n, err := f.h.WriteAt(p, off)
	if err != nil {
		return n, sysErr(err, sqlite3.IOERR_WRITE)
	}
	return n, nil
}

func (f *vfsFile) Truncate(size int64) error {
	if err := f.h.Truncate(size); err != nil {
		return sysErr(err, sqlite3.IOERR_TRUNCATE)
	}
	return nil
}

// Sync has nothing to do: a write is in the delta when WriteAt returns,
// and the delta's durability is the sandbox's (commits, hibernation).
func (f *vfsFile) Sync(sqlvfs.SyncFlag) error { return nil }

func (f *vfsFile) Size() (int64, error) {
	fi, err := f.h.Stat()
	if err != nil {
		return 0, sysErr(err, sqlite3.IOERR_FSTAT)
	}
	return fi.Size(), nil
}

func (f *vfsFile) SectorSize() int { return 4096 }

func (f *vfsFile) DeviceCharacteristics() sqlvfs.DeviceCharacteristic {
	return sqlvfs.IOCAP_POWERSAFE_OVERWRITE | sqlvfs.IOCAP_SUBPAGE_READ
}

func (f *vfsFile) LockState() sqlvfs.LockLevel { return f.level }

// Locks are SQLite's five levels, kept per file in the process, since
// every sqlite3 of a sandbox (background jobs, pipeline stages) runs in
// it: SHARED readers, one RESERVED writer, PENDING keeping new readers
// out, EXCLUSIVE once the readers are gone. A conflict returns BUSY at
// once; SQLite's busy handler (.timeout) retries.
type lockState struct {
	key       lockKey
	refs      int
	shared    int
	reserved  bool
	pending   bool
	exclusive bool
}

type lockKey struct {
	fs   *vfs.FS
	name string
}

var (
	locksMu sync.Mutex
	locks   = map[lockKey]*lockState{}
)

func acquireLocks(fsys *vfs.FS, name string) *lockState {
	locksMu.Lock()
	defer locksMu.Unlock()
	k := lockKey{fsys, name}
	l := locks[k]
	if l == nil {
		l = &lockState{key: k}
		locks[k] = l
	}
	l.refs++
	return l
}

func releaseLocks(l *lockState) {
	locksMu.Lock()
	defer locksMu.Unlock()
	if l.refs--; l.refs == 0 {
		delete(locks, l.key)
	}
}

func (f *vfsFile) Lock(level sqlvfs.LockLevel) error {
	if f.level >= level {
		return nil
	}
	locksMu.Lock()
	defer locksMu.Unlock()
	l := f.lock
	switch level {
	case sqlvfs.LOCK_SHARED:
		if l.pending || l.exclusive {
			return sqlite3.BUSY
		}
		l.shared++
	case sqlvfs.LOCK_RESERVED:
		if l.reserved {
			return sqlite3.BUSY
		}
		l.reserved = true
	case sqlvfs.LOCK_EXCLUSIVE:
		if f.level < sqlvfs.LOCK_PENDING {
			if l.pending {
				return sqlite3.BUSY
			}
			l.pending = true
			f.level = sqlvfs.LOCK_PENDING
		}
		if l.shared > 1 {
			return sqlite3.BUSY
		}
		l.exclusive = true
	}
	f.level = level
	return nil
}

func (f *vfsFile) Unlock(level sqlvfs.LockLevel) error {
	if f.level <= level {
		return nil
	}
	locksMu.Lock()
	defer locksMu.Unlock()
	l := f.lock
	if f.level >= sqlvfs.LOCK_RESERVED {
		l.reserved = false
	}
	if f.level >= sqlvfs.LOCK_PENDING {
		l.pending = false
	}
	if f.level >= sqlvfs.LOCK_EXCLUSIVE {
		l.exclusive = false
	}
	if level < sqlvfs.LOCK_SHARED {
		l.shared--
	}
	f.level = level
	return nil
}

func (f *vfsFile) CheckReservedLock() (bool, error) {
	locksMu.Lock()
	defer locksMu.Unlock()
	return f.lock.reserved, nil
}

// memFile is a temporary file: private to one connection and deleted on
// close, so it never needs the vfs. Its bytes are charged to the
// sandbox's memory budget.
type memFile struct {
	data []byte
	res  *commands.Reservation
}

func (m *memFile) Close() error {
	m.res.Shrink(int64(cap(m.data)))
	m.data = nil
	return nil
}

func (m *memFile) ReadAt(p []byte, off int64) (int, error) {
	if off >= int64(len(m.data)) {
		return 0, io.EOF
	}
	n := copy(p, m.data[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

func (m *memFile) WriteAt(p []byte, off int64) (int, error) {
	if err := m.grow(off + int64(len(p))); err != nil {
		return 0, err
	}
	return copy(m.data[off:], p), nil
}

func (m *memFile) grow(size int64) error {
	if size <= int64(len(m.data)) {
		return nil
	}
	if size > int64(cap(m.data)) {
		c := max(size, 2*int64(cap(m.data)), 64<<10)
		if err := m.res.Grow(c - int64(cap(m.data))); err != nil {
			return sqlvfs.SystemError(err, sqlite3.FULL)
		}
		nd := make([]byte, size, c)
		copy(nd, m.data)
		m.data = nd
		return nil
	}
	m.data = m.data[:size]
	return nil
}

func (m *memFile) Truncate(size int64) error {
	if size < int64(len(m.data)) {
		m.data = m.data[:size]
		return nil
	}
	return m.grow(size)
}

func (m *memFile) Sync(sqlvfs.SyncFlag) error       { return nil }
func (m *memFile) Size() (int64, error)             { return int64(len(m.data)), nil }
func (m *memFile) Lock(sqlvfs.LockLevel) error      { return nil }
func (m *memFile) Unlock(sqlvfs.LockLevel) error    { return nil }
func (m *memFile) CheckReservedLock() (bool, error) { return false, nil }
func (m *memFile) SectorSize() int                  { return 4096 }
func (m *memFile) DeviceCharacteristics() sqlvfs.DeviceCharacteristic {
	return sqlvfs.IOCAP_POWERSAFE_OVERWRITE | sqlvfs.IOCAP_SUBPAGE_READ | sqlvfs.IOCAP_SAFE_APPEND
}
