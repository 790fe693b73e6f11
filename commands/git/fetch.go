package git

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"path"
	"sort"
	"strconv"
	"strings"

	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/packfile"
	"github.com/go-git/go-git/v5/plumbing/protocol/packp"
	"github.com/go-git/go-git/v5/plumbing/protocol/packp/capability"

	"github.com/warren-sandbox/warren/commands/git/smarthttp"
)

// refUpdate is one line of fetch's or push's report.
type refUpdate struct {
	flag     byte   // ' ' fast-forward, '+' forced, '*' new, '!' rejected, '-' deleted
	summary  string // "[new branch]", "1a2b3c4..5d6e7f8"
	from, to string
	note     string // " (forced update)", " (non-fast-forward)"
}

// fetched is what one fetch brought.
type fetched struct {
	adv     *packp.AdvRefs
	head    string // the remote HEAD's branch, from the symref capability
	updates []refUpdate
	heads   []fetchHead
}

// fetchHead is one FETCH_HEAD line.
type fetchHead struct {
	hash     plumbing.Hash
	merge    bool
	name     string // refs/heads/main
	shownURL string
}

// mapping is a remote ref and where it goes locally ("" for FETCH_HEAD only).
type mapping struct {
	src   plumbing.ReferenceName
	dst   plumbing.ReferenceName
	hash  plumbing.Hash
	force bool
	merge bool // explicitly asked for: FETCH_HEAD's merge candidate
}

// fetchFrom fetches from r what specs map (the remote's configured
// refspecs, or asked refspecs), plus the tags that point into it, and
// updates the local refs. depth > 0 makes the fetch shallow.
func (s *session) fetchFrom(r *smarthttp.Remote, specs []config.RefSpec, asked []string, depth int) (*fetched, error) {
	adv, err := r.Advertise(s.ctx, smarthttp.UploadPack)
	if err != nil {
		return nil, s.remoteErr(err)
	}
	f := &fetched{adv: adv}
	for _, v := range adv.Capabilities.Get(capability.SymRef) {
		if src, dst, ok := strings.Cut(v, ":"); ok && src == "HEAD" {
			f.head = plumbing.ReferenceName(dst).Short()
		}
	}
	names := make([]string, 0, len(adv.References))
	for n := range adv.References {
		names = append(names, n)
	}
	sort.Strings(names)
	var maps []mapping
	if len(asked) > 0 {
		for _, a := range asked {
			force := strings.HasPrefix(a, "+")
			src, dst, _ := strings.Cut(strings.TrimPrefix(a, "+"), ":")
			full := ""
			for _, cand := range []string{src, "refs/" + src, "refs/heads/" + src, "refs/tags/" + src} {
				if _, ok := adv.References[cand]; ok {
					full = cand
					break
				}
			}
			if full == "" {
				return nil, fatalf("couldn't find remote ref %s", src)
			}
			m := mapping{src: plumbing.ReferenceName(full), hash: adv.References[full], force: force, merge: true}
			switch {
			case dst != "":
				if !strings.HasPrefix(dst, "refs/") {
					dst = "refs/heads/" + dst
				}
				m.dst = plumbing.ReferenceName(dst)
			default:
				for _, sp := range specs {
					if sp.Match(m.src) {
						m.dst, m.force = sp.Dst(m.src), sp.IsForceUpdate()
					}
				}
			}
			maps = append(maps, m)
		}
	} else {
		for _, n := range names {
			for _, sp := range specs {
				if sp.Match(plumbing.ReferenceName(n)) {
					maps = append(maps, mapping{src: plumbing.ReferenceName(n), dst: sp.Dst(plumbing.ReferenceName(n)), hash: adv.References[n], force: sp.IsForceUpdate()})
				}
			}
		}
		if len(specs) == 0 && adv.Head != nil {
			maps = append(maps, mapping{src: plumbing.HEAD, hash: *adv.Head, merge: true})
		}
	}
	// Tags follow what is fetched or already here (git's auto-follow).
	wanted := map[plumbing.Hash]bool{}
	for _, m := range maps {
		if !s.hasObject(m.hash) {
			wanted[m.hash] = true
		}
	}
	var tags []mapping
	for _, n := range names {
		if !strings.HasPrefix(n, "refs/tags/") || strings.HasSuffix(n, "^{}") {
			continue
		}
		h := adv.References[n]
		target := h
		if p, ok := adv.Peeled[n]; ok {
			target = p
		}
		if _, err := s.repo.Storer.Reference(plumbing.ReferenceName(n)); err == nil {
			continue
		}
		if wanted[target] || s.hasObject(target) {
			tags = append(tags, mapping{src: plumbing.ReferenceName(n), dst: plumbing.ReferenceName(n), hash: h})
			if !s.hasObject(h) {
				wanted[h] = true
			}
		}
	}
	if len(wanted) > 0 {
		if err := s.fetchPack(r, adv, wanted, depth); err != nil {
			return nil, err
		}
	}
	for _, m := range append(maps, tags...) {
		if m.dst == "" || m.merge || m.src.IsBranch() {
			f.heads = append(f.heads, fetchHead{hash: m.hash, merge: m.merge || m.src.IsBranch() && len(asked) == 0 && m.src.Short() == f.head, name: m.src.String(), shownURL: r.URL()})
		}
		if m.dst == "" {
			continue
		}
		if u, ok := s.updateRef(m); ok {
			f.updates = append(f.updates, u)
		}
	}
	return f, nil
}

