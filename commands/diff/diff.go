// Package diff implements diff (normal and unified formats, -r -q -N),
// patch (unified diffs, -p -R --dry-run) and cmp over the vfs, with GNU
// diffutils' output formats and exit statuses (0 same, 1 different,
// 2 trouble).
package diff

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strconv"
	"strings"
	"time"

	"github.com/warren-sandbox/warren/commands"
	"github.com/warren-sandbox/warren/commands/internal/getopt"
	"github.com/warren-sandbox/warren/commands/internal/textio"
)

// Register adds diff, patch and cmp.
func Register(t commands.Table) {
	t.Register("diff", Diff)
	t.Register("patch", Patch)
	t.Register("cmp", Cmp)
}

// maxInput bounds what diff and patch read into memory per file when the
// sandbox sets no memory limit.
const maxInput = 256 << 20

var diffSpec = getopt.Spec{Short: "uU:qrNsiwbBaC:ceyW:", Long: []getopt.Long{
	{Name: "context", Arg: getopt.Optional, Key: "context"}, {Name: "ed", Key: "e"}, {Name: "side-by-side", Key: "y"},
	{Name: "width", Arg: getopt.Required, Key: "W"}, {Name: "suppress-common-lines"},
	{Name: "unified", Arg: getopt.Optional, Key: "unified"}, {Name: "brief", Key: "q"}, {Name: "recursive", Key: "r"},
	{Name: "new-file", Key: "N"}, {Name: "report-identical-files", Key: "s"}, {Name: "ignore-case", Key: "i"},
	{Name: "ignore-all-space", Key: "w"}, {Name: "ignore-space-change", Key: "b"}, {Name: "ignore-blank-lines", Key: "B"},
	{Name: "text", Key: "a"}, {Name: "label", Arg: getopt.Required}, {Name: "normal"}, {Name: "color", Arg: getopt.Optional},
	{Name: "no-dereference"}, {Name: "strip-trailing-cr"}, {Name: "exclude", Arg: getopt.Required, Key: "x"},
}}

type differ struct {
	ctx      context.Context
	inv      *commands.Invocation
	out      io.Writer
	unified  int  // -1 = normal format
	format   byte // 'c' context, 'e' ed, 'y' side by side, 0 normal/unified
	width    int  // -W for -y
	suppress bool
	brief    bool
	recurse  bool
	newFile  bool
	same     bool
	icase    bool
	allWS    bool
	spaceWS  bool
	blank    bool // -B: changes made only of blank lines do not count
	text     bool
	labels   []string
	optStr   string // options as typed, for "diff -r a b" headers
	status   int
	budget   *textio.Budget
	// limitErr is the memory limit that stopped the comparison (125).
	limitErr error
	exclude  []string
	walking  []string // real paths of the directory pairs being compared
}

