// Package mem is an in-memory store.Store for tests and ephemeral nodes.
//
// Objects live in a map guarded by one RWMutex; a Put reads its whole input
// before taking the lock, so a failed or cancelled Put changes nothing.
// Content is kept as a list of segments (at most segMax bytes each) rather
// than one growing slice, so a 64 MiB object is held once, not copied through
// a doubling buffer. Nothing is persisted: a restart loses everything.
package mem

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/warren-sandbox/warren/store"
)

var (
	_ store.Store       = (*Store)(nil)
	_ store.Conditional = (*Store)(nil)
	_ store.RangeGetter = (*Store)(nil)
)

// Store is an in-memory blob store. The zero value is not usable; call New.
type Store struct {
	mu      sync.RWMutex
	objects map[string]*object
	version uint64 // source of ETags: bumped on every write
}

type object struct {
	segs []([]byte)
	size int64
	etag string
}

// New returns an empty store.
func New() *Store { return &Store{objects: make(map[string]*object)} }

const (
	segMin = 512
	segMax = 1 << 20
	// compactMax: objects up to this size are kept in one exact-size slice,
	// so small objects carry no slack.
	compactMax = 64 << 10
)

// readObject reads r fully into segments, checking ctx between reads.
func readObject(ctx context.Context, r io.Reader) (*object, error) {
	r = store.ContextReader(ctx, r)
	o := &object{}
	size := segMin
	for {
		buf := make([]byte, size)
		n, err := io.ReadFull(r, buf)
		if n > 0 {
			o.segs = append(o.segs, buf[:n])
			o.size += int64(n)
		}
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			break
		}
		if err != nil {
			return nil, err
		}
		if size < segMax {
			size *= 2
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	switch {
	case len(o.segs) > 1 && o.size <= compactMax:
		b := make([]byte, 0, o.size)
		for _, s := range o.segs {
			b = append(b, s...)
		}
		o.segs = [][]byte{b}
	case len(o.segs) > 0:
		// Trim the slack of the last segment.
		last := o.segs[len(o.segs)-1]
		if cap(last)-len(last) > 4096 {
			o.segs[len(o.segs)-1] = append([]byte(nil), last...)
		}
	}
	return o, nil
}

func (s *Store) nextETag() string {
	s.version++
	return `"m` + strconv.FormatUint(s.version, 10) + `"`
}

// Put implements store.Store.
func (s *Store) Put(ctx context.Context, key string, r io.Reader) error {
	if err := store.ValidateKey(key); err != nil {
		return &store.Error{Op: "put", Key: key, Err: err}
	}
	o, err := readObject(ctx, r)
	if err != nil {
		return &store.Error{Op: "put", Key: key, Err: err}
	}
	s.mu.Lock()
	o.etag = s.nextETag()
	s.objects[key] = o
	s.mu.Unlock()
	return nil
}

// Get implements store.Store.
func (s *Store) Get(ctx context.Context, key string) (io.ReadCloser, error) {
	rc, _, err := s.get(ctx, "get", key)
	return rc, err
}

func (s *Store) get(ctx context.Context, op, key string) (io.ReadCloser, string, error) {
	if err := store.ValidateKey(key); err != nil {
		return nil, "", &store.Error{Op: op, Key: key, Err: err}
	}
	if err := ctx.Err(); err != nil {
		return nil, "", &store.Error{Op: op, Key: key, Err: err}
	}
	s.mu.RLock()
	o := s.objects[key]
	s.mu.RUnlock()
	if o == nil {
		return nil, "", &store.Error{Op: op, Key: key, Err: store.ErrNotFound}
	}
	// Segments are never written after Put, so readers share them.
	return store.ContextReadCloser(ctx, &reader{segs: o.segs}), o.etag, nil
}

// GetRange implements store.RangeGetter: a reader over a slice of the
// stored segments, nothing copied.
func (s *Store) GetRange(ctx context.Context, key string, off, n int64) (io.ReadCloser, error) {
	const op = "get-range"
	if err := store.CheckRange(off); err != nil {
		return nil, &store.Error{Op: op, Key: key, Err: err}
	}
	if err := store.ValidateKey(key); err != nil {
		return nil, &store.Error{Op: op, Key: key, Err: err}
	}
	if err := ctx.Err(); err != nil {
		return nil, &store.Error{Op: op, Key: key, Err: err}
	}
	s.mu.RLock()
	o := s.objects[key]
	s.mu.RUnlock()
	if o == nil {
		return nil, &store.Error{Op: op, Key: key, Err: store.ErrNotFound}
	}
	if n < 0 || n > o.size {
		n = o.size
	}
	var segs [][]byte
	for _, seg := range o.segs {
		if n == 0 {
			break
		}
		if off >= int64(len(seg)) {
			off -= int64(len(seg))
			continue
		}
		seg = seg[off:]
		off = 0
		if int64(len(seg)) > n {
			seg = seg[:n]
		}
		segs = append(segs, seg)
		n -= int64(len(seg))
	}
	return store.ContextReadCloser(ctx, &reader{segs: segs}), nil
}

// reader walks an object's segments without writing to them: the segment
// list is shared by every reader of the object.
type reader struct {
	segs [][]byte
	i    int // current segment
	off  int // offset in segs[i]
}

func (r *reader) Read(p []byte) (int, error) {
	for r.i < len(r.segs) && r.off == len(r.segs[r.i]) {
		r.i, r.off = r.i+1, 0
	}
	if r.i >= len(r.segs) {
		return 0, io.EOF
	}
	n := copy(p, r.segs[r.i][r.off:])
	r.off += n
	return n, nil
}

func (r *reader) WriteTo(w io.Writer) (int64, error) {
	var total int64
	for r.i < len(r.segs) {
		n, err := w.Write(r.segs[r.i][r.off:])
		total += int64(n)
		r.off += n
		if err != nil {
			return total, err
		}
		r.i, r.off = r.i+1, 0
	}
	return total, nil
}

func (r *reader) Close() error { r.segs = nil; return nil }

// Has implements store.Store.
func (s *Store) Has(ctx context.Context, key string) (bool, error) {
	if err := store.ValidateKey(key); err != nil {
		return false, &store.Error{Op: "has", Key: key, Err: err}
	}
	if err := ctx.Err(); err != nil {
		return false, &store.Error{Op: "has", Key: key, Err: err}
	}
	s.mu.RLock()
	_, ok := s.objects[key]
	s.mu.RUnlock()
	return ok, nil
}

// Delete implements store.Store.
func (s *Store) Delete(ctx context.Context, key string) error {
	if err := store.ValidateKey(key); err != nil {
		return &store.Error{Op: "delete", Key: key, Err: err}
	}
	if err := ctx.Err(); err != nil {
		return &store.Error{Op: "delete", Key: key, Err: err}
	}
	s.mu.Lock()
	delete(s.objects, key)
	s.mu.Unlock()
	return nil
}

// List implements store.Store. It snapshots the matching keys first, so fn
// may call the store.
func (s *Store) List(ctx context.Context, prefix string, fn func(key string, size int64) error) error {
	if err := store.ValidatePrefix(prefix); err != nil {
		return &store.Error{Op: "list", Key: prefix, Err: err}
	}
	type entry struct {
		key  string
		size int64
	}
	var entries []entry
	s.mu.RLock()
	for k, o := range s.objects {
		if strings.HasPrefix(k, prefix) {
			entries = append(entries, entry{k, o.size})
		}
	}
	s.mu.RUnlock()
	sort.Slice(entries, func(i, j int) bool { return entries[i].key < entries[j].key })
	for _, e := range entries {
		if err := ctx.Err(); err != nil {
			return &store.Error{Op: "list", Key: prefix, Err: err}
		}
		if err := fn(e.key, e.size); err != nil {
			return err
		}
	}
	return nil
}

// GetWithETag implements store.Conditional.
func (s *Store) GetWithETag(ctx context.Context, key string) (io.ReadCloser, string, error) {
	return s.get(ctx, "get", key)
}

// PutIfAbsent implements store.Conditional.
func (s *Store) PutIfAbsent(ctx context.Context, key string, r io.Reader) (string, error) {
	return s.putIf(ctx, "put-if-absent", key, r, func(cur *object) error {
		if cur != nil {
			return store.ErrExists
		}
		return nil
	})
}

// CompareAndSwap implements store.Conditional.
func (s *Store) CompareAndSwap(ctx context.Context, key, ifMatch string, r io.Reader) (string, error) {
	return s.putIf(ctx, "compare-and-swap", key, r, func(cur *object) error {
		if cur == nil {
			return fmt.Errorf("%w: object does not exist", store.ErrPreconditionFailed)
		}
		if cur.etag != ifMatch {
			return fmt.Errorf("%w: etag is %s, not %s", store.ErrPreconditionFailed, cur.etag, ifMatch)
		}
		return nil
	})
}

func (s *Store) putIf(ctx context.Context, op, key string, r io.Reader, check func(*object) error) (string, error) {
	if err := store.ValidateKey(key); err != nil {
		return "", &store.Error{Op: op, Key: key, Err: err}
	}
	o, err := readObject(ctx, r)
	if err != nil {
		return "", &store.Error{Op: op, Key: key, Err: err}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := check(s.objects[key]); err != nil {
		return "", &store.Error{Op: op, Key: key, Err: err}
	}
	o.etag = s.nextETag()
	s.objects[key] = o
	return o.etag, nil
}
