package vfs

import (
	"io/fs"
	"sort"
	"strings"
	"syscall"
)

// ChangeKind says how a path differs between two versions.
type ChangeKind int

const (
	// Added: the path is new (for a directory: the directory and everything
	// under it, as after a rename; sync it recursively).
	Added ChangeKind = iota + 1
	// Modified: same inode, new content or metadata (or copied up).
	Modified
	// Deleted: the path is gone (a whiteout when the base has it).
	Deleted
)

func (k ChangeKind) String() string {
	switch k {
	case Added:
		return "added"
	case Modified:
		return "modified"
	case Deleted:
		return "deleted"
	}
	return "unknown"
}

// Diff calls fn for every path whose entry differs between old and new
// (two versions of one lineage: a Fork or Snapshot and its later self).
// old may be nil: then every path of new's delta is reported. Subtrees of the
// inode table and of directories that the two versions share by pointer are
// skipped, so the cost follows the size of the change, not of the tree.
// Calls are sorted by path; at one path Deleted comes before Added.
// Hard links: a change of a shared inode is reported under its first name
// only (other names appear when they are linked or unlinked).
func Diff(old, new *FS, fn func(path string, kind ChangeKind) error) (err error) {
	defer catchLoad(&err, "diff", "/")
	tn := new.cur.Load()
	to := &tree{}
	if old != nil {
		to = old.cur.Load()
	}
	type change struct {
		path string
		kind ChangeKind
	}
	seen := map[string]ChangeKind{}
	var out []change
	add := func(p string, k ChangeKind) {
		if p == "" {
			return
		}
		if prev, ok := seen[p]; ok && (prev == k || prev == Added && k == Modified) {
			return
		}
		seen[p] = k
		out = append(out, change{p, k})
	}
	lost := map[uint64]ChangeKind{} // changed inodes whose first link is gone
	diffTrie(to.inodes, tn.inodes, 0, func(ino uint64, a, b *inode) {
		pa, pb := inodePath(to, a), inodePath(tn, b)
		if b != nil && pb == "" && b.nlink > 0 {
			if a == nil {
				lost[ino] = Added
			} else {
				lost[ino] = Modified
			}
		}
		switch {
		case b == nil:
			add(pa, Deleted)
		case a == nil:
			// The root is never new; a copied-up entry still at its base
			// path is modified, not added.
			if pb == "/" || b.origin != "" && b.origin == strings.TrimPrefix(pb, "/") {
				add(pb, Modified)
			} else {
				add(pb, Added)
			}
		case pa != pb:
			add(pa, Deleted)
			add(pb, Added)
		default:
			add(pb, Modified)
		}
		var ae *hnode[string, dirent]
		if a != nil && a.isDir() && pa == pb {
			ae = a.entries
		}
		if b != nil && b.isDir() && ae != b.entries && pb != "" {
			diffTrie(ae, b.entries, 0, func(name string, x, y dirent) {
				p := strings.TrimSuffix(pb, "/") + "/" + name
				xr := x.ino != 0 || x.typ != 0 || x.whiteout
				xReal := xr && !x.whiteout
				yReal := (y.ino != 0 || y.typ != 0) && !y.whiteout
				switch {
				case xReal && !yReal:
					add(p, Deleted)
				case !xReal && yReal:
					// A changed inode is reported by the table diff under
					// its first name; an unchanged one under a new name,
					// or a changed one linked under another name (which
					// may shadow a base entry), is a new link here.
					if yi := tn.get(y.ino); to.get(y.ino) == yi || inodePath(tn, yi) != p {
						add(p, Added)
					}
				case xReal && yReal && x.ino != y.ino:
					add(p, Deleted)
					add(p, Added)
				case !xReal && y.whiteout:
					add(p, Deleted)
				}
			})
		}
	})
	if len(lost) > 0 {
		// Rare (a hard link whose first name was removed): find the
		// remaining names by walking the delta's directories.
		seen := map[uint64]bool{}
		var walk func(dir *inode, p string)
		walk = func(dir *inode, p string) {
			if seen[dir.ino] {
				return // a loop only a hostile generation can hold
			}
			seen[dir.ino] = true
			dir.entries.each(func(name string, de dirent) bool {
				if de.whiteout {
					return true
				}
				cp := strings.TrimSuffix(p, "/") + "/" + name
				if k, ok := lost[de.ino]; ok {
					add(cp, k)
				}
				if de.typ.IsDir() {
					if c := tn.get(de.ino); c != nil {
						walk(c, cp)
					}
				}
				return true
			})
		}
		if root := tn.get(tn.root); root != nil {
			walk(root, "/")
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].path != out[j].path {
			return out[i].path < out[j].path
		}
		return out[i].kind == Deleted && out[j].kind != Deleted
	})
	for _, c := range out {
		if err := fn(c.path, c.kind); err != nil {
			return err
		}
	}
	return nil
}

