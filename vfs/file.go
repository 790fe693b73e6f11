package vfs

import (
	"io"
	"io/fs"
	"path"
	"sync"
	"syscall"
)

// inlineMax is the size up to which file data stays one unhashed buffer
// (and is inlined in its inode node when persisted).
const inlineMax = 4096

// OpenFile opens name with Linux open(2) semantics for flag, plus the
// vfs's O_NOFIFO.
func (f *FS) OpenFile(name string, flag int, perm fs.FileMode) (*File, error) {
	acc := flag & O_ACCMODE
	if acc == O_ACCMODE {
		return nil, perr("open", name, syscall.EINVAL)
	}
	writing := acc != O_RDONLY || flag&(O_CREATE|O_TRUNC) != 0
	if g, rel, m := f.mountedRead(name); m != nil {
		if writing && m.opts.ReadOnly {
			return nil, roErr("open", name)
		}
		if m.rfs != nil {
			// A RemoteFS has no fifos: O_NOFIFO has nothing to refuse.
			return m.ropen(name, rel, flag&^O_NOFIFO, perm)
		}
		h, err := g.OpenFile(rel, flag, perm)
		if err != nil {
			return nil, mountErr(err, name, m)
		}
		h.name = name
		return h, nil
	}
	noFifo := flag&O_NOFIFO != 0
	flag &^= O_NOFIFO
	h := &File{fs: f, name: name, flag: flag}
	follow := rFollow
	if flag&O_NOFOLLOW != 0 || flag&(O_CREATE|O_EXCL) == O_CREATE|O_EXCL {
		follow = rNoFollow
	}
	if flag&O_CREATE != 0 {
		follow = rCreate
		if flag&(O_EXCL|O_NOFOLLOW) != 0 {
			follow = rParent
		}
	}
	check := func(w *walk, l *loc) error {
		in := l.in
		if flag&(O_CREATE|O_EXCL) == O_CREATE|O_EXCL {
			return syscall.EEXIST
		}
		if in.mode&fs.ModeSymlink != 0 {
			return syscall.ELOOP
		}
		if in.isDir() {
			if acc != O_RDONLY || flag&(O_CREATE|O_TRUNC) != 0 {
				return syscall.EISDIR
			}
		} else if flag&O_DIRECTORY != 0 {
			return syscall.ENOTDIR
		}
		return nil
	}
	var err error
	if !writing {
		err = f.view("open", name, func(w *walk) error {
			l, e := w.resolve(name, follow)
			if e != 0 {
				return e
			}
			if l.in == nil {
				return syscall.ENOENT
			}
			if noFifo && l.in.mode&fs.ModeNamedPipe != 0 {
				return ErrIsFifo
			}
			if err := check(w, &l); err != nil {
				return err
			}
			h.bind(l.in)
			return nil
		})
	} else {
		// Registered as open once published, under the writer lock (an
		// unlink cannot drop the inode in between); not in fn, which
		// updateFirst may run twice.
		register := func() { h.opened = f.addOpen(h.ino, 1) > 0 }
		fn := func(w *walk) error {
			l, e := w.resolve(name, follow)
			if e != 0 {
				return e
			}
			if noFifo && l.in != nil && l.in.mode&fs.ModeNamedPipe != 0 {
				// Before the mode checks (O_EXCL, O_DIRECTORY): the
				// caller opens a fifo its own way whatever they say.
				return ErrIsFifo
			}
			if flag&O_CREATE != 0 {
				if l.dot && flag&O_EXCL != 0 {
					return syscall.EEXIST
				}
				if l.dot || l.slash {
					return syscall.EISDIR
				}
			}
			if l.in == nil {
				if flag&O_CREATE == 0 {
					return syscall.ENOENT
				}
				if l.slash {
					return syscall.EISDIR
				}
				if flag&O_DIRECTORY != 0 {
					return syscall.EINVAL
				}
				h.bind(w.create(&l, perm&permBits))
				return nil
			}
			if err := check(w, &l); err != nil {
				return err
			}
			in := l.in
			if in.mode.IsRegular() && (acc != O_RDONLY || flag&O_TRUNC != 0) && !l.dot {
				in = w.materialize(&l)
				if flag&O_TRUNC != 0 && in.size > 0 {
					c := in.clone()
					truncInode(c, 0, w.now)
					w.t.put(c)
					in = c
				}
			}
			h.bind(in)
			return nil
		}
		if noFifo {
			// The fifo is refused before the gate is asked: opening one
			// adds nothing.
			err = f.updateFirst("open", name, fn, register)
		} else if err = f.passGate("open", name); err == nil {
			_, _, err = f.apply("open", name, fn, false, register)
		}
	}
	if err != nil {
		if h.opened {
			f.addOpen(h.ino, -1)
		}
		return nil, err
	}
	if !h.opened {
		f.addOpen(h.ino, 1)
	}
	return h, nil
}