// Diff is diff(1).
func Diff(ctx context.Context, inv *commands.Invocation) int {
	opts, operands, err := diffSpec.Parse(inv.Args[1:])
	if err != nil {
		return inv.BadUsage(err, getopt.UsageText("diff", err), 2)
	}
	out := textio.NewWriter(inv.Stdout)
	defer textio.PutWriter(out)
	res := inv.Memory().Reserve()
	defer res.Close()
	d := &differ{ctx: ctx, inv: inv, out: out, unified: -1, budget: &textio.Budget{Max: maxInput, Res: res}}
	if inv.Sys != nil && inv.Sys.MaxMemoryBytes > 0 {
		d.budget.Max = inv.Sys.MaxMemoryBytes
	}
	var optWords []string
	for _, a := range inv.Args[1:] {
		if strings.HasPrefix(a, "-") && a != "-" {
			optWords = append(optWords, a)
		}
	}
	d.optStr = strings.Join(optWords, " ")
	for _, o := range opts {
		switch o.Key {
		case "u":
			d.unified = 3
		case "unified":
			d.unified = 3
			if o.HasArg {
				n, err := strconv.Atoi(o.Arg)
				if err != nil || n < 0 {
					return getopt.Usage(inv.Stderr, "diff", fmt.Errorf("invalid context length '%s'", o.Arg), 2)
				}
				d.unified = n
			}
		case "U":
			n, err := strconv.Atoi(o.Arg)
			if err != nil || n < 0 {
				return getopt.Usage(inv.Stderr, "diff", fmt.Errorf("invalid context length '%s'", o.Arg), 2)
			}
			d.unified = n
		case "c":
			d.format, d.unified = 'c', 3
		case "C", "context":
			d.format, d.unified = 'c', 3
			if o.HasArg {
				n, err := strconv.Atoi(o.Arg)
				if err != nil || n < 0 {
					return getopt.Usage(inv.Stderr, "diff", fmt.Errorf("invalid context length '%s'", o.Arg), 2)
				}
				d.unified = n
			}
		case "e":
			d.format, d.unified = 'e', -1
		case "y":
			d.format, d.unified = 'y', -1
		case "W":
			n, err := strconv.Atoi(o.Arg)
			if err != nil || n <= 0 {
				return getopt.Usage(inv.Stderr, "diff", fmt.Errorf("invalid width '%s'", o.Arg), 2)
			}
			d.width = n
		case "suppress-common-lines":
			d.suppress = true
		case "q":
			d.brief = true
		case "r":
			d.recurse = true
		case "N":
			d.newFile = true
		case "s":
			d.same = true
		case "i":
			d.icase = true
		case "w":
			d.allWS = true
		case "b":
			d.spaceWS = true
		case "B":
			d.blank = true
		case "a":
			d.text = true
		case "label":
			d.labels = append(d.labels, o.Arg)
		case "x":
			d.exclude = append(d.exclude, o.Arg)
		}
	}
	if len(operands) != 2 {
		if len(operands) < 2 {
			msg := "missing operand after 'diff'"
			if len(operands) == 1 {
				msg = fmt.Sprintf("missing operand after '%s'", operands[0])
			}
			fmt.Fprintf(inv.Stderr, "diff: %s\ndiff: Try 'diff --help' for more information.\n", msg)
		} else {
			fmt.Fprintf(inv.Stderr, "diff: extra operand '%s'\ndiff: Try 'diff --help' for more information.\n", operands[2])
		}
		return 2
	}
	a, b := operands[0], operands[1]
	da, db := d.isDir(a), d.isDir(b)
	switch {
	case da && db:
		d.dirs(a, b)
	case da:
		d.files(joinPath(a, baseName(b)), b, false)
	case db:
		d.files(a, joinPath(b, baseName(a)), false)
	default:
		d.files(a, b, false)
	}
	out.Flush()
	if d.limitErr != nil {
		out.Flush()
		st, _ := inv.LimitExceeded(d.limitErr)
		return st
	}
	return d.status
}

func baseName(p string) string {
	p = strings.TrimRight(p, "/")
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		return p[i+1:]
	}
	return p
}

func joinPath(dir, name string) string { return strings.TrimRight(dir, "/") + "/" + name }

func (d *differ) isDir(name string) bool {
	if name == "-" || d.inv.FS == nil {
		return false
	}
	st, err := d.inv.FS.Stat(d.inv.Abs(name))
	return err == nil && st.IsDir()
}

func (d *differ) trouble(format string, args ...any) {
	if f, ok := d.out.(interface{ Flush() error }); ok {
		f.Flush()
	}
	fmt.Fprintf(d.inv.Stderr, "diff: "+format+"\n", args...)
	d.status = 2
}

// read loads a whole operand; missing files read as empty with -N.
func (d *differ) read(name string, allowMissing bool) ([]byte, bool, bool) {
	f, err := d.inv.Open(name)
	if err != nil {
		if allowMissing && isNotExist(err) {
			return nil, true, true
		}
		d.trouble("%s", commands.Describe(err))
		return nil, false, false
	}
	defer f.Close()
	var buf bytes.Buffer
	chunk := make([]byte, 32<<10)
	for {
		n, err := f.Read(chunk)
		buf.Write(chunk[:n])
		if berr := d.budget.Add(n); berr != nil {
			d.limitErr = berr
			return nil, false, false
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			d.trouble("%s: %s", name, commands.Strerror(err))
			return nil, false, false
		}
		if d.ctx.Err() != nil {
			return nil, false, false
		}
	}
	return buf.Bytes(), true, false
}

