package drive

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"sync"
	"syscall"
	"time"

	"github.com/warren-sandbox/warren/store"
	"github.com/warren-sandbox/warren/vfs"
)

// File is an open file or directory of a Drive. It reads the version it
// opened (chunks are immutable), plus its own writes; those are committed
// as a new version at Close.
type File struct {
	d     *Drive
	name  string
	flag  int
	owner string // lock owner: this open file

	opened time.Time // for the sweep: see commit
	sweeps uint64    // the drive's Record.Sweeps when opened (or last checked)

	mu     sync.Mutex
	e      Entry // the version opened (chunks, size) with this handle's changes
	dirty  map[int64]*slot
	mem    int64 // bytes of dirty slots in memory
	spill  *os.File
	wrote  bool // content or size changed: Close commits
	off    int64
	closed bool
	lock   int // LOCK_SH, LOCK_EX or 0
	// room is how large the file may grow as the drive's usage stood at
	// open (-1: no quota): a write past it fails at once with ENOSPC, as
	// on a local disk, rather than only the Close (which a shell's
	// redirection does not report); the commit still checks exactly.
	room, quota int64

	lastSum [32]byte // the last chunk read (so a nil cache still streams)
	lastBuf []byte
	lastIdx int64 // its slot: reading the next one is sequential

	dirents []fs.DirEntry // directory handles: listing read at the first ReadDir
	dirRead bool
}

// slot is one ChunkSize slot of written data: in memory (mem; bytes
// past len(buf) are zeros, so a small file costs its size, not a slot) or
// at slot*ChunkSize in the spill file. Bytes past the file's size are
// zero.
type slot struct {
	mem bool
	buf []byte
	up  *early // an upload started when the slot was completed; nil when none or stale
}

// early is a slot's upload started before Close: a sequential write
// uploads each slot once it has written to its end, so Close has only
// the last one left. A later change of the slot drops it (the chunk is
// then garbage for the sweep).
type early struct {
	done chan struct{}
	sum  [32]byte
	len  int
	err  error
}

// write copies p to offset o of the slot's memory, growing it.
func (s *slot) write(o int64, p []byte) int64 {
	end := o + int64(len(p))
	grown := int64(0)
	if end > int64(len(s.buf)) {
		if end <= int64(cap(s.buf)) {
			old := len(s.buf)
			s.buf = s.buf[:end]
			clear(s.buf[old:]) // a truncation may have left bytes there
		} else {
			nb := make([]byte, end, min(max(end, 2*int64(cap(s.buf))), ChunkSize))
			copy(nb, s.buf)
			grown = int64(cap(nb) - cap(s.buf))
			s.buf = nb
		}
	}
	copy(s.buf[o:], p)
	return grown
}

func (d *Drive) OpenFile(name string, flag int, perm fs.FileMode) (vfs.RemoteFile, error) {
	f, err := d.openFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return f, nil
}

