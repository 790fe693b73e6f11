package image

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"sort"
	"strings"
	"time"
)

// Limits bound what a build accepts from untrusted input (tars, OCI layers,
// Dockerfile contexts). Zero fields take the defaults below.
type Limits struct {
	MaxFileSize int64 // largest single regular file
	MaxBytes    int64 // total regular-file bytes in the image
	MaxEntries  int   // total entries in the image
	MaxPathLen  int   // longest entry path
}

// DefaultLimits are generous for a rootfs yet refuse absurd headers before
// any byte is copied.
var DefaultLimits = Limits{
	MaxFileSize: 16 << 30,
	MaxBytes:    64 << 30,
	MaxEntries:  4 << 20,
	MaxPathLen:  4096,
}

func (l Limits) withDefaults() Limits {
	if l.MaxFileSize <= 0 {
		l.MaxFileSize = DefaultLimits.MaxFileSize
	}
	if l.MaxBytes <= 0 {
		l.MaxBytes = DefaultLimits.MaxBytes
	}
	if l.MaxEntries <= 0 {
		l.MaxEntries = DefaultLimits.MaxEntries
	}
	if l.MaxPathLen <= 0 {
		l.MaxPathLen = DefaultLimits.MaxPathLen
	}
	return l
}

// inode is the metadata and content of one file; hard links are several
// names sharing one *inode.
type inode struct {
	mode   fs.FileMode // io/fs type bits plus permissions, setuid, setgid, sticky
	uid    uint32
	gid    uint32
	mtime  time.Time
	rdev   uint32 // Linux new_encode_dev form, as EROFS stores it
	xattrs map[string]string
	target string // symlink target
	size   int64
	data   func() (io.ReadCloser, error)
	names  int // number of names (hard links) in the tree
}

// node is one name in the tree.
type node struct {
	name     string
	ino      *inode
	children map[string]*node // directories only
	layer    int              // which layer created it (opaque whiteouts)
}

// tree is a filesystem being assembled in memory before it is written as
// EROFS. Every source (host dir, tar, OCI layers, an existing image,
// Dockerfile steps) fills a tree; nothing is ever extracted to the host.
type tree struct {
	root    *node
	limits  Limits
	entries int
	bytes   int64
	layer   int
}

func newTree(l Limits) *tree {
	return &tree{
		root:   &node{ino: &inode{mode: fs.ModeDir | 0o755, names: 1}, children: map[string]*node{}},
		limits: l.withDefaults(),
	}
}

// entryPath validates an untrusted entry name and returns it cleaned and
// relative ("" is the root). Absolute names and ".." components are refused
// rather than rewritten: a tar that says "../x" is hostile or broken.
func entryPath(name string) (string, error) {
	if strings.IndexByte(name, 0) >= 0 {
		return "", errors.New("name contains NUL")
	}
	if strings.HasPrefix(name, "/") {
		return "", errors.New("absolute path")
	}
	for _, c := range strings.Split(name, "/") {
		if c == ".." {
			return "", errors.New("path escapes the root (..)")
		}
	}
	p := path.Clean(name)
	if p == "." {
		return "", nil
	}
	return p, nil
}

// dir returns the directory node at p, creating missing directories when
// create is set. It never follows symlinks: an entry under a symlink is an
// attempt to write through it and is refused.
func (t *tree) dir(p string, create bool) (*node, error) {
	n := t.root
	if p == "" {
		return n, nil
	}
	walked := ""
	for _, c := range strings.Split(p, "/") {
		walked = path.Join(walked, c)
		child, ok := n.children[c]
		if !ok {
			if !create {
				return nil, fmt.Errorf("%s: %w", walked, fs.ErrNotExist)
			}
			if err := t.count(walked, 0); err != nil {
				return nil, err
			}
			child = &node{name: c, ino: &inode{mode: fs.ModeDir | 0o755, names: 1, mtime: time.Unix(0, 0)}, children: map[string]*node{}, layer: t.layer}
			n.children[c] = child
		}
		switch {
		case child.ino.mode&fs.ModeSymlink != 0:
			return nil, fmt.Errorf("parent %s is a symlink (write through symlink refused)", walked)
		case !child.ino.mode.IsDir():
			return nil, fmt.Errorf("parent %s is not a directory", walked)
		}
		n = child
	}
	return n, nil
}

// maxXattrBytes bounds one inode's inline xattrs (EROFS keeps them next
// to the inode, which must fit a block with its inline data).
const maxXattrBytes = 2048

func checkXattrs(x map[string]string) error {
	total := 12
	for k, v := range x {
		if len(k) > 255 {
			return fmt.Errorf("xattr name longer than 255 bytes")
		}
		total += 4 + len(k) + len(v) + 3
	}
	if len(x) > 0 && total > maxXattrBytes {
		return fmt.Errorf("xattrs take %d bytes, more than %d", total, maxXattrBytes)
	}
	return nil
}

