package coreutils

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"math"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/warren-sandbox/warren/commands"
	"github.com/warren-sandbox/warren/commands/internal/getopt"
	"github.com/warren-sandbox/warren/commands/internal/posixre"
	"github.com/warren-sandbox/warren/commands/internal/textio"
)

// readLines reads every line of one operand within the memory budget.
func (r *run) readLines(name string, delim byte, b *textio.Budget) ([]string, bool) {
	var out []string
	okAll := true
	r.each([]string{name}, func(_ string, br *bufio.Reader) error {
		lr := textio.LineReader{R: br, Delim: delim, Res: commands.ReservationFrom(r.ctx)}
		for {
			line, _, err := lr.Next()
			if err == io.EOF {
				return nil
			}
			if err != nil {
				okAll = false
				return err
			}
			if err := b.Add(len(line) + 16); err != nil {
				okAll = false
				return err
			}
			out = append(out, string(line))
		}
	})
	return out, okAll && r.status == 0
}

var joinSpec = getopt.Spec{Short: "1:2:a:e:ij:o:t:v:z", Long: []getopt.Long{
	{Name: "ignore-case", Key: "i"}, {Name: "check-order"}, {Name: "nocheck-order"}, {Name: "header"},
	{Name: "zero-terminated", Key: "z"}}}

