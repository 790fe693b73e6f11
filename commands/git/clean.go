package git

import (
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strings"

	"github.com/go-git/go-git/v5/plumbing/format/gitignore"
)

// cleaner is one git clean run.
type cleaner struct {
	s                   *session
	dryRun, dirs, quiet bool
	force               int
	mode                byte // 0: untracked not ignored; 'x': all untracked; 'X': ignored only
	std, extra          gitignore.Matcher
	tracked, trackedDir map[string]bool
	specs               []string // user pathspecs, worktree-relative
}

func cmdClean(s *session, args []string) error {
	c := &cleaner{s: s}
	var excludes, paths []string
	dashdash := false
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case dashdash:
			paths = append(paths, a)
		case a == "--":
			dashdash = true
		case a == "-n" || a == "--dry-run":
			c.dryRun = true
		case a == "-f" || a == "--force":
			c.force++
		case a == "-d":
			c.dirs = true
		case a == "-q" || a == "--quiet":
			c.quiet = true
		case a == "-x" || a == "-X":
			if c.mode != 0 && c.mode != a[1] {
				return fatalf("-x and -X cannot be used together")
			}
			c.mode = a[1]
		case a == "-e" || a == "--exclude":
			if i+1 >= len(args) {
				return errorf(129, "error: switch `e' requires a value")
			}
			i++
			excludes = append(excludes, args[i])
		case strings.HasPrefix(a, "--exclude="):
			excludes = append(excludes, strings.TrimPrefix(a, "--exclude="))
		case strings.HasPrefix(a, "-"):
			// -i/--interactive needs a terminal
			return unknownOpt(a)
		default:
			paths = append(paths, a)
		}
	}
	if err := s.open(); err != nil {
		return err
	}
	if c.force == 0 && !c.dryRun {
		v, set := s.configValue("clean.requireforce")
		switch {
		case !set:
			return fatalf("clean.requireForce defaults to true and neither -i, -n, nor -f given; refusing to clean")
		case !isFalse(v):
			return fatalf("clean.requireForce set to true and neither -i, -n, nor -f given; refusing to clean")
		}
	}
	for _, p := range paths {
		r, err := s.rel(p)
		if err != nil {
			return err
		}
		c.specs = append(c.specs, strings.TrimSuffix(r, "/"))
	}
	idx, err := s.repo.Storer.Index()
	if err != nil {
		return err
	}
	c.tracked, c.trackedDir = map[string]bool{}, map[string]bool{}
	for _, e := range idx.Entries {
		c.tracked[e.Name] = true
		for d := path.Dir(e.Name); d != "."; d = path.Dir(d) {
			c.trackedDir[d] = true
		}
	}
	patterns, _ := gitignore.ReadPatterns(newBilly(s.inv.FS, s.root), nil)
	c.std = gitignore.NewMatcher(patterns)
	var ex []gitignore.Pattern
	for _, e := range excludes {
		ex = append(ex, gitignore.ParsePattern(e, nil))
	}
	c.extra = gitignore.NewMatcher(ex)
	start, err := s.rel(".")
	if err != nil {
		return err
	}
	if start == "." || len(c.specs) > 0 {
		start = ""
	}
	var found []cleanEntry
	if err := c.walk(start, &found); err != nil {
		return err
	}
	sort.Slice(found, func(i, j int) bool { return found[i].key() < found[j].key() })
	verb := "Removing "
	if c.dryRun {
		verb = "Would remove "
	}
	for _, e := range found {
		lines := []string{e.name}
		if e.dir {
			gone, inner, err := c.removeDir(e.name)
			if err != nil {
				return err
			}
			lines = inner
			if gone {
				lines = []string{e.name + "/"}
			}
		} else if !c.dryRun {
			if err := s.inv.FS.Remove(path.Join(s.root, e.name)); err != nil {
				fmt.Fprintf(s.inv.Stderr, "warning: failed to remove %s: %v\n", s.display(e.name), err)
				continue
			}
		}
		if !c.quiet {
			for _, l := range lines {
				fmt.Fprintf(s.out, "%s%s\n", verb, c.show(l))
			}
		}
	}
	return nil
}

// cleanEntry is a file or an untracked directory git clean acts on.
type cleanEntry struct {
	name string
	dir  bool
}

// key sorts entries as git does: by path, a directory with its '/'.
func (e cleanEntry) key() string {
	if e.dir {
		return e.name + "/"
	}
	return e.name
}

// show renders a worktree path (a directory keeps its '/') from the cwd.
func (c *cleaner) show(p string) string {
	dir := strings.HasSuffix(p, "/")
	out := c.s.display(strings.TrimSuffix(p, "/"))
	if dir {
		out += "/"
	}
	return out
}

func isFalse(v string) bool {
	switch strings.ToLower(v) {
	case "false", "no", "off", "0":
		return true
	}
	return false
}

func split(p string) []string { return strings.Split(p, "/") }

// ignored tells whether p is ignored for this run: -e patterns always,
// .gitignore and info/exclude unless -x.
func (c *cleaner) ignored(p string, dir bool) bool {
	if c.extra.Match(split(p), dir) {
		return true
	}
	return c.mode != 'x' && c.std.Match(split(p), dir)
}

