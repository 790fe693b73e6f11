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
// its objects and refs store to store, or from an http(s) URL through the
// sandbox's network (cloneNet).
func cmdClone(s *session, args []string) error {
	quiet := false
	branch := ""
	depth := 0
	var operands []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "-q" || a == "--quiet":
			quiet = true
		case (a == "-b" || a == "--branch") && i+1 < len(args):
			i++
			branch = args[i]
		case isDepth(args, i):
			n, err := depthOption(args, &i)
			if err != nil {
				return err
			}
			depth = n
		case a == "--single-branch" || a == "--no-hardlinks" || a == "-l" || a == "--local":
		case strings.HasPrefix(a, "-"):
			return unknownOpt(a)
		default:
			operands = append(operands, a)
		}
	}
	if len(operands) == 0 {
		return fatalf("You must specify a repository to clone.")
	}
	if isNetworkURL(operands[0]) {
		return s.cloneNet(operands, branch, depth, quiet)
	}
	src := strings.TrimPrefix(operands[0], "file://")
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
	if err := s.checkoutClone(dst, destAbs, headBranch, headHash); err != nil {
		return err
	}
	if !quiet {
		fmt.Fprintln(s.inv.Stderr, "done.")
	}
	return nil
}

// checkoutClone points the new clone's branch at headHash and checks it
// out with warren's own writer, which refuses hostile tree paths.
func (s *session) checkoutClone(dst *gogit.Repository, destAbs, headBranch string, headHash plumbing.Hash) error {
	dst.Storer.SetReference(plumbing.NewSymbolicReference(plumbing.NewRemoteReferenceName("origin", "HEAD"), plumbing.NewRemoteReferenceName("origin", headBranch)))
	dst.Storer.SetReference(plumbing.NewHashReference(plumbing.NewBranchReferenceName(headBranch), headHash))
	wt, err := dst.Worktree()
	if err != nil {
		return err
	}
	d := &session{ctx: s.ctx, inv: s.inv, dir: destAbs, out: s.out, repo: dst, wt: wt, root: destAbs, loc: s.loc, extra: s.extra, res: s.res}
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
	return d.applySnapshot(snapshot{}, to, false)
}

// cloneNet clones over smart HTTP: a new repository at the destination,
// remote origin, one fetch of its branches (and the tags into them), then
// a checkout of the remote's HEAD branch (or -b). A failed clone removes
// the directory it made, as git's.
func (s *session) cloneNet(operands []string, branch string, depth int, quiet bool) (err error) {
	raw := operands[0]
	dest := ""
	if len(operands) > 1 {
		dest = operands[1]
	} else {
		u := strings.TrimSuffix(strings.SplitN(raw, "?", 2)[0], "/")
		dest = strings.TrimSuffix(path.Base(u), ".git")
		if dest == "" || dest == "." || dest == "/" || strings.Contains(dest, ":") {
			return fatalf("no directory name could be guessed.\nPlease specify a directory on the command line")
		}
	}
	destAbs := path.Join(s.dir, dest)
	if strings.HasPrefix(dest, "/") {
		destAbs = path.Clean(dest)
	}
	if ents, err := s.inv.FS.ReadDir(destAbs); err == nil && len(ents) > 0 {
		return fatalf("destination path '%s' already exists and is not an empty directory.", dest)
	}
	r, err := s.dial(raw)
	if err != nil {
		return err
	}
	if !quiet {
		fmt.Fprintf(s.inv.Stderr, "Cloning into '%s'...\n", dest)
	}
	_, statErr := s.inv.FS.Stat(destAbs)
	if err := s.inv.FS.MkdirAll(destAbs, 0o755); err != nil {
		return fatalf("could not create work tree dir '%s': %v", dest, err)
	}
	defer func() {
		if err != nil {
			if statErr != nil {
				s.inv.FS.RemoveAll(destAbs)
			} else {
				s.inv.FS.RemoveAll(path.Join(destAbs, ".git"))
			}
		}
	}()
	st := s.storage(path.Join(destAbs, ".git"))
	dst, err := gogit.InitWithOptions(st, newBilly(s.inv.FS, destAbs), gogit.InitOptions{DefaultBranch: plumbing.NewBranchReferenceName("master")})
	if err != nil {
		return fatalf("%v", err)
	}
	spec := config.RefSpec("+refs/heads/*:refs/remotes/origin/*")
	cfg, err := dst.Config()
	if err != nil {
		return err
	}
	cfg.Remotes["origin"] = &config.RemoteConfig{Name: "origin", URLs: []string{raw}, Fetch: []config.RefSpec{spec}}
	if err := dst.SetConfig(cfg); err != nil {
		return err
	}
	d := &session{ctx: s.ctx, inv: s.inv, dir: destAbs, out: s.out, repo: dst, root: destAbs, loc: s.loc, extra: s.extra, quiet: true, res: s.res}
	if d.wt, err = dst.Worktree(); err != nil {
		return err
	}
	f, err := d.fetchFrom(r, []config.RefSpec{spec}, nil, depth)
	if err != nil {
		return err
	}
	headBranch := f.head
	if branch != "" {
		if _, ok := f.adv.References["refs/heads/"+branch]; !ok {
			return fatalf("Remote branch %s not found in upstream origin", branch)
		}
		headBranch = branch
	}
	if headBranch == "" {
		if len(f.adv.References) == 0 {
			fmt.Fprintln(s.inv.Stderr, "warning: You appear to have cloned an empty repository.")
			return nil
		}
		return fatalf("remote HEAD refers to nonexistent ref, unable to checkout")
	}
	headHash := f.adv.References["refs/heads/"+headBranch]
	cfg, err = dst.Config()
	if err != nil {
		return err
	}
	cfg.Branches[headBranch] = &config.Branch{Name: headBranch, Remote: "origin", Merge: plumbing.NewBranchReferenceName(headBranch)}
	if err := dst.SetConfig(cfg); err != nil {
		return err
	}
	dst.Storer.SetReference(plumbing.NewSymbolicReference(plumbing.HEAD, plumbing.NewBranchReferenceName(headBranch)))
	return s.checkoutClone(dst, destAbs, headBranch, headHash)
}
