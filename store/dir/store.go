// Package dir is the local-directory store.Store, warren's embedded default.
//
// # Layout (format 1)
//
//	ROOT/
//	  warren-store      "warren-store-dir 1\n": marks the directory and its format
//	  lock              flock(2) target for conditional writes
//	  tmp/              objects being written; never visible as objects
//	  data/             objects
//	    ~ab/abc         key "abc"
//	    chunks/         key prefix "chunks/"
//	      ~3f/3f09...   key "chunks/3f09..."
//	      ab/~ab/ab12.. key "chunks/ab/ab12..."
//
// Every key segment but the last is a directory of the same name. The last
// segment, the object's name, lives in a fan-out directory "~" + its first
// two bytes (or its only byte), so a flat namespace of a million
// content-addressed keys spreads over a few hundred directories instead of
// one, and a prefix such as "chunks/ab" reads one fan-out directory. Keys
// cannot contain "~" (see store's key rules), so a fan-out directory never
// collides with a key directory, and an object "a" can coexist with objects
// under "a/", as on S3.
//
// # Guarantees
//
//   - Put writes tmp/<random>.tmp, fdatasyncs it, creates the directories
//     it needs (fsyncing their parents when it created them), renames the
//     file into place (atomic on POSIX) and fsyncs the object's directory,
//     and only that one: tmp/ losing the name need not survive, and the
//     directories above were synced when they were made. After Put returns,
//     the object survives a power loss; before, a crash leaves at most a
//     stray file in tmp/, which Open removes once it is an hour old.
//     WithoutSync drops the syncs (tests, throwaway nodes).
//   - tmp/ and the directories under data/ that operations touch are kept
//     open (up to 512 of them), so Put, Get, GetRange and Has work with
//     one openat/renameat/fstatat relative to the object's directory rather
//     than resolving the whole path again. A directory removed under the
//     store is noticed (its link count is 0) and reopened.
//   - Concurrent Puts of one key each write their own temp file; the last
//     rename wins, readers see one whole version.
//   - Get streams from the file (File returns the *os.File itself, for mmap);
//     GetRange (store.RangeGetter) reads a range with pread, nothing before
//     it. Since objects are replaced by rename, never rewritten, an open
//     reader keeps seeing the version it opened.
//   - Delete unlinks the file without an fsync: a crash may bring a deleted
//     object back, so a sweeper must be idempotent (it deletes again).
//     Deletes are GC's bulk operation, and a directory fsync each would cost
//     ~1 ms on this machine's disk. Empty directories are left in place.
//   - Every directory is resolved through os.Root: keys are validated first,
//     and a symlink planted inside ROOT cannot lead an operation outside it.
//     A kept-open directory is pinned by its descriptor, so a symlink swapped
//     in for it later is never followed; objects themselves are opened with
//     O_NOFOLLOW (a symlink in place of an object is not an object). Path
//     additionally refuses any symlink on the way, since its caller opens
//     the path itself.
//   - Conditional writes (store.Conditional) use the content's sha256 as the
//     ETag. PutIfAbsent hard-links the temp file into place, which fails if
//     the object exists, so it is atomic against every writer. CompareAndSwap
//     holds a mutex and flock(ROOT/lock) while it compares and renames, so it
//     is atomic against other conditional writers in any process; a plain Put
//     or Delete of the same key is not fenced (as with S3 without headers).
package dir

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"math"
	"math/rand/v2"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/warren-sandbox/warren/store"
)

var (
	_ store.Store       = (*Store)(nil)
	_ store.Conditional = (*Store)(nil)
	_ store.RangeGetter = (*Store)(nil)
)

const (
	formatFile    = "warren-store"
	formatContent = "warren-store-dir 1\n"
	tmpDir        = "tmp"
	dataDir       = "data"
	lockFile      = "lock"
	fanPrefix     = "~"
	// staleTmp: temp files older than this at Open are crash leftovers.
	staleTmp = time.Hour
)

// Store keeps objects in a local directory.
type Store struct {
	path string // absolute, symlinks resolved
	root *os.Root
	sync bool

	tmp  *os.File  // tmp/, held open: temp files are created relative to it
	dirs *dirCache // open directories under data/

	condMu sync.Mutex // serializes CompareAndSwap within the process
	lock   *os.File   // flock target across processes

	bufs sync.Pool
}

// Option configures Open.
type Option func(*Store)