func (d *Drive) openFile(name string, flag int, perm fs.FileMode) (*File, error) {
	write := flag&(os.O_WRONLY|os.O_RDWR) != 0
	var e Entry
	var sweeps uint64
	var quota, used int64
	opened := time.Now()
	find := func(tx Tx, parts []string) error {
		rec, err := tx.Record()
		if err != nil {
			return err
		}
		sweeps, quota, used = rec.Sweeps, rec.Quota, rec.Used
		e, err = walk(tx, parts)
		if err != nil {
			return err
		}
		if flag&(os.O_CREATE|os.O_EXCL) == os.O_CREATE|os.O_EXCL {
			return syscall.EEXIST
		}
		return nil
	}
	// Open always reads the metadata afresh (close-to-open); a creation is
	// a second, read-write transaction only when the name is missing.
	err := d.view("open", name, find)
	if flag&os.O_CREATE != 0 && errors.Is(err, syscall.ENOENT) {
		err = d.update("open", name, func(tx Tx, parts []string, now time.Time) error {
			rec, err := tx.Record()
			if err != nil {
				return err
			}
			sweeps, quota, used = rec.Sweeps, rec.Quota, rec.Used
			dir, base, err := walkParent(tx, parts)
			if err != nil {
				return err
			}
			old, ok, err := lookup(tx, dir.ID, base)
			if err != nil {
				return err
			}
			if ok { // created meanwhile, elsewhere
				if flag&os.O_EXCL != 0 {
					return syscall.EEXIST
				}
				e = old
				return nil
			}
			id, err := tx.NewID()
			if err != nil {
				return err
			}
			e = Entry{ID: id, Parent: dir.ID, Name: base, Mode: perm & modeBits, MTime: now, Version: 1}
			if err := tx.Put(e); err != nil {
				return err
			}
			return touchDir(tx, dir, now)
		})
	}
	if err != nil {
		return nil, err
	}
	if e.Dir && write {
		return nil, d.pathErr("open", name, syscall.EISDIR)
	}
	if !e.Dir && flag&syscall.O_DIRECTORY != 0 {
		return nil, d.pathErr("open", name, syscall.ENOTDIR)
	}
	d.mu.Lock()
	d.ownerN++
	owner := fmt.Sprintf("%s.%d", d.mount, d.ownerN)
	d.mu.Unlock()
	f := &File{d: d, name: name, flag: flag, owner: owner, e: e, opened: opened, sweeps: sweeps, lastIdx: -2, room: -1}
	if quota > 0 {
		f.room, f.quota = max(quota-used+e.Size, 0), quota
	}
	if write && flag&os.O_TRUNC != 0 && e.Size > 0 {
		// Applied here and committed at Close: readers keep the old
		// content until the new one is whole.
		f.e.Size, f.e.Chunks = 0, nil
		f.wrote = true
	}
	return f, nil
}

func (f *File) err(op string, err error) error { return f.d.pathErr(op, f.name, err) }

func (f *File) writable() bool { return f.flag&(os.O_WRONLY|os.O_RDWR) != 0 }
func (f *File) readable() bool { return f.flag&os.O_WRONLY == 0 }

func (f *File) Read(p []byte) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	n, err := f.readAt(p, f.off)
	f.off += int64(n)
	return n, err
}

func (f *File) ReadAt(p []byte, off int64) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.readAt(p, off)
}

func (f *File) readAt(p []byte, off int64) (int, error) {
	switch {
	case f.closed:
		return 0, f.err("read", fs.ErrClosed)
	case f.e.Dir:
		return 0, f.err("read", syscall.EISDIR)
	case !f.readable():
		return 0, f.err("read", syscall.EBADF)
	case off < 0:
		return 0, f.err("read", syscall.EINVAL)
	}
	if off >= f.e.Size {
		if len(p) == 0 {
			return 0, nil
		}
		return 0, io.EOF
	}
	want := min(int64(len(p)), f.e.Size-off)
	n := int64(0)
	for n < want {
		i, o := (off+n)/ChunkSize, (off+n)%ChunkSize
		m := min(want-n, ChunkSize-o)
		if err := f.readSlot(i, o, p[n:n+m]); err != nil {
			return int(n), f.err("read", err)
		}
		n += m
	}
	if n < int64(len(p)) {
		return int(n), io.EOF
	}
	return int(n), nil
}

// readSlot fills p with slot i's bytes from offset o.
func (f *File) readSlot(i, o int64, p []byte) error {
	if s, ok := f.dirty[i]; ok {
		if s.mem {
			n := 0
			if o < int64(len(s.buf)) {
				n = copy(p, s.buf[o:])
			}
			clear(p[n:])
			return nil
		}
		_, err := f.spill.ReadAt(p, i*ChunkSize+o)
		return err
	}
	if i >= int64(len(f.e.Chunks)) || f.e.Chunks[i].Hole() {
		clear(p)
		return nil
	}
	c := f.e.Chunks[i]
	if c.Sum != f.lastSum {
		if i == f.lastIdx+1 {
			f.readAhead(i + 1)
		}
		f.lastIdx = i
	}
	b, err := f.chunk(c.Sum)
	if err != nil {
		return err
	}
	b = b[:min(int64(c.Len), int64(len(b)))]
	n := 0
	if o < int64(len(b)) {
		n = copy(p, b[o:])
	}
	clear(p[n:])
	return nil
}

// chunk returns a chunk's bytes: the handle's last one, the node's cache,
// or the blob store (verified against its sum).
func (f *File) chunk(sum [32]byte) ([]byte, error) {
	if f.lastBuf != nil && f.lastSum == sum {
		return f.lastBuf, nil
	}
	b, err := f.d.fetch(sum)
	if err != nil {
		return nil, err
	}
	f.lastSum, f.lastBuf = sum, b
	return b, nil
}