// Join is join(1).
func Join(ctx context.Context, inv *commands.Invocation) int {
	r := begin(ctx, inv)
	opts, files, code, ok := r.parse(&joinSpec)
	if !ok {
		return code
	}
	f1, f2 := 1, 1
	var unpaired [3]bool
	onlyUnpaired := false
	empty, format, tab := "", "", ""
	haveTab, icase, header := false, false, false
	checkOrder := "auto"
	delim := byte('\n')
	field := func(s string) (int, bool) {
		n, err := strconv.Atoi(s)
		return n, err == nil && n >= 1
	}
	for _, o := range opts {
		switch o.Key {
		case "1", "2", "j":
			n, ok := field(o.Arg)
			if !ok {
				return r.fail(1, "invalid field number: %s", quoteGNU(o.Arg))
			}
			if o.Key != "2" {
				f1 = n
			}
			if o.Key != "1" {
				f2 = n
			}
		case "a", "v":
			if o.Arg != "1" && o.Arg != "2" {
				return r.fail(1, "invalid field number: %s", quoteGNU(o.Arg))
			}
			unpaired[o.Arg[0]-'0'] = true
			if o.Key == "v" {
				onlyUnpaired = true
			}
		case "e":
			empty = o.Arg
		case "o":
			format = o.Arg
		case "t":
			tab, haveTab = o.Arg, true
			if len(tab) > 1 {
				return r.fail(1, "multi-character tab %s", quoteGNU(tab))
			}
		case "i":
			icase = true
		case "header":
			header = true
		case "z":
			delim = 0
		case "check-order":
			checkOrder = "always"
		case "nocheck-order":
			checkOrder = "never"
		}
	}
	if len(files) != 2 {
		if len(files) < 2 {
			if len(files) == 0 {
				return r.usage(fmt.Errorf("missing operand"), 1)
			}
			return r.usage(fmt.Errorf("missing operand after %s", quoteGNU(files[0])), 1)
		}
		return r.usage(fmt.Errorf("extra operand %s", quoteGNU(files[2])), 1)
	}
	b := r.budget()
	a, ok1 := r.readLines(files[0], delim, b)
	if !ok1 {
		return r.done()
	}
	bl, ok2 := r.readLines(files[1], delim, b)
	if !ok2 {
		return r.done()
	}
	split := func(s string) []string {
		if haveTab {
			if tab == "" {
				return []string{s}
			}
			return strings.Split(s, tab)
		}
		return strings.Fields(s)
	}
	outSep := " "
	if haveTab && tab != "" {
		outSep = tab
	}
	key := func(fs []string, n int) string {
		if n-1 < len(fs) {
			if icase {
				return strings.ToLower(fs[n-1])
			}
			return fs[n-1]
		}
		return ""
	}
	var specs [][2]int
	if format != "" && format != "auto" {
		for _, item := range strings.FieldsFunc(format, func(r rune) bool { return r == ',' || r == ' ' }) {
			if item == "0" {
				specs = append(specs, [2]int{0, 0})
				continue
			}
			fno, col, ok := strings.Cut(item, ".")
			n, err := strconv.Atoi(col)
			if !ok || (fno != "1" && fno != "2") || err != nil || n < 1 {
				return r.fail(1, "invalid field specifier: %s", quoteGNU(item))
			}
			specs = append(specs, [2]int{int(fno[0] - '0'), n})
		}
	}
	emit := func(x, y []string, which int) {
		var out []string
		if specs != nil {
			for _, s := range specs {
				var src []string
				var n int
				switch s[0] {
				case 0:
					if x != nil {
						src, n = x, f1
					} else {
						src, n = y, f2
					}
				case 1:
					src, n = x, s[1]
				default:
					src, n = y, s[1]
				}
				if n-1 < len(src) && src != nil {
					out = append(out, src[n-1])
				} else {
					out = append(out, empty)
				}
			}
		} else {
			var k string
			if x != nil {
				k = safeField(x, f1)
			} else {
				k = safeField(y, f2)
			}
			out = append(out, k)
			for i, f := range x {
				if i != f1-1 {
					out = append(out, f)
				}
			}
			for i, f := range y {
				if i != f2-1 {
					out = append(out, f)
				}
			}
		}
		r.out.WriteString(strings.Join(out, outSep))
		r.out.WriteByte(delim)
	}
	sawUnpaired := false
	i, j := 0, 0
	if header && len(a) > 0 && len(bl) > 0 {
		emit(split(a[0]), split(bl[0]), 0)
		i, j = 1, 1
	}
	for i < len(a) || j < len(bl) {
		var xa, yb []string
		if i < len(a) {
			xa = split(a[i])
		}
		if j < len(bl) {
			yb = split(bl[j])
		}
		var c int
		switch {
		case i >= len(a):
			c = 1
		case j >= len(bl):
			c = -1
		default:
			c = strings.Compare(key(xa, f1), key(yb, f2))
		}
		if c < 0 {
			sawUnpaired = true
			if unpaired[1] {
				emit(xa, nil, 1)
			}
			i++
			continue
		}
		if c > 0 {
			sawUnpaired = true
			if unpaired[2] {
				emit(nil, yb, 2)
			}
			j++
			continue
		}
		// Equal keys: cross product of both groups.
		k := key(xa, f1)
		ie, je := i, j
		for ie < len(a) && key(split(a[ie]), f1) == k {
			ie++
		}
		for je < len(bl) && key(split(bl[je]), f2) == k {
			je++
		}
		if !onlyUnpaired {
			for x := i; x < ie; x++ {
				for y := j; y < je; y++ {
					emit(split(a[x]), split(bl[y]), 0)
				}
			}
		}
		i, j = ie, je
	}
	// As GNU join by default: unsorted input is an error when it left
	// lines unpaired (--check-order: always; --nocheck-order: never).
	if checkOrder != "never" && (sawUnpaired || checkOrder == "always") {
		bad := false
		for fi, lines := range [][]string{a, bl} {
			fn := []int{f1, f2}[fi]
			start := 0
			if header {
				start = 1
			}
			for n := start + 1; n < len(lines); n++ {
				if strings.Compare(key(split(lines[n]), fn), key(split(lines[n-1]), fn)) < 0 {
					r.errorf("%s:%d: is not sorted: %s", files[fi], n+1, lines[n])
					bad = true
					break
				}
			}
		}
		if bad {
			r.errorf("input is not in sorted order")
		}
	}
	return r.done()
}

func safeField(fs []string, n int) string {
	if n-1 < len(fs) {
		return fs[n-1]
	}
	return ""
}

var commSpec = getopt.Spec{Short: "123z", Long: []getopt.Long{
	{Name: "check-order"}, {Name: "nocheck-order"}, {Name: "output-delimiter", Arg: getopt.Required},
	{Name: "total"}, {Name: "zero-terminated", Key: "z"}}}