func (f *FS) Open(name string) (*File, error) { return f.OpenFile(name, O_RDONLY, 0) }
func (f *FS) Create(name string) (*File, error) {
	return f.OpenFile(name, O_RDWR|O_CREATE|O_TRUNC, 0o666)
}

// File is an open handle. It refers to the inode, not the path: it keeps
// working after the entry is renamed or unlinked, as on Linux. A handle
// opened under a remote mount delegates to its RemoteFile (rf) instead.
type File struct {
	fs   *FS // nil for a remote file
	name string
	flag int
	ino  uint64
	base *inode // the base inode, when the file was not in the delta at open
	dir  bool
	// opened: registered as open (under the writer lock, so an unlink
	// racing with the open cannot drop the inode).
	opened bool

	mu      sync.Mutex
	off     int64
	closed  bool
	wrote   bool
	bf      fs.File // open base file for base extents
	dirents []*dirEntry
	dirpos  int
	dirread bool

	rf RemoteFile // a remote file (remotemount.go): every call goes to it
	rm *mount     // its mount, for errors and inode tags
	rp string     // its clean RemoteFS path at open

	locked   bool // a remote file holds a flock (h.mu)
	lkClosed bool // closed, for the lock table (fs.lockMu): flock.go
}

var _ interface {
	io.ReadWriteSeeker
	io.ReaderAt
	io.WriterAt
	io.Closer
} = (*File)(nil)

func (h *File) bind(in *inode) {
	h.ino = in.ino
	h.dir = in.isDir()
	if in.synth {
		h.base = in
	}
}

func (h *File) Name() string { return h.name }

// inode returns the handle's inode in tree t.
func (h *File) inode(t *tree) *inode {
	if in := t.get(h.ino); in != nil {
		return in
	}
	if h.base != nil {
		return h.base
	}
	return nil
}

func (h *File) Read(p []byte) (int, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.rf != nil {
		return h.remoteRead(p, 0, false)
	}
	n, err := h.readAt(p, h.off)
	h.off += int64(n)
	return n, err
}

func (h *File) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, perr("read", h.name, syscall.EINVAL)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.rf != nil {
		return h.remoteRead(p, off, true)
	}
	n, err := h.readAt(p, off)
	if err == nil && n < len(p) {
		err = io.EOF
	}
	return n, err
}

// readAt reads at off; h.mu is held.
func (h *File) readAt(p []byte, off int64) (n int, err error) {
	if h.closed {
		return 0, perr("read", h.name, fs.ErrClosed)
	}
	if h.flag&O_ACCMODE == O_WRONLY {
		return 0, perr("read", h.name, syscall.EBADF)
	}
	if h.dir {
		return 0, perr("read", h.name, syscall.EISDIR)
	}
	defer catchLoad(&err, "read", h.name)
	in := h.inode(h.fs.cur.Load())
	if in == nil {
		return 0, io.EOF
	}
	if off >= in.size {
		if len(p) == 0 {
			return 0, nil
		}
		return 0, io.EOF
	}
	if m := in.size - off; int64(len(p)) > m {
		p = p[:m]
	}
	if len(in.ext) == 1 && in.ext[0].kind == extMem {
		e := &in.ext[0]
		return copy(p, e.mem[e.coff+off:e.coff+e.n]), nil
	}
	err = readExt(in.ext, p, off, h.readBase, in.origin)
	if err != nil {
		return 0, perr("read", h.name, &ioError{err})
	}
	return len(p), nil
}