// readAhead fetches the chunks of slots i and i+1 into the node's cache
// in the background, so a sequential reader overlaps its reading with
// the next GETs. Only with a cache (the bytes must land somewhere), only
// when a fetch slot is free.
func (f *File) readAhead(i int64) {
	if f.d.opts.Cache == nil {
		return
	}
	for j := i; j < i+2 && j < int64(len(f.e.Chunks)); j++ {
		c := f.e.Chunks[j]
		if _, dirty := f.dirty[j]; dirty || c.Hole() {
			continue
		}
		select {
		case f.d.prefetch <- struct{}{}:
		default:
			return
		}
		go func() {
			defer func() { <-f.d.prefetch }()
			f.d.fetch(c.Sum) // an error is the reader's to see, if it gets there
		}()
	}
}

// flight is one chunk being fetched: concurrent readers (and the read
// ahead) of one chunk share a GET.
type flight struct {
	done chan struct{}
	b    []byte
	err  error
}

func (d *Drive) fetch(sum [32]byte) ([]byte, error) {
	if d.opts.Cache != nil {
		if b := d.opts.Cache.Get(sum); b != nil {
			return b, nil
		}
	}
	d.fmu.Lock()
	if fl, ok := d.flights[sum]; ok {
		d.fmu.Unlock()
		<-fl.done
		return fl.b, fl.err
	}
	fl := &flight{done: make(chan struct{})}
	d.flights[sum] = fl
	d.fmu.Unlock()
	fl.b, fl.err = d.get(sum)
	d.fmu.Lock()
	delete(d.flights, sum)
	d.fmu.Unlock()
	close(fl.done)
	return fl.b, fl.err
}

func (d *Drive) get(sum [32]byte) ([]byte, error) {
	key := chunkKey(d.rec.ID, sum)
	b, err := store.ReadAll(d.ctx, d.store, key)
	if err != nil {
		return nil, fmt.Errorf("%w: chunk %x: %w", syscall.EIO, sum[:8], err)
	}
	if got := sha256.Sum256(b); got != sum {
		return nil, fmt.Errorf("%w: %w", syscall.EIO, &store.CorruptError{Key: key, Want: fmt.Sprintf("%x", sum), Got: fmt.Sprintf("%x", got)})
	}
	if d.opts.Cache != nil {
		d.opts.Cache.Put(sum, b)
	}
	return b, nil
}

func (f *File) Write(p []byte) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.flag&os.O_APPEND != 0 {
		f.off = f.e.Size
	}
	n, err := f.writeAt(p, f.off)
	f.off += int64(n)
	return n, err
}

func (f *File) WriteAt(p []byte, off int64) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.writeAt(p, off)
}

func (f *File) writeAt(p []byte, off int64) (int, error) {
	switch {
	case f.closed:
		return 0, f.err("write", fs.ErrClosed)
	case !f.writable():
		return 0, f.err("write", syscall.EBADF)
	case off < 0:
		return 0, f.err("write", syscall.EINVAL)
	}
	if end := off + int64(len(p)); f.room >= 0 && end > f.e.Size && end > f.room {
		return 0, f.err("write", &vfs.QuotaError{Errno: syscall.ENOSPC, Limit: "bytes", Max: f.quota, Want: f.quota - f.room + end, Name: "drive " + f.d.rec.Name})
	}
	n := int64(0)
	for n < int64(len(p)) {
		i, o := (off+n)/ChunkSize, (off+n)%ChunkSize
		m := min(int64(len(p))-n, ChunkSize-o)
		if err := f.writeSlot(i, o, p[n:n+m]); err != nil {
			return int(n), f.err("write", err)
		}
		n += m
		f.wrote = true
		f.e.Size = max(f.e.Size, off+n)
		if o+m == ChunkSize {
			if err := f.uploadEarly(i); err != nil {
				return int(n), f.err("write", err)
			}
		}
	}
	return int(n), nil
}