// Comm is comm(1).
func Comm(ctx context.Context, inv *commands.Invocation) int {
	r := begin(ctx, inv)
	opts, files, code, ok := r.parse(&commSpec)
	if !ok {
		return code
	}
	var hide [4]bool
	checkOrder := true
	sep := "\t"
	total := false
	delim := byte('\n')
	for _, o := range opts {
		switch o.Key {
		case "1", "2", "3":
			hide[o.Key[0]-'0'] = true
		case "nocheck-order":
			checkOrder = false
		case "output-delimiter":
			sep = o.Arg
		case "total":
			total = true
		case "z":
			delim = 0
		}
	}
	if len(files) != 2 {
		if len(files) < 2 {
			if len(files) == 0 {
				return r.usage(fmt.Errorf("missing operand"), 1)
			}
			return r.usage(fmt.Errorf("missing operand after %s", quoteGNU(files[0])), 1)
		}
		return r.usage(fmt.Errorf("extra operand %s", quoteGNU(files[2])), 1)
	}
	b := r.budget()
	a, ok1 := r.readLines(files[0], delim, b)
	if !ok1 {
		return r.done()
	}
	c, ok2 := r.readLines(files[1], delim, b)
	if !ok2 {
		return r.done()
	}
	var counts [4]int
	out := func(col int, s string) {
		counts[col]++
		if hide[col] {
			return
		}
		for k := 1; k < col; k++ {
			if !hide[k] {
				r.out.WriteString(sep)
			}
		}
		r.out.WriteString(s)
		r.out.WriteByte(delim)
	}
	// GNU comm checks that both inputs are sorted unless --nocheck-order.
	unsorted := false
	if checkOrder {
		for fi, lines := range [][]string{a, c} {
			for n := 1; n < len(lines); n++ {
				if lines[n] < lines[n-1] {
					r.errorf("file %d is not in sorted order", fi+1)
					unsorted = true
					break
				}
			}
		}
	}
	i, j := 0, 0
	for i < len(a) || j < len(c) {
		switch {
		case j >= len(c) || (i < len(a) && a[i] < c[j]):
			out(1, a[i])
			i++
		case i >= len(a) || c[j] < a[i]:
			out(2, c[j])
			j++
		default:
			out(3, a[i])
			i++
			j++
		}
	}
	if total {
		fmt.Fprintf(r.out, "%d%s%d%s%d%stotal%c", counts[1], sep, counts[2], sep, counts[3], sep, delim)
	}
	if unsorted {
		r.errorf("input is not in sorted order")
	}
	return r.done()
}

var columnSpec = getopt.Spec{Short: "ts:o:c:xnN:JlLR:", Long: []getopt.Long{
	{Name: "table", Key: "t"}, {Name: "separator", Arg: getopt.Required, Key: "s"},
	{Name: "output-separator", Arg: getopt.Required, Key: "o"}, {Name: "output-width", Arg: getopt.Required, Key: "c"},
	{Name: "fillrows", Key: "x"}, {Name: "table-noheadings"}}}

// splitEach splits s at every rune sep reports, keeping empty pieces.
func splitEach(s string, sep func(rune) bool) []string {
	var out []string
	start := 0
	for i, c := range s {
		if sep(c) {
			out = append(out, s[start:i])
			start = i + utf8.RuneLen(c)
		}
	}
	return append(out, s[start:])
}