func (t *tree) count(p string, size int64) error {
	if len(p) > t.limits.MaxPathLen {
		return fmt.Errorf("path longer than %d bytes", t.limits.MaxPathLen)
	}
	if t.entries+1 > t.limits.MaxEntries {
		return fmt.Errorf("more than %d entries", t.limits.MaxEntries)
	}
	if size > t.limits.MaxFileSize {
		return fmt.Errorf("size %d exceeds the file size limit %d", size, t.limits.MaxFileSize)
	}
	if t.bytes+size > t.limits.MaxBytes {
		return fmt.Errorf("image would exceed %d bytes", t.limits.MaxBytes)
	}
	t.entries++
	t.bytes += size
	return nil
}

// put sets the entry at p (relative, cleaned) to ino, replacing what was
// there like a later tar layer does. A directory replacing a directory keeps
// the children (OCI semantics); anything else replaces the whole subtree.
func (t *tree) put(p string, ino *inode) error {
	// Whole seconds: a tar in the default (GNU) format keeps no more, and
	// a directory and a tar of it must give the same digest.
	ino.mtime = ino.mtime.Truncate(time.Second)
	if p == "" {
		if !ino.mode.IsDir() {
			return errors.New("root must be a directory")
		}
		ino.names = 1
		t.root.ino = ino
		return nil
	}
	if ino.mode.IsRegular() && ino.size < 0 {
		return fmt.Errorf("negative size %d", ino.size)
	}
	if err := checkXattrs(ino.xattrs); err != nil {
		return err
	}
	parent, err := t.dir(parentOf(p), true)
	if err != nil {
		return err
	}
	name := path.Base(p)
	if old, ok := parent.children[name]; ok {
		if old.ino.mode.IsDir() && ino.mode.IsDir() {
			ino.names = 1
			old.ino = ino
			old.layer = t.layer
			return nil
		}
		t.unlink(parent, name)
	}
	var size int64
	if ino.mode.IsRegular() {
		size = ino.size
	}
	if err := t.count(p, size); err != nil {
		return err
	}
	n := &node{name: name, ino: ino, layer: t.layer}
	if ino.mode.IsDir() {
		n.children = map[string]*node{}
	}
	ino.names++
	parent.children[name] = n
	return nil
}

// link makes p another name of the existing non-directory entry target.
func (t *tree) link(p, target string) error {
	tn, err := t.lookup(target)
	if err != nil {
		return fmt.Errorf("hard link target %s: %w", target, err)
	}
	if tn.ino.mode.IsDir() {
		return fmt.Errorf("hard link target %s is a directory", target)
	}
	parent, err := t.dir(parentOf(p), true)
	if err != nil {
		return err
	}
	name := path.Base(p)
	if old, ok := parent.children[name]; ok {
		if old.ino == tn.ino {
			return nil
		}
		t.unlink(parent, name)
	}
	if err := t.count(p, 0); err != nil {
		return err
	}
	tn.ino.names++
	parent.children[name] = &node{name: name, ino: tn.ino, layer: t.layer}
	return nil
}

func (t *tree) lookup(p string) (*node, error) {
	if p == "" {
		return t.root, nil
	}
	parent, err := t.dir(parentOf(p), false)
	if err != nil {
		return nil, err
	}
	n, ok := parent.children[path.Base(p)]
	if !ok {
		return nil, fmt.Errorf("%s: %w", p, fs.ErrNotExist)
	}
	return n, nil
}

// remove deletes p and its subtree if present (a whiteout).
func (t *tree) remove(p string) {
	parent, err := t.dir(parentOf(p), false)
	if err != nil {
		return
	}
	t.unlink(parent, path.Base(p))
}

// opaque removes the children of p that earlier layers created.
func (t *tree) opaque(p string) {
	d, err := t.dir(p, false)
	if err != nil {
		return
	}
	for name, c := range d.children {
		if c.layer < t.layer {
			t.unlink(d, name)
		}
	}
}

func (t *tree) unlink(parent *node, name string) {
	n, ok := parent.children[name]
	if !ok {
		return
	}
	delete(parent.children, name)
	var drop func(n *node)
	drop = func(n *node) {
		t.entries--
		n.ino.names--
		if n.ino.mode.IsRegular() && n.ino.names == 0 {
			t.bytes -= n.ino.size
		}
		for _, c := range n.children {
			drop(c)
		}
	}
	drop(n)
}

// parentOf returns the parent of a relative path; "" is the root.
func parentOf(p string) string {
	if d := path.Dir(p); d != "." {
		return d
	}
	return ""
}

// walk visits every node in fs.WalkDir order (pre-order, names sorted),
// which is also the order the EROFS writer walks.
func (t *tree) walk(fn func(p string, n *node) error) error {
	var rec func(p string, n *node) error
	rec = func(p string, n *node) error {
		if err := fn(p, n); err != nil {
			return err
		}
		if n.children == nil {
			return nil
		}
		for _, name := range sortedNames(n) {
			if err := rec(path.Join(p, name), n.children[name]); err != nil {
				return err
			}
		}
		return nil
	}
	return rec("", t.root)
}

func sortedNames(n *node) []string {
	names := make([]string, 0, len(n.children))
	for name := range n.children {
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}