// fetchPack asks for wanted, offering every local ref tip as a have, and
// stores the pack the server sends.
func (s *session) fetchPack(r *smarthttp.Remote, adv *packp.AdvRefs, wanted map[plumbing.Hash]bool, depth int) error {
	req := packp.NewUploadPackRequest()
	caps := adv.Capabilities
	for _, c := range []capability.Capability{capability.OFSDelta, capability.IncludeTag, capability.NoProgress} {
		if caps.Supports(c) {
			req.Capabilities.Set(c)
		}
	}
	if caps.Supports(capability.Sideband64k) {
		req.Capabilities.Set(capability.Sideband64k)
	} else if caps.Supports(capability.Sideband) {
		req.Capabilities.Set(capability.Sideband)
	}
	req.Capabilities.Set(capability.Agent, "git/2.39.5")
	if depth > 0 {
		if !caps.Supports(capability.Shallow) {
			return fatalf("Server does not support shallow clients")
		}
		req.Capabilities.Set(capability.Shallow)
		req.Depth = packp.DepthCommits(depth)
		if sh, err := s.repo.Storer.Shallow(); err == nil {
			req.Shallows = sh
		}
	}
	for h := range wanted {
		req.Wants = append(req.Wants, h)
	}
	sort.Slice(req.Wants, func(i, j int) bool { return req.Wants[i].String() < req.Wants[j].String() })
	refs, err := s.repo.References()
	if err != nil {
		return err
	}
	seen := map[plumbing.Hash]bool{}
	refs.ForEach(func(ref *plumbing.Reference) error {
		if ref.Type() == plumbing.HashReference && !seen[ref.Hash()] && s.hasObject(ref.Hash()) {
			seen[ref.Hash()] = true
			req.Haves = append(req.Haves, ref.Hash())
		}
		return nil
	})
	resp, pack, err := r.Fetch(s.ctx, req)
	if err != nil {
		return s.remoteErr(err)
	}
	defer pack.Close()
	in, err := s.guardPack(r, pack)
	if err != nil {
		return err
	}
	if err := packfile.UpdateObjectStorage(s.repo.Storer, in); err != nil {
		if ferr := r.Failure(); ferr != nil {
			return s.remoteErr(ferr)
		}
		if s.ctx.Err() != nil {
			return fatalf("unable to access '%s': Operation timed out", r.URL()+"/")
		}
		// the server's side-band error channel (go-git's demuxer words it)
		if msg, ok := strings.CutPrefix(err.Error(), "unexpected error: "); ok {
			return fatalf("remote error: %s", strings.TrimSpace(msg))
		}
		return fatalf("early EOF\nfatal: fetch-pack: invalid index-pack output (%v)", err)
	}
	io.Copy(io.Discard, pack)
	if depth > 0 {
		sh, _ := s.repo.Storer.Shallow()
		known := map[plumbing.Hash]bool{}
		for _, h := range sh {
			known[h] = true
		}
		for _, h := range resp.Shallows {
			if !known[h] {
				sh = append(sh, h)
			}
		}
		if err := s.repo.Storer.SetShallow(sh); err != nil {
			return err
		}
	}
	return nil
}

