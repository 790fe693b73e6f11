package git

// git's plumbing-style readers: rev-parse, ls-files, rev-list, cat-file, describe.

import (
	"fmt"
	"io"
	"path"
	"sort"
	"strings"

	gogit "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
)

func cmdRevParse(s *session, args []string) error {
	shortHash, abbrev := false, false
	for _, a := range args {
		switch {
		case a == "--is-inside-work-tree":
			if err := s.open(); err != nil {
				return err
			}
			fmt.Fprintln(s.out, "true")
		case a == "--show-toplevel":
			if err := s.open(); err != nil {
				return err
			}
			fmt.Fprintln(s.out, s.root)
		case a == "--git-dir":
			if err := s.open(); err != nil {
				return err
			}
			if s.dir == s.root {
				fmt.Fprintln(s.out, ".git")
			} else {
				fmt.Fprintln(s.out, path.Join(s.root, ".git"))
			}
		case a == "--show-prefix":
			if err := s.open(); err != nil {
				return err
			}
			if s.dir == s.root {
				fmt.Fprintln(s.out)
			} else {
				fmt.Fprintln(s.out, strings.TrimPrefix(s.dir, s.root+"/")+"/")
			}
		case a == "--short" || strings.HasPrefix(a, "--short="):
			shortHash = true
		case a == "--abbrev-ref":
			abbrev = true
		case a == "--verify" || a == "-q" || a == "--quiet":
		case strings.HasPrefix(a, "-"):
			return unknownOpt(a)
		default:
			if err := s.open(); err != nil {
				return err
			}
			if abbrev {
				if a == "HEAD" {
					if b, ok := s.branchName(); ok {
						fmt.Fprintln(s.out, b)
					} else {
						fmt.Fprintln(s.out, "HEAD")
					}
					continue
				}
				fmt.Fprintln(s.out, a)
				continue
			}
			h, err := s.resolve(a)
			if err != nil {
				return err
			}
			if shortHash {
				fmt.Fprintln(s.out, short(h))
			} else {
				fmt.Fprintln(s.out, h.String())
			}
		}
	}
	return nil
}

func cmdLsFiles(s *session, args []string) error {
	if err := s.open(); err != nil {
		return err
	}
	stage, modified, others, deleted := false, false, false, false
	var paths []string
	for _, a := range args {
		switch a {
		case "-s", "--stage":
			stage = true
		case "-m", "--modified":
			modified = true
		case "-o", "--others":
			others = true
		case "-d", "--deleted":
			deleted = true
		case "-c", "--cached", "--exclude-standard", "-z":
		default:
			if strings.HasPrefix(a, "-") {
				return unknownOpt(a)
			}
			rel, err := s.rel(a)
			if err != nil {
				return err
			}
			paths = append(paths, rel)
		}
	}
	match := func(name string) bool {
		if len(paths) == 0 {
			return true
		}
		for _, p := range paths {
			if p == "." || name == p || strings.HasPrefix(name, p+"/") {
				return true
			}
		}
		return false
	}
	prefix := ""
	if s.dir != s.root {
		prefix = strings.TrimPrefix(s.dir, s.root+"/") + "/"
	}
	show := func(name string) string {
		if prefix != "" {
			return strings.TrimPrefix(name, prefix)
		}
		return name
	}
	if others || modified || deleted {
		st, err := s.status()
		if err != nil {
			return err
		}
		var names []string
		for n, fs := range st {
			if !match(n) || prefix != "" && !strings.HasPrefix(n, prefix) {
				continue
			}
			if others && fs.Worktree == gogit.Untracked || modified && (fs.Worktree == gogit.Modified || fs.Worktree == gogit.Deleted) || deleted && fs.Worktree == gogit.Deleted {
				names = append(names, n)
			}
		}
		sort.Strings(names)
		for _, n := range names {
			fmt.Fprintln(s.out, show(n))
		}
		return nil
	}
	idx, err := s.repo.Storer.Index()
	if err != nil {
		return err
	}
	for _, e := range idx.Entries {
		if !match(e.Name) || prefix != "" && !strings.HasPrefix(e.Name, prefix) {
			continue
		}
		if stage {
			fmt.Fprintf(s.out, "%s %s %d\t%s\n", modeOf(e.Mode), e.Hash, e.Stage, show(e.Name))
		} else {
			fmt.Fprintln(s.out, show(e.Name))
		}
	}
	return nil
}

