package git

import (
	"fmt"
	"path"
	"strings"

	gogit "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/storer"
)

// cmdClone clones a repository from a path inside the sandbox by copying
// its objects and refs store to store; there is no network transport.
func cmdClone(s *session, args []string) error {
	quiet := false
	branch := ""
	var operands []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "-q" || a == "--quiet":
			quiet = true
		case (a == "-b" || a == "--branch") && i+1 < len(args):
			i++
			branch = args[i]
		case a == "--depth" && i+1 < len(args):
			i++
		case strings.HasPrefix(a, "--depth=") || a == "--single-branch" || a == "--no-hardlinks" || a == "-l" || a == "--local":
		case strings.HasPrefix(a, "-"):
			return unknownOpt(a)
		default:
			operands = append(operands, a)
		}
	}
	if len(operands) == 0 {
		return fatalf("You must specify a repository to clone.")
	}
	src := strings.TrimPrefix(operands[0], "file://")
	if strings.Contains(src, "://") || strings.HasPrefix(src, "git@") {
		return fatalf("unable to access '%s': network disabled for this sandbox (clone from a path inside the sandbox)", operands[0])
	}
	srcAbs := path.Join(s.dir, src)
	if strings.HasPrefix(src, "/") {
		srcAbs = path.Clean(src)
	}
	gitDir := path.Join(srcAbs, ".git")
	if fi, err := s.inv.FS.Stat(gitDir); err != nil || !fi.IsDir() {
		gitDir = srcAbs
		if _, err := s.inv.FS.Stat(path.Join(gitDir, "HEAD")); err != nil {
			return fatalf("repository '%s' does not exist", operands[0])
		}
	}
	srcRepo, err := gogit.Open(s.storage(gitDir), nil)
	if err != nil {
		return fatalf("repository '%s' does not exist", operands[0])
	}
	dest := ""
	if len(operands) > 1 {
		dest = operands[1]
	} else {
		dest = strings.TrimSuffix(path.Base(strings.TrimSuffix(srcAbs, "/.git")), ".git")
	}
	destAbs := path.Join(s.dir, dest)
	if strings.HasPrefix(dest, "/") {
		destAbs = path.Clean(dest)
	}
	if ents, err := s.inv.FS.ReadDir(destAbs); err == nil && len(ents) > 0 {
		return fatalf("destination path '%s' already exists and is not an empty directory.", dest)
	}
	if !quiet {
		fmt.Fprintf(s.inv.Stderr, "Cloning into '%s'...\n", dest)
	}
	// the source's HEAD branch becomes the clone's default
	headBranch := "master"
	if ref, err := srcRepo.Storer.Reference(plumbing.HEAD); err == nil && ref.Type() == plumbing.SymbolicReference {
		headBranch = ref.Target().Short()
	}
	if branch != "" {
		if _, err := srcRepo.Reference(plumbing.NewBranchReferenceName(branch), false); err != nil {
			return fatalf("Remote branch %s not found in upstream origin", branch)
		}
		headBranch = branch
	}
	if err := s.inv.FS.MkdirAll(destAbs, 0o755); err != nil {
		return fatalf("could not create work tree dir '%s': %v", dest, err)
	}
	st := s.storage(path.Join(destAbs, ".git"))
	dst, err := gogit.InitWithOptions(st, newBilly(s.inv.FS, destAbs), gogit.InitOptions{DefaultBranch: plumbing.NewBranchReferenceName(headBranch)})
	if err != nil {
		return fatalf("%v", err)
	}
	objs, err := srcRepo.Storer.IterEncodedObjects(plumbing.AnyObject)
	if err != nil {
		return fatalf("%v", err)
	}
	err = objs.ForEach(func(o plumbing.EncodedObject) error {
		if s.ctx.Err() != nil {
			return storer.ErrStop
		}
		_, err := dst.Storer.SetEncodedObject(o)
		return err
	})
	if err != nil {
		return fatalf("copying objects: %v", err)
	}
	if s.ctx.Err() != nil {
		return s.ctx.Err()
	}
	refs, _ := srcRepo.References()
	var headHash plumbing.Hash
	refs.ForEach(func(r *plumbing.Reference) error {
		if r.Type() != plumbing.HashReference {
			return nil
		}
		switch {
		case r.Name().IsBranch():
			dst.Storer.SetReference(plumbing.NewHashReference(plumbing.NewRemoteReferenceName("origin", r.Name().Short()), r.Hash()))
			if r.Name().Short() == headBranch {
				headHash = r.Hash()
			}
		case r.Name().IsTag():
			dst.Storer.SetReference(r)
		}
		return nil
	})
	cfg, err := dst.Config()
	if err != nil {
		return err
	}
	cfg.Remotes["origin"] = &config.RemoteConfig{Name: "origin", URLs: []string{srcAbs},
		Fetch: []config.RefSpec{"+refs/heads/*:refs/remotes/origin/*"}}
	if !headHash.IsZero() {
		cfg.Branches[headBranch] = &config.Branch{Name: headBranch, Remote: "origin", Merge: plumbing.NewBranchReferenceName(headBranch)}
	}
	if err := dst.SetConfig(cfg); err != nil {
		return err
	}
	if headHash.IsZero() {
		fmt.Fprintln(s.inv.Stderr, "warning: You appear to have cloned an empty repository.")
		return nil
	}
	dst.Storer.SetReference(plumbing.NewSymbolicReference(plumbing.NewRemoteReferenceName("origin", "HEAD"), plumbing.NewRemoteReferenceName("origin", headBranch)))
	dst.Storer.SetReference(plumbing.NewHashReference(plumbing.NewBranchReferenceName(headBranch), headHash))
	// check out with warren's own writer, which refuses hostile tree paths
	wt, err := dst.Worktree()
	if err != nil {
		return err
	}
	d := &session{ctx: s.ctx, inv: s.inv, dir: destAbs, out: s.out, repo: dst, wt: wt, root: destAbs, loc: s.loc, extra: s.extra}
	c, err := dst.CommitObject(headHash)
	if err != nil {
		return fatalf("checkout: %v", err)
	}
	tree, err := c.Tree()
	if err != nil {
		return fatalf("checkout: %v", err)
	}
	to, err := d.treeSnapshot(tree)
	if err != nil {
		return fatalf("checkout: %v", err)
	}
	if err := d.applySnapshot(snapshot{}, to, false); err != nil {
		return err
	}
	if !quiet {
		fmt.Fprintln(s.inv.Stderr, "done.")
	}
	return nil
}