// Per-object memory go-git's indexer sets aside from a pack's declared
// object count before it reads one object (idxfile.Writer.OnHeader makes
// a slice of that capacity, unclamped), and the most objects a pack may
// declare whatever the budget.
const (
	packObjectCost   = 64
	maxPackObjects   = 1 << 25
	packHeaderLength = 12
)

// guardPack reads the pack's header before go-git does: a server that
// declares two billion objects would have the indexer allocate tens of
// GiB at once. The declared count is charged to the budget first (the
// indexer's slice lives until the command ends) and capped.
func (s *session) guardPack(r *smarthttp.Remote, pack io.Reader) (io.Reader, error) {
	var hdr [packHeaderLength]byte
	if _, err := io.ReadFull(pack, hdr[:]); err != nil {
		if ferr := r.Failure(); ferr != nil {
			return nil, s.remoteErr(ferr)
		}
		return nil, fatalf("early EOF\nfatal: fetch-pack: invalid index-pack output (the pack from '%s' ends in its header)", r.URL())
	}
	if string(hdr[:4]) != "PACK" || (binary.BigEndian.Uint32(hdr[4:8]) != 2 && binary.BigEndian.Uint32(hdr[4:8]) != 3) {
		return nil, fatalf("protocol error: bad pack header from '%s'", r.URL())
	}
	n := binary.BigEndian.Uint32(hdr[8:12])
	if n > maxPackObjects {
		return nil, fatalf("the pack from '%s' declares %d objects, over warren's limit of %d", r.URL(), n, maxPackObjects)
	}
	if err := s.res.Grow(int64(n) * packObjectCost); err != nil {
		return nil, err
	}
	return io.MultiReader(bytes.NewReader(hdr[:]), pack), nil
}

// updateRef moves m.dst to m.hash, fast-forward only unless forced, and
// says what it did as fetch reports it.
func (s *session) updateRef(m mapping) (refUpdate, bool) {
	u := refUpdate{from: m.src.Short(), to: m.dst.Short()}
	old, err := s.repo.Storer.Reference(m.dst)
	switch {
	case err != nil:
		u.flag = '*'
		switch {
		case m.src.IsTag():
			u.summary = "[new tag]"
		case m.src.IsBranch():
			u.summary = "[new branch]"
		default:
			u.summary = "[new ref]"
		}
	case old.Hash() == m.hash:
		return u, false
	case m.dst.IsTag():
		u.flag, u.summary, u.note = '!', "[rejected]", " (would clobber existing tag)"
		return u, true
	case s.isAncestor(old.Hash(), m.hash):
		u.flag, u.summary = ' ', short(old.Hash())+".."+short(m.hash)
	case m.force:
		u.flag, u.summary, u.note = '+', short(old.Hash())+"..."+short(m.hash), " (forced update)"
	default:
		u.flag, u.summary, u.note = '!', "[rejected]", " (non-fast-forward)"
		return u, true
	}
	if err := s.repo.Storer.SetReference(plumbing.NewHashReference(m.dst, m.hash)); err != nil {
		u.flag, u.summary, u.note = '!', "[rejected]", " (unable to update local ref)"
	}
	return u, true
}