// Column is util-linux column(1): -t tables, otherwise filling columns.
func Column(ctx context.Context, inv *commands.Invocation) int {
	r := begin(ctx, inv)
	opts, files, code, ok := r.parse(&columnSpec)
	if !ok {
		return code
	}
	table, fillRows := false, false
	seps, outSep := " \t", "  "
	sepGiven := false
	width := 80
	for _, o := range opts {
		switch o.Key {
		case "t":
			table = true
		case "s":
			seps, sepGiven = o.Arg, true
		case "o":
			outSep = o.Arg
		case "c":
			n, err := strconv.Atoi(o.Arg)
			if err != nil || n <= 0 {
				return r.fail(1, "invalid columns argument: '%s'", o.Arg)
			}
			width = n
		case "x":
			fillRows = true
		}
	}
	var lines []string
	b := r.budget()
	if len(files) == 0 {
		files = []string{"-"}
	}
	for _, f := range files {
		ls, _ := r.readLines(f, '\n', b)
		lines = append(lines, ls...)
	}
	if table {
		var rows [][]string
		var widths []int
		for _, l := range lines {
			isSep := func(c rune) bool { return strings.ContainsRune(seps, c) }
			cells := strings.FieldsFunc(l, isSep)
			if len(cells) == 0 {
				continue
			}
			if sepGiven {
				// util-linux splits at every -s character, so two in a
				// row delimit an empty cell; only whitespace merges.
				cells = splitEach(l, isSep)
			}
			for i, c := range cells {
				if i >= len(widths) {
					widths = append(widths, 0)
				}
				widths[i] = max(widths[i], runeWidth(c))
			}
			rows = append(rows, cells)
		}
		// util-linux pads every cell but those of the table's last
		// column, so short rows end in blanks.
		for _, row := range rows {
			for i := range widths {
				c := ""
				if i < len(row) {
					c = row[i]
				}
				r.out.WriteString(c)
				if i < len(widths)-1 {
					r.out.WriteString(strings.Repeat(" ", widths[i]-runeWidth(c)))
					r.out.WriteString(outSep)
				}
			}
			r.out.WriteByte('\n')
		}
		return r.done()
	}
	var entries []string
	maxLen := 0
	for _, l := range lines {
		if strings.TrimSpace(l) == "" {
			continue
		}
		entries = append(entries, l)
		maxLen = max(maxLen, runeWidth(l))
	}
	if len(entries) == 0 {
		return r.done()
	}
	colW := (maxLen + 8) &^ 7
	cols := max(width/colW, 1)
	rows := (len(entries) + cols - 1) / cols
	for row := 0; row < rows; row++ {
		chcnt := 0
		for col := 0; col < cols; col++ {
			idx := col*rows + row
			if fillRows {
				idx = row*cols + col
			}
			if idx >= len(entries) {
				break
			}
			e := entries[idx]
			next := col + 1
			nidx := next*rows + row
			if fillRows {
				nidx = row*cols + next
			}
			r.out.WriteString(e)
			chcnt += runeWidth(e)
			if next < cols && nidx < len(entries) {
				end := (col + 1) * colW
				for {
					cnt := (chcnt + 8) &^ 7
					if cnt > end {
						break
					}
					r.out.WriteByte('\t')
					chcnt = cnt
				}
			}
		}
		r.out.WriteByte('\n')
	}
	return r.done()
}

var nlSpec = getopt.Spec{Short: "b:d:f:h:i:l:n:ps:v:w:", Long: []getopt.Long{
	{Name: "body-numbering", Arg: getopt.Required, Key: "b"}, {Name: "section-delimiter", Arg: getopt.Required, Key: "d"},
	{Name: "footer-numbering", Arg: getopt.Required, Key: "f"}, {Name: "header-numbering", Arg: getopt.Required, Key: "h"},
	{Name: "line-increment", Arg: getopt.Required, Key: "i"}, {Name: "join-blank-lines", Arg: getopt.Required, Key: "l"},
	{Name: "number-format", Arg: getopt.Required, Key: "n"}, {Name: "no-renumber", Key: "p"},
	{Name: "number-separator", Arg: getopt.Required, Key: "s"}, {Name: "starting-line-number", Arg: getopt.Required, Key: "v"},
	{Name: "number-width", Arg: getopt.Required, Key: "w"}}}