// specMatch reports whether a user pathspec covers p; without pathspecs
// everything is covered.
func (c *cleaner) specMatch(p string) bool {
	if len(c.specs) == 0 {
		return true
	}
	for _, r := range c.specs {
		if r == "." || p == r || strings.HasPrefix(p, r+"/") || pathspecGlob(r, p) {
			return true
		}
	}
	return false
}

// specInside reports whether a user pathspec names something below dir.
func (c *cleaner) specInside(dir string) bool {
	for _, r := range c.specs {
		if strings.HasPrefix(r, dir+"/") {
			return true
		}
	}
	return false
}

// nestedRepo reports whether dir holds another repository, which git
// clean leaves alone unless -f is given twice.
func (c *cleaner) nestedRepo(dir string) bool {
	_, err := c.s.inv.FS.Lstat(path.Join(c.s.root, dir, ".git"))
	return err == nil && c.force < 2
}

// walk collects the entries below dir (worktree-relative, "" = root).
func (c *cleaner) walk(dir string, found *[]cleanEntry) error {
	if err := c.s.ctx.Err(); err != nil {
		return err
	}
	ents, err := c.s.inv.FS.ReadDir(path.Join(c.s.root, dir))
	if err != nil {
		return nil
	}
	for _, de := range ents {
		p := path.Join(dir, de.Name())
		if dir == "" && de.Name() == ".git" {
			continue
		}
		if !de.IsDir() {
			if c.tracked[p] || !c.specMatch(p) {
				continue
			}
			ign := c.ignored(p, false)
			if c.mode == 'X' && ign || c.mode != 'X' && !ign {
				if err := c.s.res.Grow(int64(len(p))); err != nil {
					return err
				}
				*found = append(*found, cleanEntry{name: p})
			}
			continue
		}
		if c.trackedDir[p] {
			if err := c.walk(p, found); err != nil {
				return err
			}
			continue
		}
		if c.nestedRepo(p) {
			continue
		}
		if !c.specMatch(p) {
			if c.specInside(p) {
				if err := c.walk(p, found); err != nil {
					return err
				}
			}
			continue
		}
		// an untracked directory: acted on whole (with -d or a pathspec)
		take := false
		switch {
		case c.mode == 'X':
			if c.ignored(p, true) || c.allIgnored(p) {
				take = true
			} else if err := c.walk(p, found); err != nil {
				return err
			}
		case c.ignored(p, true):
		default:
			take = true
		}
		if take && (c.dirs || len(c.specs) > 0) {
			if err := c.s.res.Grow(int64(len(p))); err != nil {
				return err
			}
			*found = append(*found, cleanEntry{name: p, dir: true})
		}
	}
	return nil
}

// allIgnored reports whether the untracked directory dir has files and
// all of them are ignored (git then names the directory, not its files).
func (c *cleaner) allIgnored(dir string) bool {
	ents, err := c.s.inv.FS.ReadDir(path.Join(c.s.root, dir))
	if err != nil || len(ents) == 0 {
		return false
	}
	for _, de := range ents {
		p := path.Join(dir, de.Name())
		if c.ignored(p, de.IsDir()) {
			continue
		}
		if !de.IsDir() || !c.allIgnored(p) {
			return false
		}
	}
	return true
}

// removeDir removes what the run may remove below the untracked directory
// dir (a dry run only reports it): whether dir itself went, and otherwise
// the paths that went (a directory that went whole as "dir/").
func (c *cleaner) removeDir(dir string) (bool, []string, error) {
	if err := c.s.ctx.Err(); err != nil {
		return false, nil, err
	}
	abs := path.Join(c.s.root, dir)
	ents, err := c.s.inv.FS.ReadDir(abs)
	if err != nil {
		return false, nil, nil
	}
	gone := true
	var lines []string
	for _, de := range ents {
		p := path.Join(dir, de.Name())
		isDir := de.IsDir() && de.Type()&fs.ModeSymlink == 0
		// -X takes directories that are ignored whole; otherwise what is
		// ignored stays
		if c.mode != 'X' && c.ignored(p, isDir) {
			gone = false
			continue
		}
		if isDir {
			if c.nestedRepo(p) {
				gone = false
				continue
			}
			subGone, sub, err := c.removeDir(p)
			if err != nil {
				return false, nil, err
			}
			if subGone {
				lines = append(lines, p+"/")
			} else {
				gone = false
				lines = append(lines, sub...)
			}
			continue
		}
		if !c.dryRun {
			if err := c.s.inv.FS.Remove(path.Join(c.s.root, p)); err != nil {
				fmt.Fprintf(c.s.inv.Stderr, "warning: failed to remove %s: %v\n", c.s.display(p), err)
				gone = false
				continue
			}
		}
		lines = append(lines, p)
	}
	if gone && !c.dryRun {
		if err := c.s.inv.FS.Remove(abs); err != nil {
			return false, lines, nil
		}
	}
	return gone, lines, nil
}