// uploadEarly starts the upload of slot i, just written to its end. It
// waits for a free upload slot (Options.Uploads per Drive), which bounds
// the copies in flight and slows a writer that outruns the store.
func (f *File) uploadEarly(i int64) error {
	s := f.dirty[i]
	b := make([]byte, ChunkSize)
	if s.mem {
		copy(b, s.buf)
	} else if _, err := f.spill.ReadAt(b, i*ChunkSize); err != nil {
		return err
	}
	b = bytes.TrimRight(b, "\x00")
	if len(b) == 0 {
		return nil
	}
	e := &early{done: make(chan struct{}), sum: sha256.Sum256(b), len: len(b)}
	s.up = e
	d := f.d
	select {
	case d.uploads <- struct{}{}:
	case <-d.ctx.Done():
		return d.ctx.Err()
	}
	go func() {
		defer func() { <-d.uploads }()
		defer close(e.done)
		if e.err = store.PutBytes(d.ctx, d.store, chunkKey(d.rec.ID, e.sum), b); e.err == nil && d.opts.Cache != nil {
			d.opts.Cache.Put(e.sum, b)
		}
	}()
	return nil
}

func (f *File) writeSlot(i, o int64, p []byte) error {
	s, err := f.dirtySlot(i)
	if err != nil {
		return err
	}
	s.up = nil
	if s.mem {
		f.mem += s.write(o, p)
		return nil
	}
	_, err = f.spill.WriteAt(p, i*ChunkSize+o)
	return err
}

// dirtySlot returns slot i's local copy, made from its committed bytes on
// first use: in memory while the handle's buffer has room, else in the
// spill file.
func (f *File) dirtySlot(i int64) (*slot, error) {
	if s, ok := f.dirty[i]; ok {
		return s, nil
	}
	var base []byte
	if i*ChunkSize < f.e.Size {
		base = make([]byte, min(ChunkSize, f.e.Size-i*ChunkSize))
		if err := f.readSlot(i, 0, base); err != nil {
			return nil, err
		}
	}
	if f.dirty == nil {
		f.dirty = map[int64]*slot{}
	}
	s := &slot{}
	if f.mem+ChunkSize <= f.d.opts.WriteBuffer {
		s.mem, s.buf = true, base
		f.mem += int64(cap(base))
	} else {
		buf := make([]byte, ChunkSize)
		copy(buf, base)
		if f.spill == nil {
			sp, err := os.CreateTemp(f.d.opts.SpillDir, "drive-spill-*")
			if err != nil {
				return nil, fmt.Errorf("cannot buffer the write: %w", err)
			}
			os.Remove(sp.Name()) // unlinked: it goes when the handle does
			f.spill = sp
		}
		if _, err := f.spill.WriteAt(buf, i*ChunkSize); err != nil {
			return nil, fmt.Errorf("cannot buffer the write: %w", err)
		}
	}
	f.dirty[i] = s
	return s, nil
}

func (f *File) Seek(offset int64, whence int) (int64, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return 0, f.err("seek", fs.ErrClosed)
	}
	var base int64
	switch whence {
	case io.SeekStart:
	case io.SeekCurrent:
		base = f.off
	case io.SeekEnd:
		base = f.e.Size
	default:
		return 0, f.err("seek", syscall.EINVAL)
	}
	if base+offset < 0 {
		return 0, f.err("seek", syscall.EINVAL)
	}
	f.off = base + offset
	return f.off, nil
}

func (f *File) Truncate(size int64) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	switch {
	case f.closed:
		return f.err("truncate", fs.ErrClosed)
	case !f.writable():
		return f.err("truncate", syscall.EINVAL)
	case size < 0:
		return f.err("truncate", syscall.EINVAL)
	}
	if size < f.e.Size {
		f.e.Chunks = truncateChunks(f.e.Chunks, size)
		for i, s := range f.dirty {
			switch {
			case i*ChunkSize >= size:
				if s.mem {
					f.mem -= int64(cap(s.buf))
				}
				delete(f.dirty, i)
			case (i+1)*ChunkSize > size:
				s.up = nil
				o := size - i*ChunkSize
				if s.mem {
					s.buf = s.buf[:min(int64(len(s.buf)), o)]
				} else if _, err := f.spill.WriteAt(make([]byte, ChunkSize-o), size); err != nil {
					return f.err("truncate", err)
				}
			}
		}
	}
	if size != f.e.Size {
		f.e.Size = size
		f.wrote = true
	}
	return nil
}