func isNotExist(err error) bool {
	var pe *fs.PathError
	if ok := asPathErr(err, &pe); ok {
		return strings.Contains(commands.Strerror(pe.Err), "No such file")
	}
	return false
}

func asPathErr(err error, pe **fs.PathError) bool {
	p, ok := err.(*fs.PathError)
	if ok {
		*pe = p
	}
	return ok
}

func (d *differ) mtime(name string, missing bool) string {
	t := time.Unix(0, 0).UTC()
	if !missing && name != "-" && d.inv.FS != nil {
		if st, err := d.inv.FS.Stat(d.inv.Abs(name)); err == nil {
			t = st.ModTime()
		}
	} else if name == "-" {
		t = d.inv.Now()
	}
	return t.Format("2006-01-02 15:04:05.000000000 -0700")
}

func (d *differ) files(a, b string, inDir bool) {
	if d.limitErr != nil {
		return
	}
	if a == "-" && b == "-" {
		// one stream compared with itself: equal, as GNU diff says
		// without reading it
		if d.same {
			fmt.Fprintf(d.out, "Files %s and %s are identical\n", a, b)
		}
		return
	}
	// What one pair holds is given back before the next (diff -r).
	used := d.budget.Used
	defer func() { d.budget.Release(int(d.budget.Used - used)) }()
	ta, oka, missA := d.read(a, d.newFile)
	if !oka {
		return
	}
	tb, okb, missB := d.read(b, d.newFile)
	if !okb {
		return
	}
	if bytes.Equal(ta, tb) && !(missA && missB) {
		if d.same {
			fmt.Fprintf(d.out, "Files %s and %s are identical\n", a, b)
		}
		return
	}
	if !d.text && (bytes.IndexByte(ta, 0) >= 0 || bytes.IndexByte(tb, 0) >= 0) {
		if d.differsWithOptions(ta, tb) {
			fmt.Fprintf(d.out, "Binary files %s and %s differ\n", a, b)
			d.status = max(d.status, 1)
		}
		return
	}
	la, lb := splitLines(ta), splitLines(tb)
	edits, err := d.compute(la, lb)
	if err != nil {
		if errors.Is(err, commands.ErrMemoryLimit) {
			d.limitErr = err
		}
		return
	}
	if len(edits) == 0 {
		if d.same {
			fmt.Fprintf(d.out, "Files %s and %s are identical\n", a, b)
		}
		return
	}
	d.status = max(d.status, 1)
	if d.brief {
		fmt.Fprintf(d.out, "Files %s and %s differ\n", a, b)
		return
	}
	if inDir {
		if d.optStr != "" {
			fmt.Fprintf(d.out, "diff %s %s %s\n", d.optStr, a, b)
		} else {
			fmt.Fprintf(d.out, "diff %s %s\n", a, b)
		}
	}
	switch d.format {
	case 'e':
		writeEd(d.out, la, lb, edits)
		return
	case 'y':
		width := d.width
		if width == 0 {
			width = 130
		}
		sbs := newSideBySide(d.out, width)
		sbs.suppress = d.suppress
		sbs.write(la, lb, edits)
		return
	}
	if d.unified >= 0 {
		la1, lb1 := a, b
		if len(d.labels) > 0 {
			la1 = d.labels[0]
		} else {
			la1 = a + "\t" + d.mtime(a, missA)
		}
		if len(d.labels) > 1 {
			lb1 = d.labels[1]
		} else {
			lb1 = b + "\t" + d.mtime(b, missB)
		}
		if d.format == 'c' {
			fmt.Fprintf(d.out, "*** %s\n--- %s\n", la1, lb1)
			writeContext(d.out, la, lb, edits, d.unified)
			return
		}
		fmt.Fprintf(d.out, "--- %s\n+++ %s\n", la1, lb1)
		writeUnified(d.out, la, lb, edits, d.unified)
		return
	}
	writeNormal(d.out, la, lb, edits)
}