func (h *File) readBase(path string, p []byte, off int64) error {
	if h.bf == nil {
		bf, err := h.fs.base.Open(path)
		if err != nil {
			return err
		}
		h.bf = bf
	}
	return readFileAt(h.bf, p, off)
}

func (h *File) Write(p []byte) (int, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.rf != nil {
		return h.remoteWrite(p, 0, false)
	}
	n, err := h.writeAt(p, h.off, h.flag&O_APPEND != 0)
	h.off += int64(n)
	return n, err
}

func (h *File) WriteAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, perr("write", h.name, syscall.EINVAL)
	}
	if h.flag&O_APPEND != 0 {
		return 0, perr("write", h.name, syscall.EINVAL)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.rf != nil {
		return h.remoteWrite(p, off, true)
	}
	return h.writeAt(p, off, false)
}

// writeAt writes p at off (at the end with appending); it returns the
// number of bytes written and leaves h.off at the end of them via the
// caller. h.mu is held.
func (h *File) writeAt(p []byte, off int64, appending bool) (int, error) {
	if h.closed {
		return 0, perr("write", h.name, fs.ErrClosed)
	}
	if h.flag&O_ACCMODE == O_RDONLY {
		return 0, perr("write", h.name, syscall.EBADF)
	}
	if len(p) == 0 {
		return 0, nil
	}
	err := h.fs.update("write", h.name, func(w *walk) error {
		in := w.t.get(h.ino)
		if in == nil {
			return syscall.EBADF
		}
		if !in.mode.IsRegular() {
			return syscall.EINVAL
		}
		if appending {
			off = in.size
		}
		c := in.clone()
		c.ext = writeExt(c.ext, c.size, off, p)
		if memBytes(c.ext) >= sealAfter {
			// Seal as the file grows, not only at Close: a large write
			// then holds at most sealAfter unhashed bytes, and data
			// already held (the same chunk, e.g. 1.5 GB of zeros) is
			// held once (issue 13).
			c.ext = sealExt(c.ext, h.fs.lin)
		}
		if end := off + int64(len(p)); end > c.size {
			c.size = end
		}
		c.mtime, c.ctime = w.now, w.now
		w.t.put(c)
		return nil
	})
	if err != nil {
		return 0, err
	}
	h.wrote = true
	if appending {
		h.off = off
	}
	return len(p), nil
}

func (h *File) Seek(offset int64, whence int) (int64, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return 0, perr("seek", h.name, fs.ErrClosed)
	}
	if h.rf != nil {
		var abs int64
		err := h.remoteCall("seek", func(rf RemoteFile) (e error) { abs, e = rf.Seek(offset, whence); return e })
		return abs, err
	}
	var abs int64
	switch whence {
	case io.SeekStart:
		abs = offset
	case io.SeekCurrent:
		abs = h.off + offset
	case io.SeekEnd:
		in := h.inode(h.fs.cur.Load())
		if in != nil {
			abs = in.size + offset
		}
	default:
		return 0, perr("seek", h.name, syscall.EINVAL)
	}
	if abs < 0 {
		return 0, perr("seek", h.name, syscall.EINVAL)
	}
	if h.dir && abs == 0 {
		h.dirread, h.dirents, h.dirpos = false, nil, 0
	}
	h.off = abs
	return abs, nil
}

