package git

import (
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"path"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/utils/diff"
	"github.com/sergi/go-diff/diffmatchpatch"
)

// side is one version of a file in a comparison.
type side struct {
	name string
	mode filemode.FileMode
	hash plumbing.Hash
	load func() ([]byte, error)
}

// fileChange is one file that differs between two snapshots.
type fileChange struct {
	from, to *side
	// noIndex: a side missing from a diff --no-index is named /dev/null in
	// --stat, --numstat and --name-only, as git's are
	noIndex bool
	// score is a rename's similarity (renames.go), 0 for other changes
	score  int
	ops    []lineOp
	binary bool
	done   bool
	adds   int
	dels   int
}

func modeOf(m filemode.FileMode) string { return fmt.Sprintf("%06o", uint32(m)) }

// snapshot maps paths to their versions.
type snapshot map[string]*side

func (s *session) blobLoader(h plumbing.Hash) func() ([]byte, error) {
	return func() ([]byte, error) {
		b, err := s.repo.BlobObject(h)
		if err != nil {
			return nil, err
		}
		// The blob is held whole for the diff: charge it first.
		if err := s.res.Grow(b.Size); err != nil {
			s.memErr = err // callers treat a failed load as empty: remember
			return nil, err
		}
		r, err := b.Reader()
		if err != nil {
			return nil, err
		}
		defer r.Close()
		return io.ReadAll(r)
	}
}

// treeSnapshot lists every blob of t (nil = empty).
func (s *session) treeSnapshot(t *object.Tree) (snapshot, error) {
	snap := snapshot{}
	if t == nil {
		return snap, nil
	}
	w := object.NewTreeWalker(t, true, nil)
	defer w.Close()
	for {
		name, e, err := w.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		if e.Mode == filemode.Dir || e.Mode == filemode.Submodule {
			continue
		}
		snap[name] = &side{name: name, mode: e.Mode, hash: e.Hash, load: s.blobLoader(e.Hash)}
	}
	return snap, nil
}

func (s *session) indexSnapshot() (snapshot, error) {
	idx, err := s.repo.Storer.Index()
	if err != nil {
		return nil, err
	}
	snap := snapshot{}
	for _, e := range idx.Entries {
		snap[e.Name] = &side{name: e.Name, mode: e.Mode, hash: e.Hash, load: s.blobLoader(e.Hash)}
	}
	return snap, nil
}

// worktreeSnapshot reads the worktree files named in any of refs. A file
// whose size and mtime match its index entry keeps the index hash, as
// git's stat cache does.
func (s *session) worktreeSnapshot(refs ...snapshot) (snapshot, error) {
	idx, err := s.repo.Storer.Index()
	if err != nil {
		return nil, err
	}
	byName := map[string]int{}
	for i, e := range idx.Entries {
		byName[e.Name] = i
	}
	// a file modified in the same clock tick as the index was written may
	// have kept its size and mtime ("racy git"): only older files are
	// trusted from the stat cache
	var indexTime time.Time
	if fi, err := s.inv.FS.Stat(path.Join(s.root, ".git", "index")); err == nil {
		indexTime = fi.ModTime()
	}
	snap := snapshot{}
	seen := map[string]bool{}
	for _, ref := range refs {
		for name := range ref {
			if seen[name] {
				continue
			}
			seen[name] = true
			abs := path.Join(s.root, name)
			fi, err := s.inv.FS.Lstat(abs)
			if err != nil || fi.IsDir() {
				continue
			}
			mode := filemode.Regular
			var data []byte
			switch {
			case fi.Mode()&fs.ModeSymlink != 0:
				mode = filemode.Symlink
				t, _ := s.inv.FS.Readlink(abs)
				data = []byte(t)
			case fi.Mode()&0o111 != 0:
				mode = filemode.Executable
			}
			sd := &side{name: name, mode: mode}
			if i, ok := byName[name]; ok && mode != filemode.Symlink {
				e := idx.Entries[i]
				if uint32(fi.Size()) == e.Size && fi.ModTime().Equal(e.ModifiedAt) && e.Mode == mode && fi.ModTime().Before(indexTime) {
					sd.hash = e.Hash
					sd.load = s.blobLoader(e.Hash)
					snap[name] = sd
					continue
				}
			}
			if data == nil {
				data, err = s.inv.FS.ReadFile(abs)
				if err != nil {
					continue
				}
			}
			sd.hash = plumbing.ComputeHash(plumbing.BlobObject, data)
			content := data
			sd.load = func() ([]byte, error) { return content, nil }
			snap[name] = sd
		}
	}
	return snap, nil
}

