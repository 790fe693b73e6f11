package git

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	gogit "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/storer"

	"github.com/warren-sandbox/warren/commands/sysinfo"
)

// logOpts are the options git log and git show share.
type logOpts struct {
	format    string // "medium", "oneline", "short", "full", "fuller", "raw" or "format:..." / "tformat:..."
	dateStyle string
	max       int
	patch     bool
	diff      diffOpts
	reverse   bool
	noPatch   bool
	explicitP bool
	oneline   bool // --oneline or --pretty=oneline: no blank line before a stat
	graph     bool
	author    string
	grep      string
	noMerges  bool
	merges    bool // --merges: only commits with more than one parent
	// firstParent follows only first parents, and shows a merge's
	// changes against its first parent, as git 2.39 does
	firstParent bool
}

func parseLogOpts(args []string, o *logOpts) ([]string, []string, error) {
	var revs, paths []string
	dashdash := false
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case dashdash:
			paths = append(paths, a)
		case a == "--":
			dashdash = true
		case a == "--oneline":
			o.format, o.oneline = "tformat:%h %s", true
		case strings.HasPrefix(a, "--pretty=") || strings.HasPrefix(a, "--format="):
			v := a[strings.IndexByte(a, '=')+1:]
			switch v {
			case "oneline", "short", "medium", "full", "fuller", "raw":
				o.format = v
			default:
				if !strings.HasPrefix(v, "format:") && !strings.HasPrefix(v, "tformat:") {
					v = "tformat:" + v
				}
				o.format = v
			}
		case a == "--pretty":
			o.format = "medium"
		case a == "-n" && i+1 < len(args):
			i++
			n, err := strconv.Atoi(args[i])
			if err != nil {
				return nil, nil, fatalf("'%s': not an integer", args[i])
			}
			o.max = n
		case strings.HasPrefix(a, "--max-count="):
			n, _ := strconv.Atoi(strings.TrimPrefix(a, "--max-count="))
			o.max = n
		case strings.HasPrefix(a, "-n") && len(a) > 2:
			n, err := strconv.Atoi(a[2:])
			if err != nil {
				return nil, nil, unknownOpt(a)
			}
			o.max = n
		case len(a) > 1 && a[0] == '-' && a[1] >= '0' && a[1] <= '9':
			n, _ := strconv.Atoi(a[1:])
			o.max = n
		case a == "-p" || a == "--patch" || a == "-u":
			o.patch, o.explicitP = true, true
		case a == "-s" || a == "--no-patch":
			o.noPatch = true
		case a == "--stat":
			o.diff.stat = true
		case a == "--name-only":
			o.diff.nameOnly = true
		case a == "--no-renames":
			o.diff.noRenames = true
		case a == "-M" || a == "--find-renames":
			o.diff.noRenames = false
		case a == "--name-status":
			o.diff.nameStatus = true
		case a == "--reverse":
			o.reverse = true
		case strings.HasPrefix(a, "--date="):
			o.dateStyle = strings.TrimPrefix(a, "--date=")
		case strings.HasPrefix(a, "--author="):
			o.author = strings.TrimPrefix(a, "--author=")
		case strings.HasPrefix(a, "--grep="):
			o.grep = strings.TrimPrefix(a, "--grep=")
		case a == "--graph":
			o.graph = true
		case a == "--no-merges":
			o.noMerges = true
		case a == "--merges":
			o.merges = true
		case a == "--first-parent":
			o.firstParent = true
		case a == "--no-color" || a == "--color=never" || a == "--decorate" || a == "--no-decorate" || a == "--abbrev-commit":
			// --all used to be ignored here, which gave wrong output on
			// branches: it is refused now
		case strings.HasPrefix(a, "-"):
			return nil, nil, unknownOpt(a)
		default:
			revs = append(revs, a)
		}
	}
	return revs, paths, nil
}

