package vfs

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"io"
)

// loader fetches and verifies blobs for a lazily loaded FS.
type loader struct {
	ctx context.Context
	src BlobStore
	lin *lineage
	// visit, if set, sees every reference decoded (Reachable).
	visit func(blobLoc)
}

// Load opens generation ref of src as a new FS over opts.Base. Only the
// pack holding the generation record is read now; every other node and
// chunk is fetched and verified when first touched. A missing or corrupt
// blob later makes the operation that touched it fail with EIO naming the
// blob.
func Load(ctx context.Context, opts Options, src BlobStore, ref Ref) (*FS, error) {
	f := newFS(opts)
	ld := &loader{ctx: context.WithoutCancel(ctx), src: src, lin: f.lin}
	t, err := loadGeneration(ctx, ld, ref)
	if err != nil {
		return nil, err
	}
	f.cur.Store(t)
	f.lastGen.Store(&genMemo{t: t, store: src, ref: ref})
	return f, nil
}

func loadGeneration(ctx context.Context, ld *loader, ref Ref) (*tree, error) {
	b, err := ld.whole(ctx, ref.Root)
	if err != nil {
		return nil, err
	}
	gen, err := genRecord(b)
	if err != nil {
		return nil, fmt.Errorf("vfs: generation %s: %w", ref, err)
	}
	t, err := decodeGeneration(ld, ref.Root, gen)
	if err != nil {
		return nil, fmt.Errorf("vfs: generation %s: %w", ref, err)
	}
	return t, nil
}

// genRecord returns the generation record at the end of a pack.
func genRecord(b []byte) ([]byte, error) {
	if len(b) < 8 || string(b[len(b)-4:]) != genMagic {
		return nil, fmt.Errorf("%w: pack does not end with a generation record", ErrMalformed)
	}
	n := int64(binary.LittleEndian.Uint32(b[len(b)-8:]))
	if n > int64(len(b)-8) {
		return nil, fmt.Errorf("%w: generation record length %d exceeds the pack", ErrMalformed, n)
	}
	return b[int64(len(b)-8)-n : len(b)-8], nil
}

// whole reads a pack, verifies it against its id and caches it.
func (ld *loader) whole(ctx context.Context, id [32]byte) ([]byte, error) {
	if b := cacheGet(id); b != nil {
		return b, nil
	}
	key := packKey(id)
	rc, err := ld.src.Get(ctx, key)
	if err != nil {
		return nil, fmt.Errorf("vfs: cannot get %s: %w", key, err)
	}
	defer rc.Close()
	return ld.readWhole(rc, id)
}

func (ld *loader) readWhole(rc io.Reader, id [32]byte) ([]byte, error) {
	key := packKey(id)
	b, err := io.ReadAll(io.LimitReader(rc, maxPack+1))
	if err != nil {
		return nil, fmt.Errorf("vfs: cannot read %s: %w", key, err)
	}
	if len(b) > maxPack {
		return nil, fmt.Errorf("vfs: pack %s is larger than %d bytes", key, maxPack)
	}
	if got := sha256.Sum256(b); got != id {
		return nil, &CorruptError{Key: key, Got: got}
	}
	cachePut(id, b)
	return b, nil
}

// read fetches the blob at l and verifies it against sum. what names the
// blob kind for errors ("node", "chunk"). The result is the caller's.
func (ld *loader) read(l blobLoc, sum [32]byte, what string) ([]byte, error) {
	return ld.readCtx(ld.ctx, l, sum, what)
}