// WithoutSync skips every fsync: faster, but a power loss may lose or
// truncate recent objects. For tests and nodes whose data is disposable.
func WithoutSync() Option { return func(s *Store) { s.sync = false } }

// Open opens the store in directory p, creating it if needed.
func Open(p string, opts ...Option) (*Store, error) {
	if err := os.MkdirAll(p, 0o755); err != nil {
		return nil, fmt.Errorf("cannot create store directory: %w", err)
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		return nil, fmt.Errorf("cannot resolve store directory: %w", err)
	}
	if abs, err = filepath.EvalSymlinks(abs); err != nil {
		return nil, fmt.Errorf("cannot resolve store directory: %w", err)
	}
	root, err := os.OpenRoot(abs)
	if err != nil {
		return nil, fmt.Errorf("cannot open store directory: %w", err)
	}
	s := &Store{path: abs, root: root, sync: true}
	s.bufs.New = func() any { b := make([]byte, 256<<10); return &b }
	for _, o := range opts {
		o(s)
	}
	if err := s.init(); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

func (s *Store) init() error {
	switch b, err := s.root.ReadFile(formatFile); {
	case err == nil:
		if string(b) != formatContent {
			return fmt.Errorf("cannot open store %s: unknown format %q in %s", s.path, strings.TrimSpace(string(b)), formatFile)
		}
	case errors.Is(err, fs.ErrNotExist):
		if err := s.root.WriteFile(formatFile, []byte(formatContent), 0o644); err != nil {
			return fmt.Errorf("cannot write store format file: %w", err)
		}
	default:
		return fmt.Errorf("cannot read store format file: %w", err)
	}
	for _, d := range []string{tmpDir, dataDir} {
		if err := s.root.Mkdir(d, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("cannot create store directory %s: %w", d, err)
		}
		if fi, err := s.root.Lstat(d); err != nil || !fi.IsDir() {
			return fmt.Errorf("cannot open store %s: %s is not a directory", s.path, d)
		}
	}
	tmp, err := s.root.Open(tmpDir)
	if err != nil {
		return fmt.Errorf("cannot open store directory %s: %w", tmpDir, err)
	}
	s.tmp = tmp
	s.dirs = newDirCache(s.root)
	lock, err := s.root.OpenFile(lockFile, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return fmt.Errorf("cannot open store lock file: %w", err)
	}
	s.lock = lock
	s.removeStaleTmp()
	return nil
}

// removeStaleTmp deletes temp files left by a crash. Young ones may belong to
// a Put in progress in another process, so they stay.
func (s *Store) removeStaleTmp() {
	f, err := s.root.Open(tmpDir)
	if err != nil {
		return
	}
	defer f.Close()
	entries, _ := f.ReadDir(-1)
	for _, e := range entries {
		if fi, err := e.Info(); err == nil && time.Since(fi.ModTime()) > staleTmp {
			s.root.Remove(path.Join(tmpDir, e.Name()))
		}
	}
}

// Root returns the store's directory, absolute with symlinks resolved.
func (s *Store) Root() string { return s.path }

// Close releases the directory. Readers already open stay valid.
func (s *Store) Close() error {
	if s.dirs != nil {
		s.dirs.close()
	}
	if s.tmp != nil {
		s.tmp.Close()
	}
	if s.lock != nil {
		s.lock.Close()
	}
	return s.root.Close()
}

// objectPath maps a valid key to its file, relative to the root.
func objectPath(key string) (dir, file string) {
	dir, name := objectDir(key)
	return dir, dir + "/" + name
}

// objectDir maps a valid key to its fan-out directory, relative to the
// root, and its file name in it.
func objectDir(key string) (dir, name string) {
	i := strings.LastIndexByte(key, '/')
	name = key[i+1:]
	dir = dataDir
	if i >= 0 {
		dir += "/" + key[:i]
	}
	return dir + "/" + fanPrefix + fan(name), name
}

func fan(name string) string {
	if len(name) > 2 {
		return name[:2]
	}
	return name
}

func (s *Store) check(ctx context.Context, op, key string) error {
	if err := store.ValidateKey(key); err != nil {
		return &store.Error{Op: op, Key: key, Err: err}
	}
	if err := ctx.Err(); err != nil {
		return &store.Error{Op: op, Key: key, Err: err}
	}
	return nil
}

// Put implements store.Store.
func (s *Store) Put(ctx context.Context, key string, r io.Reader) error {
	if err := s.check(ctx, "put", key); err != nil {
		return err
	}
	tmp, _, err := s.writeTemp(ctx, r, nil)
	if err != nil {
		return &store.Error{Op: "put", Key: key, Err: err}
	}
	if err := s.commit(tmp, key, false); err != nil {
		return &store.Error{Op: "put", Key: key, Err: err}
	}
	return nil
}

// writeTemp copies r into a new temp file in tmp/ (synced with fdatasync
// unless WithoutSync) and returns its name there. h, if set, sees every
// byte.
func (s *Store) writeTemp(ctx context.Context, r io.Reader, h hash.Hash) (string, int64, error) {
	var (
		name string
		fd   int
		err  error
	)
	tmpFD := int(s.tmp.Fd())
	for range 10 {
		name = fmt.Sprintf("%016x.tmp", rand.Uint64())
		fd, err = unix.Openat(tmpFD, name, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o644)
		if err != unix.EEXIST && err != unix.EINTR {
			break
		}
	}
	if err != nil {
		return "", 0, fmt.Errorf("cannot create temp file: %w", err)
	}
	var w io.Writer = fdWriter(fd)
	if h != nil {
		w = io.MultiWriter(w, h)
	}
	bp := s.bufs.Get().(*[]byte)
	n, err := io.CopyBuffer(onlyWriter{w}, onlyReader{store.ContextReader(ctx, r)}, *bp)
	s.bufs.Put(bp)
	if err == nil {
		err = ctx.Err() // cancelled during the last read
	}
	if err == nil && s.sync {
		// fdatasync: the data and what is needed to read it back (size,
		// extents), not the timestamps. The directory entry is synced by
		// commit, after the rename.
		if err = ignoringEINTR(func() error { return unix.Fdatasync(fd) }); err != nil {
			err = fmt.Errorf("cannot sync temp file: %w", err)
		}
	}
	if cerr := unix.Close(fd); err == nil && cerr != nil {
		err = fmt.Errorf("cannot close temp file: %w", cerr)
	}
	if err != nil {
		s.removeTemp(name)
		return "", 0, err
	}
	return name, n, nil
}

// fdWriter writes to a raw descriptor: cheaper than an *os.File for a file
// written once and closed (no poller registration, no finalizer).
type fdWriter int

func (w fdWriter) Write(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		m, err := unix.Write(int(w), p[n:])
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return n, &fs.PathError{Op: "write", Path: "temp file", Err: err}
		}
		if m == 0 {
			return n, io.ErrShortWrite
		}
		n += m
	}
	return n, nil
}