func (f *File) Stat() (fs.FileInfo, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return nil, f.err("stat", fs.ErrClosed)
	}
	return newInfo(f.e, path.Base(f.name)), nil
}

// ReadDir lists a directory handle's entries as of its first ReadDir.
func (f *File) ReadDir(n int) ([]fs.DirEntry, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return nil, f.err("readdir", fs.ErrClosed)
	}
	if !f.e.Dir {
		return nil, f.err("readdir", syscall.ENOTDIR)
	}
	if !f.dirRead {
		var kids []Entry
		err := f.d.meta.View(f.d.ctx, f.d.rec.ID, func(tx Tx) (err error) {
			kids, err = tx.Children(f.e.ID)
			return err
		})
		if err != nil {
			return nil, f.err("readdir", err)
		}
		f.dirents, f.dirRead = dirEntries(kids), true
	}
	if n <= 0 {
		out := f.dirents
		f.dirents = nil
		return out, nil
	}
	if len(f.dirents) == 0 {
		return nil, io.EOF
	}
	m := min(n, len(f.dirents))
	out := f.dirents[:m]
	f.dirents = f.dirents[m:]
	return out, nil
}

// Close commits the handle's writes, if any, as the file's new version:
// the changed chunks are uploaded, then one metadata transaction swaps the
// chunk list (last writer wins). When Close returns nil, every open on any
// node sees the new content. A file removed meanwhile takes the writes
// with it. Close also releases the handle's lock.
func (f *File) Close() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return f.err("close", fs.ErrClosed)
	}
	f.closed = true
	var err error
	if f.wrote {
		err = f.commit()
	}
	if f.spill != nil {
		f.spill.Close()
	}
	f.dirty, f.lastBuf, f.dirents = nil, nil, nil
	if f.lock != 0 {
		if uerr := f.d.unlock(f.d.ctx, f.e.ID, f.owner); uerr != nil && err == nil {
			err = f.err("close", uerr)
		}
		f.lock = 0
	}
	return err
}

type upload struct {
	i      int64
	b      []byte
	sum    [32]byte
	stored bool // uploaded early
}

func (f *File) commit() error {
	n := (f.e.Size + ChunkSize - 1) / ChunkSize
	chunks := make([]Chunk, n)
	copy(chunks, f.e.Chunks)
	var ups []upload
	for i, s := range f.dirty {
		if i >= n {
			continue
		}
		b := s.buf
		l := min(ChunkSize, f.e.Size-i*ChunkSize)
		if s.mem {
			l = min(l, int64(len(b)))
		} else {
			b = make([]byte, l)
			if _, err := f.spill.ReadAt(b, i*ChunkSize); err != nil {
				return f.err("close", err)
			}
		}
		b = bytes.TrimRight(b[:l], "\x00") // zeros past a slot's bytes are implied
		if len(b) == 0 {
			chunks[i] = Chunk{}
			continue
		}
		if e := s.up; e != nil {
			<-e.done
			if e.err == nil && e.len == len(b) {
				chunks[i] = Chunk{Sum: e.sum, Len: uint32(e.len)}
				ups = append(ups, upload{i: i, b: b, sum: e.sum, stored: true})
				continue
			}
		}
		sum := sha256.Sum256(b)
		chunks[i] = Chunk{Sum: sum, Len: uint32(len(b))}
		ups = append(ups, upload{i: i, b: b, sum: sum})
	}
	if time.Since(f.opened) > f.d.opts.Grace/2 {
		// The slots kept from the version opened may have been replaced
		// long enough ago for a sweep to delete them: upload them too, so
		// the checks below cover them.
		for i, c := range chunks {
			if _, dirty := f.dirty[int64(i)]; dirty || c.Hole() {
				continue
			}
			b, err := f.d.fetch(c.Sum)
			if err != nil {
				return f.err("close", err)
			}
			ups = append(ups, upload{i: int64(i), b: b, sum: c.Sum})
		}
	}
	if err := f.d.upload(ups); err != nil {
		return f.err("close", err)
	}
	sums := make([][32]byte, len(ups))
	for i, u := range ups {
		sums[i] = u.sum
	}
	chunks = trimHoles(chunks)
	size := f.e.Size
	for {
		var committed Entry
		var sweeps uint64
		var doomed [][32]byte
		err := f.d.meta.Update(f.d.ctx, f.d.rec.ID, func(tx Tx) error {
			doomed = doomed[:0]
			rec, err := tx.Record()
			if err != nil {
				return err
			}
			if sweeps = rec.Sweeps; sweeps != f.sweeps && len(sums) > 0 {
				return errRecheck
			}
			if len(sums) > 0 {
				gs, err := tx.Garbage(sums)
				if err != nil {
					return err
				}
				for _, g := range gs {
					if g.Doomed {
						doomed = append(doomed, g.Sum)
					} else if err := tx.DeleteGarbage(g.Sum); err != nil {
						return err
					}
				}
				if len(doomed) > 0 {
					return errDoomed
				}
			}
			cur, err := tx.Entry(f.e.ID)
			if IsNoEntry(err) {
				return errRemoved
			}
			if err != nil {
				return err
			}
			if err := addUsed(tx, size-cur.Size, f.d.rec.Name); err != nil {
				return err
			}
			now, err := tx.Now()
			if err != nil {
				return err
			}
			cur.Chunks, cur.Size, cur.MTime = chunks, size, now
			cur.Version++
			committed = cur
			return tx.Put(cur)
		})
		switch {
		case errors.Is(err, errRecheck):
			// A sweep doomed chunks since the open: any of ours it
			// deleted is missing now, or still marked (next round).
			if err := f.d.restore(ups, false); err != nil {
				return f.err("close", err)
			}
			f.sweeps = sweeps
			continue
		case errors.Is(err, errDoomed):
			if err := f.d.awaitSweep(doomed); err != nil {
				return f.err("close", err)
			}
			if err := f.d.restore(ups, true); err != nil {
				return f.err("close", err)
			}
			continue
		case errors.Is(err, errRemoved):
			return nil
		case err != nil:
			return f.err("close", err)
		}
		f.e = committed
		return nil
	}
}

