package git

import (
	"bytes"
	"fmt"
	"io"
	"strings"

	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/packfile"
	"github.com/go-git/go-git/v5/plumbing/protocol/packp"
	"github.com/go-git/go-git/v5/plumbing/protocol/packp/capability"
	"github.com/go-git/go-git/v5/plumbing/revlist"

	"github.com/warren-sandbox/warren/commands/git/smarthttp"
)

// pushRef is one ref a push sends.
type pushRef struct {
	src, dst plumbing.ReferenceName
	old, new plumbing.Hash
	force    bool
	up       refUpdate
}

// cmdPush is git push [-u] [-f] [--delete] [-q] [remote [refspec...]].
func cmdPush(s *session, args []string) error {
	if err := s.open(); err != nil {
		return err
	}
	setUp, force, del := false, false, false
	var operands []string
	for _, a := range args {
		switch {
		case a == "-u" || a == "--set-upstream":
			setUp = true
		case a == "-f" || a == "--force":
			force = true
		case a == "-d" || a == "--delete":
			del = true
		case a == "-q" || a == "--quiet":
			s.quiet = true
		case a == "--no-verify" || a == "--progress" || a == "--no-progress" || a == "-v":
		case strings.HasPrefix(a, "-"):
			return unknownOpt(a)
		default:
			operands = append(operands, a)
		}
	}
	branch, onBranch := s.branchName()
	rc, operands, err := s.remoteFrom(operands)
	if err != nil {
		return err
	}
	name := rc.Name
	if name == "" {
		name = rc.URLs[0]
	}
	if len(operands) == 0 {
		if !onBranch {
			return fatalf("You are not currently on a branch.\nTo push the history leading to the current (detached HEAD)\nstate now, use\n\n    git push %s HEAD:<name-of-remote-branch>\n", name)
		}
		cfg, _ := s.repo.Config()
		if br, ok := cfg.Branches[branch]; (!ok || br.Merge == "" || br.Remote != name) && !setUp {
			return fatalf("The current branch %s has no upstream branch.\nTo push the current branch and set the remote as upstream, use\n\n    git push --set-upstream %s %s\n\nTo have this happen automatically for branches without a tracking\nupstream, see 'push.autoSetupRemote' in 'git help config'.\n", branch, name, branch)
		}
		operands = []string{branch}
	}
	var refs []*pushRef
	for _, spec := range operands {
		p := &pushRef{force: force}
		if strings.HasPrefix(spec, "+") {
			p.force, spec = true, spec[1:]
		}
		src, dst, hasDst := strings.Cut(spec, ":")
		if del {
			src, dst, hasDst = "", spec, true
		}
		if !hasDst {
			dst = src
		}
		if src != "" {
			h, err := s.resolve(src)
			if err != nil {
				return errorf(1, "error: src refspec %s does not match any\nerror: failed to push some refs to '%s'", src, rc.URLs[0])
			}
			p.new = h
			p.src = plumbing.ReferenceName(src)
			if src == "HEAD" && onBranch {
				p.src = plumbing.NewBranchReferenceName(branch)
			} else if !strings.HasPrefix(src, "refs/") {
				if _, err := s.repo.Storer.Reference(plumbing.NewTagReferenceName(src)); err == nil {
					p.src = plumbing.NewTagReferenceName(src)
				} else {
					p.src = plumbing.NewBranchReferenceName(src)
				}
			}
		}
		switch {
		case strings.HasPrefix(dst, "refs/"):
			p.dst = plumbing.ReferenceName(dst)
		case dst == "HEAD" && onBranch:
			p.dst = plumbing.NewBranchReferenceName(branch)
		case p.src.IsTag():
			p.dst = plumbing.NewTagReferenceName(dst)
		default:
			p.dst = plumbing.NewBranchReferenceName(dst)
		}
		refs = append(refs, p)
	}
	r, err := s.dial(rc.URLs[0])
	if err != nil {
		return err
	}
	adv, err := r.Advertise(s.ctx, smarthttp.ReceivePack)
	if err != nil {
		return s.remoteErr(err)
	}
	req := packp.NewReferenceUpdateRequestFromCapabilities(adv.Capabilities)
	req.Capabilities.Set(capability.Agent, "git/2.39.5")
	for _, c := range []capability.Capability{capability.OFSDelta, capability.DeleteRefs, capability.Quiet} {
		if adv.Capabilities.Supports(c) && (c != capability.Quiet || s.quiet) {
			req.Capabilities.Set(c)
		}
	}
	if adv.Capabilities.Supports(capability.Sideband64k) {
		req.Capabilities.Set(capability.Sideband64k)
	}
	var sendNew, haves []plumbing.Hash
	for _, h := range adv.References {
		if s.hasObject(h) {
			haves = append(haves, h)
		}
	}
	rejected, fetchFirst := false, false
	for _, p := range refs {
		p.old = adv.References[p.dst.String()]
		p.up = refUpdate{from: p.src.Short(), to: p.dst.Short()}
		switch {
		case p.new.IsZero() && p.old.IsZero():
			return errorf(1, "error: unable to delete '%s': remote ref does not exist\nerror: failed to push some refs to '%s'", p.dst.Short(), r.URL())
		case p.new.IsZero():
			p.up.flag, p.up.summary, p.up.from = '-', "[deleted]", p.dst.Short()
		case p.old == p.new:
			p.up.flag, p.up.summary = '=', "[up to date]"
			continue
		case p.old.IsZero():
			p.up.flag, p.up.summary = '*', "[new branch]"
			if p.dst.IsTag() {
				p.up.summary = "[new tag]"
			}
		case !s.hasObject(p.old) && !p.force:
			p.up.flag, p.up.summary, p.up.note = '!', "[rejected]", " (fetch first)"
			rejected, fetchFirst = true, true
			continue
		case p.dst.IsTag() && !p.force:
			p.up.flag, p.up.summary, p.up.note = '!', "[rejected]", " (already exists)"
			rejected = true
			continue
		case s.isAncestor(p.old, p.new):
			p.up.flag, p.up.summary = ' ', short(p.old)+".."+short(p.new)
		case p.force:
			p.up.flag, p.up.summary, p.up.note = '+', short(p.old)+"..."+short(p.new), " (forced update)"
		default:
			p.up.flag, p.up.summary, p.up.note = '!', "[rejected]", " (non-fast-forward)"
			rejected = true
			continue
		}
		req.Commands = append(req.Commands, &packp.Command{Name: p.dst, Old: p.old, New: p.new})
		if !p.new.IsZero() {
			sendNew = append(sendNew, p.new)
		}
	}
	if len(req.Commands) > 0 {
		if len(sendNew) > 0 {
			hashes, err := revlist.Objects(s.repo.Storer, sendNew, haves)
			if err != nil {
				return fatalf("bad object: %v", err)
			}
			var pack bytes.Buffer
			cw := &chargedWriter{w: &pack, s: s}
			if _, err := packfile.NewEncoder(cw, s.repo.Storer, false).Encode(hashes, 10); err != nil {
				if cw.err != nil {
					return cw.err
				}
				return fatalf("pack-objects died: %v", err)
			}
			req.Packfile = io.NopCloser(&pack)
		}
		var remoteMsgs bytes.Buffer
		rs, err := r.Push(s.ctx, req, &remoteMsgs)
		for _, l := range strings.SplitAfter(remoteMsgs.String(), "\n") {
			if strings.TrimSpace(l) != "" {
				fmt.Fprintf(s.inv.Stderr, "remote: %s", l)
				if !strings.HasSuffix(l, "\n") {
					fmt.Fprintln(s.inv.Stderr)
				}
			}
		}
		if err != nil {
			return s.remoteErr(err)
		}
		if rs != nil {
			status := map[plumbing.ReferenceName]string{}
			for _, cs := range rs.CommandStatuses {
				status[cs.ReferenceName] = cs.Status
			}
			for _, p := range refs {
				if st, ok := status[p.dst]; ok && st != "ok" {
					p.up.flag, p.up.summary, p.up.note = '!', "[remote rejected]", " ("+st+")"
					rejected = true
				}
			}
			if rs.UnpackStatus != "ok" {
				fmt.Fprintf(s.inv.Stderr, "error: remote unpack failed: %s\n", rs.UnpackStatus)
				rejected = true
			}
		}
	}
	s.reportPush(r.URL(), refs)
	if rejected {
		msg := fmt.Sprintf("error: failed to push some refs to '%s'", r.URL())
		if fetchFirst {
			msg += "\nhint: Updates were rejected because the remote contains work that you do\nhint: not have locally. This is usually caused by another repository pushing\nhint: to the same ref. You may want to first integrate the remote changes\nhint: (e.g., 'git pull ...') before pushing again.\nhint: See the 'Note about fast-forwards' in 'git push --help' for details."
		} else {
			for _, p := range refs {
				if p.up.note == " (non-fast-forward)" {
					msg += "\nhint: Updates were rejected because the tip of your current branch is behind\nhint: its remote counterpart. Integrate the remote changes (e.g.\nhint: 'git pull ...') before pushing again.\nhint: See the 'Note about fast-forwards' in 'git push --help' for details."
					break
				}
			}
		}
		s.updateTracking(rc, refs)
		return errorf(1, "%s", msg)
	}
	s.updateTracking(rc, refs)
	if setUp && rc.Name != "" {
		for _, p := range refs {
			if p.src.IsBranch() && p.dst.IsBranch() && !p.new.IsZero() {
				s.setUpstreamTo(p.src.Short(), rc.Name, p.dst)
				if !s.quiet {
					fmt.Fprintf(s.inv.Stdout, "branch '%s' set up to track '%s/%s'.\n", p.src.Short(), rc.Name, p.dst.Short())
				}
			}
		}
	}
	return nil
}

