package vfs

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"io/fs"
)

func (p *persister) generation(t *tree) (Ref, error) {
	var table ploc
	if t.inodes != nil {
		var err error
		if table, err = p.table(t.inodes); err != nil {
			return Ref{}, err
		}
	}
	if p.open.size > finalMax {
		p.seal()
	}
	var r refs
	var body []byte
	body = binary.AppendUvarint(body, t.root)
	body = binary.AppendUvarint(body, t.nextIno)
	body = binary.AppendVarint(body, t.usage.Bytes)
	body = binary.AppendVarint(body, t.usage.Inodes)
	if t.inodes == nil {
		body = append(body, 0)
	} else {
		body = append(body, 1)
		body = p.appendRef(body, &r, table)
	}
	gen := r.node(blobGeneration, body)
	trailer := binary.LittleEndian.AppendUint32(nil, uint32(len(gen)))
	trailer = append(trailer, genMagic...)
	obj := p.open
	obj.add(gen)
	obj.add(trailer)
	// Every pack the generation names is stored before the pack that
	// holds it.
	p.wg.Wait()
	if p.werr != nil {
		return Ref{}, p.werr
	}
	id := obj.hash()
	if err := BeforePut(p.ctx, packKey(id)); err != nil {
		return Ref{}, fmt.Errorf("vfs: persist: %s: %w", packKey(id), err)
	}
	if err := p.dst.Put(p.ctx, packKey(id), newSegReader(obj.segs)); err != nil {
		return Ref{}, fmt.Errorf("vfs: persist: cannot store %s: %w", packKey(id), err)
	}
	obj.id, obj.sealed = id, true
	p.stats.Packs++
	p.stats.PackBytes += obj.size
	return Ref{Root: id}, nil
}

// refs collects the pack table of one node.
type refs struct{ ids [][32]byte }

func (r *refs) index(id [32]byte) uint64 {
	for i := range r.ids {
		if r.ids[i] == id {
			return uint64(i + 1)
		}
	}
	r.ids = append(r.ids, id)
	return uint64(len(r.ids))
}

// node returns type, version, the pack table, then body.
func (r *refs) node(typ byte, body []byte) []byte {
	b := make([]byte, 0, 2+binary.MaxVarintLen64+32*len(r.ids)+len(body))
	b = append(b, typ, FormatVersion)
	b = binary.AppendUvarint(b, uint64(len(r.ids)))
	for _, id := range r.ids {
		b = append(b, id[:]...)
	}
	return append(b, body...)
}

// appendRef appends a reference: pack index (0 = the pack holding the
// referring node, which is the open pack), offset, length, blob id.
func (p *persister) appendRef(b []byte, r *refs, l ploc) []byte {
	var k uint64
	if l.pb == nil || l.pb != p.open {
		k = r.index(l.resolve().pack)
	}
	b = binary.AppendUvarint(b, k)
	b = binary.AppendUvarint(b, uint64(l.at.off))
	b = binary.AppendUvarint(b, uint64(l.at.n))
	return append(b, l.sum[:]...)
}

// cached returns where a node already is in dst for this lineage.
func cached[K comparable, V any](n *hnode[K, V], dst BlobStore, lin *lineage) (ploc, bool) {
	if n.lz != nil && n.lz.ld.lin == lin && sameStore(n.lz.ld.src, dst) {
		return ploc{at: n.lz.at, sum: n.lz.sum}, true
	}
	if m := n.memo.Load(); m != nil && m.lin == lin && sameStore(m.store, dst) {
		return ploc{at: m.at, sum: m.sum}, true
	}
	return ploc{}, false
}

func (p *persister) table(n *hnode[uint64, *inode]) (ploc, error) {
	return persistTrie(p, n, blobTable, p.prepInode, func(b []byte, r *refs, _ uint64, in *inode) []byte {
		return p.inode(b, r, in)
	})
}

func (p *persister) dir(n *hnode[string, dirent]) (ploc, error) {
	return persistTrie(p, n, blobDir, nil, func(b []byte, _ *refs, name string, de dirent) []byte {
		b = appendString(b, name)
		b = binary.AppendUvarint(b, de.ino)
		b = binary.AppendUvarint(b, uint64(de.typ))
		if de.whiteout {
			return append(b, 1)
		}
		return append(b, 0)
	})
}

func (p *persister) child(c any) (ploc, error) {
	switch c := c.(type) {
	case *hnode[uint64, *inode]:
		return p.table(c)
	case *hnode[string, dirent]:
		return p.dir(c)
	}
	panic("vfs: unknown trie type")
}