func (ld *loader) readCtx(ctx context.Context, l blobLoc, sum [32]byte, what string) ([]byte, error) {
	key := packKey(l.pack)
	if l.off < 0 || l.n <= 0 || l.n > maxBlob || l.off > maxPack {
		return nil, fmt.Errorf("vfs: %s %x: bad range %d+%d in %s", what, sum[:8], l.off, l.n, key)
	}
	var b []byte
	if p := cacheGet(l.pack); p != nil {
		if l.off+l.n > int64(len(p)) {
			return nil, fmt.Errorf("vfs: %s %x: range %d+%d beyond the end of %s (%d bytes): %w",
				what, sum[:8], l.off, l.n, key, len(p), ErrMalformed)
		}
		b = bytes.Clone(p[l.off : l.off+l.n])
	} else {
		var err error
		if b, err = ld.fetchRangeCtx(ctx, l); err != nil {
			return nil, err
		}
	}
	if got := sha256.Sum256(b); got != sum {
		return nil, &CorruptError{Key: key, Got: got, Blob: sum, Off: l.off, N: l.n, Kind: what}
	}
	return b, nil
}

func (ld *loader) fetchRangeCtx(ctx context.Context, l blobLoc) ([]byte, error) {
	key := packKey(l.pack)
	if rg, ok := ld.src.(RangeGetter); ok {
		rc, err := rg.GetRange(ctx, key, l.off, l.n)
		if err != nil {
			return nil, fmt.Errorf("vfs: cannot get %s: %w", key, err)
		}
		defer rc.Close()
		b := make([]byte, l.n)
		if _, err := io.ReadFull(rc, b); err != nil {
			return nil, fmt.Errorf("vfs: cannot read %d+%d of %s: %w", l.off, l.n, key, err)
		}
		return b, nil
	}
	b := make([]byte, l.n)
	readAt := func(ra io.ReaderAt) ([]byte, error) {
		if n, err := ra.ReadAt(b, l.off); n != len(b) {
			if err == io.EOF {
				err = fmt.Errorf("range beyond the end: %w", ErrMalformed)
			}
			return nil, fmt.Errorf("vfs: cannot read %d+%d of %s: %w", l.off, l.n, key, err)
		}
		return b, nil
	}
	if n, err, ok := readOpen(ld.src, l.pack, b, l.off); ok {
		if n == len(b) {
			return b, nil
		}
		if err == io.EOF {
			err = fmt.Errorf("range beyond the end: %w", ErrMalformed)
		}
		return nil, fmt.Errorf("vfs: cannot read %d+%d of %s: %w", l.off, l.n, key, err)
	}
	rc, err := ld.src.Get(ctx, key)
	if err != nil {
		return nil, fmt.Errorf("vfs: cannot get %s: %w", key, err)
	}
	if ra, ok := rc.(io.ReaderAt); ok {
		b, err := readAt(ra)
		if !keepOpen(ld.src, l.pack, rc) {
			rc.Close()
		}
		return b, err
	}
	defer rc.Close()
	p, err := ld.readWhole(rc, l.pack)
	if err != nil {
		return nil, err
	}
	if l.off+l.n > int64(len(p)) {
		return nil, fmt.Errorf("vfs: range %d+%d beyond the end of %s (%d bytes): %w", l.off, l.n, key, len(p), ErrMalformed)
	}
	return bytes.Clone(p[l.off : l.off+l.n]), nil
}

// maxBlob bounds what a single blob may hold, so a hostile store cannot
// make the loader allocate without limit.
const maxBlob = 64 << 20

// CorruptError is a blob whose content does not match its name.
type CorruptError struct {
	Key string   // the pack object
	Got [32]byte // hash of what was read
	// Blob, Off, N and Kind name the blob inside the pack ("node",
	// "chunk"); zero when the whole pack did not match its key.
	Blob   [32]byte
	Off, N int64
	Kind   string
}

func (e *CorruptError) Error() string {
	if e.Kind != "" {
		return fmt.Sprintf("vfs: %s %s at %d+%d in %s is corrupt: its content hashes to %s",
			e.Kind, hex.EncodeToString(e.Blob[:]), e.Off, e.N, e.Key, hex.EncodeToString(e.Got[:]))
	}
	return "vfs: pack " + e.Key + " is corrupt: its content hashes to " + hex.EncodeToString(e.Got[:])
}