func ignoringEINTR(fn func() error) error {
	for {
		if err := fn(); err != unix.EINTR {
			return err
		}
	}
}

// onlyReader and onlyWriter hide ReadFrom/WriteTo so CopyBuffer uses our
// pooled buffer and stops at a context check between reads.
type onlyReader struct{ io.Reader }
type onlyWriter struct{ io.Writer }

// commit moves a synced temp file to key's path: by rename (replacing), or
// by hard link when exclusive (failing with fs.ErrExist). The temp file is
// gone afterwards either way. Both happen relative to the open tmp/ and
// fan-out directories, and only the fan-out directory is synced: the one
// whose entries changed in a way that must survive (tmp/ losing the name
// needs no sync, and the directories above exist already, synced when they
// were made).
func (s *Store) commit(tmp, key string, exclusive bool) error {
	tmpFD := int(s.tmp.Fd())
	dir, name := objectDir(key)
	for attempt := 0; ; attempt++ {
		e, err := s.dirs.get(dir, s.mkdirs)
		if err != nil {
			s.removeTemp(tmp)
			return fmt.Errorf("cannot open object directory: %w", err)
		}
		if exclusive {
			err = unix.Linkat(tmpFD, tmp, e.fd, name, 0)
		} else {
			err = unix.Renameat(tmpFD, tmp, e.fd, name)
		}
		if err == unix.ENOENT && attempt == 0 && removed(e) {
			// The directory was removed under the store: reopen it.
			s.dirs.forget(dir, e)
			s.dirs.release(e)
			continue
		}
		if err == nil && s.sync {
			err = ignoringEINTR(func() error { return unix.Fsync(e.fd) })
			if err != nil {
				err = fmt.Errorf("cannot sync directory: %w", err)
			}
		} else if err != nil {
			switch {
			case exclusive && err == unix.EEXIST:
				err = store.ErrExists
			case exclusive:
				err = fmt.Errorf("cannot link object into place: %w", err)
			default:
				err = fmt.Errorf("cannot rename object into place: %w", err)
			}
		}
		s.dirs.release(e)
		if exclusive || err != nil {
			s.removeTemp(tmp)
		}
		return err
	}
}

