package vfs

import (
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

// segReader reads a pack's segments in order.
type segReader struct {
	segs [][]byte
	off  int
}

func (r *segReader) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) && len(r.segs) > 0 {
		m := copy(p[n:], r.segs[0][r.off:])
		n += m
		r.off += m
		if r.off == len(r.segs[0]) {
			r.segs, r.off = r.segs[1:], 0
		}
	}
	if n == 0 && len(r.segs) == 0 {
		return 0, io.EOF
	}
	return n, nil
}

func (r *segReader) WriteTo(w io.Writer) (int64, error) {
	var total int64
	for len(r.segs) > 0 {
		m, err := w.Write(r.segs[0][r.off:])
		total += int64(m)
		r.off += m
		if err != nil {
			return total, err
		}
		r.segs, r.off = r.segs[1:], 0
	}
	return total, nil
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
		err := p.dst.Put(p.ctx, packKey(pb.id), &segReader{segs: pb.segs})
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
