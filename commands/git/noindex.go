package git

import (
	"io/fs"
	"path"
	"sort"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
)

// hasNoIndex reports whether args ask for diff --no-index.
func hasNoIndex(args []string) bool {
	for _, a := range args {
		if a == "--" {
			return false
		}
		if a == "--no-index" {
			return true
		}
	}
	return false
}

// diffNoIndex compares two files or directories of the filesystem, in or
// out of a repository, as git diff --no-index does: status 1 when they
// differ.
func (s *session) diffNoIndex(args []string) error {
	var rest []string
	for _, a := range args {
		if a != "--no-index" {
			rest = append(rest, a)
		}
	}
	o, revs, paths, err := parseDiffOpts(rest)
	if err != nil {
		return err
	}
	ops := append(revs, paths...)
	if len(ops) != 2 || ops[0] == "--cached" || ops[1] == "--cached" {
		return errorf(129, "usage: git diff --no-index [<options>] <path> <path>")
	}
	a, b := ops[0], ops[1]
	if a == "/dev/null" || b == "/dev/null" {
		// one side absent: a creation or a deletion
		var ch *fileChange
		if a == "/dev/null" && b == "/dev/null" {
			return nil
		}
		other := a
		if a == "/dev/null" {
			other = b
		}
		if fi, err := s.inv.FS.Stat(s.abs(other)); err != nil || fi.IsDir() {
			return errorf(1, "error: Could not access '%s'", other)
		}
		sd, err := s.fileSide(other)
		if err != nil {
			return err
		}
		if a == "/dev/null" {
			ch = &fileChange{to: sd, noIndex: true}
		} else {
			ch = &fileChange{from: sd, noIndex: true}
		}
		s.printChanges([]*fileChange{ch}, o)
		return &exitError{1, ""}
	}
	ai, aerr := s.inv.FS.Stat(s.abs(a))
	bi, berr := s.inv.FS.Stat(s.abs(b))
	switch {
	case aerr != nil:
		return errorf(1, "error: Could not access '%s'", a)
	case berr != nil:
		return errorf(1, "error: Could not access '%s'", b)
	}
	// a file against a directory means the file of the same name in it
	if ai.IsDir() != bi.IsDir() {
		if ai.IsDir() {
			a = strings.TrimSuffix(a, "/") + "/" + path.Base(b)
		} else {
			b = strings.TrimSuffix(b, "/") + "/" + path.Base(a)
		}
		for _, p := range []string{a, b} {
			if _, err := s.inv.FS.Lstat(s.abs(p)); err != nil {
				return errorf(1, "error: Could not access '%s'", p)
			}
		}
	}
	var changes []*fileChange
	if ai.IsDir() && bi.IsDir() {
		rels := map[string]bool{}
		for _, root := range []string{a, b} {
			if err := s.listFiles(s.abs(root), "", rels); err != nil {
				return err
			}
		}
		sorted := make([]string, 0, len(rels))
		for r := range rels {
			sorted = append(sorted, r)
		}
		sort.Strings(sorted)
		for _, r := range sorted {
			ch, err := s.noIndexPair(joinName(a, r), joinName(b, r))
			if err != nil {
				return err
			}
			if ch != nil {
				changes = append(changes, ch)
			}
		}
	} else {
		ch, err := s.noIndexPair(a, b)
		if err != nil {
			return err
		}
		if ch != nil {
			changes = append(changes, ch)
		}
	}
	s.printChanges(changes, o)
	if len(changes) > 0 {
		return &exitError{1, ""}
	}
	return nil
}

func joinName(dir, rel string) string { return strings.TrimSuffix(dir, "/") + "/" + rel }

// abs resolves a user path against the cwd.
func (s *session) abs(p string) string {
	if strings.HasPrefix(p, "/") {
		return path.Clean(p)
	}
	return path.Join(s.dir, p)
}

// listFiles adds the files below dir (relative to it) to rels.
func (s *session) listFiles(dir, prefix string, rels map[string]bool) error {
	if err := s.ctx.Err(); err != nil {
		return err
	}
	ents, err := s.inv.FS.ReadDir(path.Join(dir, prefix))
	if err != nil {
		return nil
	}
	for _, de := range ents {
		rel := path.Join(prefix, de.Name())
		if de.IsDir() {
			if err := s.listFiles(dir, rel, rels); err != nil {
				return err
			}
			continue
		}
		rels[rel] = true
	}
	return nil
}

// noIndexPair compares the files named a and b (either may be missing).
func (s *session) noIndexPair(a, b string) (*fileChange, error) {
	x, err := s.fileSide(a)
	if err != nil {
		return nil, err
	}
	y, err := s.fileSide(b)
	if err != nil {
		return nil, err
	}
	if x == nil && y == nil || x != nil && y != nil && x.hash == y.hash && x.mode == y.mode {
		return nil, nil
	}
	return &fileChange{from: x, to: y, noIndex: true}, nil
}

// fileSide reads the file p (nil when it does not exist), named as git
// names it: the path as given, without a leading '/'.
func (s *session) fileSide(p string) (*side, error) {
	abs := s.abs(p)
	fi, err := s.inv.FS.Lstat(abs)
	if err != nil || fi.IsDir() {
		return nil, nil
	}
	mode := filemode.Regular
	var data []byte
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		mode = filemode.Symlink
		t, err := s.inv.FS.Readlink(abs)
		if err != nil {
			return nil, err
		}
		data = []byte(t)
	default:
		if fi.Mode()&0o111 != 0 {
			mode = filemode.Executable
		}
		// the content is held for the diff: charge it first
		if err := s.res.Grow(fi.Size()); err != nil {
			return nil, err
		}
		if data, err = s.inv.FS.ReadFile(abs); err != nil {
			return nil, errorf(1, "error: Could not access '%s'", p)
		}
	}
	name := strings.TrimLeft(p, "/")
	return &side{name: name, mode: mode, hash: plumbing.ComputeHash(plumbing.BlobObject, data),
		load: func() ([]byte, error) { return data, nil }}, nil
}