func (d *differ) differsWithOptions(a, b []byte) bool { return !bytes.Equal(a, b) }

func (d *differ) dirs(a, b string) {
	// Symlinked directories can loop; stop where a pair repeats.
	ra, _ := d.inv.FS.Realpath(d.inv.Abs(a))
	rb, _ := d.inv.FS.Realpath(d.inv.Abs(b))
	key := ra + "\x00" + rb
	for _, w := range d.walking {
		if w == key {
			d.trouble("%s: recursive directory loop", a)
			return
		}
	}
	d.walking = append(d.walking, key)
	defer func() { d.walking = d.walking[:len(d.walking)-1] }()
	ea, erra := d.inv.FS.ReadDir(d.inv.Abs(a))
	eb, errb := d.inv.FS.ReadDir(d.inv.Abs(b))
	if erra != nil {
		d.trouble("%s: %s", a, commands.Strerror(unwrap(erra)))
		return
	}
	if errb != nil {
		d.trouble("%s: %s", b, commands.Strerror(unwrap(errb)))
		return
	}
	names := map[string]int{}
	for _, e := range ea {
		names[e.Name()] |= 1
	}
	for _, e := range eb {
		names[e.Name()] |= 2
	}
	var sorted []string
	for n := range names {
		sorted = append(sorted, n)
	}
	sortStrings(sorted)
	for _, n := range sorted {
		if d.ctx.Err() != nil {
			return
		}
		excluded := false
		for _, p := range d.exclude {
			if ok, _ := matchGlob(p, n); ok {
				excluded = true
			}
		}
		if excluded {
			continue
		}
		pa, pb := joinPath(a, n), joinPath(b, n)
		switch names[n] {
		case 1, 2:
			if d.newFile {
				if d.isDir(pa) || d.isDir(pb) {
					if d.recurse {
						// A whole new directory: compare against nothing.
						d.onlyIn(names[n], a, b, n)
					}
					continue
				}
				d.files(pa, pb, true)
				continue
			}
			d.onlyIn(names[n], a, b, n)
		case 3:
			dA, dB := d.isDir(pa), d.isDir(pb)
			switch {
			case dA && dB:
				if d.recurse {
					d.dirs(pa, pb)
				} else {
					fmt.Fprintf(d.out, "Common subdirectories: %s and %s\n", pa, pb)
				}
			case dA != dB:
				kind := func(dir bool) string {
					if dir {
						return "directory"
					}
					return "regular file"
				}
				fmt.Fprintf(d.out, "File %s is a %s while file %s is a %s\n", pa, kind(dA), pb, kind(dB))
				d.status = max(d.status, 1)
			default:
				d.files(pa, pb, true)
			}
		}
	}
}

func (d *differ) onlyIn(which int, a, b, n string) {
	dir := a
	if which == 2 {
		dir = b
	}
	fmt.Fprintf(d.out, "Only in %s: %s\n", strings.TrimRight(dir, "/"), n)
	d.status = max(d.status, 1)
}

func unwrap(err error) error {
	if pe, ok := err.(*fs.PathError); ok {
		return pe.Err
	}
	return err
}

func sortStrings(s []string) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}

// line is one input line; noEOL marks a last line without a newline.
type line struct {
	text  string
	noEOL bool
}

func splitLines(b []byte) []line {
	var out []line
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			out = append(out, line{text: string(b), noEOL: true})
			break
		}
		out = append(out, line{text: string(b[:i])})
		b = b[i+1:]
	}
	return out
}

func (d *differ) key(l line) string {
	s := l.text
	if d.icase {
		s = strings.ToLower(s)
	}
	switch {
	case d.allWS:
		s = strings.Join(strings.Fields(s), "")
	case d.spaceWS:
		s = strings.Join(strings.Fields(s), " ")
		if strings.HasPrefix(l.text, " ") || strings.HasPrefix(l.text, "\t") {
			s = " " + s
		}
	}
	if l.noEOL {
		s += "\x00noeol"
	}
	return s
}

// edit is one aligned pair: a line kept (a and b), deleted (b=-1) or inserted (a=-1).
type edit struct{ a, b int }

