package git

import (
	"fmt"
	"strings"

	gogit "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// cmdMerge merges one branch or commit into HEAD: fast-forward, or a
// three-way merge when no file was changed on both sides. Content merges
// of a file changed on both sides are reported as conflicts and the merge
// is abandoned without touching anything.
func cmdMerge(s *session, args []string) error {
	if err := s.open(); err != nil {
		return err
	}
	noFF, ffOnly, quiet := false, false, false
	msg := ""
	var operands []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--no-ff":
			noFF = true
		case a == "--ff-only":
			ffOnly = true
		case a == "--ff" || a == "--no-edit" || a == "--stat" || a == "--no-verify":
		case a == "-q" || a == "--quiet":
			quiet = true
		case (a == "-m" || a == "--message") && i+1 < len(args):
			i++
			msg = args[i]
		case a == "--abort":
			return s.mergeAbort()
		case strings.HasPrefix(a, "-"):
			return unknownOpt(a)
		default:
			operands = append(operands, a)
		}
	}
	if _, un, ok := s.mergeState(); ok {
		if len(un) > 0 {
			return errorf(128, "error: Merging is not possible because you have unmerged files.\nhint: Fix them up in the work tree, and then use 'git add/rm <file>'\nhint: as appropriate to mark resolution and make a commit.\nfatal: Exiting because of an unresolved conflict.")
		}
		return fatalf("You have not concluded your merge (MERGE_HEAD exists).\nPlease, commit your changes before you merge.")
	}
	if len(operands) != 1 {
		if len(operands) == 0 {
			return fatalf("No remote for the current branch.")
		}
		return unsupported("octopus merges")
	}
	name := operands[0]
	theirsHash, err := s.repo.ResolveRevision(plumbing.Revision(name))
	if err != nil {
		return fatalf("%s - not something we can merge", name)
	}
	headRef, err := s.head()
	if err != nil {
		return fatalf("the current branch has no commits yet: nothing to merge into")
	}
	oursHash := headRef.Hash()
	if s.isAncestor(*theirsHash, oursHash) {
		if !quiet {
			fmt.Fprintln(s.out, "Already up to date.")
		}
		return nil
	}
	ours, _ := s.repo.CommitObject(oursHash)
	theirs, err := s.repo.CommitObject(*theirsHash)
	if err != nil {
		return fatalf("%s - not something we can merge", name)
	}
	oursTree, _ := ours.Tree()
	theirsTree, _ := theirs.Tree()
	if s.isAncestor(oursHash, *theirsHash) && !noFF {
		b, ok := s.branchName()
		if err := s.checkoutCommit(*theirsHash, "", false); err != nil {
			return err
		}
		if ok {
			s.repo.Storer.SetReference(plumbing.NewHashReference(plumbing.NewBranchReferenceName(b), *theirsHash))
			s.repo.Storer.SetReference(plumbing.NewSymbolicReference(plumbing.HEAD, plumbing.NewBranchReferenceName(b)))
		}
		if quiet {
			return nil
		}
		fmt.Fprintf(s.out, "Updating %s..%s\nFast-forward\n", short(oursHash), short(*theirsHash))
		changes, err := s.treeChanges(oursTree, theirsTree)
		if err != nil {
			return err
		}
		if changes, err = s.findRenames(changes); err != nil {
			return err
		}
		writeStat(s.out, changes)
		modeLines(s, changes)
		return nil
	}
	if ffOnly {
		return fatalf("Not possible to fast-forward, aborting.")
	}
	bases, err := ours.MergeBase(theirs)
	if err != nil || len(bases) == 0 {
		return fatalf("refusing to merge unrelated histories")
	}
	baseTree, _ := bases[0].Tree()
	bs, _ := s.treeSnapshot(baseTree)
	os, _ := s.treeSnapshot(oursTree)
	ts, _ := s.treeSnapshot(theirsTree)
	plan, err := s.planMerge(bs, os, ts, "HEAD", name)
	if err != nil {
		return err
	}
	take, conflicts, unmergeable := plan.take, plan.conflicts, plan.unmergeable
	if len(unmergeable) > 0 {
		return errorf(1, "warren: cannot merge %s: the file was deleted, added or made binary on both sides,\nwhich warren's git does not merge; the merge was abandoned and nothing was changed.", strings.Join(unmergeable, ", "))
	}
	// local changes to the files the merge rewrites would be lost
	st, err := s.status()
	if err != nil {
		return err
	}
	var dirty []string
	for _, p := range take {
		if fs, ok := st[p]; ok && (fs.Staging != gogit.Unmodified || fs.Worktree != gogit.Unmodified) {
			dirty = append(dirty, p)
		}
	}
	if len(dirty) > 0 {
		return errorf(1, "error: Your local changes to the following files would be overwritten by merge:\n\t%s\nPlease commit your changes or stash them before you merge.\nAborting", strings.Join(dirty, "\n\t"))
	}
	if err := s.applyPlan(plan, ts); err != nil {
		return err
	}
	if msg == "" {
		msg = fmt.Sprintf("Merge branch '%s'", name)
		if b, ok := s.branchName(); ok && b != "master" && b != "main" {
			msg += " into " + b
		}
	}
	if len(conflicts) > 0 {
		// leave the merge in progress, as git does: the user fixes the
		// files, adds them and commits (or runs git merge --abort)
		mm := msg + "\n\n# Conflicts:\n"
		for _, p := range conflicts {
			mm += "#\t" + p + "\n"
		}
		gitDir := s.root + "/.git/"
		s.inv.FS.WriteFile(gitDir+"MERGE_HEAD", []byte(theirsHash.String()+"\n"), 0o644)
		s.inv.FS.WriteFile(gitDir+"MERGE_MSG", []byte(mm), 0o644)
		s.inv.FS.WriteFile(gitDir+"MERGE_MODE", nil, 0o644)
		s.inv.FS.WriteFile(gitDir+"ORIG_HEAD", []byte(oursHash.String()+"\n"), 0o644)
		s.inv.FS.WriteFile(gitDir+unmergedFile, []byte(strings.Join(conflicts, "\n")+"\n"), 0o644)
		// git says this on stdout and exits 1 with nothing on stderr
		fmt.Fprintln(s.out, "Automatic merge failed; fix conflicts and then commit the result.")
		return &exitError{1, ""}
	}
	author, err := s.signature("AUTHOR")
	if err != nil {
		return err
	}
	committer, err := s.signature("COMMITTER")
	if err != nil {
		return err
	}
	h, err := s.wt.Commit(msg+"\n", &gogit.CommitOptions{Author: author, Committer: committer,
		Parents: []plumbing.Hash{oursHash, *theirsHash}, AllowEmptyCommits: true})
	if err != nil {
		return fatalf("%v", err)
	}
	if quiet {
		return nil
	}
	mc, _ := s.repo.CommitObject(h)
	mt, _ := mc.Tree()
	fmt.Fprintln(s.out, "Merge made by the 'ort' strategy.")
	changes, err := s.treeChanges(oursTree, mt)
	if err != nil {
		return err
	}
	if changes, err = s.findRenames(changes); err != nil {
		return err
	}
	writeStat(s.out, changes)
	modeLines(s, changes)
	return nil
}

