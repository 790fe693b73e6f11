package git

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"sort"
	"strings"

	gogit "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/storer"
	"github.com/warren-sandbox/warren/vfs"
)

func (s *session) branches() ([]string, error) {
	iter, err := s.repo.Branches()
	if err != nil {
		return nil, err
	}
	var names []string
	iter.ForEach(func(r *plumbing.Reference) error {
		names = append(names, r.Name().Short())
		return nil
	})
	sort.Strings(names)
	return names, nil
}

func cmdBranch(s *session, args []string) error {
	if err := s.open(); err != nil {
		return err
	}
	var del, force, move, verbose, all, showCurrent bool
	var operands []string
	for _, a := range args {
		switch a {
		case "-d", "--delete":
			del = true
		case "-D":
			del, force = true, true
		case "-f", "--force":
			force = true
		case "-m", "--move":
			move = true
		case "-M":
			move, force = true, true
		case "-v", "-vv", "--verbose":
			verbose = true
		case "-a", "--all", "-r", "--remotes":
			all = true
		case "--show-current":
			showCurrent = true
		case "--list", "--no-color":
		case "-q", "--quiet":
			s.quiet = true
		default:
			if strings.HasPrefix(a, "-") {
				return unknownOpt(a)
			}
			operands = append(operands, a)
		}
	}
	cur, onBranch := s.branchName()
	switch {
	case showCurrent:
		if onBranch {
			fmt.Fprintln(s.out, cur)
		}
		return nil
	case del:
		if len(operands) == 0 {
			return fatalf("branch name required")
		}
		for _, b := range operands {
			ref, err := s.repo.Reference(plumbing.NewBranchReferenceName(b), false)
			if err != nil {
				return errorf(1, "error: branch '%s' not found.", b)
			}
			if b == cur && onBranch {
				return errorf(1, "error: Cannot delete branch '%s' checked out at '%s'", b, s.root)
			}
			if !force {
				if h, err := s.head(); err == nil && !s.isAncestor(ref.Hash(), h.Hash()) {
					return errorf(1, "error: The branch '%s' is not fully merged.\nIf you are sure you want to delete it, run 'git branch -D %s'.", b, b)
				}
			}
			if err := s.repo.Storer.RemoveReference(ref.Name()); err != nil {
				return fatalf("%v", err)
			}
			cfg, _ := s.repo.Config()
			if cfg != nil {
				if _, ok := cfg.Branches[b]; ok {
					delete(cfg.Branches, b)
					s.repo.SetConfig(cfg)
				}
			}
			if !s.quiet {
				fmt.Fprintf(s.out, "Deleted branch %s (was %s).\n", b, short(ref.Hash()))
			}
		}
		return nil
	case move:
		from, to := cur, ""
		switch len(operands) {
		case 1:
			to = operands[0]
		case 2:
			from, to = operands[0], operands[1]
		default:
			return fatalf("branch name required")
		}
		ref, err := s.repo.Reference(plumbing.NewBranchReferenceName(from), false)
		if err != nil {
			if from == cur {
				// renaming the unborn branch only moves HEAD
				return s.repo.Storer.SetReference(plumbing.NewSymbolicReference(plumbing.HEAD, plumbing.NewBranchReferenceName(to)))
			}
			return fatalf("No branch named '%s'.", from)
		}
		if _, err := s.repo.Reference(plumbing.NewBranchReferenceName(to), false); err == nil && !force {
			return fatalf("a branch named '%s' already exists", to)
		}
		s.repo.Storer.SetReference(plumbing.NewHashReference(plumbing.NewBranchReferenceName(to), ref.Hash()))
		s.repo.Storer.RemoveReference(ref.Name())
		if from == cur && onBranch {
			s.repo.Storer.SetReference(plumbing.NewSymbolicReference(plumbing.HEAD, plumbing.NewBranchReferenceName(to)))
		}
		return nil
	case len(operands) > 0:
		name := operands[0]
		start := "HEAD"
		if len(operands) > 1 {
			start = operands[1]
		}
		if !validBranchName(name) {
			return fatalf("'%s' is not a valid branch name", name)
		}
		if _, err := s.repo.Reference(plumbing.NewBranchReferenceName(name), false); err == nil && !force {
			return fatalf("a branch named '%s' already exists", name)
		}
		h, err := s.repo.ResolveRevision(plumbing.Revision(start))
		if err != nil {
			if start == "HEAD" {
				return fatalf("not a valid object name: '%s'", cur)
			}
			return fatalf("not a valid object name: '%s'", start)
		}
		return s.repo.Storer.SetReference(plumbing.NewHashReference(plumbing.NewBranchReferenceName(name), *h))
	}
	names, err := s.branches()
	if err != nil {
		return err
	}
	if !onBranch {
		if h, err := s.head(); err == nil {
			fmt.Fprintf(s.out, "* (HEAD detached at %s)\n", short(h.Hash()))
		}
	}
	line := func(prefix, name string, h plumbing.Hash) {
		if verbose {
			c, err := s.repo.CommitObject(h)
			subject := ""
			if err == nil {
				subject = firstLine(c.Message)
			}
			fmt.Fprintf(s.out, "%s%-*s %s %s\n", prefix, maxLen(names), name, short(h), subject)
			return
		}
		fmt.Fprintf(s.out, "%s%s\n", prefix, name)
	}
	for _, n := range names {
		ref, _ := s.repo.Reference(plumbing.NewBranchReferenceName(n), true)
		prefix := "  "
		if onBranch && n == cur {
			prefix = "* "
		}
		var h plumbing.Hash
		if ref != nil {
			h = ref.Hash()
		}
		line(prefix, n, h)
	}
	if all {
		refs, _ := s.repo.References()
		var remotes []string
		refs.ForEach(func(r *plumbing.Reference) error {
			if r.Name().IsRemote() {
				if r.Type() == plumbing.SymbolicReference {
					remotes = append(remotes, "remotes/"+r.Name().Short()+" -> "+r.Target().Short())
				} else {
					remotes = append(remotes, "remotes/"+r.Name().Short())
				}
			}
			return nil
		})
		sort.Strings(remotes)
		for _, r := range remotes {
			fmt.Fprintf(s.out, "  %s\n", r)
		}
	}
	return nil
}