// Nl is nl(1) for the body section.
func Nl(ctx context.Context, inv *commands.Invocation) int {
	r := begin(ctx, inv)
	opts, files, code, ok := r.parse(&nlSpec)
	if !ok {
		return code
	}
	style := "t"
	var re *regexp.Regexp
	format, sep := "rn", "\t"
	start, incr, width := int64(1), int64(1), 6
	join := int64(1) // -l: blank lines counted as one line with -b a
	for _, o := range opts {
		switch o.Key {
		case "b":
			style = o.Arg
			switch {
			case style == "a" || style == "t" || style == "n":
			case strings.HasPrefix(style, "p"):
				var err error
				if re, err = posixre.Compile(style[1:], false, ""); err != nil {
					return r.fail(1, "%v", err)
				}
			default:
				return r.fail(1, "invalid body numbering style: %s", quoteGNU(style))
			}
		case "n":
			if o.Arg != "ln" && o.Arg != "rn" && o.Arg != "rz" {
				return r.fail(1, "invalid line number format: %s", quoteGNU(o.Arg))
			}
			format = o.Arg
		case "s":
			sep = o.Arg
		case "v", "i", "w", "l":
			n, err := strconv.ParseInt(o.Arg, 10, 64)
			if err != nil || ((o.Key == "w" || o.Key == "l") && n <= 0) {
				what := map[string]string{"v": "starting line number", "i": "line number increment", "w": "line number field width", "l": "line number of blank lines"}[o.Key]
				if err == nil {
					return r.fail(1, "invalid %s: %s: Numerical result out of range", what, r.q(o.Arg))
				}
				return r.fail(1, "invalid %s: %s", what, r.q(o.Arg))
			}
			switch o.Key {
			case "v":
				start = n
			case "i":
				incr = n
			case "l":
				join = n
			default:
				width = int(n)
			}
		}
	}
	n := start
	blanks := int64(0)
	r.lines(files, '\n', func(line []byte, term bool) error {
		number := false
		switch style[0] {
		case 'a':
			// GNU numbers a run of -l blank lines once, on its last line.
			number = true
			if join > 1 {
				if len(line) > 0 {
					blanks = 0
				} else if blanks++; blanks == join {
					blanks = 0
				} else {
					number = false
				}
			}
		case 't':
			number = len(line) > 0 // a line of blanks is not empty
		case 'p':
			number = re.Match(line)
		}
		if number {
			var s string
			switch format {
			case "ln":
				s = fmt.Sprintf("%-*d", width, n)
			case "rz":
				s = fmt.Sprintf("%0*d", width, n)
			default:
				s = fmt.Sprintf("%*d", width, n)
			}
			r.out.WriteString(s)
			r.out.WriteString(sep)
			n += incr
		} else {
			// GNU pads unnumbered lines with blanks as wide as number + separator.
			r.out.WriteString(strings.Repeat(" ", width+len(sep)))
		}
		r.out.Write(line)
		r.out.WriteByte('\n')
		return nil
	})
	return r.done()
}

var foldSpec = getopt.Spec{Short: "bsw:", Long: []getopt.Long{
	{Name: "bytes", Key: "b"}, {Name: "spaces", Key: "s"}, {Name: "width", Arg: getopt.Required, Key: "w"}}}