// compute aligns la and lb with Myers' O(ND) algorithm and returns the
// changes as a script of deletions and insertions (nil when equal).
func (d *differ) compute(la, lb []line) ([]edit, error) {
	ids := map[string]int{}
	ka := make([]int, len(la))
	kb := make([]int, len(lb))
	for i, l := range la {
		k := d.key(l)
		if _, ok := ids[k]; !ok {
			ids[k] = len(ids)
		}
		ka[i] = ids[k]
	}
	for i, l := range lb {
		k := d.key(l)
		if _, ok := ids[k]; !ok {
			ids[k] = len(ids)
		}
		kb[i] = ids[k]
	}
	script, err := myers(d.ctx, d.budget, ka, kb)
	if err != nil {
		return nil, err
	}
	changed := false
	for _, e := range script {
		if e.a < 0 || e.b < 0 {
			changed = true
			break
		}
	}
	if !changed {
		return nil, nil
	}
	if d.blank && d.onlyBlankChanges(script, la, lb) {
		return nil, nil
	}
	return script, nil
}

// onlyBlankChanges reports whether every change in script deletes or
// inserts blank lines only (diff -B). When some change is not blank, the
// blank ones are still shown: GNU leaves them out of its hunks.
func (d *differ) onlyBlankChanges(script []edit, la, lb []line) bool {
	blank := func(l line) bool {
		// empty, or only white space when white space is ignored
		return l.text == "" || (d.allWS || d.spaceWS) && strings.TrimSpace(l.text) == ""
	}
	for _, e := range script {
		switch {
		case e.a >= 0 && e.b < 0:
			if !blank(la[e.a]) {
				return false
			}
		case e.b >= 0 && e.a < 0:
			if !blank(lb[e.b]) {
				return false
			}
		}
	}
	return true
}

// myers keeps a snapshot of its frontier per edit distance, O(D(N+M))
// memory: each is charged to b, and ctx is checked per distance, so two
// long, wholly different inputs fail cleanly instead of exhausting memory.
func myers(ctx context.Context, budget *textio.Budget, a, b []int) ([]edit, error) {
	// Trim common prefix/suffix first: it keeps D small for typical edits.
	pre := 0
	for pre < len(a) && pre < len(b) && a[pre] == b[pre] {
		pre++
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	ma, mb := a[pre:len(a)-suf], b[pre:len(b)-suf]
	var script []edit
	for i := 0; i < pre; i++ {
		script = append(script, edit{i, i})
	}
	n, m := len(ma), len(mb)
	max := n + m
	v := make([]int, 2*max+2)
	var trace [][]int
	found := false
	for dd := 0; dd <= max && !found; dd++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if err := budget.Add(len(v) * 8); err != nil {
			return nil, err
		}
		snap := make([]int, len(v))
		copy(snap, v)
		trace = append(trace, snap)
		for k := -dd; k <= dd; k += 2 {
			var x int
			if k == -dd || (k != dd && v[max+k-1] < v[max+k+1]) {
				x = v[max+k+1]
			} else {
				x = v[max+k-1] + 1
			}
			y := x - k
			for x < n && y < m && ma[x] == mb[y] {
				x++
				y++
			}
			v[max+k] = x
			if x >= n && y >= m {
				found = true
				break
			}
		}
	}
	if n == 0 && m == 0 {
		trace = nil
	}
	// Backtrack.
	var mid []edit
	x, y := n, m
	for dd := len(trace) - 1; dd >= 0 && (x > 0 || y > 0); dd-- {
		vv := trace[dd]
		k := x - y
		var pk int
		if k == -dd || (k != dd && vv[max+k-1] < vv[max+k+1]) {
			pk = k + 1
		} else {
			pk = k - 1
		}
		px := vv[max+pk]
		py := px - pk
		for x > px && y > py {
			x--
			y--
			mid = append(mid, edit{pre + x, pre + y})
		}
		if dd > 0 {
			if x == px {
				y--
				mid = append(mid, edit{-1, pre + y})
			} else {
				x--
				mid = append(mid, edit{pre + x, -1})
			}
		}
	}
	for i := len(mid) - 1; i >= 0; i-- {
		script = append(script, mid[i])
	}
	for i := 0; i < suf; i++ {
		script = append(script, edit{len(a) - suf + i, len(b) - suf + i})
	}
	return script, nil
}