func maxLen(names []string) int {
	m := 0
	for _, n := range names {
		m = max(m, len(n))
	}
	return m
}

func validBranchName(n string) bool {
	if n == "" || n == "HEAD" || strings.HasPrefix(n, "-") || strings.HasSuffix(n, "/") || strings.HasSuffix(n, ".lock") ||
		strings.Contains(n, "..") || strings.ContainsAny(n, " ~^:?*[\\") || strings.Contains(n, "@{") {
		return false
	}
	return true
}

// isAncestor reports whether a is reachable from b.
func (s *session) isAncestor(a, b plumbing.Hash) bool {
	if a == b {
		return true
	}
	iter, err := s.repo.Log(&gogit.LogOptions{From: b})
	if err != nil {
		return false
	}
	found := false
	iter.ForEach(func(c *object.Commit) error {
		if c.Hash == a {
			found = true
			return storer.ErrStop
		}
		return nil
	})
	return found
}

// ---- checkout / switch ----

func cmdCheckout(s *session, args []string) error {
	if err := s.open(); err != nil {
		return err
	}
	create, force := "", false
	detach := false
	var operands, paths []string
	dashdash := false
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case dashdash:
			paths = append(paths, a)
		case a == "--":
			dashdash = true
		case (a == "-b" || a == "-B") && i+1 < len(args):
			i++
			create = args[i]
			force = force || a == "-B"
		case a == "-f" || a == "--force":
			force = true
		case a == "--detach":
			detach = true
		case a == "-q" || a == "--quiet":
			s.quiet = true
		case strings.HasPrefix(a, "-"):
			return unknownOpt(a)
		default:
			operands = append(operands, a)
		}
	}
	if create != "" {
		start := "HEAD"
		if len(operands) > 0 {
			start = operands[0]
		}
		return s.switchTo(create, start, true, force)
	}
	if len(paths) > 0 || (len(operands) > 0 && !s.isRev(operands[0])) {
		source := ""
		if len(paths) > 0 && len(operands) > 0 {
			source = operands[0]
		} else {
			paths = append(operands, paths...)
		}
		return s.restorePaths(paths, source, false, true, "checkout")
	}
	if len(operands) == 0 {
		return nil
	}
	target := operands[0]
	if _, err := s.repo.Reference(plumbing.NewBranchReferenceName(target), false); err == nil && !detach {
		return s.switchTo(target, "", false, force)
	}
	// a remote branch of the same name: create a tracking branch, as git does
	if ref, err := s.repo.Reference(plumbing.NewRemoteReferenceName("origin", target), true); err == nil && !detach {
		if err := s.switchTo(target, ref.Hash().String(), true, force); err != nil {
			return err
		}
		s.setUpstream(target, "origin")
		s.info("branch '%s' set up to track 'origin/%s'.\n", target, target)
		return nil
	}
	return s.detachAt(target, force)
}