// updateTracking moves the remote-tracking refs of what the server took.
func (s *session) updateTracking(rc *config.RemoteConfig, refs []*pushRef) {
	for _, p := range refs {
		if p.up.flag == '!' || p.up.flag == '=' {
			continue
		}
		for _, sp := range rc.Fetch {
			if !sp.Match(p.dst) {
				continue
			}
			if p.new.IsZero() {
				s.repo.Storer.RemoveReference(sp.Dst(p.dst))
			} else {
				s.repo.Storer.SetReference(plumbing.NewHashReference(sp.Dst(p.dst), p.new))
			}
		}
	}
}

func (s *session) setUpstreamTo(branch, remote string, merge plumbing.ReferenceName) {
	cfg, err := s.repo.Config()
	if err != nil {
		return
	}
	cfg.Branches[branch] = &config.Branch{Name: branch, Remote: remote, Merge: merge}
	s.repo.SetConfig(cfg)
}

// reportPush prints push's "To URL" block (or "Everything up-to-date").
func (s *session) reportPush(url string, refs []*pushRef) {
	all := true
	for _, p := range refs {
		all = all && p.up.flag == '='
	}
	if all {
		fmt.Fprintln(s.inv.Stderr, "Everything up-to-date")
		return
	}
	if s.quiet {
		return
	}
	fmt.Fprintf(s.inv.Stderr, "To %s\n", url)
	for _, p := range refs {
		if p.up.flag == '=' {
			continue
		}
		fmt.Fprintf(s.inv.Stderr, " %c %-17s %s -> %s%s\n", p.up.flag, p.up.summary, p.up.from, p.up.to, p.up.note)
	}
}

// chargedWriter charges what the pack encoder writes to the budget before
// it is kept (the pack is held whole: the request has to know its length).
type chargedWriter struct {
	w   io.Writer
	s   *session
	err error
}

func (c *chargedWriter) Write(p []byte) (int, error) {
	if err := c.s.res.Grow(int64(len(p))); err != nil {
		c.err = err
		return 0, err
	}
	return c.w.Write(p)
}