func cmdLog(s *session, args []string) error {
	o := &logOpts{format: "medium", max: -1}
	revs, paths, err := parseLogOpts(args, o)
	if isRefusal(err) {
		return err // what it cannot do, repository or not (warren classify)
	}
	if err := s.open(); err != nil {
		return err
	}
	if err != nil {
		return err
	}
	// an operand that is not a revision but exists is a path
	var realRevs []string
	for _, r := range revs {
		base, _, _ := strings.Cut(r, "..")
		if _, err := s.repo.ResolveRevision(plumbing.Revision(base)); err != nil {
			if _, serr := s.inv.FS.Lstat(pathJoin(s.dir, r)); serr == nil {
				paths = append(paths, r)
				continue
			}
			return fatalf("ambiguous argument '%s': unknown revision or path not in the working tree.\nUse '--' to separate paths from revisions, like this:\n'git <command> [<revision>...] -- [<file>...]'", r)
		}
		realRevs = append(realRevs, r)
	}
	from := "HEAD"
	var exclude plumbing.Hash
	if len(realRevs) > 0 {
		from = realRevs[0]
		if x, y, ok := strings.Cut(from, ".."); ok {
			h, err := s.resolve(x)
			if err != nil {
				return err
			}
			exclude = h
			from = y
			if from == "" {
				from = "HEAD"
			}
		}
	}
	h, err := s.repo.ResolveRevision(plumbing.Revision(from))
	if err != nil {
		if from == "HEAD" {
			b, _ := s.branchName()
			return fatalf("your current branch '%s' does not have any commits yet", b)
		}
		return fatalf("ambiguous argument '%s': unknown revision or path not in the working tree.", from)
	}
	filter, err := s.pathFilter(paths)
	if err != nil {
		return err
	}
	iter, err := s.logFrom(*h, o.firstParent)
	if err != nil {
		return err
	}
	var excluded map[plumbing.Hash]bool
	if !exclude.IsZero() {
		excluded = map[plumbing.Hash]bool{}
		if ex, err := s.repo.Log(&gogit.LogOptions{From: exclude}); err == nil {
			ex.ForEach(func(c *object.Commit) error { excluded[c.Hash] = true; return nil })
		}
	}
	var list []*object.Commit
	err = iter.ForEach(func(c *object.Commit) error {
		if o.max >= 0 && len(list) >= o.max && !o.reverse {
			return storer.ErrStop
		}
		if excluded[c.Hash] || (o.noMerges && c.NumParents() > 1) || (o.merges && c.NumParents() < 2) {
			return nil
		}
		if o.author != "" && !strings.Contains(c.Author.Name+" <"+c.Author.Email+">", o.author) {
			return nil
		}
		if o.grep != "" && !strings.Contains(c.Message, o.grep) {
			return nil
		}
		if filter != nil {
			changes, err := s.commitChanges(c)
			if err != nil {
				return err
			}
			touched := false
			for _, ch := range changes {
				if filter(ch.name()) {
					touched = true
				}
			}
			if !touched {
				return nil
			}
		}
		list = append(list, c)
		return nil
	})
	if err != nil {
		return err
	}
	if o.reverse {
		for i, j := 0, len(list)-1; i < j; i, j = i+1, j-1 {
			list[i], list[j] = list[j], list[i]
		}
		if o.max >= 0 && len(list) > o.max {
			list = list[:o.max]
		}
	}
	// --graph is drawn for linear history with one-line formats: "* "
	// before each commit; merges are listed without the graph
	linear := true
	for _, c := range list {
		if c.NumParents() > 1 {
			linear = false
		}
	}
	graph := o.graph && linear && (o.oneline || o.format == "oneline" || strings.HasPrefix(o.format, "tformat:"))
	for i, c := range list {
		if graph {
			s.out.WriteString("* ")
		}
		if err := s.showCommit(c, o, i > 0, filter); err != nil {
			return err
		}
	}
	return nil
}

func pathJoin(dir, p string) string {
	if strings.HasPrefix(p, "/") {
		return p
	}
	return dir + "/" + p
}

