package vfs

import (
	"context"
	"crypto/sha256"
	"fmt"
	"io"
)

// packBuf is a pack being filled: its blobs are kept as segments (chunk
// data is not copied); id is set once it is sealed.
type packBuf struct {
	segs   [][]byte
	size   int64
	id     [32]byte
	sealed bool
}

func (pb *packBuf) add(b []byte) {
	pb.segs = append(pb.segs, b)
	pb.size += int64(len(b))
}

func (pb *packBuf) hash() [32]byte {
	h := sha256.New()
	for _, b := range pb.segs {
		h.Write(b)
	}
	var id [32]byte
	h.Sum(id[:0])
	return id
}

// segReader reads a pack's segments in order. It seeks, so a store that
// retries a Put (store/retry) rewinds it instead of keeping a copy of the
// pack, and one that needs the size first (store/s3) allocates exactly.
type segReader struct {
	all  [][]byte
	size int64
	pos  int64
	seg  int   // segment holding pos
	soff int64 // offset of all[seg]
}

func newSegReader(segs [][]byte) *segReader {
	r := &segReader{all: segs}
	for _, b := range segs {
		r.size += int64(len(b))
	}
	return r
}

func (r *segReader) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) && r.seg < len(r.all) {
		b := r.all[r.seg]
		m := copy(p[n:], b[r.pos-r.soff:])
		n += m
		r.pos += int64(m)
		if r.pos-r.soff == int64(len(b)) {
			r.soff += int64(len(b))
			r.seg++
		}
	}
	if n == 0 && len(p) > 0 {
		return 0, io.EOF
	}
	return n, nil
}

func (r *segReader) WriteTo(w io.Writer) (int64, error) {
	var total int64
	for r.seg < len(r.all) {
		b := r.all[r.seg][r.pos-r.soff:]
		m, err := w.Write(b)
		total += int64(m)
		r.pos += int64(m)
		if err != nil {
			return total, err
		}
		r.soff += int64(len(r.all[r.seg]))
		r.seg++
	}
	return total, nil
}

func (r *segReader) Seek(off int64, whence int) (int64, error) {
	switch whence {
	case io.SeekCurrent:
		off += r.pos
	case io.SeekEnd:
		off += r.size
	}
	if off < 0 || off > r.size {
		return r.pos, fmt.Errorf("vfs: seek to %d in a pack of %d bytes", off, r.size)
	}
	r.pos, r.seg, r.soff = off, 0, 0
	for r.seg < len(r.all) && r.soff+int64(len(r.all[r.seg])) <= off {
		r.soff += int64(len(r.all[r.seg]))
		r.seg++
	}
	return off, nil
}

// ploc is a loc during a persist: in a pack of this persist (pb != nil)
// or in an existing one.
type ploc struct {
	pb  *packBuf
	at  blobLoc
	sum [32]byte
}

func (l ploc) resolve() blobLoc {
	if l.pb != nil {
		return blobLoc{pack: l.pb.id, off: l.at.off, n: l.at.n}
	}
	return l.at
}

// seal hashes the open pack and writes it in the background.
func (p *persister) seal() {
	pb := p.open
	p.open = &packBuf{}
	if pb.size == 0 {
		return
	}
	pb.id = pb.hash()
	pb.sealed = true
	p.stats.Packs++
	p.stats.PackBytes += pb.size
	p.wg.Add(1)
	p.sem <- struct{}{}
	go func() {
		defer p.wg.Done()
		defer func() { <-p.sem }()
		err := BeforePut(p.ctx, packKey(pb.id))
		if err == nil {
			err = p.dst.Put(p.ctx, packKey(pb.id), newSegReader(pb.segs))
		}
		if err != nil {
			p.mu.Lock()
			if p.werr == nil {
				p.werr = fmt.Errorf("vfs: persist: cannot store %s: %w", packKey(pb.id), err)
			}
			p.mu.Unlock()
		}
	}()
}

func (p *persister) maybeSeal() {
	if p.open.size >= packTarget {
		p.seal()
	}
}

// place appends a blob whose id is sum to the open pack.
func (p *persister) place(b []byte, sum [32]byte) ploc {
	l := ploc{pb: p.open, at: blobLoc{off: p.open.size, n: int64(len(b))}, sum: sum}
	p.open.add(b)
	return l
}

type beforePutKey struct{}

// WithBeforePut returns a context under which a persist (and whoever else
// calls BeforePut) calls fn with every object key before it writes the
// object: an uploader records the key in its custody there, so a
// collector protects exactly the objects in flight (docs/format.md
// "Publish ordering"). An error from fn fails the write.
func WithBeforePut(ctx context.Context, fn func(ctx context.Context, key string) error) context.Context {
	return context.WithValue(ctx, beforePutKey{}, fn)
}

// BeforePut calls the function WithBeforePut put in ctx, if any.
func BeforePut(ctx context.Context, key string) error {
	if fn, ok := ctx.Value(beforePutKey{}).(func(context.Context, string) error); ok {
		return fn(ctx, key)
	}
	return nil
}