// hunk is a run of changes: lines a[a0:a1] replaced by b[b0:b1].
type hunk struct{ a0, a1, b0, b1 int }

func hunks(script []edit) []hunk {
	var out []hunk
	ai, bi := 0, 0
	for i := 0; i < len(script); {
		e := script[i]
		if e.a >= 0 && e.b >= 0 {
			ai, bi = e.a+1, e.b+1
			i++
			continue
		}
		h := hunk{a0: ai, b0: bi}
		for i < len(script) && (script[i].a < 0 || script[i].b < 0) {
			if script[i].a >= 0 {
				ai = script[i].a + 1
			} else {
				bi = script[i].b + 1
			}
			i++
		}
		h.a1, h.b1 = ai, bi
		out = append(out, h)
	}
	return out
}

func rangeStr(lo, hi int) string {
	// lo, hi are 1-based inclusive; an empty range names the line before.
	if hi <= lo {
		return strconv.Itoa(lo)
	}
	return strconv.Itoa(lo) + "," + strconv.Itoa(hi)
}

func writeLine(w io.Writer, prefix string, l line) {
	io.WriteString(w, prefix)
	io.WriteString(w, l.text)
	io.WriteString(w, "\n")
	if l.noEOL {
		io.WriteString(w, "\\ No newline at end of file\n")
	}
}

func writeNormal(w io.Writer, la, lb []line, script []edit) {
	for _, h := range hunks(script) {
		switch {
		case h.a0 == h.a1:
			fmt.Fprintf(w, "%da%s\n", h.a0, rangeStr(h.b0+1, h.b1))
		case h.b0 == h.b1:
			fmt.Fprintf(w, "%sd%d\n", rangeStr(h.a0+1, h.a1), h.b0)
		default:
			fmt.Fprintf(w, "%sc%s\n", rangeStr(h.a0+1, h.a1), rangeStr(h.b0+1, h.b1))
		}
		for _, l := range la[h.a0:h.a1] {
			writeLine(w, "< ", l)
		}
		if h.a0 != h.a1 && h.b0 != h.b1 {
			io.WriteString(w, "---\n")
		}
		for _, l := range lb[h.b0:h.b1] {
			writeLine(w, "> ", l)
		}
	}
}

func unifiedRange(start, count int) string {
	switch count {
	case 0:
		return strconv.Itoa(start) + ",0"
	case 1:
		return strconv.Itoa(start + 1)
	}
	return strconv.Itoa(start+1) + "," + strconv.Itoa(count)
}

func writeUnified(w io.Writer, la, lb []line, script []edit, ctxN int) {
	hs := hunks(script)
	for i := 0; i < len(hs); {
		// Group hunks whose context overlaps.
		j := i
		for j+1 < len(hs) && hs[j+1].a0-hs[j].a1 <= 2*ctxN {
			j++
		}
		a0 := max(hs[i].a0-ctxN, 0)
		b0 := max(hs[i].b0-ctxN, 0)
		a1 := min(hs[j].a1+ctxN, len(la))
		b1 := min(hs[j].b1+ctxN, len(lb))
		fmt.Fprintf(w, "@@ -%s +%s @@\n", unifiedRange(a0, a1-a0), unifiedRange(b0, b1-b0))
		ai := a0
		for k := i; k <= j; k++ {
			h := hs[k]
			for ; ai < h.a0; ai++ {
				writeLine(w, " ", la[ai])
			}
			for _, l := range la[h.a0:h.a1] {
				writeLine(w, "-", l)
			}
			for _, l := range lb[h.b0:h.b1] {
				writeLine(w, "+", l)
			}
			ai = h.a1
		}
		for ; ai < a1; ai++ {
			writeLine(w, " ", la[ai])
		}
		i = j + 1
	}
}

func matchGlob(pattern, name string) (bool, error) {
	return pathMatch(pattern, name)
}