func (s *session) isRev(r string) bool {
	_, err := s.repo.ResolveRevision(plumbing.Revision(r))
	return err == nil
}

func cmdSwitch(s *session, args []string) error {
	if err := s.open(); err != nil {
		return err
	}
	create, force, detach := "", false, false
	var operands []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case (a == "-c" || a == "-C" || a == "--create") && i+1 < len(args):
			i++
			create = args[i]
			force = force || a == "-C"
		case a == "-f" || a == "--force" || a == "--discard-changes":
			force = true
		case a == "-d" || a == "--detach":
			detach = true
		case a == "-q" || a == "--quiet":
			s.quiet = true
		case strings.HasPrefix(a, "-"):
			return unknownOpt(a)
		default:
			operands = append(operands, a)
		}
	}
	if create != "" {
		start := "HEAD"
		if len(operands) > 0 {
			start = operands[0]
		}
		return s.switchTo(create, start, true, force)
	}
	if len(operands) == 0 {
		return fatalf("missing branch or commit argument")
	}
	if detach {
		return s.detachAt(operands[0], force)
	}
	if _, err := s.repo.Reference(plumbing.NewBranchReferenceName(operands[0]), false); err != nil {
		if ref, rerr := s.repo.Reference(plumbing.NewRemoteReferenceName("origin", operands[0]), true); rerr == nil {
			if err := s.switchTo(operands[0], ref.Hash().String(), true, force); err != nil {
				return err
			}
			s.setUpstream(operands[0], "origin")
			s.info("branch '%s' set up to track 'origin/%s'.\n", operands[0], operands[0])
			return nil
		}
		if s.isRev(operands[0]) {
			return fatalf("a branch is expected, got commit '%s'\nhint: If you want to detach HEAD at the commit, try again with the --detach option.", operands[0])
		}
		return fatalf("invalid reference: %s", operands[0])
	}
	return s.switchTo(operands[0], "", false, force)
}

func (s *session) setUpstream(branch, remote string) {
	cfg, err := s.repo.Config()
	if err != nil {
		return
	}
	cfg.Branches[branch] = &config.Branch{Name: branch, Remote: remote, Merge: plumbing.NewBranchReferenceName(branch)}
	s.repo.SetConfig(cfg)
}