// removeTemp deletes a temp file that will not be committed.
func (s *Store) removeTemp(name string) { unix.Unlinkat(int(s.tmp.Fd()), name, 0) }

// removed reports whether e's directory has been unlinked.
func removed(e *dirEntry) bool {
	var st unix.Stat_t
	return unix.Fstat(e.fd, &st) == nil && st.Nlink == 0
}

// mkdirs creates dir and its parents. When it creates any, it syncs each
// parent so the new entries survive a crash.
func (s *Store) mkdirs(dir string) error {
	if fi, err := s.root.Stat(dir); err == nil && fi.IsDir() {
		return nil
	}
	if err := s.root.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("cannot create directory: %w", err)
	}
	for d := path.Dir(dir); ; d = path.Dir(d) {
		if err := s.syncDir(d); err != nil {
			return err
		}
		if d == dataDir || d == "." {
			return nil
		}
	}
}

func (s *Store) syncDir(dir string) error {
	if !s.sync {
		return nil
	}
	f, err := s.root.Open(dir)
	if err != nil {
		return fmt.Errorf("cannot open directory to sync: %w", err)
	}
	err = f.Sync()
	f.Close()
	if err != nil {
		return fmt.Errorf("cannot sync directory: %w", err)
	}
	return nil
}

// notFound turns the errors of a missing path into store.ErrNotFound.
func notFound(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR)
}

// File opens the object's file read-only, for callers that want the
// *os.File itself (mmap). Missing object: store.ErrNotFound.
func (s *Store) File(ctx context.Context, key string) (*os.File, error) {
	return s.open(ctx, "get", key)
}

func (s *Store) open(ctx context.Context, op, key string) (*os.File, error) {
	if err := s.check(ctx, op, key); err != nil {
		return nil, err
	}
	dir, name := objectDir(key)
	for attempt := 0; ; attempt++ {
		e, err := s.dirs.get(dir, nil)
		if err != nil {
			if notFound(err) {
				return nil, &store.Error{Op: op, Key: key, Err: store.ErrNotFound}
			}
			return nil, &store.Error{Op: op, Key: key, Err: err}
		}
		var fd int
		err = ignoringEINTR(func() (err error) {
			fd, err = unix.Openat(e.fd, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
			return err
		})
		if err == unix.ENOENT && attempt == 0 && removed(e) {
			s.dirs.forget(dir, e)
			s.dirs.release(e)
			continue
		}
		s.dirs.release(e)
		switch {
		case err == unix.ENOENT:
			return nil, &store.Error{Op: op, Key: key, Err: store.ErrNotFound}
		case err == unix.ELOOP:
			return nil, &store.Error{Op: op, Key: key, Err: fmt.Errorf("%s/%s is a symlink", dir, name)}
		case err != nil:
			return nil, &store.Error{Op: op, Key: key, Err: &fs.PathError{Op: "open", Path: dir + "/" + name, Err: err}}
		}
		f := os.NewFile(uintptr(fd), filepath.Join(s.path, filepath.FromSlash(dir), name))
		if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
			f.Close()
			if err == nil {
				err = fmt.Errorf("%s/%s is not a regular file", dir, name)
			}
			return nil, &store.Error{Op: op, Key: key, Err: err}
		}
		return f, nil
	}
}

// Get implements store.Store. It streams from the file.
func (s *Store) Get(ctx context.Context, key string) (io.ReadCloser, error) {
	f, err := s.open(ctx, "get", key)
	if err != nil {
		return nil, err
	}
	return store.ContextReadCloser(ctx, f), nil
}

// GetRange implements store.RangeGetter with positioned reads (pread) of
// the file: nothing before off is read.
func (s *Store) GetRange(ctx context.Context, key string, off, n int64) (io.ReadCloser, error) {
	if err := store.CheckRange(off); err != nil {
		return nil, &store.Error{Op: "get-range", Key: key, Err: err}
	}
	f, err := s.open(ctx, "get-range", key)
	if err != nil {
		return nil, err
	}
	if n < 0 {
		n = math.MaxInt64 // NewSectionReader caps off+n
	}
	return store.ContextReadCloser(ctx, &sectionReader{io.NewSectionReader(f, off, n), f}), nil
}