// report prints fetch's "From URL" block.
func (s *session) reportFetch(url string, ups []refUpdate) {
	if s.quiet || len(ups) == 0 {
		return
	}
	fmt.Fprintf(s.inv.Stderr, "From %s\n", url)
	w := 10
	for _, u := range ups {
		w = max(w, len(u.from))
	}
	for _, u := range ups {
		fmt.Fprintf(s.inv.Stderr, " %c %-17s %-*s -> %s%s\n", u.flag, u.summary, w, u.from, u.to, u.note)
	}
}

func (s *session) writeFetchHead(heads []fetchHead) {
	if s.root == "" {
		return
	}
	var b strings.Builder
	for _, h := range heads {
		kind := "branch"
		name := plumbing.ReferenceName(h.name)
		switch {
		case name.IsTag():
			kind = "tag"
		case name == plumbing.HEAD:
			fmt.Fprintf(&b, "%s\t\t%s\n", h.hash, h.shownURL)
			continue
		}
		nfm := "not-for-merge"
		if h.merge {
			nfm = ""
		}
		fmt.Fprintf(&b, "%s\t%s\t%s '%s' of %s\n", h.hash, nfm, kind, name.Short(), h.shownURL)
	}
	s.inv.FS.WriteFile(path.Join(s.root, ".git", "FETCH_HEAD"), []byte(b.String()), 0o644)
}

// remoteFrom takes the remote a command names first among its operands
// (else the branch's remote, else origin) and returns the rest.
func (s *session) remoteFrom(operands []string) (*config.RemoteConfig, []string, error) {
	name := s.defaultRemote()
	if len(operands) > 0 {
		name, operands = operands[0], operands[1:]
	}
	rc, err := s.netRemote(name)
	return rc, operands, err
}

// isDepth reports --depth N or --depth=N at args[i].
func isDepth(args []string, i int) bool {
	return args[i] == "--depth" && i+1 < len(args) || strings.HasPrefix(args[i], "--depth=")
}

// depthOption reads the --depth at args[*i] (moving *i past its value).
func depthOption(args []string, i *int) (int, error) {
	v, ok := strings.CutPrefix(args[*i], "--depth=")
	if !ok {
		*i++
		v = args[*i]
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		return 0, fatalf("depth %s is not a positive number", v)
	}
	return n, nil
}

// sortedRefs is the advertised ref names in order.
func sortedRefs(adv *packp.AdvRefs) []string {
	names := make([]string, 0, len(adv.References))
	for n := range adv.References {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// netRemote resolves name to a network remote; a path remote is refused
// (before any effect), so the image's git can fetch it.
func (s *session) netRemote(name string) (*config.RemoteConfig, error) {
	rc, err := s.remoteConfig(name)
	if err != nil {
		return nil, err
	}
	if !isNetworkURL(rc.URLs[0]) {
		return nil, unsupported("from a repository path (only http(s) remotes)")
	}
	return rc, nil
}

// cmdFetch is git fetch [-q] [--depth N] [--tags] [remote [refspec...]].
func cmdFetch(s *session, args []string) error {
	if err := s.open(); err != nil {
		return err
	}
	depth := 0
	var operands []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "-q" || a == "--quiet":
			s.quiet = true
		case isDepth(args, i):
			n, err := depthOption(args, &i)
			if err != nil {
				return err
			}
			depth = n
		case a == "--no-tags" || a == "--progress" || a == "--no-progress" || a == "-v":
		case a == "--":
		case strings.HasPrefix(a, "-"):
			return unknownOpt(a)
		default:
			operands = append(operands, a)
		}
	}
	rc, operands, err := s.remoteFrom(operands)
	if err != nil {
		return err
	}
	r, err := s.dial(rc.URLs[0])
	if err != nil {
		return err
	}
	f, err := s.fetchFrom(r, rc.Fetch, operands, depth)
	if err != nil {
		return err
	}
	s.writeFetchHead(f.heads)
	s.reportFetch(r.URL(), f.updates)
	return rejectedErr(f.updates)
}