// conflicts lists dirty paths that differ between the HEAD tree and the
// target tree, which a branch switch would overwrite.
func (s *session) conflicts(target plumbing.Hash) ([]string, error) {
	st, err := s.status()
	if err != nil {
		return nil, err
	}
	var headTree *object.Tree
	if h, err := s.head(); err == nil {
		if c, err := s.repo.CommitObject(h.Hash()); err == nil {
			headTree, _ = c.Tree()
		}
	}
	c, err := s.repo.CommitObject(target)
	if err != nil {
		return nil, err
	}
	tt, err := c.Tree()
	if err != nil {
		return nil, err
	}
	changes, err := s.treeChanges(headTree, tt)
	if err != nil {
		return nil, err
	}
	differ := map[string]bool{}
	for _, ch := range changes {
		differ[ch.name()] = true
	}
	var out []string
	for name, fs := range st {
		if !differ[name] {
			continue
		}
		if fs.Worktree == gogit.Untracked {
			out = append(out, name) // would be overwritten by the target's file
			continue
		}
		if fs.Staging != gogit.Unmodified || fs.Worktree != gogit.Unmodified {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out, nil
}

func (s *session) checkoutCommit(h plumbing.Hash, branch plumbing.ReferenceName, force bool) error {
	if _, un, ok := s.mergeState(); ok && len(un) > 0 && !force {
		var b strings.Builder
		for _, u := range un {
			b.WriteString("\n" + u + ": needs merge")
		}
		return errorf(1, "error: you need to resolve your current index first%s", b.String())
	}
	if !force {
		paths, err := s.conflicts(h)
		if err != nil {
			return fatalf("%v", err)
		}
		if len(paths) > 0 {
			return errorf(1, "error: Your local changes to the following files would be overwritten by checkout:\n\t%s\nPlease commit your changes or stash them before you switch branches.\nAborting", strings.Join(paths, "\n\t"))
		}
	}
	// local changes to files the switch does not touch stay as they are,
	// as git does; untracked files are never touched
	from, err := s.headSnapshot()
	if err != nil {
		return err
	}
	c, err := s.repo.CommitObject(h)
	if err != nil {
		return err
	}
	t, err := c.Tree()
	if err != nil {
		return err
	}
	to, err := s.treeSnapshot(t)
	if err != nil {
		return err
	}
	if force {
		idx, err := s.indexSnapshot()
		if err != nil {
			return err
		}
		for n, sd := range idx {
			if from[n] == nil {
				from[n] = sd
			}
		}
		if err := s.applySnapshot(from, to, true); err != nil {
			return err
		}
	} else if err := s.applySnapshot(from, to, false); err != nil {
		return err
	}
	if branch != "" {
		return s.repo.Storer.SetReference(plumbing.NewSymbolicReference(plumbing.HEAD, branch))
	}
	return s.repo.Storer.SetReference(plumbing.NewHashReference(plumbing.HEAD, h))
}

// headSnapshot is the HEAD commit's tree (empty when unborn).
func (s *session) headSnapshot() (snapshot, error) {
	head, err := s.head()
	if err != nil {
		return snapshot{}, nil
	}
	c, err := s.repo.CommitObject(head.Hash())
	if err != nil {
		return nil, err
	}
	t, err := c.Tree()
	if err != nil {
		return nil, err
	}
	return s.treeSnapshot(t)
}

// applySnapshot moves the worktree and index from one snapshot to
// another: files that differ are rewritten or removed, everything else
// (local edits elsewhere, untracked files) is left alone. With all, every
// path of from is reset even when unchanged (reset --hard).
func (s *session) applySnapshot(from, to snapshot, all bool) error {
	idx, err := s.repo.Storer.Index()
	if err != nil {
		return err
	}
	var changes []*fileChange
	if all {
		names := map[string]bool{}
		for n := range from {
			names[n] = true
		}
		for n := range to {
			names[n] = true
		}
		for n := range names {
			changes = append(changes, &fileChange{from: from[n], to: to[n]})
		}
	} else {
		changes = compare(from, to, nil)
	}
	for _, ch := range changes {
		if s.ctx.Err() != nil {
			return s.ctx.Err()
		}
		if ch.to == nil {
			name := ch.from.name
			idx.Remove(name)
			abs, err := s.worktreePath(name)
			if err != nil {
				return err
			}
			s.inv.FS.Remove(abs)
			for d := path.Dir(abs); d != s.root && d != "/"; d = path.Dir(d) {
				if s.inv.FS.Remove(d) != nil {
					break
				}
			}
			continue
		}
		name := ch.to.name
		if err := s.writeWorktree(name, ch.to); err != nil {
			return err
		}
		e, err := idx.Entry(name)
		if err != nil {
			e = idx.Add(name)
		}
		e.Hash, e.Mode = ch.to.hash, ch.to.mode
		if fi, err := s.inv.FS.Lstat(path.Join(s.root, name)); err == nil {
			e.ModifiedAt, e.Size = fi.ModTime(), uint32(fi.Size())
		}
	}
	sort.Slice(idx.Entries, func(i, j int) bool { return idx.Entries[i].Name < idx.Entries[j].Name })
	return s.repo.Storer.SetIndex(idx)
}

// hardReset points the current branch (or detached HEAD) at h and makes
// index and worktree match it, leaving untracked files alone.
func (s *session) hardReset(h plumbing.Hash) error {
	from, err := s.headSnapshot()
	if err != nil {
		return err
	}
	idx, err := s.indexSnapshot()
	if err != nil {
		return err
	}
	for n, sd := range idx {
		if from[n] == nil {
			from[n] = sd
		}
	}
	c, err := s.repo.CommitObject(h)
	if err != nil {
		return err
	}
	t, err := c.Tree()
	if err != nil {
		return err
	}
	to, err := s.treeSnapshot(t)
	if err != nil {
		return err
	}
	if err := s.applySnapshot(from, to, true); err != nil {
		return err
	}
	return s.moveHead(h)
}

// moveHead sets the current branch (or the detached HEAD) to h.
func (s *session) moveHead(h plumbing.Hash) error {
	if b, ok := s.branchName(); ok {
		return s.repo.Storer.SetReference(plumbing.NewHashReference(plumbing.NewBranchReferenceName(b), h))
	}
	return s.repo.Storer.SetReference(plumbing.NewHashReference(plumbing.HEAD, h))
}

func (s *session) switchTo(name, start string, create, force bool) error {
	ref := plumbing.NewBranchReferenceName(name)
	cur, onBranch := s.branchName()
	if create {
		if !validBranchName(name) {
			return fatalf("'%s' is not a valid branch name", name)
		}
		if _, err := s.repo.Reference(ref, false); err == nil && !force {
			return fatalf("a branch named '%s' already exists", name)
		}
		h, err := s.repo.ResolveRevision(plumbing.Revision(start))
		if err != nil {
			if start == "HEAD" {
				// an unborn branch: just point HEAD at the new name
				if err := s.repo.Storer.SetReference(plumbing.NewSymbolicReference(plumbing.HEAD, ref)); err != nil {
					return err
				}
				s.info("Switched to a new branch '%s'\n", name)
				return nil
			}
			return fatalf("'%s' is not a commit and a branch '%s' cannot be created from it", start, name)
		}
		curHash := plumbing.ZeroHash
		if hr, err := s.head(); err == nil {
			curHash = hr.Hash()
		}
		if *h != curHash {
			if err := s.checkoutCommit(*h, "", force); err != nil {
				return err
			}
		}
		if err := s.repo.Storer.SetReference(plumbing.NewHashReference(ref, *h)); err != nil {
			return err
		}
		if err := s.repo.Storer.SetReference(plumbing.NewSymbolicReference(plumbing.HEAD, ref)); err != nil {
			return err
		}
		s.info("Switched to a new branch '%s'\n", name)
		return nil
	}
	if onBranch && cur == name {
		s.info("Already on '%s'\n", name)
		return nil
	}
	r, err := s.repo.Reference(ref, true)
	if err != nil {
		return errorf(1, "error: pathspec '%s' did not match any file(s) known to git", name)
	}
	if err := s.checkoutCommit(r.Hash(), ref, force); err != nil {
		return err
	}
	s.info("Switched to branch '%s'\n", name)
	if t := s.trackingLong(name); t != "" {
		s.info("%s", t)
	}
	return nil
}

func (s *session) detachAt(rev string, force bool) error {
	h, err := s.repo.ResolveRevision(plumbing.Revision(rev))
	if err != nil {
		return errorf(1, "error: pathspec '%s' did not match any file(s) known to git", rev)
	}
	c, err := s.repo.CommitObject(*h)
	if err != nil {
		return fatalf("reference is not a tree: %s", rev)
	}
	if err := s.checkoutCommit(*h, "", force); err != nil {
		return err
	}
	s.info(`Note: switching to '%s'.

You are in 'detached HEAD' state. You can look around, make experimental
changes and commit them, and you can discard any commits you make in this
state without impacting any branches by switching back to a branch.

If you want to create a new branch to retain commits you create, you may
do so (now or later) by using -c with the switch command. Example:

  git switch -c <new-branch-name>

Or undo this operation with:

  git switch -

Turn off this advice by setting config variable advice.detachedHead to false

HEAD is now at %s %s
`, rev, short(c.Hash), firstLine(c.Message))
	return nil
}

// ---- restore ----

func cmdRestore(s *session, args []string) error {
	if err := s.open(); err != nil {
		return err
	}
	staged, worktree := false, false
	source := ""
	var paths []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "-S" || a == "--staged":
			staged = true
		case a == "-W" || a == "--worktree":
			worktree = true
		case strings.HasPrefix(a, "--source="):
			source = strings.TrimPrefix(a, "--source=")
		case (a == "-s" || a == "--source") && i+1 < len(args):
			i++
			source = args[i]
		case a == "--" || a == "-q" || a == "--quiet":
		case strings.HasPrefix(a, "-"):
			return unknownOpt(a)
		default:
			paths = append(paths, a)
		}
	}
	if len(paths) == 0 {
		return fatalf("you must specify path(s) to restore")
	}
	if !staged {
		worktree = true
	}
	return s.restorePaths(paths, source, staged, worktree, "restore")
}