// persistTrie stores a trie node after its children (a node's id depends
// on theirs) in two passes: the first stores everything the node refers
// to, the second encodes it. No pack is sealed between the second pass and
// placing the node, so "same pack" references stay true.
func persistTrie[K comparable, V any](p *persister, n *hnode[K, V], typ byte,
	prep func(V) error, entry func([]byte, *refs, K, V) []byte) (ploc, error) {
	if l, ok := p.done[n]; ok {
		return l, nil
	}
	if l, ok := cached(n, p.dst, p.lin); ok {
		p.done[n] = l
		p.stats.Skipped++
		return l, nil
	}
	orig := n
	n = n.load()
	kids := make(map[*hnode[K, V]]ploc, len(n.kids))
	for _, c := range n.kids {
		l, err := p.child(c)
		if err != nil {
			return ploc{}, err
		}
		kids[c] = l
	}
	if prep != nil {
		for i := range n.entries {
			if err := prep(n.entries[i].val); err != nil {
				return ploc{}, err
			}
		}
	}
	p.maybeSeal()
	var r refs
	body := binary.AppendUvarint(nil, uint64(n.datamap|n.nodemap))
	body = binary.AppendUvarint(body, uint64(n.slotCount()))
	n.eachSlot(func(e *hentry[K, V], c *hnode[K, V]) {
		if c != nil {
			body = append(body, 1)
			body = p.appendRef(body, &r, kids[c])
			return
		}
		body = append(body, 0)
		body = entry(body, &r, e.key, e.val)
	})
	b := r.node(typ, body)
	l := p.place(b, sha256.Sum256(b))
	p.stats.Nodes++
	p.stats.NodeBytes += int64(len(b))
	p.done[orig] = l
	store, lin := p.dst, p.lin
	p.memos = append(p.memos, func() {
		orig.memo.Store(&memo{sum: l.sum, store: store, lin: lin, at: l.resolve()})
	})
	return l, nil
}

// sealedExt returns in's extents cut into chunks (unsealed data, from a
// handle still open for writing, is chunked for the blob only; the
// chunking is deterministic).
func (p *persister) sealedExt(in *inode) []extent {
	if in.size <= inlineMax || sealed(in.ext) {
		return in.ext
	}
	if e, ok := p.ext[in]; ok {
		return e
	}
	e := sealExt(in.ext, nil)
	p.ext[in] = e
	return e
}

// prepInode stores what an inode refers to: its directory trie, its chunks.
func (p *persister) prepInode(in *inode) error {
	switch {
	case in.isDir():
		if in.entries != nil {
			_, err := p.dir(in.entries)
			return err
		}
	case in.mode.IsRegular():
		for _, e := range p.sealedExt(in) {
			if e.kind == extChunk {
				p.putChunk(e.ch)
			}
		}
	}
	return nil
}

func (p *persister) putChunk(c *chunk) {
	if _, ok := p.chunks[c.sum]; ok {
		return
	}
	if at, ok := c.locFor(p.dst, p.lin); ok {
		p.chunks[c.sum] = ploc{at: at, sum: c.sum}
		p.stats.Skipped++
		p.memos = append(p.memos, c.release)
		return
	}
	data := c.bytes()
	p.maybeSeal()
	l := p.place(data, c.sum)
	p.chunks[c.sum] = l
	p.stats.Chunks++
	p.stats.ChunkData += int64(len(data))
	store, lin := p.dst, p.lin
	ld := p.reader()
	p.memos = append(p.memos, func() {
		c.addLoc(chunkLoc{lin: lin, src: store, ld: ld, at: l.resolve()})
		c.release() // committed: its bytes may leave memory (chunkread.go)
	})
}

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// inode appends the encoding of in (docs/format.md, "Inode"); prepInode
// has stored what it refers to.
func (p *persister) inode(b []byte, r *refs, in *inode) []byte {
	b = appendInodeMeta(b, in) // the layout change records share
	switch {
	case in.isDir():
		if in.entries == nil {
			return append(b, 0)
		}
		b = append(b, 1)
		return p.appendRef(b, r, p.done[in.entries])
	case in.mode&fs.ModeSymlink != 0:
		return appendString(b, in.target)
	case in.mode.IsRegular():
		ext := p.sealedExt(in)
		b = binary.AppendUvarint(b, uint64(len(ext)))
		for _, e := range ext {
			b = append(b, e.kind)
			b = binary.AppendUvarint(b, uint64(e.n))
			if e.kind == extMem {
				b = binary.AppendUvarint(b, 0)
			} else {
				b = binary.AppendUvarint(b, uint64(e.coff))
			}
			switch e.kind {
			case extMem:
				b = append(b, e.mem[e.coff:e.coff+e.n]...)
			case extChunk:
				b = p.appendRef(b, r, p.chunks[e.ch.sum])
			}
		}
	}
	return b
}

// reader is the loader the chunks this persist stores read back through
// once their bytes left memory.
func (p *persister) reader() *loader {
	if p.ld == nil {
		p.ld = &loader{ctx: context.WithoutCancel(p.ctx), src: p.dst, lin: p.lin}
	}
	return p.ld
}