func (h *File) Truncate(size int64) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return perr("truncate", h.name, fs.ErrClosed)
	}
	if size < 0 || h.flag&O_ACCMODE == O_RDONLY {
		return perr("truncate", h.name, syscall.EINVAL)
	}
	if h.rf != nil {
		return h.remoteCall("truncate", func(rf RemoteFile) error { return rf.Truncate(size) })
	}
	return h.fs.update("truncate", h.name, func(w *walk) error {
		in := w.t.get(h.ino)
		if in == nil {
			return syscall.EBADF
		}
		if !in.mode.IsRegular() {
			return syscall.EINVAL
		}
		c := in.clone()
		truncInode(c, size, w.now)
		w.t.put(c)
		h.wrote = true
		return nil
	})
}

func (h *File) Stat() (fs.FileInfo, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return nil, perr("stat", h.name, fs.ErrClosed)
	}
	if h.rf != nil {
		fi, err := h.rf.Stat()
		if err != nil {
			return nil, h.rm.rerr("stat", h.name, err)
		}
		return h.rm.info(fi, h.rp, baseName(&loc{}, h.name)), nil
	}
	in := h.inode(h.fs.cur.Load())
	if in == nil {
		return nil, perr("stat", h.name, syscall.EBADF)
	}
	return h.fs.tagged(in.info(baseName(&loc{}, h.name))), nil
}

// ReadDir reads the directory like os.File.ReadDir: n <= 0 returns all
// remaining entries, n > 0 at most n (io.EOF at the end).
func (h *File) ReadDir(n int) (ents []fs.DirEntry, err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return nil, perr("readdirent", h.name, fs.ErrClosed)
	}
	if !h.dir {
		return nil, perr("readdirent", h.name, syscall.ENOTDIR)
	}
	if h.rf != nil {
		ents, err := h.rf.ReadDir(n)
		if err != nil && err != io.EOF {
			return nil, h.rm.rerr("readdirent", h.name, err)
		}
		out := make([]fs.DirEntry, len(ents))
		for i, e := range ents {
			out[i] = &remoteEntry{DirEntry: e, m: h.rm, rel: path.Join(h.rp, e.Name())}
		}
		return out, err
	}
	defer catchLoad(&err, "readdirent", h.name)
	if !h.dirread {
		t := h.fs.cur.Load()
		in := h.inode(t)
		if in != nil {
			var w walk
			w.init(h.fs, t, false)
			if h.dirents, err = w.list(in); err != nil {
				return nil, perr("readdirent", h.name, err)
			}
		}
		h.dirread = true
	}
	rest := h.dirents[h.dirpos:]
	if n > 0 && len(rest) > n {
		rest = rest[:n]
	}
	if n > 0 && len(rest) == 0 {
		return nil, io.EOF
	}
	h.dirpos += len(rest)
	ents = make([]fs.DirEntry, len(rest))
	for i, e := range rest {
		ents[i] = e
	}
	return ents, nil
}

// Close releases the handle. Written data of files larger than inlineMax is
// cut into content-addressed chunks here, so dedup works across files.
func (h *File) Close() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return perr("close", h.name, fs.ErrClosed)
	}
	h.closed = true
	h.unlockOnClose()
	if h.rf != nil {
		return h.rm.rerr("close", h.name, h.rf.Close())
	}
	if h.bf != nil {
		h.bf.Close()
		h.bf = nil
	}
	f := h.fs
	last := f.addOpen(h.ino, -1) == 0
	if !h.wrote && !last {
		return nil
	}
	t := f.cur.Load()
	in := t.get(h.ino)
	if in == nil || !(last && in.nlink == 0 || h.wrote && in.size > inlineMax && !sealed(in.ext)) {
		return nil
	}
	return f.update("close", h.name, func(w *walk) error {
		in := w.t.get(h.ino)
		if in == nil {
			return nil
		}
		if in.nlink == 0 && !f.isOpen(in.ino) {
			w.t.drop(in.ino)
			return nil
		}
		if in.size > inlineMax && !sealed(in.ext) {
			c := in.clone()
			c.ext = sealExt(c.ext, h.fs.lin)
			w.t.put(c)
		}
		return nil
	})
}