// commitChanges diffs c against its first parent (or the empty tree).
func (s *session) commitChanges(c *object.Commit) ([]*fileChange, error) {
	var pt *object.Tree
	if c.NumParents() > 0 && !s.isShallow(c.Hash) {
		p, err := c.Parent(0)
		if err != nil {
			return nil, err
		}
		if pt, err = p.Tree(); err != nil {
			return nil, err
		}
	}
	t, err := c.Tree()
	if err != nil {
		return nil, err
	}
	return s.treeChanges(pt, t)
}

// decorations renders " (HEAD -> master, tag: v1)" refs pointing at h.
func (s *session) decorations(h plumbing.Hash) string {
	var names []string
	head, _ := s.repo.Storer.Reference(plumbing.HEAD)
	headBranch := ""
	if head != nil && head.Type() == plumbing.SymbolicReference {
		headBranch = head.Target().Short()
	}
	if hr, err := s.repo.Head(); err == nil && hr.Hash() == h {
		if headBranch != "" {
			names = append(names, "HEAD -> "+headBranch)
		} else {
			names = append(names, "HEAD")
		}
	}
	refs, err := s.repo.References()
	if err == nil {
		refs.ForEach(func(r *plumbing.Reference) error {
			if r.Type() != plumbing.HashReference {
				return nil
			}
			target := r.Hash()
			if r.Name().IsTag() {
				if t, err := s.repo.TagObject(target); err == nil {
					target = t.Target
				}
			}
			if target != h {
				return nil
			}
			switch {
			case r.Name().IsBranch():
				if r.Name().Short() != headBranch {
					names = append(names, r.Name().Short())
				}
			case r.Name().IsTag():
				names = append(names, "tag: "+r.Name().Short())
			case r.Name().IsRemote():
				names = append(names, r.Name().Short())
			}
			return nil
		})
	}
	if len(names) == 0 {
		return ""
	}
	return " (" + strings.Join(names, ", ") + ")"
}

func (s *session) formatDate(t time.Time, style string) string {
	switch {
	case style == "iso" || style == "iso8601":
		return t.Format("2006-01-02 15:04:05 -0700")
	case style == "iso-strict" || style == "iso8601-strict":
		return t.Format(time.RFC3339)
	case style == "short":
		return t.Format("2006-01-02")
	case style == "unix":
		return strconv.FormatInt(t.Unix(), 10)
	case style == "raw":
		return strconv.FormatInt(t.Unix(), 10) + " " + t.Format("-0700")
	case style == "rfc" || style == "rfc2822":
		return t.Format("Mon, 2 Jan 2006 15:04:05 -0700")
	case style == "relative":
		return relativeDate(s.inv.Now(), t)
	case strings.HasPrefix(style, "format:"):
		return sysinfo.Strftime(strings.TrimPrefix(style, "format:"), t)
	case style == "local":
		return t.In(s.loc).Format("Mon Jan 2 15:04:05 2006")
	}
	return t.Format("Mon Jan 2 15:04:05 2006 -0700")
}

func relativeDate(now, t time.Time) string {
	d := now.Sub(t)
	if d < 0 {
		return "in the future"
	}
	sec := int(d.Seconds())
	unit := func(n int, u string) string {
		if n == 1 {
			return fmt.Sprintf("%d %s ago", n, u)
		}
		return fmt.Sprintf("%d %ss ago", n, u)
	}
	switch {
	case sec < 90:
		return unit(sec, "second")
	case sec < 90*60:
		return unit((sec+30)/60, "minute")
	case sec < 36*3600:
		return unit((sec+1800)/3600, "hour")
	case sec < 14*86400:
		return unit((sec+43200)/86400, "day")
	case sec < 70*86400:
		return unit((sec+302400)/604800, "week")
	case sec < 365*86400:
		return unit((sec+1296000)/2592000, "month")
	}
	years := sec / 31536000
	return unit(years, "year")
}

