package git

import (
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"path"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/format/index"

	"github.com/warren-sandbox/warren/commands"
)

// git apply: unified diffs (git's own, with its extended headers, and
// diff -u's), applied as git 2.39 applies them: context must match
// exactly (no fuzz unless -C), hunks may move (searched outward from
// where the header says), a hunk without leading context must match at
// the start and one without trailing context at the end, and nothing is
// written unless every patch applies.

// maxPatch bounds the patch text read into memory (git: "patch too large"
// at 1 GiB); it is charged to the sandbox's budget besides.
const maxPatch = 256 << 20

type applyOpts struct {
	strip                         int
	reverse, check, stat, numstat bool
	summary, index, cached        bool
	verbose, quiet, unidiffZero   bool
	apply                         bool // write the result (off with --stat & co. unless --apply)
	allowEmpty                    bool
	context                       int // -C: the least context that must match (-1: all)
	ws                            string
	dir                           string
	limits                        []applyLimit
	hasInclude                    bool
	recount                       bool
	stripKnown                    bool // -p given: no guessing from traditional names
}

type applyLimit struct {
	re      *regexp.Regexp
	include bool
}

// gpatch is one file's patch.
type gpatch struct {
	oldName, newName string // "" for none
	oldMode, newMode uint32
	isNew, isDelete  int // -1 unknown, as in git
	isRename, isCopy bool
	score            int
	binary           bool
	toplevel         bool // names are relative to the top (git diffs)
	hunks            []*ghunk
	added, deleted   int
	// filled in by the check
	result    []byte
	rejected  bool
	fromIndex *index.Entry
}

type ghunk struct {
	oldPos, oldLines, newPos, newLines int
	leading, trailing                  int
	lines                              []hline
}

// hline is one line of a hunk: its kind (' ', '-', '+') and its text
// with the newline, or without when "\ No newline at end of file" follows.
type hline struct {
	kind byte
	text string
}