// Fold is fold(1).
func Fold(ctx context.Context, inv *commands.Invocation) int {
	args := inv.Args
	// Obsolete "-N" width form.
	for i, a := range args[1:] {
		if len(a) > 1 && a[0] == '-' && isDigit(a[1]) {
			args = append(append(append([]string{}, args[:i+1]...), "-w"+a[1:]), args[i+2:]...)
			break
		}
	}
	inv2 := *inv
	inv2.Args = args
	r := begin(ctx, &inv2)
	opts, files, code, ok := r.parse(&foldSpec)
	if !ok {
		return code
	}
	width, spaces, countBytes := 80, false, false
	for _, o := range opts {
		switch o.Key {
		case "w":
			n, err := strconv.Atoi(o.Arg)
			if err != nil || n <= 0 {
				return r.fail(1, "invalid number of columns: %s", quoteGNU(o.Arg))
			}
			width = n
		case "s":
			spaces = true
		case "b":
			countBytes = true
		}
	}
	adjust := func(col int, c byte) int {
		if countBytes {
			return col + 1
		}
		switch c {
		case '\b':
			if col > 0 {
				return col - 1
			}
			return 0
		case '\r':
			return 0
		case '\t':
			return col + 8 - col%8
		}
		return col + 1
	}
	var buf []byte
	r.lines(files, '\n', func(line []byte, term bool) error {
		col := 0
		buf = buf[:0]
		for i := 0; i < len(line); i++ {
			c := line[i]
		rescan:
			col = adjust(col, c)
			if col > width {
				if spaces {
					if k := bytes.LastIndexAny(buf, " \t"); k >= 0 {
						r.out.Write(buf[:k+1])
						r.out.WriteByte('\n')
						buf = append(buf[:0], buf[k+1:]...)
						col = 0
						for _, x := range buf {
							col = adjust(col, x)
						}
						goto rescan
					}
				}
				if len(buf) == 0 {
					buf = append(buf, c)
					continue
				}
				r.out.Write(buf)
				r.out.WriteByte('\n')
				buf = buf[:0]
				col = 0
				goto rescan
			}
			buf = append(buf, c)
		}
		r.out.Write(buf)
		if term {
			r.out.WriteByte('\n')
		}
		return nil
	})
	return r.done()
}

// tabStops parses expand/unexpand -t lists.
func tabStops(s string) ([]int, error) {
	var out []int
	for _, f := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' }) {
		n, err := strconv.Atoi(strings.TrimPrefix(f, "/"))
		if err != nil || n <= 0 {
			return nil, fmt.Errorf("tab size contains invalid character(s): %s", quoteGNU(f))
		}
		if len(out) > 0 && n <= out[len(out)-1] {
			return nil, fmt.Errorf("tab sizes must be ascending")
		}
		out = append(out, n)
	}
	return out, nil
}

// nextStop returns the column of the next tab stop after col.
func nextStop(stops []int, col int) int {
	if len(stops) == 1 {
		return col + stops[0] - col%stops[0]
	}
	for _, s := range stops {
		if s > col {
			return s
		}
	}
	return col + 1
}

// convertTabsArgs turns expand's obsolete "-4" and "-4,8" forms into -t.
func convertTabsArgs(args []string) []string {
	out := []string{args[0]}
	for _, a := range args[1:] {
		if len(a) > 1 && a[0] == '-' && isDigit(a[1]) {
			out = append(out, "-t"+a[1:])
			continue
		}
		out = append(out, a)
	}
	return out
}

var expandSpec = getopt.Spec{Short: "it:", Long: []getopt.Long{
	{Name: "initial", Key: "i"}, {Name: "tabs", Arg: getopt.Required, Key: "t"}}}

// Expand is expand(1).
func Expand(ctx context.Context, inv *commands.Invocation) int {
	inv2 := *inv
	inv2.Args = convertTabsArgs(inv.Args)
	r := begin(ctx, &inv2)
	opts, files, code, ok := r.parse(&expandSpec)
	if !ok {
		return code
	}
	stops := []int{8}
	initial := false
	for _, o := range opts {
		switch o.Key {
		case "t":
			s, err := tabStops(o.Arg)
			if err != nil {
				return r.fail(1, "%v", err)
			}
			stops = s
		case "i":
			initial = true
		}
	}
	r.lines(files, '\n', func(line []byte, term bool) error {
		col := 0
		leading := true
		for _, c := range line {
			switch {
			case c == '\t' && (leading || !initial):
				next := nextStop(stops, col)
				for ; col < next; col++ {
					r.out.WriteByte(' ')
				}
				continue
			case c == '\b':
				col = max(col-1, 0)
			default:
				col++
			}
			if c != ' ' && c != '\t' {
				leading = false
			}
			r.out.WriteByte(c)
		}
		if term {
			r.out.WriteByte('\n')
		}
		return nil
	})
	return r.done()
}

var unexpandSpec = getopt.Spec{Short: "at:", Long: []getopt.Long{
	{Name: "all", Key: "a"}, {Name: "first-only"}, {Name: "tabs", Arg: getopt.Required, Key: "t"}}}

