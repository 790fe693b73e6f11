package vfs

import (
	"context"
	"fmt"
)

// Reachable calls fn with the key of every blob store object that
// generation ref needs: the pack holding its generation record first, then
// every pack holding one of its nodes or chunks, each once. It reads every
// node of the generation (not the chunks). Any error (a missing or
// corrupt object, or fn's) stops the walk and is returned: a sweeper must
// then delete nothing.
func Reachable(ctx context.Context, src BlobStore, ref Ref, fn func(key string) error) (err error) {
	seen := map[[32]byte]bool{}
	var ferr error
	emit := func(pack [32]byte) {
		if seen[pack] || ferr != nil {
			return
		}
		seen[pack] = true
		ferr = fn(packKey(pack))
	}
	// Lazy loads run without ctx's cancellation (a ranged read needs a
	// plain reader); the walk checks ctx between nodes.
	ld := &loader{ctx: context.WithoutCancel(ctx), src: src, lin: &lineage{}, visit: func(l blobLoc) { emit(l.pack) }}
	emit(ref.Root)
	if ferr != nil {
		return ferr
	}
	t, err := loadGeneration(ctx, ld, ref)
	if err != nil {
		return err
	}
	defer func() {
		if r := recover(); r != nil {
			le, ok := r.(*loadError)
			if !ok {
				panic(r)
			}
			err = fmt.Errorf("vfs: reachable from %s: %w", ref, le.err)
		}
	}()
	visited := map[blobLoc]bool{}
	var walkDir func(n *hnode[string, dirent]) error
	var walkTable func(n *hnode[uint64, *inode]) error
	enter := func(lz bool, at blobLoc) bool {
		if !lz {
			return true
		}
		if visited[at] {
			return false
		}
		visited[at] = true
		return true
	}
	walkDir = func(n *hnode[string, dirent]) error {
		if n == nil || !enter(n.lz != nil, lzLoc(n)) {
			return nil
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		n = n.load()
		for _, c := range n.kids {
			if err := walkDir(c); err != nil {
				return err
			}
		}
		return ferr
	}
	walkTable = func(n *hnode[uint64, *inode]) error {
		if n == nil || !enter(n.lz != nil, lzLoc(n)) {
			return nil
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		n = n.load()
		for _, c := range n.kids {
			if err := walkTable(c); err != nil {
				return err
			}
		}
		for _, e := range n.entries {
			if e.val != nil && e.val.entries != nil {
				if err := walkDir(e.val.entries); err != nil {
					return err
				}
			}
		}
		return ferr
	}
	if err := walkTable(t.inodes); err != nil {
		return err
	}
	return ferr
}

func lzLoc[K comparable, V any](n *hnode[K, V]) blobLoc {
	if n.lz == nil {
		return blobLoc{}
	}
	return n.lz.at
}