func cmdApply(s *session, args []string) error {
	o := applyOpts{strip: 1, context: -1}
	var files []string
	explicitApply := false
	for i := 0; i < len(args); i++ {
		a := args[i]
		val := func(name string) (string, bool) {
			if v, ok := strings.CutPrefix(a, name+"="); ok {
				return v, true
			}
			if a == name && i+1 < len(args) {
				i++
				return args[i], true
			}
			return "", false
		}
		switch {
		case a == "--":
			files = append(files, args[i+1:]...)
			i = len(args)
		case a == "--check":
			o.check = true
		case a == "--stat":
			o.stat = true
		case a == "--numstat":
			o.numstat = true
		case a == "--summary":
			o.summary = true
		case a == "--apply":
			explicitApply = true
		case a == "--index":
			o.index = true
		case a == "--cached":
			o.cached, o.index = true, true
		case a == "-R" || a == "--reverse":
			o.reverse = true
		case a == "-v" || a == "--verbose":
			o.verbose = true
		case a == "-q" || a == "--quiet":
			o.quiet = true
		case a == "--unidiff-zero":
			o.unidiffZero = true
		case a == "--allow-empty":
			o.allowEmpty = true
		case a == "--recount":
			o.recount = true
		case a == "--no-add" || a == "--allow-binary-replacement" || a == "--binary" || a == "--ignore-space-change" ||
			a == "--ignore-whitespace" || a == "--inaccurate-eof" || a == "--intent-to-add" || a == "-N" ||
			a == "--unsafe-paths" || a == "--build-fake-ancestor" || a == "-z" || a == "--allow-overlap":
			return unsupported(a)
		case a == "-3" || a == "--3way" || a == "--reject" || a == "--ours" || a == "--theirs" || a == "--union":
			return unsupported(a)
		case strings.HasPrefix(a, "-p"):
			v := strings.TrimPrefix(a, "-p")
			if v == "" && i+1 < len(args) {
				i++
				v = args[i]
			}
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 {
				return fatalf("option -p expects a non-negative integer, got '%s'", v)
			}
			o.strip, o.stripKnown = n, true
		case strings.HasPrefix(a, "-C"):
			v := strings.TrimPrefix(a, "-C")
			if v == "" && i+1 < len(args) {
				i++
				v = args[i]
			}
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 {
				return errorf(129, "error: switch `C' expects a numerical value")
			}
			o.context = n
		case strings.HasPrefix(a, "--whitespace"):
			v, _ := val("--whitespace")
			switch v {
			case "nowarn", "warn", "fix", "strip", "error", "error-all":
				o.ws = v
			default:
				return errorf(129, "error: unrecognized whitespace option '%s'", v)
			}
		case strings.HasPrefix(a, "--directory"):
			v, _ := val("--directory")
			v = path.Clean(v)
			if v == "." || v == "/" {
				v = ""
			} else {
				v = strings.TrimPrefix(v, "/") + "/"
			}
			o.dir = v
		case strings.HasPrefix(a, "--include") || strings.HasPrefix(a, "--exclude"):
			inc := strings.HasPrefix(a, "--include")
			name := "--exclude"
			if inc {
				name = "--include"
			}
			v, ok := val(name)
			if !ok {
				return errorf(129, "error: option `%s' requires a value", name[2:])
			}
			o.limits = append(o.limits, applyLimit{re: wildmatch(v), include: inc})
			if inc {
				o.hasInclude = true
			}
		case a == "-" || !strings.HasPrefix(a, "-"):
			files = append(files, a)
		default:
			return unknownOpt(a)
		}
	}
	o.apply = explicitApply || !(o.check || o.stat || o.numstat || o.summary)
	if o.check {
		o.apply = false
	}
	if o.ws == "" {
		o.ws = "warn"
		if !o.apply {
			o.ws = "nowarn"
		}
	}
	prefix := ""
	if err := s.open(); err != nil {
		if o.index {
			what := "--index"
			if o.cached {
				what = "--cached"
			}
			return errorf(128, "error: '%s' outside a repository", what)
		}
		s.repo, s.root = nil, s.dir
	} else if s.dir != s.root {
		prefix = strings.TrimPrefix(s.dir, s.root+"/") + "/"
	}
	if len(files) == 0 {
		files = []string{"-"}
	}
	a := &applier{s: s, o: o, prefix: prefix, table: map[string]*fileState{}}
	status := 0
	for _, f := range files {
		var data []byte
		name := "<stdin>"
		if f == "-" {
			b, err := s.readCharged(s.inv.Stdin)
			if err != nil {
				return err
			}
			data = b
		} else {
			name = f
			rc, err := s.inv.Open(pathJoin(s.dir, f))
			if err != nil {
				return errorf(128, "error: can't open patch '%s': %s", f, commands.Strerror(err))
			}
			b, err := s.readCharged(rc)
			rc.Close()
			if err != nil {
				return err
			}
			data = b
		}
		st, err := a.applyPatch(string(data), name)
		if err != nil {
			return err
		}
		status = max(status, st)
	}
	if a.wsErrors > 0 {
		if err := a.wsSummary(); err != nil {
			return err
		}
	}
	if status != 0 {
		return &exitError{status, ""}
	}
	return nil
}

// readCharged reads r whole, charging it to the sandbox's memory budget.
func (s *session) readCharged(r io.Reader) ([]byte, error) {
	var buf bytes.Buffer
	chunk := make([]byte, 64<<10)
	for {
		if err := s.ctx.Err(); err != nil {
			return nil, err
		}
		n, err := r.Read(chunk)
		if n > 0 {
			if gerr := s.res.Grow(int64(n)); gerr != nil {
				s.memErr = gerr
				return nil, gerr
			}
			if buf.Len()+n > maxPatch {
				return nil, errorf(128, "error: patch too large")
			}
			buf.Write(chunk[:n])
		}
		if err == io.EOF {
			return buf.Bytes(), nil
		}
		if err != nil {
			return nil, errorf(128, "error: failed to read patch: %v", err)
		}
	}
}