// inodePath names in by its first link, or "" when that is unknown.
func inodePath(t *tree, in *inode) string {
	if in == nil {
		return ""
	}
	if in.ino == t.root {
		return "/"
	}
	var parts []string
	for n := in; n.ino != t.root; {
		if n.parent == 0 || len(parts) > maxPath/2 {
			return ""
		}
		p := t.get(n.parent)
		if p == nil {
			return ""
		}
		if p.entries != nil {
			// The link may have been removed (an open unlinked file).
			if de, ok := p.entries.lookup(n.name, strHash(n.name)); !ok || de.whiteout || de.ino != n.ino {
				return ""
			}
		}
		parts = append(parts, n.name)
		n = p
	}
	var b strings.Builder
	for i := len(parts) - 1; i >= 0; i-- {
		b.WriteByte('/')
		b.WriteString(parts[i])
	}
	return b.String()
}

// diffTrie calls fn(key, a, b) for every key whose value differs between
// tries a and b (the zero value stands for absent), skipping shared nodes.
func diffTrie[K comparable, V comparable](a, b *hnode[K, V], shift uint, fn func(K, V, V)) {
	if a == b {
		return
	}
	if a != nil && b != nil {
		if ma, mb := a.memo.Load(), b.memo.Load(); ma != nil && mb != nil && ma.sum == mb.sum {
			return
		}
		if a.lz != nil && b.lz != nil && a.lz.sum == b.lz.sum {
			return
		}
	}
	if a != nil {
		a = a.load()
	}
	if b != nil {
		b = b.load()
	}
	if a != nil && b != nil && shift < hlimit && a.datamap|a.nodemap != 0 && b.datamap|b.nodemap != 0 {
		bm := a.datamap | a.nodemap | b.datamap | b.nodemap
		for bm != 0 {
			bit := bm & -bm
			bm &^= bit
			ea, ca := a.at(bit)
			eb, cb := b.at(bit)
			if ca != nil && cb != nil {
				diffTrie(ca, cb, shift+hbits, fn)
				continue
			}
			diffFlat(slotMap(ea, ca), slotMap(eb, cb), fn)
		}
		return
	}
	diffFlat(nodeMap(a), nodeMap(b), fn)
}

func slotMap[K comparable, V any](e *hentry[K, V], c *hnode[K, V]) map[K]V {
	m := map[K]V{}
	switch {
	case c != nil:
		c.each(func(k K, v V) bool { m[k] = v; return true })
	case e != nil:
		m[e.key] = e.val
	}
	return m
}

func nodeMap[K comparable, V any](n *hnode[K, V]) map[K]V {
	m := map[K]V{}
	n.each(func(k K, v V) bool { m[k] = v; return true })
	return m
}

func diffFlat[K comparable, V comparable](a, b map[K]V, fn func(K, V, V)) {
	var zero V
	for k, va := range a {
		if vb, ok := b[k]; !ok {
			fn(k, va, zero)
		} else if va != vb {
			fn(k, va, vb)
		}
	}
	for k, vb := range b {
		if _, ok := a[k]; !ok {
			fn(k, zero, vb)
		}
	}
}

// DeltaInfo is how the delta holds one path (for the native tier, which
// mirrors the delta into an OverlayFS upper directory).
type DeltaInfo struct {
	// InDelta: the entry's inode is in the delta (created or copied up).
	InDelta bool
	// Whiteout: the name is deleted over a base entry.
	Whiteout bool
	// Opaque: a directory that does not show the base directory at its
	// own path (created anew over it, or renamed from Origin).
	Opaque bool
	// Origin is the base path the entry was copied up from ("" = new).
	Origin string
}

// DeltaEntry reports how the delta holds name (not following a final
// symlink). A whiteout is reported without error; a name absent from both
// layers is ENOENT.
func (f *FS) DeltaEntry(name string) (DeltaInfo, error) {
	var di DeltaInfo
	err := f.view("delta", name, func(w *walk) error {
		l, e := w.resolve(name, rParent)
		if e != 0 {
			return e
		}
		in := l.in
		if in == nil {
			if l.dir != nil && l.dir.entries != nil {
				if de, ok := l.dir.entries.lookup(l.name, strHash(l.name)); ok && de.whiteout {
					di.Whiteout = true
					return nil
				}
			}
			return syscall.ENOENT
		}
		di.InDelta = !in.synth
		di.Origin = in.origin
		if in.isDir() && f.base != nil && !in.synth {
			here := "."
			if !l.dot {
				here = strings.TrimPrefix(w.pathOf(l.name), "/")
			}
			if in.ino == w.t.root {
				here = "."
			}
			if !in.merged() || in.origin != here {
				if fi, err := fs.Stat(f.base, here); err == nil && fi.IsDir() {
					di.Opaque = true
				}
			}
		}
		return nil
	})
	return di, err
}