func modeLines(s *session, changes []*fileChange) {
	for _, ch := range changes {
		switch {
		case ch.score > 0:
			fmt.Fprintf(s.out, " rename %s (%d%%)\n", renameName(ch.from.name, ch.to.name), ch.similarity())
		case ch.from == nil:
			fmt.Fprintf(s.out, " create mode %s %s\n", modeOf(ch.to.mode), ch.to.name)
		case ch.to == nil:
			fmt.Fprintf(s.out, " delete mode %s %s\n", modeOf(ch.from.mode), ch.from.name)
		}
	}
}

var _ = object.Commit{}

// storeBlob writes sd's content as a blob object.
func (s *session) storeBlob(sd *side) error {
	if s.hasObject(sd.hash) {
		return nil
	}
	data, err := sd.load()
	if err != nil {
		return err
	}
	obj := s.repo.Storer.NewEncodedObject()
	obj.SetType(plumbing.BlobObject)
	w, _ := obj.Writer()
	w.Write(data)
	w.Close()
	_, err = s.repo.Storer.SetEncodedObject(obj)
	return err
}

// unmergedFile lists the paths of a merge in progress that still have
// conflict markers. git keeps conflict stages in the index instead; go-git
// does not handle those, so warren keeps the list beside MERGE_HEAD.
const unmergedFile = "WARREN_UNMERGED"

// mergeState reports a merge in progress: the other parent and the paths
// still unmerged.
// The paths are also those of a conflicted revert (no MERGE_HEAD, ok false).
func (s *session) mergeState() (plumbing.Hash, []string, bool) {
	h, ok := plumbing.ZeroHash, false
	if data, err := s.inv.FS.ReadFile(s.root + "/.git/MERGE_HEAD"); err == nil {
		h, ok = plumbing.NewHash(strings.TrimSpace(string(data))), true
	}
	var paths []string
	if u, err := s.inv.FS.ReadFile(s.root + "/.git/" + unmergedFile); err == nil {
		for _, p := range strings.Split(strings.TrimSpace(string(u)), "\n") {
			if p != "" {
				paths = append(paths, p)
			}
		}
	}
	return h, paths, ok
}

// resolved drops paths from the unmerged list (git add / git rm).
func (s *session) resolved(paths ...string) {
	_, un, _ := s.mergeState()
	if len(un) == 0 {
		return
	}
	drop := map[string]bool{}
	for _, p := range paths {
		drop[p] = true
	}
	var keep []string
	for _, u := range un {
		gone := drop[u]
		for p := range drop {
			if p == "." || strings.HasPrefix(u, p+"/") {
				gone = true
			}
		}
		if !gone {
			keep = append(keep, u)
		}
	}
	if len(keep) == 0 {
		s.inv.FS.Remove(s.root + "/.git/" + unmergedFile)
		return
	}
	s.inv.FS.WriteFile(s.root+"/.git/"+unmergedFile, []byte(strings.Join(keep, "\n")+"\n"), 0o644)
}

func (s *session) clearMerge() {
	for _, f := range []string{"MERGE_HEAD", "MERGE_MSG", "MERGE_MODE", revertHead, unmergedFile} {
		s.inv.FS.Remove(s.root + "/.git/" + f)
	}
}

func (s *session) mergeAbort() error {
	if _, _, ok := s.mergeState(); !ok {
		return fatalf("There is no merge to abort (MERGE_HEAD missing).")
	}
	head, err := s.head()
	if err != nil {
		return err
	}
	if err := s.hardReset(head.Hash()); err != nil {
		return err
	}
	s.clearMerge()
	return nil
}
