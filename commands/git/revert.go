package git

import (
	"fmt"
	"sort"
	"strings"

	gogit "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// revertHead names the commit a conflicted revert is undoing, as git's
// REVERT_HEAD does; MERGE_MSG holds the message and unmergedFile the paths
// still conflicted.
const revertHead = "REVERT_HEAD"

const revertConflictHints = `hint: After resolving the conflicts, mark them with
hint: "git add/rm <pathspec>", then run
hint: "git revert --continue".
hint: You can instead skip this commit with "git revert --skip".
hint: To abort and get back to the state before "git revert",
hint: run "git revert --abort".`

func cmdRevert(s *session, args []string) error {
	noEdit, noCommit := false, false
	action := ""
	var operands []string
	for _, a := range args {
		switch {
		case a == "--no-edit":
			noEdit = true
		case a == "-n" || a == "--no-commit":
			noCommit = true
		case a == "--continue" || a == "--abort":
			action = a
		case strings.HasPrefix(a, "-"):
			// -m (mainline), -e, -s, --skip, --quit, --strategy, -X...
			return unknownOpt(a)
		default:
			operands = append(operands, a)
		}
	}
	if action == "" && len(operands) != 1 {
		if len(operands) == 0 {
			return errorf(129, "usage: git revert [--[no-]edit] [-n] [-m <parent-number>] [-s] [-S[<keyid>]] <commit>...\n   or: git revert (--continue | --skip | --abort | --quit)")
		}
		return unsupported("of several commits")
	}
	if action == "" && (strings.Contains(operands[0], "..") || strings.HasPrefix(operands[0], "^")) {
		return unsupported("of a range")
	}
	if action == "" && !noEdit && !noCommit && !s.editorAccepts() {
		// git would open an editor on the message; the sandbox has none
		return unsupported("without --no-edit (needs an editor)")
	}
	if err := s.open(); err != nil {
		return err
	}
	switch action {
	case "--abort":
		return s.revertAbort()
	case "--continue":
		return s.revertContinue()
	}
	if _, un, _ := s.mergeState(); len(un) > 0 {
		return revertFailed("error: Reverting is not possible because you have unmerged files.\nhint: Fix them up in the work tree, and then use 'git add/rm <file>'\nhint: as appropriate to mark resolution and make a commit.\n")
	}
	op := operands[0]
	if t, ok := strings.CutSuffix(op, "^{tree}"); ok {
		// go-git resolves the peel to the commit itself
		if _, err := s.repo.ResolveRevision(plumbing.Revision(t)); err == nil {
			return revertFailed(fmt.Sprintf("error: %s: can't cherry-pick a tree\n", op))
		}
	}
	h, err := s.repo.ResolveRevision(plumbing.Revision(op))
	if err != nil {
		if strings.Contains(op, ":") {
			if oh, err := s.resolveObject(op); err == nil {
				return revertFailed(fmt.Sprintf("error: %s: can't cherry-pick a %s\n", op, s.objectType(oh)))
			}
		}
		return fatalf("bad revision '%s'", op)
	}
	c, err := s.repo.CommitObject(*h)
	if err != nil {
		return revertFailed(fmt.Sprintf("error: %s: can't cherry-pick a %s\n", op, s.objectType(*h)))
	}
	if c.NumParents() > 1 {
		return unsupported("of a merge commit (-m)")
	}
	headRef, err := s.head()
	if err != nil {
		return revertFailed("error: your local changes would be overwritten by revert.\nhint: commit your changes or stash them to proceed.\n")
	}
	ours, err := s.repo.CommitObject(headRef.Hash())
	if err != nil {
		return err
	}
	// the index must match HEAD, as git's sequencer requires
	st, err := s.status()
	if err != nil {
		return err
	}
	for _, fs := range st {
		if fs.Staging != gogit.Unmodified && fs.Staging != gogit.Untracked {
			return revertFailed("error: your local changes would be overwritten by revert.\nhint: commit your changes or stash them to proceed.\n")
		}
	}
	base, err := c.Tree()
	if err != nil {
		return err
	}
	var theirs *object.Tree
	if c.NumParents() == 1 {
		p, err := c.Parent(0)
		if err != nil {
			return err
		}
		if theirs, err = p.Tree(); err != nil {
			return err
		}
	}
	oursTree, err := ours.Tree()
	if err != nil {
		return err
	}
	bs, err := s.treeSnapshot(base)
	if err != nil {
		return err
	}
	os, err := s.treeSnapshot(oursTree)
	if err != nil {
		return err
	}
	ts, err := s.treeSnapshot(theirs)
	if err != nil {
		return err
	}
	label := fmt.Sprintf("parent of %s (%s)", short(c.Hash), firstLine(c.Message))
	plan, err := s.planMerge(bs, os, ts, "HEAD", label)
	if err != nil {
		return err
	}
	if len(plan.unmergeable) > 0 {
		return unsupported("where " + strings.Join(plan.unmergeable, ", ") + " was added, deleted or changed in kind on both sides")
	}
	var dirty []string
	for _, p := range plan.take {
		if fs, ok := st[p]; ok && fs.Worktree != gogit.Unmodified && fs.Worktree != gogit.Untracked {
			dirty = append(dirty, p)
		}
	}
	if len(dirty) > 0 {
		return revertFailed("error: Your local changes to the following files would be overwritten by merge:\n\t" + strings.Join(dirty, "\n\t") + "\nPlease commit your changes or stash them before you merge.\nAborting\n")
	}
	if err := s.applyPlan(plan, ts); err != nil {
		return err
	}
	msg := fmt.Sprintf("Revert \"%s\"\n\nThis reverts commit %s.\n", firstLine(c.Message), c.Hash)
	gitDir := s.root + "/.git/"
	if len(plan.conflicts) > 0 {
		mm := msg + "\n# Conflicts:\n"
		for _, p := range plan.conflicts {
			mm += "#\t" + p + "\n"
		}
		s.inv.FS.WriteFile(gitDir+revertHead, []byte(c.Hash.String()+"\n"), 0o644)
		s.inv.FS.WriteFile(gitDir+"MERGE_MSG", []byte(mm), 0o644)
		s.inv.FS.WriteFile(gitDir+"ORIG_HEAD", []byte(headRef.Hash().String()+"\n"), 0o644)
		s.inv.FS.WriteFile(gitDir+unmergedFile, []byte(strings.Join(plan.conflicts, "\n")+"\n"), 0o644)
		return errorf(1, "error: could not revert %s... %s\n%s", short(c.Hash), firstLine(c.Message), revertConflictHints)
	}
	if noCommit {
		s.inv.FS.WriteFile(gitDir+"MERGE_MSG", []byte(msg), 0o644)
		return nil
	}
	return s.sequencerCommit(msg, headRef.Hash(), true)
}

// revertFailed is git's "fatal: revert failed" after the lines before it.
func revertFailed(before string) error { return &exitError{128, before + "fatal: revert failed"} }

// objectType names h's kind ("tree", "blob").
func (s *session) objectType(h plumbing.Hash) string {
	o, err := s.repo.Storer.EncodedObject(plumbing.AnyObject, h)
	if err != nil {
		return "object"
	}
	return o.Type().String()
}

// editorAccepts reports whether the configured editor is one that keeps
// the message as it is (true, :), so no editor is needed.
func (s *session) editorAccepts() bool {
	ed, ok := s.inv.LookupEnv("GIT_EDITOR")
	if !ok {
		ed, ok = s.configValue("core.editor")
	}
	if !ok {
		ed, ok = s.inv.LookupEnv("VISUAL")
	}
	if !ok {
		ed, ok = s.inv.LookupEnv("EDITOR")
	}
	ed = strings.TrimSpace(ed)
	return ok && (ed == "true" || ed == ":" || ed == "/bin/true" || ed == "/usr/bin/true")
}

// sequencerCommit commits the index on parent as git's sequencer does
// after a pick, with its summary: a pick's shows the author date, the
// commit that --continue makes does not.
func (s *session) sequencerCommit(msg string, parent plumbing.Hash, showDate bool) error {
	author, err := s.signature("AUTHOR")
	if err != nil {
		return err
	}
	committer, err := s.signature("COMMITTER")
	if err != nil {
		return err
	}
	h, err := s.wt.Commit(msg, &gogit.CommitOptions{Author: author, Committer: committer,
		Parents: []plumbing.Hash{parent}, AllowEmptyCommits: true})
	if err != nil {
		return fatalf("%v", err)
	}
	s.clearMerge()
	c, err := s.repo.CommitObject(h)
	if err != nil {
		return err
	}
	label, ok := s.branchName()
	if !ok {
		label = "detached HEAD"
	}
	fmt.Fprintf(s.out, "[%s %s] %s\n", label, short(h), firstLine(msg))
	if showDate {
		fmt.Fprintf(s.out, " Date: %s\n", s.formatDate(c.Author.When, ""))
	}
	return s.commitSummary(c)
}

func (s *session) revertAbort() error {
	if _, err := s.inv.FS.Stat(s.root + "/.git/" + revertHead); err != nil {
		return revertFailed("error: no cherry-pick or revert in progress\n")
	}
	h, err := s.head()
	if err != nil {
		return err
	}
	if err := s.hardReset(h.Hash()); err != nil {
		return err
	}
	s.clearMerge()
	return nil
}

func (s *session) revertContinue() error {
	if _, err := s.inv.FS.Stat(s.root + "/.git/" + revertHead); err != nil {
		return revertFailed("error: no cherry-pick or revert in progress\n")
	}
	if _, un, _ := s.mergeState(); len(un) > 0 {
		for _, u := range un {
			fmt.Fprintf(s.out, "U\t%s\n", u)
		}
		return errorf(128, "error: Committing is not possible because you have unmerged files.\nhint: Fix them up in the work tree, and then use 'git add/rm <file>'\nhint: as appropriate to mark resolution and make a commit.\nfatal: Exiting because of an unresolved conflict.")
	}
	if !s.editorAccepts() {
		return unsupported("--continue (needs an editor)")
	}
	data, _ := s.inv.FS.ReadFile(s.root + "/.git/MERGE_MSG")
	// the editor's cleanup drops the "# Conflicts:" comment lines
	var keep []string
	for _, l := range strings.Split(string(data), "\n") {
		if !strings.HasPrefix(l, "#") {
			keep = append(keep, l)
		}
	}
	msg := strings.TrimRight(strings.Join(keep, "\n"), "\n") + "\n"
	head, err := s.head()
	if err != nil {
		return err
	}
	return s.sequencerCommit(msg, head.Hash(), false)
}

// mergePlan is a three-way merge of snapshots: what changes in ours and how.
type mergePlan struct {
	take        []string // paths whose result differs from ours
	conflicts   []string // paths merged with conflict markers
	unmergeable []string // paths changed on both sides that lines cannot merge
	autoMerged  map[string]bool
	merged      map[string]*side
}

// planMerge merges base -> theirs into ours path by path, merging lines where
// both sides changed a file (merge3.go).
func (s *session) planMerge(bs, os, ts snapshot, oursLabel, theirsLabel string) (*mergePlan, error) {
	names := map[string]bool{}
	for _, snap := range []snapshot{bs, os, ts} {
		for n := range snap {
			names[n] = true
		}
	}
	same := func(a, b *side) bool {
		if a == nil || b == nil {
			return a == nil && b == nil
		}
		return a.hash == b.hash && a.mode == b.mode
	}
	p := &mergePlan{autoMerged: map[string]bool{}, merged: map[string]*side{}}
	for n := range names {
		b, o, t := bs[n], os[n], ts[n]
		switch {
		case same(o, t), same(b, t):
		case same(b, o):
			p.take = append(p.take, n)
		case b != nil && o != nil && t != nil && o.mode == t.mode:
			bd, err := b.load()
			if err != nil {
				return nil, err
			}
			od, err := o.load()
			if err != nil {
				return nil, err
			}
			td, err := t.load()
			if err != nil {
				return nil, err
			}
			if isBinary(bd) || isBinary(od) || isBinary(td) {
				p.unmergeable = append(p.unmergeable, n)
				continue
			}
			segs, nc := merge3(string(bd), string(od), string(td))
			data := []byte(render(segs, oursLabel, theirsLabel))
			p.merged[n] = &side{name: n, mode: o.mode, hash: plumbing.ComputeHash(plumbing.BlobObject, data),
				load: func() ([]byte, error) { return data, nil }}
			p.take = append(p.take, n)
			p.autoMerged[n] = true
			if nc > 0 {
				p.conflicts = append(p.conflicts, n)
			}
		default:
			p.unmergeable = append(p.unmergeable, n)
		}
	}
	sort.Strings(p.take)
	sort.Strings(p.conflicts)
	sort.Strings(p.unmergeable)
	return p, nil
}

// applyPlan writes a plan's results to the worktree and the index (a
// conflicted file's index entry keeps ours), reporting as merge-ort does.
func (s *session) applyPlan(p *mergePlan, ts snapshot) error {
	idx, err := s.repo.Storer.Index()
	if err != nil {
		return err
	}
	isConflict := map[string]bool{}
	for _, c := range p.conflicts {
		isConflict[c] = true
	}
	for _, n := range p.take {
		if p.autoMerged[n] {
			fmt.Fprintf(s.out, "Auto-merging %s\n", n)
			if isConflict[n] {
				fmt.Fprintf(s.out, "CONFLICT (content): Merge conflict in %s\n", n)
			}
		}
		t := ts[n]
		if m, ok := p.merged[n]; ok {
			t = m
		}
		if t == nil {
			idx.Remove(n)
			s.inv.FS.Remove(s.root + "/" + n)
			continue
		}
		if err := s.writeWorktree(n, t); err != nil {
			return err
		}
		if isConflict[n] {
			continue
		}
		if err := s.storeBlob(t); err != nil {
			return err
		}
		e, err := idx.Entry(n)
		if err != nil {
			e = idx.Add(n)
		}
		data, err := t.load()
		if err != nil {
			return err
		}
		e.Hash, e.Mode, e.Size = t.hash, t.mode, uint32(len(data))
		if fi, err := s.inv.FS.Stat(s.root + "/" + n); err == nil {
			e.ModifiedAt = fi.ModTime()
		}
	}
	return s.repo.Storer.SetIndex(idx)
}