func rejectedErr(ups []refUpdate) error {
	for _, u := range ups {
		if u.flag == '!' {
			return errorf(1, "")
		}
	}
	return nil
}

// cmdLsRemote is git ls-remote [--heads] [--tags] [--refs] [-q] [--symref]
// [repository [patterns...]].
func cmdLsRemote(s *session, args []string) error {
	heads, tags, refsOnly, symref, quiet, exit := false, false, false, false, false, false
	var operands []string
	for _, a := range args {
		switch a {
		case "--heads", "-h", "--branches", "-b":
			heads = true
		case "--tags", "-t":
			tags = true
		case "--refs":
			refsOnly = true
		case "--symref":
			symref = true
		case "-q", "--quiet":
			quiet = true
		case "--exit-code":
			exit = true
		default:
			if strings.HasPrefix(a, "-") {
				return unknownOpt(a)
			}
			operands = append(operands, a)
		}
	}
	raw := ""
	if len(operands) > 0 {
		raw, operands = operands[0], operands[1:]
	}
	if !isNetworkURL(raw) {
		if err := s.open(); err != nil {
			return err
		}
		if raw == "" {
			raw = s.defaultRemote()
		}
		rc, err := s.netRemote(raw)
		if err != nil {
			return err
		}
		if !quiet && len(operands) == 0 && raw != rc.URLs[0] && len(args) == 0 {
			fmt.Fprintf(s.inv.Stderr, "From %s\n", rc.URLs[0])
		}
		raw = rc.URLs[0]
	}
	r, err := s.dial(raw)
	if err != nil {
		return err
	}
	adv, err := r.Advertise(s.ctx, smarthttp.UploadPack)
	if err != nil {
		return s.remoteErr(err)
	}
	match := func(n string) bool {
		if heads || tags {
			if !(heads && strings.HasPrefix(n, "refs/heads/") || tags && strings.HasPrefix(n, "refs/tags/")) {
				return false
			}
		}
		if refsOnly && (n == "HEAD" || strings.HasSuffix(n, "^{}")) {
			return false
		}
		if len(operands) == 0 {
			return true
		}
		for _, p := range operands {
			if n == p || strings.HasSuffix(n, "/"+p) {
				return true
			}
		}
		return false
	}
	var lines []string
	if adv.Head != nil && match("HEAD") {
		if symref {
			for _, v := range adv.Capabilities.Get(capability.SymRef) {
				if src, dst, ok := strings.Cut(v, ":"); ok && src == "HEAD" {
					lines = append(lines, "ref: "+dst+"\tHEAD")
				}
			}
		}
		lines = append(lines, adv.Head.String()+"\tHEAD")
	}
	names := make([]string, 0, len(adv.References))
	for n := range adv.References {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if match(n) {
			lines = append(lines, adv.References[n].String()+"\t"+n)
		}
		if p, ok := adv.Peeled[n]; ok && match(n+"^{}") {
			lines = append(lines, p.String()+"\t"+n+"^{}")
		}
	}
	if quiet {
		lines = nil
	}
	for _, l := range lines {
		fmt.Fprintln(s.out, l)
	}
	if exit && len(lines) == 0 {
		return errorf(2, "")
	}
	return nil
}