const sweepWait = 2 * time.Minute

var (
	errRecheck = errors.New("a sweep ran: check the chunks")
	errDoomed  = errors.New("a sweep is deleting chunks of this commit")
)

// restore uploads again those of ups missing from the store (all of them
// when force is set).
func (d *Drive) restore(ups []upload, force bool) error {
	var again []upload
	for _, u := range ups {
		if !force {
			ok, err := d.store.Has(d.ctx, chunkKey(d.rec.ID, u.sum))
			if err != nil {
				return fmt.Errorf("%w: %w", syscall.EIO, err)
			}
			if ok {
				continue
			}
		}
		u.stored = false
		again = append(again, u)
	}
	return d.upload(again)
}

// awaitSweep waits for a sweep to finish deleting sums (their marks go),
// for at most sweepWait: a sweep that died in between leaves its marks to
// the next one.
func (d *Drive) awaitSweep(sums [][32]byte) error {
	wait := 5 * time.Millisecond
	deadline := time.Now().Add(sweepWait)
	for {
		if time.Now().After(deadline) {
			return fmt.Errorf("%w: a sweep of drive %q stopped while deleting chunks this file needs: run Sweep again", syscall.EIO, d.rec.Name)
		}
		var left int
		err := d.meta.View(d.ctx, d.rec.ID, func(tx Tx) error {
			gs, err := tx.Garbage(sums)
			left = 0
			for _, g := range gs {
				if g.Doomed {
					left++
				}
			}
			return err
		})
		if err != nil || left == 0 {
			return err
		}
		select {
		case <-d.ctx.Done():
			return d.ctx.Err()
		case <-time.After(wait):
		}
		wait = min(2*wait, 200*time.Millisecond)
	}
}

var errRemoved = errors.New("removed")