// restorePaths copies paths from source (a commit; "" = the index for the
// worktree, HEAD for the index) into the index and/or the worktree.
func (s *session) restorePaths(paths []string, source string, toIndex, toWorktree bool, cmd string) error {
	idx, err := s.repo.Storer.Index()
	if err != nil {
		return err
	}
	var snap snapshot
	if source != "" || toIndex {
		rev := source
		if rev == "" {
			rev = "HEAD"
		}
		if _, err := s.head(); err != nil && rev == "HEAD" {
			snap = snapshot{}
		} else {
			c, err := s.commit(rev)
			if err != nil {
				return err
			}
			t, _ := c.Tree()
			if snap, err = s.treeSnapshot(t); err != nil {
				return err
			}
		}
	} else {
		if snap, err = s.indexSnapshot(); err != nil {
			return err
		}
	}
	filter, err := s.pathFilter(paths)
	if err != nil {
		return err
	}
	matched := 0
	var names []string
	for n := range snap {
		if filter(n) {
			names = append(names, n)
		}
	}
	// restoring the index may also mean dropping entries the source lacks
	if toIndex {
		for _, e := range idx.Entries {
			if filter(e.Name) && snap[e.Name] == nil {
				idx.Remove(e.Name)
				matched++
			}
		}
	}
	sort.Strings(names)
	for _, p := range paths {
		rel, _ := s.rel(p)
		found := false
		for _, n := range names {
			if n == rel || strings.HasPrefix(n, rel+"/") || rel == "." {
				found = true
			}
		}
		if !found && matched == 0 {
			return errorf(1, "error: pathspec '%s' did not match any file(s) known to git", p)
		}
	}
	for _, n := range names {
		sd := snap[n]
		if toIndex {
			e, err := idx.Entry(n)
			if err != nil {
				e = idx.Add(n)
			}
			e.Hash, e.Mode = sd.hash, sd.mode
			data, _ := sd.load()
			e.Size = uint32(len(data))
		}
		if toWorktree {
			if err := s.writeWorktree(n, sd); err != nil {
				return err
			}
			if !toIndex && source == "" {
				// keep the stat cache in step so status stays fast
				if e, err := idx.Entry(n); err == nil {
					if fi, err := s.inv.FS.Lstat(path.Join(s.root, n)); err == nil {
						e.ModifiedAt = fi.ModTime()
						e.Size = uint32(fi.Size())
					}
				}
			}
		}
		matched++
	}
	if err := s.repo.Storer.SetIndex(idx); err != nil {
		return err
	}
	return nil
}