// showCommit prints c in o's format, followed by its diff when asked.
func (s *session) showCommit(c *object.Commit, o *logOpts, notFirst bool, filter func(string) bool) error {
	w := s.out
	body := strings.TrimRight(c.Message, "\n")
	switch {
	case strings.HasPrefix(o.format, "format:") || strings.HasPrefix(o.format, "tformat:"):
		f := o.format[strings.IndexByte(o.format, ':')+1:]
		if strings.HasPrefix(o.format, "format:") && notFirst {
			w.WriteString("\n")
		}
		w.WriteString(s.expandFormat(f, c, o))
		if strings.HasPrefix(o.format, "tformat:") && f != "" {
			w.WriteString("\n")
		}
	case o.format == "oneline":
		fmt.Fprintf(w, "%s %s\n", c.Hash, firstLine(body))
	default:
		if notFirst {
			w.WriteString("\n")
		}
		fmt.Fprintf(w, "commit %s\n", c.Hash)
		if c.NumParents() > 1 {
			var ps []string
			for _, p := range c.ParentHashes {
				ps = append(ps, short(p))
			}
			fmt.Fprintf(w, "Merge: %s\n", strings.Join(ps, " "))
		}
		if o.format == "fuller" {
			fmt.Fprintf(w, "Author:     %s <%s>\n", c.Author.Name, c.Author.Email)
		} else {
			fmt.Fprintf(w, "Author: %s <%s>\n", c.Author.Name, c.Author.Email)
		}
		switch o.format {
		case "medium":
			fmt.Fprintf(w, "Date:   %s\n", s.formatDate(c.Author.When, o.dateStyle))
		case "full":
			fmt.Fprintf(w, "Commit: %s <%s>\n", c.Committer.Name, c.Committer.Email)
		case "fuller":
			fmt.Fprintf(w, "AuthorDate: %s\nCommit:     %s <%s>\nCommitDate: %s\n", s.formatDate(c.Author.When, o.dateStyle),
				c.Committer.Name, c.Committer.Email, s.formatDate(c.Committer.When, o.dateStyle))
		}
		w.WriteString("\n")
		lines := strings.Split(body, "\n")
		if o.format == "short" {
			lines = lines[:1]
		}
		for _, l := range lines {
			w.WriteString("    " + l + "\n")
		}
	}
	if o.noPatch || !(o.patch || o.diff.stat || o.diff.nameOnly || o.diff.nameStatus) {
		return nil
	}
	changes, err := s.commitChanges(c)
	if err != nil {
		return err
	}
	if filter != nil {
		var kept []*fileChange
		for _, ch := range changes {
			if filter(ch.name()) {
				kept = append(kept, ch)
			}
		}
		changes = kept
	}
	// renames are found among the files the pathspecs leave, as git does
	if !o.diff.noRenames {
		if changes, err = s.findRenames(changes); err != nil {
			return err
		}
	}
	// an empty --format= prints the changes alone, without a blank line
	oneline := o.oneline || o.format == "oneline" || o.format == "tformat:"
	if o.diff.stat || o.diff.nameOnly || o.diff.nameStatus {
		if !oneline {
			w.WriteString("\n")
		}
		s.printChanges(changes, o.diff)
		if o.patch && !o.diff.nameOnly && !o.diff.nameStatus {
			w.WriteString("\n")
			for _, ch := range changes {
				writePatch(w, ch, 3)
			}
		}
		return nil
	}
	if c.NumParents() > 1 && !o.firstParent {
		// git shows a merge's combined diff, which is empty for a merge
		// without conflicts (the only kind warren makes)
		return nil
	}
	if len(changes) > 0 && !oneline {
		w.WriteString("\n")
	}
	for _, ch := range changes {
		writePatch(w, ch, 3)
	}
	return nil
}