// upload puts chunks into the blob store, Options.Uploads at a time, and
// into the node's cache (a new version is likely read next).
func (d *Drive) upload(all []upload) error {
	var ups []upload
	for _, u := range all {
		if !u.stored {
			ups = append(ups, u)
		}
	}
	if len(ups) == 0 {
		return nil
	}
	ctx, cancel := context.WithCancel(d.ctx)
	defer cancel()
	sem := make(chan struct{}, d.opts.Uploads)
	errs := make(chan error, len(ups))
	for _, u := range ups {
		sem <- struct{}{}
		go func() {
			defer func() { <-sem }()
			err := store.PutBytes(ctx, d.store, chunkKey(d.rec.ID, u.sum), u.b)
			if err != nil {
				cancel()
				err = fmt.Errorf("%w: cannot upload a chunk: %w", syscall.EIO, err)
			} else if d.opts.Cache != nil {
				d.opts.Cache.Put(u.sum, u.b)
			}
			errs <- err
		}()
	}
	var first error
	for range ups {
		if err := <-errs; err != nil && first == nil {
			first = err
		}
	}
	return first
}

// ---- advisory locks

// Flock takes or releases an advisory lock on the file, as flock(2): the
// lock belongs to this open file, conflicts with other open files' on any
// node, and goes with Close. A held lock is a row in the meta renewed
// every LockTTL/3; a holder that dies loses it after LockTTL.
func (f *File) Flock(ctx context.Context, how int) error {
	f.mu.Lock()
	if f.closed {
		f.mu.Unlock()
		return f.err("flock", fs.ErrClosed)
	}
	id := f.e.ID
	f.mu.Unlock()
	nb := how&vfs.LOCK_NB != 0
	var excl bool
	switch how &^ vfs.LOCK_NB {
	case vfs.LOCK_UN:
		err := f.d.unlock(ctx, id, f.owner)
		if err == nil {
			f.mu.Lock()
			f.lock = 0
			f.mu.Unlock()
		}
		return f.err("flock", err)
	case vfs.LOCK_SH:
	case vfs.LOCK_EX:
		excl = true
	default:
		return f.err("flock", syscall.EINVAL)
	}
	wait := 2 * time.Millisecond
	for {
		ok, err := f.d.tryLock(ctx, id, f.owner, excl)
		if err != nil && ctx.Err() != nil {
			return f.err("flock", fmt.Errorf("%w: %w", syscall.EINTR, ctx.Err()))
		}
		if err != nil {
			return f.err("flock", err)
		}
		if ok {
			f.mu.Lock()
			f.lock = vfs.LOCK_SH
			if excl {
				f.lock = vfs.LOCK_EX
			}
			f.mu.Unlock()
			return nil
		}
		if nb {
			return f.err("flock", syscall.EWOULDBLOCK)
		}
		// Polling, backing off to 100 ms: a release on another node has
		// no way to wake us through the meta both backends share.
		select {
		case <-ctx.Done():
			return f.err("flock", fmt.Errorf("%w: %w", syscall.EINTR, ctx.Err()))
		case <-time.After(wait):
		}
		wait = min(wait*2, 100*time.Millisecond)
	}
}

// conflict reports whether a lock wanted by owner conflicts with a live
// row of another owner.
func conflict(ls []Lock, owner string, excl bool, now time.Time) bool {
	for _, l := range ls {
		if l.Owner == owner || !l.Expires.After(now) {
			continue
		}
		if excl || l.Exclusive {
			return true
		}
	}
	return false
}

func (d *Drive) tryLock(ctx context.Context, inode uint64, owner string, excl bool) (bool, error) {
	var got Lock
	ok := false
	err := d.meta.Update(ctx, d.rec.ID, func(tx Tx) error {
		ok = false
		now, err := tx.Now()
		if err != nil {
			return err
		}
		ls, err := tx.Locks(inode)
		if err != nil {
			return err
		}
		for _, l := range ls {
			if !l.Expires.After(now) && l.Owner != owner {
				if err := tx.DeleteLock(l.Inode, l.Owner); err != nil {
					return err
				}
			}
		}
		if conflict(ls, owner, excl, now) {
			return nil
		}
		got = Lock{Inode: inode, Owner: owner, Exclusive: excl, Expires: now.Add(d.opts.LockTTL)}
		ok = true
		return tx.PutLock(got)
	})
	if err != nil || !ok {
		return false, err
	}
	d.mu.Lock()
	d.held[owner] = got
	d.mu.Unlock()
	return true, nil
}

func (d *Drive) unlock(ctx context.Context, inode uint64, owner string) error {
	d.mu.Lock()
	delete(d.held, owner)
	d.mu.Unlock()
	return d.meta.Update(ctx, d.rec.ID, func(tx Tx) error { return tx.DeleteLock(inode, owner) })
}