// compare lists the files that differ between a and b, sorted by path.
func compare(a, b snapshot, filter func(string) bool) []*fileChange {
	names := map[string]bool{}
	for n := range a {
		names[n] = true
	}
	for n := range b {
		names[n] = true
	}
	var sorted []string
	for n := range names {
		if filter == nil || filter(n) {
			sorted = append(sorted, n)
		}
	}
	sort.Strings(sorted)
	var out []*fileChange
	for _, n := range sorted {
		x, y := a[n], b[n]
		if x != nil && y != nil && x.hash == y.hash && x.mode == y.mode {
			continue
		}
		out = append(out, &fileChange{from: x, to: y})
	}
	return out
}

func (s *session) treeChanges(a, b *object.Tree) ([]*fileChange, error) {
	sa, err := s.treeSnapshot(a)
	if err != nil {
		return nil, err
	}
	sb, err := s.treeSnapshot(b)
	if err != nil {
		return nil, err
	}
	return compare(sa, sb, nil), nil
}

// ---- line diff ----

type lineOp struct {
	op   byte // ' ', '-', '+'
	text string
}

func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	lines := strings.SplitAfter(s, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

func isBinary(b []byte) bool {
	if len(b) > 8000 {
		b = b[:8000]
	}
	return bytes.IndexByte(b, 0) >= 0
}

func (ch *fileChange) compute() {
	if ch.done {
		return
	}
	ch.done = true
	var a, b []byte
	if ch.from != nil {
		a, _ = ch.from.load()
	}
	if ch.to != nil {
		b, _ = ch.to.load()
	}
	if isBinary(a) || isBinary(b) {
		ch.binary = true
		return
	}
	for _, d := range diff.Do(string(a), string(b)) {
		op := byte(' ')
		switch d.Type {
		case diffmatchpatch.DiffDelete:
			op = '-'
		case diffmatchpatch.DiffInsert:
			op = '+'
		}
		for _, l := range splitLines(d.Text) {
			ch.ops = append(ch.ops, lineOp{op, l})
			switch op {
			case '-':
				ch.dels++
			case '+':
				ch.adds++
			}
		}
	}
}

func (ch *fileChange) stat() (int, int) {
	ch.compute()
	return ch.adds, ch.dels
}

// statName is the name --stat and --numstat show: "old => new" (with
// the common directories outside braces) when the sides' names differ.
func (ch *fileChange) statName() string {
	a, b := ch.name(), ch.name()
	if ch.from != nil {
		a = ch.from.name
	} else if ch.noIndex {
		a = "/dev/null"
	}
	if ch.to != nil {
		b = ch.to.name
	} else if ch.noIndex {
		b = "/dev/null"
	}
	if a == b {
		return a
	}
	return renameName(a, b)
}

// renameName joins two paths as git's diffstat does: "a/{x => y}/z".
func renameName(a, b string) string {
	// the common prefix, up to and including its last '/'
	pfx := 0
	for i := 0; i < len(a) && i < len(b) && a[i] == b[i]; i++ {
		if a[i] == '/' {
			pfx = i + 1
		}
	}
	// the common suffix, from a '/', not reaching into the prefix (but
	// it may share the prefix's final '/')
	sfx := 0
	adj := 0
	if pfx > 0 {
		adj = 1
	}
	for i, j := len(a), len(b); i >= pfx-adj && j >= pfx-adj; i, j = i-1, j-1 {
		var ca, cb byte
		if i < len(a) {
			ca = a[i]
		}
		if j < len(b) {
			cb = b[j]
		}
		if ca != cb {
			break
		}
		if ca == '/' {
			sfx = len(a) - i
		}
	}
	am, bm := max(0, len(a)-pfx-sfx), max(0, len(b)-pfx-sfx)
	if pfx+sfx == 0 {
		return a + " => " + b
	}
	return a[:pfx] + "{" + a[pfx:pfx+am] + " => " + b[pfx:pfx+bm] + "}" + a[len(a)-sfx:]
}

func (ch *fileChange) name() string {
	if ch.to != nil {
		return ch.to.name
	}
	return ch.from.name
}

// funcLine finds git's default hunk-header context: the last line before
// index i (of old lines) starting with a letter, '_' or '$'.
func funcLine(old []string, i int) string {
	for k := i - 1; k >= 0; k-- {
		l := old[k]
		if l == "" {
			continue
		}
		c := l[0]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || c == '$' {
			l = strings.TrimRight(l, "\n")
			if len(l) > 80 {
				l = l[:80]
			}
			return strings.TrimRight(l, " \t\r\n")
		}
	}
	return ""
}

// writePatch prints ch as git diff does.
func writePatch(w *bytes.Buffer, ch *fileChange, context int) {
	ch.compute()
	an, bn := ch.name(), ch.name()
	if ch.from != nil {
		an = ch.from.name
	}
	fmt.Fprintf(w, "diff --git a/%s b/%s\n", an, bn)
	zero := strings.Repeat("0", 7)
	switch {
	case ch.from == nil:
		fmt.Fprintf(w, "new file mode %s\nindex %s..%s\n", modeOf(ch.to.mode), zero, short(ch.to.hash))
	case ch.to == nil:
		fmt.Fprintf(w, "deleted file mode %s\nindex %s..%s\n", modeOf(ch.from.mode), short(ch.from.hash), zero)
	case ch.score > 0:
		if ch.from.mode != ch.to.mode {
			fmt.Fprintf(w, "old mode %s\nnew mode %s\n", modeOf(ch.from.mode), modeOf(ch.to.mode))
		}
		fmt.Fprintf(w, "similarity index %d%%\nrename from %s\nrename to %s\n", ch.similarity(), an, bn)
		switch {
		case ch.from.hash == ch.to.hash:
		case ch.from.mode != ch.to.mode:
			fmt.Fprintf(w, "index %s..%s\n", short(ch.from.hash), short(ch.to.hash))
		default:
			fmt.Fprintf(w, "index %s..%s %s\n", short(ch.from.hash), short(ch.to.hash), modeOf(ch.to.mode))
		}
	case ch.from.mode != ch.to.mode:
		fmt.Fprintf(w, "old mode %s\nnew mode %s\n", modeOf(ch.from.mode), modeOf(ch.to.mode))
		if ch.from.hash != ch.to.hash {
			fmt.Fprintf(w, "index %s..%s\n", short(ch.from.hash), short(ch.to.hash))
		}
	default:
		fmt.Fprintf(w, "index %s..%s %s\n", short(ch.from.hash), short(ch.to.hash), modeOf(ch.to.mode))
	}
	if ch.from != nil && ch.to != nil && ch.from.hash == ch.to.hash {
		return
	}
	if ch.binary {
		a, b := "a/"+an, "b/"+bn
		if ch.from == nil {
			a = "/dev/null"
		}
		if ch.to == nil {
			b = "/dev/null"
		}
		fmt.Fprintf(w, "Binary files %s and %s differ\n", a, b)
		return
	}
	if len(ch.ops) == 0 {
		return
	}
	if ch.from == nil {
		w.WriteString("--- /dev/null\n")
	} else {
		fmt.Fprintf(w, "--- a/%s\n", an)
	}
	if ch.to == nil {
		w.WriteString("+++ /dev/null\n")
	} else {
		fmt.Fprintf(w, "+++ b/%s\n", bn)
	}
	var old []string
	for _, o := range ch.ops {
		if o.op != '+' {
			old = append(old, o.text)
		}
	}
	// group changed lines into hunks with context lines around them
	n := len(ch.ops)
	i := 0
	for i < n {
		for i < n && ch.ops[i].op == ' ' {
			i++
		}
		if i >= n {
			break
		}
		start := max(0, i-context)
		end := i
		for {
			for end < n && ch.ops[end].op != ' ' {
				end++
			}
			// extend over a gap of unchanged lines short enough to merge
			gap := end
			for gap < n && ch.ops[gap].op == ' ' {
				gap++
			}
			if gap < n && gap-end <= 2*context {
				end = gap
				continue
			}
			end = min(n, end+context)
			break
		}
		// line numbers at start
		oldLine, newLine := 1, 1
		for _, o := range ch.ops[:start] {
			if o.op != '+' {
				oldLine++
			}
			if o.op != '-' {
				newLine++
			}
		}
		oldCount, newCount := 0, 0
		for _, o := range ch.ops[start:end] {
			if o.op != '+' {
				oldCount++
			}
			if o.op != '-' {
				newCount++
			}
		}
		rng := func(l, c int) string {
			if c == 0 {
				return strconv.Itoa(l-1) + ",0"
			}
			if c == 1 {
				return strconv.Itoa(l)
			}
			return strconv.Itoa(l) + "," + strconv.Itoa(c)
		}
		header := fmt.Sprintf("@@ -%s +%s @@", rng(oldLine, oldCount), rng(newLine, newCount))
		if f := funcLine(old, oldLine-1); f != "" {
			header += " " + f
		}
		w.WriteString(header + "\n")
		for _, o := range ch.ops[start:end] {
			w.WriteByte(o.op)
			w.WriteString(o.text)
			if !strings.HasSuffix(o.text, "\n") {
				w.WriteString("\n\\ No newline at end of file\n")
			}
		}
		i = end
	}
}

// writeStat prints git's --stat block and summary.
func writeStat(w *bytes.Buffer, changes []*fileChange) { writeStatWidth(w, changes, 80) }

// writeStatWidth is writeStat for a given line width (format-patch: 72).
func writeStatWidth(w *bytes.Buffer, changes []*fileChange, width int) {
	if len(changes) == 0 {
		return
	}
	nameW, maxChange := 0, 0
	binary := false
	for _, ch := range changes {
		ch.compute()
		nameW = max(nameW, len(ch.statName()))
		if ch.binary {
			binary = true
		}
		maxChange = max(maxChange, ch.adds+ch.dels)
	}
	numW := len(strconv.Itoa(maxChange))
	if binary && numW < 3 {
		numW = 3
	}
	graphW := maxChange
	if nameW+numW+6+graphW > width {
		if nameW > width*5/8 {
			nameW = width * 5 / 8
		}
		graphW = max(6, width-nameW-numW-6)
	}
	scale := func(v int) int {
		if maxChange <= graphW || v == 0 {
			return v
		}
		return 1 + v*(graphW-1)/maxChange
	}
	for _, ch := range changes {
		name := ch.statName()
		if len(name) > nameW {
			name = "..." + name[len(name)-nameW+3:]
		}
		if ch.binary {
			var a, b int
			if ch.from != nil {
				d, _ := ch.from.load()
				a = len(d)
			}
			if ch.to != nil {
				d, _ := ch.to.load()
				b = len(d)
			}
			fmt.Fprintf(w, " %-*s | %*s %d -> %d bytes\n", nameW, name, numW, "Bin", a, b)
			continue
		}
		total := ch.adds + ch.dels
		plus, minus := scale(ch.adds), scale(ch.dels)
		if maxChange > graphW && total > 0 {
			t := scale(total)
			if plus+minus > t {
				if plus > minus {
					plus = t - minus
				} else {
					minus = t - plus
				}
			}
		}
		bar := strings.Repeat("+", plus) + strings.Repeat("-", minus)
		if bar != "" {
			bar = " " + bar
		}
		fmt.Fprintf(w, " %-*s | %*d%s\n", nameW, name, numW, total, bar)
	}
	w.WriteString(summaryLine(changes))
}

// ---- git diff ----

type diffOpts struct {
	stat, nameOnly, nameStatus, quiet, exitCode, numstat bool
	noRenames                                            bool
	context                                              int
}

func parseDiffOpts(args []string) (diffOpts, []string, []string, error) {
	o := diffOpts{context: 3}
	var revs, paths []string
	dashdash := false
	for _, a := range args {
		switch {
		case dashdash:
			paths = append(paths, a)
		case a == "--":
			dashdash = true
		case a == "--stat":
			o.stat = true
		case a == "--name-only":
			o.nameOnly = true
		case a == "--name-status":
			o.nameStatus = true
		case a == "--numstat":
			o.numstat = true
		case a == "--no-renames":
			o.noRenames = true
		case a == "-M" || a == "--find-renames" || a == "-M50%" || a == "--find-renames=50%":
			o.noRenames = false
		case a == "--quiet":
			o.quiet, o.exitCode = true, true
		case a == "--exit-code":
			o.exitCode = true
		case a == "--cached" || a == "--staged":
			revs = append(revs, "--cached")
		case strings.HasPrefix(a, "-U"):
			n, err := strconv.Atoi(a[2:])
			if err != nil {
				return o, nil, nil, unknownOpt(a)
			}
			o.context = n
		case strings.HasPrefix(a, "--unified="):
			n, _ := strconv.Atoi(strings.TrimPrefix(a, "--unified="))
			o.context = n
		case a == "--no-color" || a == "--color=never" || a == "-p" || a == "--patch" || a == "--no-ext-diff":
		case strings.HasPrefix(a, "-"):
			return o, nil, nil, unknownOpt(a)
		default:
			revs = append(revs, a)
		}
	}
	return o, revs, paths, nil
}

func (s *session) pathFilter(paths []string) (func(string) bool, error) {
	if len(paths) == 0 {
		return nil, nil
	}
	var rels []string
	for _, p := range paths {
		r, err := s.rel(p)
		if err != nil {
			return nil, err
		}
		rels = append(rels, r)
	}
	return func(n string) bool {
		for _, r := range rels {
			if r == "." || n == r || strings.HasPrefix(n, r+"/") {
				return true
			}
			if pathspecGlob(r, n) {
				return true
			}
		}
		return false
	}, nil
}

// pathspecGlob matches a pathspec with wildcards as git does: '*' and '?'
// match '/' too (git's pathspecs are not FNM_PATHNAME), and a bracket
// expression is path.Match's.
func pathspecGlob(pat, name string) bool {
	return strings.ContainsAny(pat, "*?[") && globMatch(pat, name)
}

func globMatch(pat, name string) bool {
	for len(pat) > 0 {
		switch pat[0] {
		case '*':
			for len(pat) > 0 && pat[0] == '*' {
				pat = pat[1:]
			}
			if pat == "" {
				return true
			}
			for i := 0; i <= len(name); i++ {
				if globMatch(pat, name[i:]) {
					return true
				}
			}
			return false
		case '?':
			if name == "" {
				return false
			}
			pat, name = pat[1:], name[1:]
		case '[':
			end := strings.IndexByte(pat[1:], ']')
			if end < 0 || name == "" {
				return false
			}
			cls := pat[:end+2]
			if ok, err := path.Match(cls, name[:1]); err != nil || !ok {
				return false
			}
			pat, name = pat[end+2:], name[1:]
		default:
			if pat[0] == '\\' && len(pat) > 1 {
				pat = pat[1:]
			}
			if name == "" || name[0] != pat[0] {
				return false
			}
			pat, name = pat[1:], name[1:]
		}
	}
	return name == ""
}

func cmdDiff(s *session, args []string) error {
	if hasNoIndex(args) {
		return s.diffNoIndex(args)
	}
	if err := s.open(); err != nil {
		// outside a repository two paths are compared as with --no-index
		if _, revs, paths, perr := parseDiffOpts(args); perr == nil && len(revs)+len(paths) == 2 {
			return s.diffNoIndex(args)
		}
		return err
	}
	o, revs, paths, err := parseDiffOpts(args)
	if err != nil {
		return err
	}
	// a trailing operand that is a path rather than a revision
	var realRevs []string
	for _, r := range revs {
		if r == "--cached" {
			realRevs = append(realRevs, r)
			continue
		}
		if _, err := s.repo.ResolveRevision(plumbing.Revision(strings.SplitN(r, "..", 2)[0])); err != nil {
			if _, serr := s.inv.FS.Lstat(path.Join(s.dir, r)); serr == nil || len(paths) > 0 {
				paths = append(paths, r)
				continue
			}
			return fatalf("ambiguous argument '%s': unknown revision or path not in the working tree.\nUse '--' to separate paths from revisions, like this:\n'git <command> [<revision>...] -- [<file>...]'", r)
		}
		realRevs = append(realRevs, r)
	}
	filter, err := s.pathFilter(paths)
	if err != nil {
		return err
	}
	var a, b snapshot
	cached := false
	var commits []string
	for _, r := range realRevs {
		if r == "--cached" {
			cached = true
		} else if x, y, ok := strings.Cut(r, ".."); ok {
			commits = append(commits, x, y)
		} else {
			commits = append(commits, r)
		}
	}
	treeOf := func(rev string) (snapshot, error) {
		c, err := s.commit(rev)
		if err != nil {
			return nil, err
		}
		t, err := c.Tree()
		if err != nil {
			return nil, err
		}
		return s.treeSnapshot(t)
	}
	switch {
	case len(commits) >= 2:
		if a, err = treeOf(commits[0]); err != nil {
			return err
		}
		if b, err = treeOf(commits[1]); err != nil {
			return err
		}
	case cached:
		rev := "HEAD"
		if len(commits) == 1 {
			rev = commits[0]
		}
		if _, err := s.head(); err != nil && rev == "HEAD" {
			a = snapshot{}
		} else if a, err = treeOf(rev); err != nil {
			return err
		}
		if b, err = s.indexSnapshot(); err != nil {
			return err
		}
	case len(commits) == 1:
		if a, err = treeOf(commits[0]); err != nil {
			return err
		}
		idx, err := s.indexSnapshot()
		if err != nil {
			return err
		}
		if b, err = s.worktreeSnapshot(a, idx); err != nil {
			return err
		}
	default:
		if a, err = s.indexSnapshot(); err != nil {
			return err
		}
		if b, err = s.worktreeSnapshot(a); err != nil {
			return err
		}
	}
	changes := compare(a, b, filter)
	if !o.noRenames {
		if changes, err = s.findRenames(changes); err != nil {
			return err
		}
	}
	s.printChanges(changes, o)
	if o.exitCode && len(changes) > 0 {
		return &exitError{1, ""}
	}
	return nil
}

func (s *session) printChanges(changes []*fileChange, o diffOpts) {
	if o.quiet {
		return
	}
	switch {
	case o.nameOnly:
		for _, ch := range changes {
			if ch.noIndex && ch.to == nil {
				fmt.Fprintln(s.out, "/dev/null")
			} else {
				fmt.Fprintln(s.out, ch.name())
			}
		}
	case o.nameStatus:
		for _, ch := range changes {
			st, name := "M", ch.name()
			if ch.score > 0 {
				fmt.Fprintf(s.out, "R%03d\t%s\t%s\n", ch.similarity(), ch.from.name, ch.to.name)
				continue
			}
			if ch.from == nil {
				st = "A"
			} else {
				name = ch.from.name
				if ch.to == nil {
					st = "D"
				}
			}
			fmt.Fprintf(s.out, "%s\t%s\n", st, name)
		}
	case o.numstat:
		for _, ch := range changes {
			a, d := ch.stat()
			if ch.binary {
				fmt.Fprintf(s.out, "-\t-\t%s\n", ch.statName())
			} else {
				fmt.Fprintf(s.out, "%d\t%d\t%s\n", a, d, ch.statName())
			}
		}
	case o.stat:
		writeStat(s.out, changes)
	default:
		for _, ch := range changes {
			writePatch(s.out, ch, o.context)
		}
	}
}