// expandFormat implements the --format placeholders agents use.
func (s *session) expandFormat(f string, c *object.Commit, o *logOpts) string {
	var b strings.Builder
	msg := strings.TrimRight(c.Message, "\n")
	subject, rest, _ := strings.Cut(msg, "\n")
	bodyText := strings.TrimLeft(rest, "\n")
	for i := 0; i < len(f); i++ {
		if f[i] != '%' || i+1 >= len(f) {
			b.WriteByte(f[i])
			continue
		}
		i++
		switch f[i] {
		case '%':
			b.WriteByte('%')
		case 'n':
			b.WriteByte('\n')
		case 'H':
			b.WriteString(c.Hash.String())
		case 'h':
			b.WriteString(short(c.Hash))
		case 'T':
			b.WriteString(c.TreeHash.String())
		case 't':
			b.WriteString(short(c.TreeHash))
		case 'P', 'p':
			var ps []string
			for _, p := range c.ParentHashes {
				if f[i] == 'P' {
					ps = append(ps, p.String())
				} else {
					ps = append(ps, short(p))
				}
			}
			b.WriteString(strings.Join(ps, " "))
		case 's':
			b.WriteString(subject)
		case 'b':
			if bodyText != "" {
				b.WriteString(bodyText + "\n")
			}
		case 'B':
			b.WriteString(msg + "\n")
		case 'd':
			b.WriteString(s.decorations(c.Hash))
		case 'D':
			b.WriteString(strings.TrimSuffix(strings.TrimPrefix(s.decorations(c.Hash), " ("), ")"))
		case 'a', 'c':
			sig := c.Author
			if f[i] == 'c' {
				sig = c.Committer
			}
			if i+1 >= len(f) {
				b.WriteByte('%')
				b.WriteByte(f[i])
				continue
			}
			i++
			switch f[i] {
			case 'n', 'N':
				b.WriteString(sig.Name)
			case 'e', 'E':
				b.WriteString(sig.Email)
			case 'l':
				l, _, _ := strings.Cut(sig.Email, "@")
				b.WriteString(l)
			case 'd':
				b.WriteString(s.formatDate(sig.When, o.dateStyle))
			case 'D':
				b.WriteString(s.formatDate(sig.When, "rfc"))
			case 'r':
				b.WriteString(relativeDate(s.inv.Now(), sig.When))
			case 't':
				b.WriteString(strconv.FormatInt(sig.When.Unix(), 10))
			case 'i':
				b.WriteString(s.formatDate(sig.When, "iso"))
			case 'I':
				b.WriteString(s.formatDate(sig.When, "iso-strict"))
			case 's':
				b.WriteString(s.formatDate(sig.When, "short"))
			default:
				b.WriteString("%" + string(f[i-1]) + string(f[i]))
			}
		case 'C':
			// colour directives print nothing: output is never a terminal
			if i+1 < len(f) && f[i+1] == '(' {
				if j := strings.IndexByte(f[i:], ')'); j >= 0 {
					i += j
					continue
				}
			}
			for _, name := range []string{"reset", "red", "green", "blue", "yellow", "magenta", "cyan", "white", "bold"} {
				if strings.HasPrefix(f[i+1:], name) {
					i += len(name)
					break
				}
			}
		case 'x':
			if i+2 < len(f) {
				if v, err := strconv.ParseUint(f[i+1:i+3], 16, 8); err == nil {
					b.WriteByte(byte(v))
					i += 2
					continue
				}
			}
			b.WriteString("%x")
		default:
			b.WriteByte('%')
			b.WriteByte(f[i])
		}
	}
	return b.String()
}

// ---- show ----