// sectionReader is a range of an open file that closes the file.
type sectionReader struct {
	*io.SectionReader
	f *os.File
}

func (r *sectionReader) Close() error { return r.f.Close() }

// Path returns the absolute path of the object's file, for callers that
// open it themselves (the image package mmaps image files in place). It
// returns false if the object is missing, the key is invalid, or any
// component of the path is a symlink (the caller's open would follow it).
// The file must be treated as read-only: objects are replaced, not edited.
func (s *Store) Path(key string) (string, bool) {
	if store.ValidateKey(key) != nil {
		return "", false
	}
	_, file := objectPath(key)
	fi, err := s.root.Lstat(file)
	if err != nil || !fi.Mode().IsRegular() {
		return "", false
	}
	full := filepath.Join(s.path, filepath.FromSlash(file))
	if real, err := filepath.EvalSymlinks(full); err != nil || real != full {
		return "", false
	}
	return full, true
}

// Has implements store.Store. A symlink in place of the object is not an
// object.
func (s *Store) Has(ctx context.Context, key string) (bool, error) {
	if err := s.check(ctx, "has", key); err != nil {
		return false, err
	}
	dir, name := objectDir(key)
	for attempt := 0; ; attempt++ {
		e, err := s.dirs.get(dir, nil)
		if err != nil {
			if notFound(err) {
				return false, nil
			}
			return false, &store.Error{Op: "has", Key: key, Err: err}
		}
		var st unix.Stat_t
		err = ignoringEINTR(func() error { return unix.Fstatat(e.fd, name, &st, unix.AT_SYMLINK_NOFOLLOW) })
		if err == unix.ENOENT && attempt == 0 && removed(e) {
			s.dirs.forget(dir, e)
			s.dirs.release(e)
			continue
		}
		s.dirs.release(e)
		switch {
		case err == nil:
			return st.Mode&unix.S_IFMT == unix.S_IFREG, nil
		case err == unix.ENOENT || err == unix.ENOTDIR:
			return false, nil
		default:
			return false, &store.Error{Op: "has", Key: key, Err: &fs.PathError{Op: "stat", Path: dir + "/" + name, Err: err}}
		}
	}
}

// Delete implements store.Store.
func (s *Store) Delete(ctx context.Context, key string) error {
	if err := s.check(ctx, "delete", key); err != nil {
		return err
	}
	_, file := objectPath(key)
	if err := s.root.Remove(file); err != nil && !notFound(err) {
		return &store.Error{Op: "delete", Key: key, Err: err}
	}
	return nil
}

// List implements store.Store. It reads one directory level at a time and
// only the directories the prefix can match, sorting each level so that keys
// come out in byte order ("a-b" before "a/b", since '-' < '/').
func (s *Store) List(ctx context.Context, prefix string, fn func(key string, size int64) error) error {
	if err := store.ValidatePrefix(prefix); err != nil {
		return &store.Error{Op: "list", Key: prefix, Err: err}
	}
	dirKey, rest := "", prefix
	if i := strings.LastIndexByte(prefix, '/'); i >= 0 {
		dirKey, rest = prefix[:i], prefix[i+1:]
	}
	err := s.walk(ctx, dirKey, rest, fn)
	var stop errStop
	switch {
	case err == nil:
		return nil
	case errors.As(err, &stop):
		return stop.err
	default:
		return &store.Error{Op: "list", Key: prefix, Err: err}
	}
}

// errStop carries fn's error out of walk untouched.
type errStop struct{ err error }

func (e errStop) Error() string { return e.err.Error() }

type listItem struct {
	sortKey string // name, or name+"/" for a key directory
	size    int64
	isDir   bool
}