// wildmatch turns a --include/--exclude pattern into a regexp as git's
// wildmatch without WM_PATHNAME: '*' also matches '/'.
func wildmatch(p string) *regexp.Regexp {
	var b strings.Builder
	b.WriteString("^")
	for i := 0; i < len(p); i++ {
		switch c := p[i]; c {
		case '*':
			b.WriteString(".*")
		case '?':
			b.WriteString(".")
		case '[':
			j := strings.IndexByte(p[i+1:], ']')
			if j < 0 {
				b.WriteString(`\[`)
				continue
			}
			class := p[i+1 : i+1+j]
			if strings.HasPrefix(class, "!") {
				class = "^" + class[1:]
			}
			b.WriteString("[" + strings.ReplaceAll(class, `\`, `\\`) + "]")
			i += j + 1
		case '\\':
			if i+1 < len(p) {
				i++
				b.WriteString(regexp.QuoteMeta(p[i : i+1]))
			}
		default:
			b.WriteString(regexp.QuoteMeta(string(c)))
		}
	}
	b.WriteString("$")
	return regexp.MustCompile(b.String())
}

// fileState is a path's content as the patches so far leave it.
type fileState struct {
	exists  bool
	data    []byte
	mode    uint32
	deleted bool // a patch of this run removed or renamed it away
}

type applier struct {
	s        *session
	o        applyOpts
	prefix   string
	table    map[string]*fileState
	wsErrors int
	wsFixed  int
	skew     int // git 2.39's line count drift (see parseGitHeader)
	input    string
	idx      *index.Index
}

func (a *applier) errf(format string, x ...any) {
	fmt.Fprintf(a.s.inv.Stderr, "error: "+format+"\n", x...)
}

func (a *applier) warnf(format string, x ...any) {
	fmt.Fprintf(a.s.inv.Stderr, "warning: "+format+"\n", x...)
}

func (a *applier) applyPatch(text, input string) (int, error) {
	a.input = input
	patches, skipped, err := a.parse(text)
	if err != nil {
		return 0, err
	}
	if a.wsErrors > 0 && (a.o.ws == "error" || a.o.ws == "error-all") {
		a.o.apply = false
	}
	if len(patches) == 0 && skipped == 0 {
		if a.o.allowEmpty {
			return 0, nil
		}
		return 0, errorf(128, "error: No valid patches in input (allow with \"--allow-empty\")")
	}
	if a.o.index && a.s.repo != nil {
		idx, err := a.s.repo.Storer.Index()
		if err != nil {
			return 0, errorf(128, "error: unable to read index file")
		}
		a.idx = idx
	}
	if a.o.check || a.o.apply {
		failed := false
		for _, p := range patches {
			if a.o.verbose {
				fmt.Fprintf(a.s.inv.Stderr, "Checking patch %s...\n", patchName(p))
			}
			code := a.checkPatch(p)
			if code == 128 {
				return 0, &exitError{128, ""}
			}
			if code != 0 {
				failed = true
			}
		}
		if failed {
			return 1, nil
		}
	}
	if a.o.apply {
		if err := a.write(patches); err != nil {
			return 0, err
		}
	}
	if a.o.stat {
		a.showStat(patches)
	}
	if a.o.numstat {
		for _, p := range patches {
			if p.binary {
				fmt.Fprintf(a.s.out, "-\t-\t%s\n", displayName(p))
			} else {
				fmt.Fprintf(a.s.out, "%d\t%d\t%s\n", p.added, p.deleted, displayName(p))
			}
		}
	}
	if a.o.summary {
		a.showSummary(patches)
	}
	return 0, nil
}

func patchName(p *gpatch) string {
	if p.oldName != "" && p.newName != "" && p.oldName != p.newName {
		return p.oldName + " => " + p.newName
	}
	return displayName(p)
}

func displayName(p *gpatch) string {
	if p.newName != "" {
		return p.newName
	}
	return p.oldName
}

// wsSummary ends a run that met whitespace errors as git does.
func (a *applier) wsSummary() error {
	if n := a.wsErrors - wsSquelch; n > 0 && a.o.ws != "error-all" {
		if n == 1 {
			a.warnf("squelched 1 whitespace error")
		} else {
			a.warnf("squelched %d whitespace errors", n)
		}
	}
	adds := "1 line adds"
	if a.wsErrors != 1 {
		adds = fmt.Sprintf("%d lines add", a.wsErrors)
	}
	if a.o.ws == "error" || a.o.ws == "error-all" {
		return errorf(128, "error: %s whitespace errors.", adds)
	}
	if (a.o.ws == "fix" || a.o.ws == "strip") && a.wsFixed > 0 && a.o.apply {
		a.warnf("%s applied after fixing whitespace errors.", pluralLines(a.wsFixed))
		return nil
	}
	a.warnf("%s whitespace errors.", adds)
	return nil
}

// wsSquelch is how many whitespace errors git prints before it only counts.
const wsSquelch = 5

func pluralLines(n int) string {
	if n == 1 {
		return "1 line"
	}
	return fmt.Sprintf("%d lines", n)
}

func (a *applier) showStat(patches []*gpatch) {
	maxLen, maxChange := 0, 0
	adds, dels := 0, 0
	for _, p := range patches {
		maxLen = max(maxLen, len(p.oldName), len(p.newName))
		maxChange = max(maxChange, p.added+p.deleted)
		adds += p.added
		dels += p.deleted
	}
	width := min(maxLen, 50)
	for _, p := range patches {
		name := displayName(p)
		if len(name) > width {
			cut := len(name) + 3 - width
			if j := strings.IndexByte(name[cut:], '/'); j >= 0 {
				cut += j
			}
			name = "..." + name[cut:]
		}
		if p.binary {
			fmt.Fprintf(a.s.out, " %-*s |  Bin\n", width, name)
			continue
		}
		room := maxChange
		if width+maxChange > 70 {
			room = 70 - width
		}
		add, del := p.added, p.deleted
		if maxChange > 0 {
			total := ((add+del)*room + maxChange/2) / maxChange
			add = (add*room + maxChange/2) / maxChange
			del = total - add
		}
		fmt.Fprintf(a.s.out, " %-*s |%5d %s%s\n", width, name, p.added+p.deleted, strings.Repeat("+", add), strings.Repeat("-", del))
	}
	a.s.out.WriteString(statSummary(len(patches), adds, dels))
}

func (a *applier) showSummary(patches []*gpatch) {
	w := a.s.out
	modeChange := func(p *gpatch, name bool) {
		if p.oldMode != 0 && p.newMode != 0 && p.oldMode != p.newMode {
			if name {
				fmt.Fprintf(w, " mode change %06o => %06o %s\n", p.oldMode, p.newMode, p.newName)
			} else {
				fmt.Fprintf(w, " mode change %06o => %06o\n", p.oldMode, p.newMode)
			}
		}
	}
	for _, p := range patches {
		switch {
		case p.isNew > 0:
			if p.newMode != 0 {
				fmt.Fprintf(w, " create mode %06o %s\n", p.newMode, p.newName)
			} else {
				fmt.Fprintf(w, " create %s\n", p.newName)
			}
		case p.isDelete > 0:
			if p.oldMode != 0 {
				fmt.Fprintf(w, " delete mode %06o %s\n", p.oldMode, p.oldName)
			} else {
				fmt.Fprintf(w, " delete %s\n", p.oldName)
			}
		case p.isRename || p.isCopy:
			kind := "copy"
			if p.isRename {
				kind = "rename"
			}
			o, n := p.oldName, p.newName
			for {
				i, j := strings.IndexByte(o, '/'), strings.IndexByte(n, '/')
				if i < 0 || j < 0 || i != j || o[:i] != n[:j] {
					break
				}
				o, n = o[i+1:], n[j+1:]
			}
			if pre := p.oldName[:len(p.oldName)-len(o)]; pre != "" {
				fmt.Fprintf(w, " %s %s{%s => %s} (%d%%)\n", kind, pre, o, n, p.score)
			} else {
				fmt.Fprintf(w, " %s %s => %s (%d%%)\n", kind, p.oldName, p.newName, p.score)
			}
			modeChange(p, false)
		case p.score != 0:
			fmt.Fprintf(w, " rewrite %s (%d%%)\n", p.newName, p.score)
			modeChange(p, false)
		default:
			modeChange(p, true)
		}
	}
}

// ---- checking ----

// checkPatch applies p in memory, as git's check_patch: 0, 1 (the patch
// does not apply) or 128 (a path it may not touch).
func (a *applier) checkPatch(p *gpatch) int {
	p.rejected = true
	var cur *fileState
	if p.oldName != "" {
		prev, seen := a.table[p.oldName]
		if seen && prev.deleted {
			a.errf("path %s has been renamed/deleted", p.oldName)
			return 1
		}
		if seen && prev.exists {
			cur = prev
		} else {
			st, code := a.load(p)
			if code != 0 {
				return code
			}
			if st == nil { // a traditional patch to a missing file creates it
				p.isNew, p.isDelete, p.oldName = 1, 0, ""
			}
			cur = st
		}
		if cur != nil {
			if p.isNew < 0 {
				p.isNew = 0
			}
			if p.oldMode == 0 {
				p.oldMode = cur.mode
			}
			if (cur.mode^p.oldMode)&0o170000 != 0 {
				a.errf("%s: wrong type", p.oldName)
				return 1
			}
			if cur.mode != p.oldMode {
				a.warnf("%s has type %o, expected %o", p.oldName, cur.mode, p.oldMode)
			}
			if p.newMode == 0 && p.isDelete <= 0 {
				p.newMode = cur.mode
			}
		}
	}
	if p.newName != "" && (p.isNew > 0 || p.isRename || p.isCopy) {
		prev, seen := a.table[p.newName]
		okIfExists := seen && prev.deleted
		if !okIfExists {
			if a.o.index && a.idx != nil {
				if _, err := a.idx.Entry(p.newName); err == nil {
					a.errf("%s: already exists in index", p.newName)
					return 1
				}
			}
			if !a.o.cached {
				if _, err := a.s.inv.FS.Lstat(path.Join(a.s.root, p.newName)); err == nil {
					a.errf("%s: already exists in working directory", p.newName)
					return 1
				}
			}
		}
		if p.newMode == 0 {
			if p.isNew > 0 {
				p.newMode = 0o100644
			} else {
				p.newMode = p.oldMode
			}
		}
	}
	if p.newName != "" && p.oldName != "" {
		if p.newMode == 0 {
			p.newMode = p.oldMode
		}
		if (p.oldMode^p.newMode)&0o170000 != 0 {
			if p.oldName == p.newName {
				a.errf("new mode (%o) of %s does not match old mode (%o)", p.newMode, p.newName, p.oldMode)
			} else {
				a.errf("new mode (%o) of %s does not match old mode (%o) of %s", p.newMode, p.newName, p.oldMode, p.oldName)
			}
			return 1
		}
	}
	for _, n := range []string{p.oldName, p.newName} {
		if n != "" && !validPath(n) {
			a.errf("invalid path '%s'", n)
			return 128
		}
	}
	if p.isDelete <= 0 && p.newName != "" && a.beyondSymlink(p.newName) {
		a.errf("affected file '%s' is beyond a symbolic link", p.newName)
		return 1
	}
	if p.binary {
		a.errf("cannot apply binary patch to '%s' without full index line", displayName(p))
		a.errf("%s: patch does not apply", displayName(p))
		return 1
	}
	var img []byte
	if cur != nil {
		img = cur.data
	}
	res, ok := a.applyHunks(p, img)
	if !ok {
		a.errf("%s: patch does not apply", firstNonEmpty(p.oldName, p.newName))
		return 1
	}
	if p.isDelete > 0 && len(res) > 0 {
		a.errf("removal patch leaves file contents")
		a.errf("%s: patch does not apply", p.oldName)
		return 1
	}
	p.result = res
	// record what the next patches of this run see
	if p.oldName != "" && p.movesAway() {
		a.table[p.oldName] = &fileState{deleted: true}
	}
	if p.newName != "" && p.isDelete <= 0 {
		a.table[p.newName] = &fileState{exists: true, data: res, mode: p.newMode}
	}
	p.rejected = false
	return 0
}

// movesAway tells a patch that removes its old path: a deletion, or a
// rename or modification whose new name differs (git's remove_file in
// write_out_one_result).
func (p *gpatch) movesAway() bool {
	return p.isDelete > 0 || p.isNew <= 0 && !p.isCopy && p.newName != "" && p.newName != p.oldName
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// validPath is git's verify_path for a patch: no empty, ".", ".." or
// ".git" component, nothing absolute.
func validPath(n string) bool {
	if n == "" || strings.HasPrefix(n, "/") || strings.HasSuffix(n, "/") {
		return false
	}
	for _, c := range strings.Split(n, "/") {
		if c == "" || c == "." || c == ".." || strings.EqualFold(c, ".git") {
			return false
		}
	}
	return true
}

func (a *applier) beyondSymlink(name string) bool {
	cur := a.s.root
	parts := strings.Split(name, "/")
	for _, p := range parts[:len(parts)-1] {
		cur = path.Join(cur, p)
		if fi, err := a.s.inv.FS.Lstat(cur); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
			return true
		}
	}
	return false
}

// load reads the file p.oldName changes: from the index with --cached,
// else from the worktree (checked against the index with --index). A nil
// state with code 0 is a missing file a traditional patch may create.
func (a *applier) load(p *gpatch) (*fileState, int) {
	name := p.oldName
	if !validPath(name) {
		// git lstat()s first: a missing ../x is "No such file"; an
		// existing one is an invalid path
		if _, err := a.s.inv.FS.Lstat(path.Join(a.s.root, name)); err != nil {
			a.errf("%s: No such file or directory", name)
			return nil, 1
		}
		a.errf("invalid path '%s'", name)
		return nil, 128
	}
	if a.beyondSymlink(name) {
		a.errf("reading from '%s' beyond a symbolic link", name)
		return nil, 1
	}
	var ent *index.Entry
	if a.o.index {
		e, err := a.idx.Entry(name)
		if err != nil {
			if p.isNew < 0 && !a.worktreeHas(name) {
				return nil, 0
			}
			a.errf("%s: does not exist in index", name)
			return nil, 1
		}
		ent = e
		p.fromIndex = e
	}
	if a.o.cached {
		data, err := a.s.blobLoader(ent.Hash)()
		if err != nil {
			return nil, 128
		}
		return &fileState{exists: true, data: data, mode: uint32(ent.Mode)}, 0
	}
	abs := path.Join(a.s.root, name)
	fi, err := a.s.inv.FS.Lstat(abs)
	if err != nil {
		if p.isNew < 0 && ent == nil {
			return nil, 0
		}
		a.errf("%s: No such file or directory", name)
		return nil, 1
	}
	st := &fileState{exists: true, mode: 0o100644}
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		t, err := a.s.inv.FS.Readlink(abs)
		if err != nil {
			a.errf("unable to read symlink %s", name)
			return nil, 1
		}
		st.data, st.mode = []byte(t), 0o120000
	case fi.IsDir():
		a.errf("%s: wrong type", name)
		return nil, 1
	default:
		if fi.Mode()&0o111 != 0 {
			st.mode = 0o100755
		}
		if gerr := a.s.res.Grow(fi.Size()); gerr != nil {
			a.s.memErr = gerr
			return nil, 128
		}
		data, err := a.s.inv.FS.ReadFile(abs)
		if err != nil {
			a.errf("unable to open or read %s", name)
			return nil, 1
		}
		st.data = data
	}
	if ent != nil {
		h := plumbing.ComputeHash(plumbing.BlobObject, st.data)
		if h != ent.Hash || uint32(ent.Mode) != st.mode {
			a.errf("%s: does not match index", name)
			return nil, 1
		}
	}
	return st, 0
}

func (a *applier) worktreeHas(name string) bool {
	_, err := a.s.inv.FS.Lstat(path.Join(a.s.root, name))
	return err == nil
}

// ---- writing ----

// write puts every checked patch's result in the worktree and/or index:
// removals first, then creations, as git's write_out_results.
func (a *applier) write(patches []*gpatch) error {
	s := a.s
	touchedIndex := false
	for phase := 0; phase < 2; phase++ {
		for _, p := range patches {
			if phase == 0 {
				if p.oldName == "" || !p.movesAway() {
					continue
				}
				if a.o.index && a.idx != nil {
					a.idx.Remove(p.oldName)
					touchedIndex = true
				}
				if !a.o.cached {
					abs := path.Join(s.root, p.oldName)
					s.inv.FS.Remove(abs)
					for d := path.Dir(abs); d != s.root && d != "/"; d = path.Dir(d) {
						if s.inv.FS.Remove(d) != nil {
							break
						}
					}
				}
				continue
			}
			if p.isDelete > 0 || p.newName == "" {
				if a.o.verbose {
					fmt.Fprintf(s.inv.Stderr, "Applied patch %s cleanly.\n", patchName(p))
				}
				continue
			}
			mode := filemode.FileMode(p.newMode)
			sd := &side{name: p.newName, mode: mode, hash: plumbing.ComputeHash(plumbing.BlobObject, p.result)}
			data := p.result
			sd.load = func() ([]byte, error) { return data, nil }
			if !a.o.cached {
				if err := s.writeWorktree(p.newName, sd); err != nil {
					return err
				}
			}
			if a.o.index && a.idx != nil {
				if err := s.storeBlob(sd); err != nil {
					return fatalf("unable to add cache entry for %s", p.newName)
				}
				e, err := a.idx.Entry(p.newName)
				if err != nil {
					e = a.idx.Add(p.newName)
				}
				e.Hash, e.Mode = sd.hash, mode
				e.Size = uint32(len(data))
				if fi, err := s.inv.FS.Lstat(path.Join(s.root, p.newName)); err == nil && !a.o.cached {
					e.ModifiedAt = fi.ModTime()
				}
				touchedIndex = true
			}
			if a.o.verbose {
				fmt.Fprintf(s.inv.Stderr, "Applied patch %s cleanly.\n", patchName(p))
			}
		}
	}
	if touchedIndex {
		sort.Slice(a.idx.Entries, func(i, j int) bool { return a.idx.Entries[i].Name < a.idx.Entries[j].Name })
		if err := s.repo.Storer.SetIndex(a.idx); err != nil {
			return errorf(128, "error: Unable to write new index file")
		}
	}
	return nil
}
