package git

// git add, rm and mv: the index and the work tree.

import (
	"fmt"
	"path"
	"strings"

	gogit "github.com/go-git/go-git/v5"

	"github.com/warren-sandbox/warren/commands"
)

func cmdAdd(s *session, args []string) error {
	if err := s.open(); err != nil {
		return err
	}
	all, verbose, force := false, false, false
	var paths []string
	for _, a := range args {
		switch a {
		case "-A", "--all", "-u", "--update":
			all = true
		case "-v", "--verbose":
			verbose = true
		case "-f", "--force":
			force = true
		case "--":
		default:
			if strings.HasPrefix(a, "-") {
				return unknownOpt(a)
			}
			paths = append(paths, a)
		}
	}
	_ = force
	if len(paths) == 0 && !all {
		fmt.Fprintln(s.inv.Stderr, "Nothing specified, nothing added.\nhint: Maybe you wanted to say 'git add .'?\nhint: Turn this message off by running\nhint: \"git config advice.addEmptyPathspec false\"")
		return nil
	}
	if all && len(paths) == 0 {
		paths = []string{s.root}
	}
	for _, p := range paths {
		rel, err := s.rel(p)
		if err != nil {
			return err
		}
		abs := path.Join(s.root, rel)
		if strings.ContainsAny(p, "*?[") {
			if err := s.wt.AddGlob(rel); err != nil {
				return fatalf("pathspec '%s' did not match any files", p)
			}
			continue
		}
		if _, err := s.inv.FS.Lstat(abs); err != nil {
			// a deleted tracked file is staged as a removal
			if s.tracked(rel) {
				if _, err := s.wt.Remove(rel); err != nil {
					return fatalf("%v", err)
				}
				continue
			}
			return fatalf("pathspec '%s' did not match any files", p)
		}
		if rel == "." {
			if err := s.wt.AddWithOptions(&gogit.AddOptions{All: true}); err != nil {
				return fatalf("%v", err)
			}
		} else if _, err := s.wt.Add(rel); err != nil {
			return fatalf("%v", err)
		}
		if verbose {
			fmt.Fprintf(s.out, "add '%s'\n", rel)
		}
		s.resolved(rel)
	}
	return nil
}

// tracked reports whether rel (a file or a directory) has index entries.
func (s *session) tracked(rel string) bool {
	idx, err := s.repo.Storer.Index()
	if err != nil {
		return false
	}
	for _, e := range idx.Entries {
		if e.Name == rel || strings.HasPrefix(e.Name, rel+"/") || rel == "." {
			return true
		}
	}
	return false
}

func cmdRm(s *session, args []string) error {
	if err := s.open(); err != nil {
		return err
	}
	cached, recursive, quiet, force := false, false, false, false
	var paths []string
	for _, a := range args {
		switch a {
		case "--cached":
			cached = true
		case "-r":
			recursive = true
		case "-q", "--quiet":
			quiet = true
		case "-f", "--force":
			force = true
		case "-rf", "-fr":
			recursive, force = true, true
		case "--":
		default:
			if strings.HasPrefix(a, "-") {
				return unknownOpt(a)
			}
			paths = append(paths, a)
		}
	}
	_ = force
	if len(paths) == 0 {
		return errorf(129, "usage: git rm [<options>] [--] <file>...")
	}
	idx, err := s.repo.Storer.Index()
	if err != nil {
		return err
	}
	var targets []string
	for _, p := range paths {
		rel, err := s.rel(p)
		if err != nil {
			return err
		}
		found := false
		for _, e := range idx.Entries {
			if e.Name == rel {
				targets, found = append(targets, e.Name), true
			} else if strings.HasPrefix(e.Name, rel+"/") || rel == "." {
				if !recursive {
					return fatalf("not removing '%s' recursively without -r", p)
				}
				targets, found = append(targets, e.Name), true
			}
		}
		if !found {
			return fatalf("pathspec '%s' did not match any files", p)
		}
	}
	for _, t := range targets {
		if _, err := idx.Remove(t); err != nil {
			return fatalf("%v", err)
		}
		if !cached {
			s.inv.FS.Remove(path.Join(s.root, t))
			// git removes directories left empty
			for d := path.Dir(path.Join(s.root, t)); d != s.root && d != "/"; d = path.Dir(d) {
				if s.inv.FS.Remove(d) != nil {
					break
				}
			}
		}
		if !quiet {
			fmt.Fprintf(s.out, "rm '%s'\n", t)
		}
		s.resolved(t)
	}
	return s.repo.Storer.SetIndex(idx)
}

func cmdMv(s *session, args []string) error {
	if err := s.open(); err != nil {
		return err
	}
	var paths []string
	for _, a := range args {
		if a == "-f" || a == "-v" || a == "--" {
			continue
		}
		paths = append(paths, a)
	}
	if len(paths) != 2 {
		return errorf(129, "usage: git mv [<options>] <source>... <destination>")
	}
	from, err := s.rel(paths[0])
	if err != nil {
		return err
	}
	to, err := s.rel(paths[1])
	if err != nil {
		return err
	}
	if fi, err := s.inv.FS.Stat(path.Join(s.root, to)); err == nil && fi.IsDir() {
		to = path.Join(to, path.Base(from))
	}
	if !s.tracked(from) {
		return fatalf("not under version control, source=%s, destination=%s", from, to)
	}
	if fi, err := s.inv.FS.Stat(path.Join(s.root, from)); err == nil && fi.IsDir() {
		// move the directory, then re-stage each tracked file under it
		idx, _ := s.repo.Storer.Index()
		var names []string
		for _, e := range idx.Entries {
			if strings.HasPrefix(e.Name, from+"/") {
				names = append(names, e.Name)
			}
		}
		if err := s.inv.FS.Rename(path.Join(s.root, from), path.Join(s.root, to)); err != nil {
			return fatalf("renaming '%s' failed: %s", from, commands.Strerror(err))
		}
		for _, n := range names {
			idx.Remove(n)
		}
		s.repo.Storer.SetIndex(idx)
		for _, n := range names {
			if _, err := s.wt.Add(to + strings.TrimPrefix(n, from)); err != nil {
				return fatalf("%v", err)
			}
		}
		return nil
	}
	// git renames into an existing directory only (go-git would create it)
	if fi, err := s.inv.FS.Stat(path.Join(s.root, path.Dir(to))); err != nil || !fi.IsDir() {
		return fatalf("renaming '%s' failed: No such file or directory", from)
	}
	if _, err := s.wt.Move(from, to); err != nil {
		return fatalf("bad source, source=%s, destination=%s", from, to)
	}
	return nil
}

// ---- commit ----