// walk lists the keys directly or indirectly under key directory dirKey
// ("" for the top) whose next segment starts with rest.
func (s *Store) walk(ctx context.Context, dirKey, rest string, fn func(string, int64) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	dir := dataDir
	if dirKey != "" {
		dir += "/" + dirKey
	}
	entries, err := s.readDir(dir)
	if err != nil {
		return err
	}
	var items []listItem
	for _, e := range entries {
		name := e.Name()
		if !e.IsDir() { // files only live in fan-out dirs; symlinks are ignored
			continue
		}
		if f, ok := strings.CutPrefix(name, fanPrefix); ok {
			if !strings.HasPrefix(f, rest) && !strings.HasPrefix(rest, f) {
				continue
			}
			objs, err := s.readDir(dir + "/" + name)
			if err != nil {
				return err
			}
			for _, o := range objs {
				n := o.Name()
				if !o.Type().IsRegular() || !strings.HasPrefix(n, rest) || fan(n) != f || store.ValidateKey(n) != nil {
					continue
				}
				fi, err := o.Info()
				if err != nil { // deleted since ReadDir
					continue
				}
				items = append(items, listItem{sortKey: n, size: fi.Size()})
			}
			continue
		}
		if strings.HasPrefix(name, rest) && store.ValidateKey(name) == nil {
			items = append(items, listItem{sortKey: name + "/", isDir: true})
		}
	}
	sort.Slice(items, func(i, j int) bool { return items[i].sortKey < items[j].sortKey })
	for _, it := range items {
		key := it.sortKey
		if dirKey != "" {
			key = dirKey + "/" + key
		}
		if it.isDir {
			if err := s.walk(ctx, strings.TrimSuffix(key, "/"), "", fn); err != nil {
				return err
			}
			continue
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := fn(key, it.size); err != nil {
			return errStop{err}
		}
	}
	return nil
}

func (s *Store) readDir(dir string) ([]fs.DirEntry, error) {
	f, err := s.root.Open(dir)
	if err != nil {
		if notFound(err) {
			return nil, nil
		}
		return nil, err
	}
	defer f.Close()
	entries, err := f.ReadDir(-1)
	if err != nil && !notFound(err) {
		return nil, err
	}
	return entries, nil
}

// etag is the quoted hex sha256 of the content.
func etag(h hash.Hash) string { return `"` + hex.EncodeToString(h.Sum(nil)) + `"` }

// GetWithETag implements store.Conditional. It reads the file twice (once to
// hash it): conditional keys are heads, a few hundred bytes.
func (s *Store) GetWithETag(ctx context.Context, key string) (io.ReadCloser, string, error) {
	f, err := s.open(ctx, "get", key)
	if err != nil {
		return nil, "", err
	}
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		f.Close()
		return nil, "", &store.Error{Op: "get", Key: key, Err: err}
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		f.Close()
		return nil, "", &store.Error{Op: "get", Key: key, Err: err}
	}
	return store.ContextReadCloser(ctx, f), etag(h), nil
}

// PutIfAbsent implements store.Conditional.
func (s *Store) PutIfAbsent(ctx context.Context, key string, r io.Reader) (string, error) {
	const op = "put-if-absent"
	if err := s.check(ctx, op, key); err != nil {
		return "", err
	}
	h := sha256.New()
	tmp, _, err := s.writeTemp(ctx, r, h)
	if err != nil {
		return "", &store.Error{Op: op, Key: key, Err: err}
	}
	if err := s.commit(tmp, key, true); err != nil {
		return "", &store.Error{Op: op, Key: key, Err: err}
	}
	return etag(h), nil
}

// CompareAndSwap implements store.Conditional.
func (s *Store) CompareAndSwap(ctx context.Context, key, ifMatch string, r io.Reader) (string, error) {
	const op = "compare-and-swap"
	if err := s.check(ctx, op, key); err != nil {
		return "", err
	}
	h := sha256.New()
	tmp, _, err := s.writeTemp(ctx, r, h)
	if err != nil {
		return "", &store.Error{Op: op, Key: key, Err: err}
	}
	s.condMu.Lock()
	defer s.condMu.Unlock()
	if err := syscall.Flock(int(s.lock.Fd()), syscall.LOCK_EX); err != nil {
		s.removeTemp(tmp)
		return "", &store.Error{Op: op, Key: key, Err: fmt.Errorf("cannot lock store: %w", err)}
	}
	defer syscall.Flock(int(s.lock.Fd()), syscall.LOCK_UN)
	if err := s.matches(ctx, key, ifMatch); err != nil {
		s.removeTemp(tmp)
		return "", &store.Error{Op: op, Key: key, Err: err}
	}
	if err := s.commit(tmp, key, false); err != nil {
		return "", &store.Error{Op: op, Key: key, Err: err}
	}
	return etag(h), nil
}

func (s *Store) matches(ctx context.Context, key, ifMatch string) error {
	rc, cur, err := s.GetWithETag(ctx, key)
	if err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return fmt.Errorf("%w: object does not exist", store.ErrPreconditionFailed)
		}
		return err
	}
	rc.Close()
	if cur != ifMatch {
		return fmt.Errorf("%w: etag is %s, not %s", store.ErrPreconditionFailed, cur, ifMatch)
	}
	return nil
}