// writeWorktree writes one file of a snapshot into the worktree.
func (s *session) writeWorktree(name string, sd *side) error {
	abs, err := s.worktreePath(name)
	if err != nil {
		return err
	}
	data, err := sd.load()
	if err != nil {
		return err
	}
	if err := s.inv.FS.MkdirAll(path.Dir(abs), 0o755); err != nil {
		return fatalf("cannot create directory for '%s': %v", name, err)
	}
	s.inv.FS.Remove(abs)
	if sd.mode == filemode.Symlink {
		return s.inv.FS.Symlink(string(data), abs)
	}
	perm := 0o644
	if sd.mode == filemode.Executable {
		perm = 0o755
	}
	f, err := s.inv.FS.OpenFile(abs, vfs.O_WRONLY|vfs.O_CREATE|vfs.O_TRUNC, fs.FileMode(perm))
	if err != nil {
		return fatalf("unable to write '%s': %v", name, err)
	}
	_, err = f.Write(data)
	f.Close()
	return err
}

// ---- reset ----

func cmdReset(s *session, args []string) error {
	if err := s.open(); err != nil {
		return err
	}
	mode := gogit.MixedReset
	quiet := false
	var operands, paths []string
	dashdash := false
	for _, a := range args {
		switch {
		case dashdash:
			paths = append(paths, a)
		case a == "--":
			dashdash = true
		case a == "--hard":
			mode = gogit.HardReset
		case a == "--soft":
			mode = gogit.SoftReset
		case a == "--mixed":
			mode = gogit.MixedReset
		case a == "--merge" || a == "--keep":
			mode = gogit.MergeReset
		case a == "-q" || a == "--quiet":
			quiet = true
		case strings.HasPrefix(a, "-"):
			return unknownOpt(a)
		default:
			operands = append(operands, a)
		}
	}
	rev := "HEAD"
	if len(operands) > 0 {
		if s.isRev(operands[0]) {
			rev = operands[0]
			paths = append(paths, operands[1:]...)
		} else {
			paths = append(paths, operands...)
		}
	}
	if len(paths) > 0 {
		if mode == gogit.HardReset || mode == gogit.SoftReset {
			return fatalf("Cannot do %s reset with paths.", map[gogit.ResetMode]string{gogit.HardReset: "hard", gogit.SoftReset: "soft"}[mode])
		}
		source := rev
		if _, err := s.head(); err != nil && rev == "HEAD" {
			source = ""
		}
		if err := s.restorePaths(paths, source, true, false, "reset"); err != nil {
			return err
		}
		if !quiet {
			s.unstagedReport()
		}
		return nil
	}
	h, err := s.resolve(rev)
	if err != nil {
		return err
	}
	switch mode {
	case gogit.HardReset:
		err = s.hardReset(h)
		s.clearMerge()
	case gogit.SoftReset:
		err = s.moveHead(h)
	default:
		// mixed: the index follows the commit, the worktree stays
		err = s.wt.Reset(&gogit.ResetOptions{Commit: h, Mode: mode})
	}
	if err != nil {
		return fatalf("%v", err)
	}
	if quiet {
		return nil
	}
	switch mode {
	case gogit.HardReset:
		c, _ := s.repo.CommitObject(h)
		fmt.Fprintf(s.out, "HEAD is now at %s %s\n", short(h), firstLine(c.Message))
	case gogit.MixedReset:
		s.unstagedReport()
	}
	return nil
}