// cmdPull is fetch, then a merge of the branch's upstream (fast-forward,
// or a merge when asked for with --no-rebase / --no-ff or pull.rebase=false,
// as git 2.39 asks for on divergent branches).
func cmdPull(s *session, args []string) error {
	if err := s.open(); err != nil {
		return err
	}
	var mergeArgs, operands []string
	mode := ""
	for _, a := range args {
		switch {
		case a == "-q" || a == "--quiet":
			s.quiet = true
			mergeArgs = append(mergeArgs, a)
		case a == "--no-rebase" || a == "--ff" || a == "--no-ff":
			mode = "merge"
			if a == "--no-ff" {
				mergeArgs = append(mergeArgs, a)
			}
		case a == "--ff-only":
			mode = "ff-only"
		case a == "--no-edit" || a == "--stat" || a == "--no-verify":
		case a == "-r" || a == "--rebase" || strings.HasPrefix(a, "--rebase="):
			return unsupported("pull --rebase")
		case strings.HasPrefix(a, "-"):
			return unknownOpt(a)
		default:
			operands = append(operands, a)
		}
	}
	b, onBranch := s.branchName()
	if !onBranch {
		return fatalf("You are not currently on a branch.\nPlease specify which branch you want to merge with.")
	}
	rc, operands, err := s.remoteFrom(operands)
	if err != nil {
		return err
	}
	if mode == "" {
		if v, ok := s.configValue("pull.ff"); ok && v == "only" {
			mode = "ff-only"
		} else if v, ok := s.configValue("pull.rebase"); ok && v == "false" {
			mode = "merge"
		} else if ok && v != "" {
			return unsupported("pull with pull.rebase=" + v)
		}
	}
	var mergeRef plumbing.ReferenceName
	if len(operands) == 0 {
		cfg, _ := s.repo.Config()
		br, ok := cfg.Branches[b]
		if !ok || br.Merge == "" {
			return fatalf("There is no tracking information for the current branch.\nPlease specify which branch you want to merge with.\nSee git-pull(1) for details.\n\n    git pull <remote> <branch>\n\nIf you wish to set tracking information for this branch you can do so with:\n\n    git branch --set-upstream-to=%s/<branch> %s\n", rc.Name, b)
		}
		mergeRef = br.Merge
		operands = []string{br.Merge.String()}
	} else if len(operands) > 1 {
		return unsupported("octopus merges")
	}
	r, err := s.dial(rc.URLs[0])
	if err != nil {
		return err
	}
	f, err := s.fetchFrom(r, rc.Fetch, operands, 0)
	if err != nil {
		return err
	}
	s.writeFetchHead(f.heads)
	s.reportFetch(r.URL(), f.updates)
	var theirs plumbing.Hash
	for _, h := range f.heads {
		if h.merge && (mergeRef == "" || plumbing.ReferenceName(h.name) == mergeRef) {
			theirs = h.hash
			mergeRef = plumbing.ReferenceName(h.name)
			break
		}
	}
	if theirs.IsZero() {
		return fatalf("couldn't find remote ref %s", operands[0])
	}
	head, err := s.head()
	if err == nil && !s.isAncestor(theirs, head.Hash()) && !s.isAncestor(head.Hash(), theirs) {
		switch mode {
		case "ff-only":
			return fatalf("Not possible to fast-forward, aborting.")
		case "":
			return errorf(128, "hint: You have divergent branches and need to specify how to reconcile them.\nhint: You can do so by running one of the following commands sometime before\nhint: your next pull:\nhint: \nhint:   git config pull.rebase false  # merge\nhint:   git config pull.rebase true   # rebase\nhint:   git config pull.ff only       # fast-forward only\nhint: \nhint: You can replace \"git config\" with \"git config --global\" to set a default\nhint: preference for all repositories. You can also pass --rebase, --no-rebase,\nhint: or --ff-only on the command line to override the configured default per\nhint: invocation.\nfatal: Need to specify how to reconcile divergent branches.")
		}
	}
	msg := fmt.Sprintf("Merge branch '%s' of %s", mergeRef.Short(), r.URL())
	return cmdMerge(s, append(mergeArgs, "-m", msg, theirs.String()))
}