// Unexpand is unexpand(1).
func Unexpand(ctx context.Context, inv *commands.Invocation) int {
	inv2 := *inv
	inv2.Args = convertTabsArgs(inv.Args)
	r := begin(ctx, &inv2)
	opts, files, code, ok := r.parse(&unexpandSpec)
	if !ok {
		return code
	}
	stops := []int{8}
	all, firstOnly := false, false
	for _, o := range opts {
		switch o.Key {
		case "a":
			all = true
		case "first-only":
			firstOnly = true
		case "t":
			s, err := tabStops(o.Arg)
			if err != nil {
				return r.fail(1, "%v", err)
			}
			stops, all = s, true
		}
	}
	if firstOnly {
		all = false // GNU: --first-only wins over -a and -t in any order
	}
	r.lines(files, '\n', func(line []byte, term bool) error {
		col := 0
		pending := 0 // blanks not yet written
		pendStart := 0
		leading := true
		for _, c := range line {
			if (c == ' ' || c == '\t') && (leading || all) {
				if pending == 0 {
					pendStart = col
				}
				if c == '\t' {
					col = nextStop(stops, col)
					r.out.WriteByte('\t')
					pending = 0
					continue
				}
				col++
				pending++
				if next := nextStop(stops, pendStart); col == next {
					if pending > 1 {
						r.out.WriteByte('\t')
					} else {
						r.out.WriteByte(' ')
					}
					pending = 0
				}
				continue
			}
			for ; pending > 0; pending-- {
				r.out.WriteByte(' ')
			}
			leading = false
			col++
			r.out.WriteByte(c)
		}
		for ; pending > 0; pending-- {
			r.out.WriteByte(' ')
		}
		if term {
			r.out.WriteByte('\n')
		}
		return nil
	})
	return r.done()
}

var fmtSpec = getopt.Spec{Short: "w:sucp:tg:", Long: []getopt.Long{
	{Name: "width", Arg: getopt.Required, Key: "w"}, {Name: "split-only", Key: "s"},
	{Name: "uniform-spacing", Key: "u"}, {Name: "crown-margin", Key: "c"}, {Name: "prefix", Arg: getopt.Required, Key: "p"},
	{Name: "tagged-paragraph", Key: "t"}, {Name: "goal", Arg: getopt.Required, Key: "g"}}}

// fmtWord is one word of a paragraph and the spacing that follows it.
type fmtWord struct {
	text                 string
	space                int
	period, punct, final bool
	paren                bool
}

// Fmt is fmt(1). Lines are broken with GNU fmt's cost model: short lines
// and raggedness are penalised against a goal of 93% of the width, with
// its bonuses for breaking after sentences and punctuation. (-p, -t, -c
// are accepted but not implemented.)
func Fmt(ctx context.Context, inv *commands.Invocation) int {
	args := inv.Args
	for i, a := range args[1:] {
		if len(a) > 1 && a[0] == '-' && isDigit(a[1]) {
			args = append(append(append([]string{}, args[:i+1]...), "-w"+a[1:]), args[i+2:]...)
			break
		}
	}
	inv2 := *inv
	inv2.Args = args
	r := begin(ctx, &inv2)
	opts, files, code, ok := r.parse(&fmtSpec)
	if !ok {
		return code
	}
	width, goal, splitOnly, uniform := 75, -1, false, false
	for _, o := range opts {
		switch o.Key {
		case "w", "g":
			n, err := strconv.Atoi(o.Arg)
			if err != nil || n <= 0 {
				return r.fail(1, "invalid width: %s", quoteGNU(o.Arg))
			}
			if o.Key == "w" {
				width = n
			} else {
				goal = n
			}
		case "s":
			splitOnly = true
		case "u":
			uniform = true
		}
	}
	if goal < 0 {
		goal = width * 93 / 100
	}
	var para []fmtWord
	indent := ""
	flush := func() {
		if len(para) > 0 {
			fmtParagraph(r.out, para, indent, width, goal)
		}
		para = para[:0]
	}
	r.lines(files, '\n', func(b []byte, _ bool) error {
		s := string(b)
		if strings.TrimSpace(s) == "" {
			flush()
			r.out.WriteByte('\n')
			return nil
		}
		ind := s[:len(s)-len(strings.TrimLeft(s, " \t"))]
		if len(para) > 0 && (ind != indent || splitOnly) {
			flush()
		}
		if len(para) == 0 {
			indent = ind
		}
		rest := s[len(ind):]
		for rest != "" {
			i := strings.IndexAny(rest, " \t")
			word := rest
			gap := ""
			if i >= 0 {
				word = rest[:i]
				rest = rest[i:]
				j := len(rest) - len(strings.TrimLeft(rest, " \t"))
				gap, rest = rest[:j], rest[j:]
			} else {
				rest = ""
			}
			w := fmtWord{text: word, space: len(gap), period: sentenceEnd(word),
				punct: strings.IndexByte("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~", word[len(word)-1]) >= 0,
				paren: strings.IndexByte("([`'\"", word[0]) >= 0}
			eol := rest == ""
			w.final = w.period && (eol || len(gap) > 1)
			if eol || uniform {
				w.space = 1
				if w.final {
					w.space = 2
				}
			}
			para = append(para, w)
		}
		return nil
	})
	flush()
	return r.done()
}