func cmdShow(s *session, args []string) error {
	o := &logOpts{format: "medium", max: -1, patch: true}
	revs, paths, err := parseLogOpts(args, o)
	if isRefusal(err) {
		return err // what it cannot do, repository or not (warren classify)
	}
	if err := s.open(); err != nil {
		return err
	}
	if err != nil {
		return err
	}
	if (o.diff.stat || o.diff.nameOnly || o.diff.nameStatus) && !o.explicitP {
		o.patch = false
	}
	if len(revs) == 0 {
		revs = []string{"HEAD"}
	}
	filter, err := s.pathFilter(paths)
	if err != nil {
		return err
	}
	for i, r := range revs {
		if strings.Contains(r, ":") {
			h, err := s.resolveObject(r)
			if err != nil {
				return err
			}
			blob, err := s.repo.BlobObject(h)
			if err != nil {
				t, terr := s.repo.TreeObject(h)
				if terr != nil {
					return fatalf("bad object %s", r)
				}
				fmt.Fprintf(s.out, "tree %s\n\n", r)
				for _, e := range t.Entries {
					n := e.Name
					if !e.Mode.IsFile() {
						n += "/"
					}
					fmt.Fprintln(s.out, n)
				}
				continue
			}
			rd, _ := blob.Reader()
			io.Copy(s.out, rd)
			rd.Close()
			continue
		}
		h, err := s.resolve(r)
		if err != nil {
			return err
		}
		if ref, err := s.repo.Tag(r); err == nil {
			h = ref.Hash() // an annotated tag shows itself, then its commit
		}
		if tag, err := s.repo.TagObject(h); err == nil {
			fmt.Fprintf(s.out, "tag %s\nTagger: %s <%s>\nDate:   %s\n\n%s\n\n", tag.Name, tag.Tagger.Name, tag.Tagger.Email,
				s.formatDate(tag.Tagger.When, o.dateStyle), strings.TrimRight(tag.Message, "\n"))
			h = tag.Target
		}
		c, err := s.repo.CommitObject(h)
		if err != nil {
			return fatalf("bad object %s", r)
		}
		if err := s.showCommit(c, o, i > 0, filter); err != nil {
			return err
		}
	}
	return nil
}

// isShallow reports a commit at the edge of a shallow clone: its parents
// are not here, so it shows as a root (as git's grafts make it).
func (s *session) isShallow(h plumbing.Hash) bool {
	sh, err := s.repo.Storer.Shallow()
	if err != nil {
		return false
	}
	for _, x := range sh {
		if x == h {
			return true
		}
	}
	return false
}

// logFrom walks history from h newest first (committer time), as git log.
// go-git's walker fails at a shallow clone's edge before it yields the
// shallow commit, so a shallow repository gets a walk of its own that
// treats shallow commits as roots; so does --first-parent (firstParent),
// which follows only the first parent of each commit.
func (s *session) logFrom(h plumbing.Hash, firstParent bool) (object.CommitIter, error) {
	sh, _ := s.repo.Storer.Shallow()
	if len(sh) == 0 && !firstParent {
		return s.repo.Log(&gogit.LogOptions{From: h, Order: gogit.LogOrderCommitterTime})
	}
	edge := map[plumbing.Hash]bool{}
	for _, x := range sh {
		edge[x] = true
	}
	c, err := s.repo.CommitObject(h)
	if err != nil {
		return nil, err
	}
	return &shallowIter{s: s, edge: edge, first: firstParent, seen: map[plumbing.Hash]bool{h: true}, queue: []*object.Commit{c}}, nil
}

type shallowIter struct {
	s     *session
	first bool // --first-parent
	edge  map[plumbing.Hash]bool
	seen  map[plumbing.Hash]bool
	queue []*object.Commit // unordered; Next takes the newest
}

func (it *shallowIter) Next() (*object.Commit, error) {
	if len(it.queue) == 0 {
		return nil, io.EOF
	}
	best := 0
	for i, c := range it.queue {
		if c.Committer.When.After(it.queue[best].Committer.When) {
			best = i
		}
	}
	c := it.queue[best]
	it.queue = append(it.queue[:best], it.queue[best+1:]...)
	if !it.edge[c.Hash] {
		for i, p := range c.ParentHashes {
			if it.first && i > 0 {
				break
			}
			if it.seen[p] {
				continue
			}
			it.seen[p] = true
			pc, err := it.s.repo.CommitObject(p)
			if err != nil {
				return nil, err
			}
			it.queue = append(it.queue, pc)
		}
	}
	return c, nil
}

func (it *shallowIter) ForEach(fn func(*object.Commit) error) error {
	for {
		c, err := it.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if err := fn(c); err == storer.ErrStop {
			return nil
		} else if err != nil {
			return err
		}
	}
}

func (it *shallowIter) Close() {}