func cmdRevList(s *session, args []string) error {
	if err := s.open(); err != nil {
		return err
	}
	count := false
	rev := "HEAD"
	for _, a := range args {
		if a == "--count" {
			count = true
		} else if !strings.HasPrefix(a, "-") {
			rev = a
		}
	}
	h, err := s.resolve(rev)
	if err != nil {
		return err
	}
	iter, err := s.logFrom(h, false)
	if err != nil {
		return err
	}
	n := 0
	iter.ForEach(func(c *object.Commit) error {
		n++
		if !count {
			fmt.Fprintln(s.out, c.Hash)
		}
		return nil
	})
	if count {
		fmt.Fprintln(s.out, n)
	}
	return nil
}

func cmdCatFile(s *session, args []string) error {
	if err := s.open(); err != nil {
		return err
	}
	if len(args) != 2 {
		return errorf(129, "usage: git cat-file (-t | -s | -e | -p | <type>) <object>")
	}
	h, err := s.resolveObject(args[1])
	if err != nil {
		return err
	}
	obj, err := s.repo.Storer.EncodedObject(plumbing.AnyObject, h)
	if err != nil {
		return fatalf("Not a valid object name %s", args[1])
	}
	switch args[0] {
	case "-t":
		fmt.Fprintln(s.out, obj.Type())
	case "-s":
		fmt.Fprintln(s.out, obj.Size())
	case "-e":
	default:
		if obj.Type() == plumbing.TreeObject && args[0] == "-p" {
			t, _ := s.repo.TreeObject(h)
			for _, e := range t.Entries {
				kind := "blob"
				if e.Mode == 0o40000 {
					kind = "tree"
				}
				fmt.Fprintf(s.out, "%s %s %s\t%s\n", modeOf(e.Mode), kind, e.Hash, e.Name)
			}
			return nil
		}
		r, _ := obj.Reader()
		io.Copy(s.out, r)
		r.Close()
	}
	return nil
}

// resolveObject accepts REV and REV:PATH.
func (s *session) resolveObject(spec string) (plumbing.Hash, error) {
	if rev, p, ok := strings.Cut(spec, ":"); ok {
		if rev == "" {
			rev = "HEAD"
		}
		c, err := s.commit(rev)
		if err != nil {
			return plumbing.ZeroHash, err
		}
		t, err := c.Tree()
		if err != nil {
			return plumbing.ZeroHash, err
		}
		if p == "" {
			return t.Hash, nil
		}
		e, err := t.FindEntry(strings.TrimPrefix(p, "./"))
		if err != nil {
			return plumbing.ZeroHash, fatalf("path '%s' does not exist in '%s'", p, rev)
		}
		return e.Hash, nil
	}
	if h, err := s.repo.ResolveRevision(plumbing.Revision(spec)); err == nil {
		return *h, nil
	}
	if len(spec) == 40 {
		return plumbing.NewHash(spec), nil
	}
	return plumbing.ZeroHash, fatalf("Not a valid object name %s", spec)
}

// cmdDescribe names HEAD (or a commit) after the nearest tag reachable
// from it: "v1" on the tag, "v1-N-gHASH" N commits later.
func cmdDescribe(s *session, args []string) error {
	if err := s.open(); err != nil {
		return err
	}
	tags, always := false, false
	rev := "HEAD"
	for _, a := range args {
		switch {
		case a == "--tags":
			tags = true
		case a == "--always":
			always = true
		case strings.HasPrefix(a, "-"):
		default:
			rev = a
		}
	}
	h, err := s.resolve(rev)
	if err != nil {
		return err
	}
	names := map[plumbing.Hash]string{}
	refs, _ := s.repo.Tags()
	refs.ForEach(func(r *plumbing.Reference) error {
		target := r.Hash()
		if t, err := s.repo.TagObject(target); err == nil {
			target = t.Target
		} else if !tags {
			return nil // lightweight tags count only with --tags
		}
		if old, ok := names[target]; !ok || r.Name().Short() < old {
			names[target] = r.Name().Short()
		}
		return nil
	})
	// breadth-first from the commit: the first tagged commit is nearest
	type item struct {
		h    plumbing.Hash
		dist int
	}
	seen := map[plumbing.Hash]bool{h: true}
	queue := []item{{h, 0}}
	for len(queue) > 0 {
		it := queue[0]
		queue = queue[1:]
		if n, ok := names[it.h]; ok {
			if it.dist == 0 {
				fmt.Fprintln(s.out, n)
			} else {
				fmt.Fprintf(s.out, "%s-%d-g%s\n", n, it.dist, short(h))
			}
			return nil
		}
		c, err := s.repo.CommitObject(it.h)
		if err != nil {
			continue
		}
		for _, p := range c.ParentHashes {
			if !seen[p] {
				seen[p] = true
				queue = append(queue, item{p, it.dist + 1})
			}
		}
	}
	if always {
		fmt.Fprintln(s.out, short(h))
		return nil
	}
	if len(names) == 0 {
		return fatalf("No names found, cannot describe anything.")
	}
	return fatalf("No tags can describe '%s'.", h)
}