func sentenceEnd(w string) bool {
	w = strings.TrimRight(w, ")]\"'")
	return w != "" && strings.IndexByte(".?!", w[len(w)-1]) >= 0
}

// fmtParagraph chooses line breaks by dynamic programming from the end,
// with GNU fmt's costs: a line costs the square of its shortfall from the
// goal plus half the square of its length difference from the next line
// (the last line is free), and starting a line at a word costs LINE_COST
// adjusted for sentence ends, punctuation, parentheses, widows and orphans.
func fmtParagraph(w *bufio.Writer, words []fmtWord, indent string, width, goal int) {
	const (
		lineCost      = 70 * 70
		sentenceBonus = 50 * 50
		noBreakCost   = 600 * 600
		parenBonus    = 40 * 40
		punctBonus    = 40 * 40
	)
	equiv := func(n int64) int64 { return n * n }
	n := len(words)
	baseCost := func(i int) int64 {
		cost := int64(lineCost)
		if i > 0 {
			prev := &words[i-1]
			switch {
			case prev.period && prev.final:
				cost -= sentenceBonus
			case prev.period:
				cost += noBreakCost
			case prev.punct:
				cost -= punctBonus
			case i > 1 && words[i-2].final:
				cost += equiv(200) / int64(len(words[i-2].text)+2)
			}
		}
		if words[i].paren {
			cost -= parenBonus
		} else if words[i].final {
			cost += equiv(150) / int64(len(words[i].text)+2)
		}
		return cost
	}
	best := make([]int64, n+1)
	next := make([]int, n+1)
	lineLen := make([]int, n+1)
	next[n] = n
	for i := n - 1; i >= 0; i-- {
		bestCost := int64(math.MaxInt64)
		l := len(indent) + len(words[i].text)
		for j := i + 1; ; j++ {
			// Consider breaking before word j.
			var cost int64
			if j < n {
				cost = equiv(int64(goal-l) * 10)
				if next[j] != n {
					cost += equiv(int64(l-lineLen[j])*10) / 2
				}
			}
			cost += best[j]
			if cost < bestCost {
				bestCost, next[i], lineLen[i] = cost, j, l
			}
			if j == n {
				break
			}
			l += words[j-1].space + len(words[j].text)
			if l >= width {
				break
			}
		}
		best[i] = bestCost + baseCost(i)
	}
	for i := 0; i < n; i = next[i] {
		w.WriteString(indent)
		for k := i; k < next[i]; k++ {
			if k > i {
				w.WriteString(strings.Repeat(" ", words[k-1].space))
			}
			w.WriteString(words[k].text)
		}
		w.WriteByte('\n')
	}
}