func (s *session) unstagedReport() {
	st, err := s.status()
	if err != nil {
		return
	}
	var lines []string
	for n, fs := range st {
		if fs.Worktree == gogit.Modified || fs.Worktree == gogit.Deleted {
			lines = append(lines, fmt.Sprintf("%c\t%s", fs.Worktree, n))
		}
	}
	if len(lines) == 0 {
		return
	}
	sort.Slice(lines, func(i, j int) bool { return lines[i][2:] < lines[j][2:] })
	s.out.WriteString("Unstaged changes after reset:\n" + strings.Join(lines, "\n") + "\n")
}

// ---- tag ----

func cmdTag(s *session, args []string) error {
	if err := s.open(); err != nil {
		return err
	}
	var del, annotate, list, force bool
	msg := ""
	var operands []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "-d" || a == "--delete":
			del = true
		case a == "-a" || a == "--annotate":
			annotate = true
		case (a == "-m" || a == "--message") && i+1 < len(args):
			i++
			msg, annotate = args[i], true
		case strings.HasPrefix(a, "-m") && len(a) > 2:
			msg, annotate = a[2:], true
		case a == "-l" || a == "--list":
			list = true
		case a == "-f" || a == "--force":
			force = true
		case strings.HasPrefix(a, "-"):
			return unknownOpt(a)
		default:
			operands = append(operands, a)
		}
	}
	if del {
		for _, t := range operands {
			ref, err := s.repo.Tag(t)
			if err != nil {
				return errorf(1, "error: tag '%s' not found.", t)
			}
			if err := s.repo.DeleteTag(t); err != nil {
				return fatalf("%v", err)
			}
			fmt.Fprintf(s.out, "Deleted tag '%s' (was %s)\n", t, short(ref.Hash()))
		}
		return nil
	}
	if list || len(operands) == 0 {
		iter, err := s.repo.Tags()
		if err != nil {
			return err
		}
		var names []string
		iter.ForEach(func(r *plumbing.Reference) error {
			n := r.Name().Short()
			if len(operands) > 0 {
				if ok, _ := path.Match(operands[0], n); !ok {
					return nil
				}
			}
			names = append(names, n)
			return nil
		})
		sort.Strings(names)
		for _, n := range names {
			fmt.Fprintln(s.out, n)
		}
		return nil
	}
	name := operands[0]
	rev := "HEAD"
	if len(operands) > 1 {
		rev = operands[1]
	}
	h, err := s.resolve(rev)
	if err != nil {
		if rev == "HEAD" {
			return fatalf("Failed to resolve 'HEAD' as a valid ref.")
		}
		return err
	}
	if _, err := s.repo.Tag(name); err == nil {
		if !force {
			return fatalf("tag '%s' already exists", name)
		}
		s.repo.DeleteTag(name)
	}
	var opts *gogit.CreateTagOptions
	if annotate {
		if msg == "" {
			return fatalf("no tag message given (the sandbox has no editor: use -m)")
		}
		tagger, err := s.signature("COMMITTER")
		if err != nil {
			return err
		}
		opts = &gogit.CreateTagOptions{Tagger: tagger, Message: msg}
	}
	if _, err := s.repo.CreateTag(name, h, opts); err != nil {
		if errors.Is(err, gogit.ErrTagExists) {
			return fatalf("tag '%s' already exists", name)
		}
		return fatalf("%v", err)
	}
	return nil
}

var _ = io.EOF

// info prints a progress message on stderr unless -q was given.
func (s *session) info(format string, a ...any) {
	if !s.quiet {
		fmt.Fprintf(s.inv.Stderr, format, a...)
	}
}

// worktreePath maps a tree path to the worktree as git's checkout does:
// names with "..", an absolute path or a ".git" component are invalid, and
// nothing is written through a symbolic link (a hostile tree could
// otherwise place files outside the worktree or in .git).
func (s *session) worktreePath(name string) (string, error) {
	if name == "" || strings.HasPrefix(name, "/") {
		return "", errorf(128, "error: invalid path '%s'", name)
	}
	parts := strings.Split(name, "/")
	for _, p := range parts {
		if p == "" || p == "." || p == ".." || strings.EqualFold(p, ".git") {
			return "", errorf(128, "error: invalid path '%s'", name)
		}
	}
	cur := s.root
	for _, p := range parts[:len(parts)-1] {
		cur = path.Join(cur, p)
		if fi, err := s.inv.FS.Lstat(cur); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
			return "", errorf(128, "error: '%s' is beyond a symbolic link", name)
		}
	}
	return path.Join(s.root, name), nil
}
