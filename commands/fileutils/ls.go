package fileutils

import (
	"bufio"
	"context"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/warren-sandbox/warren/commands"
	"github.com/warren-sandbox/warren/commands/sysinfo"
)

var lsOpts = newOpts("aAlhR1tSrdFpiUnogcuXvsLHCxmQI:w:BbNGT:",
	"all:a", "almost-all:A", "human-readable:h", "recursive:R", "reverse:r",
	"directory:d", "classify?:F", "inode:i", "numeric-uid-gid:n", "color?",
	"full-time", "time-style=", "sort=", "group-directories-first",
	"dereference:L", "indicator-style=", "si", "format=", "size:s",
	"literal:N", "quote-name:Q", "no-group:G", "hide=", "ignore=:I",
	"width=:w", "time=", "ignore-backups:B", "escape:b", "tabsize=:T")

type lsConf struct {
	all, almost, long, human, recursive, dirOnly, reverse bool
	classify, slash, inode, numeric, noOwner, noGroup     bool
	deref, derefArgs, dirsFirst, size, quoteName          bool
	escape                                                bool // -b: C escapes, "\ " for a blank
	width                                                 int  // -w (0: no limit)
	tabsize                                               int  // -T
	sortBy                                                byte // n t S U X v
	timeOf                                                byte // m c u
	timeStyle                                             string
	format                                                byte     // 1 l C x m
	ignore                                                []string // -I, -B: always
	hide                                                  []string // --hide: unless -a or -A
	now                                                   time.Time
	loc                                                   *time.Location
	users, groups                                         idNames
}

type lsEntry struct {
	name   string // as displayed
	abs    string
	fi     fs.FileInfo // lstat (or stat when dereferencing)
	target string      // symlink target
	tfi    fs.FileInfo // stat of the target, nil when dangling
}

func ls(ctx context.Context, inv *commands.Invocation) int {
	opts, args, err := lsOpts.Parse(inv.Args[1:])
	if err != nil {
		return badUsage(inv, err, 2)
	}
	c := &lsConf{sortBy: 'n', timeOf: 'm', format: '1', width: 80, tabsize: 8}
	for _, o := range opts {
		switch o.Key {
		case "a":
			c.all, c.almost = true, false
		case "A":
			c.almost, c.all = true, false
		case "l":
			c.format = 'l'
		case "n":
			c.format, c.numeric = 'l', true
		case "o":
			c.format, c.noGroup = 'l', true
		case "g":
			c.format, c.noOwner = 'l', true
		case "G":
			c.noGroup = true
		case "h":
			c.human = true
		case "si":
			c.human = true
		case "R":
			c.recursive = true
		case "1":
			if c.format != 'l' {
				c.format = '1'
			}
		case "C":
			c.format = 'C'
		case "x":
			c.format = 'x'
		case "m":
			c.format = 'm'
		case "t":
			c.sortBy = 't'
		case "S":
			c.sortBy = 'S'
		case "U":
			c.sortBy = 'U'
		case "X":
			c.sortBy = 'X'
		case "v":
			c.sortBy = 'v'
		case "sort":
			switch o.Val {
			case "none":
				c.sortBy = 'U'
			case "time":
				c.sortBy = 't'
			case "size":
				c.sortBy = 'S'
			case "extension":
				c.sortBy = 'X'
			case "version":
				c.sortBy = 'v'
			case "name":
				c.sortBy = 'n'
			default:
				inv.Errorf("invalid argument %s for '--sort'", quote(o.Val))
				return 2
			}
		case "r":
			c.reverse = true
		case "d":
			c.dirOnly = true
		case "F":
			c.classify = true
		case "p":
			c.slash = true
		case "indicator-style":
			switch o.Val {
			case "classify":
				c.classify = true
			case "slash":
				c.slash = true
			}
		case "i":
			c.inode = true
		case "s":
			c.size = true
		case "c":
			c.timeOf = 'c'
		case "u":
			c.timeOf = 'u'
		case "time":
			switch o.Val {
			case "ctime", "status":
				c.timeOf = 'c'
			case "atime", "access", "use":
				c.timeOf = 'u'
			}
		case "full-time":
			c.format, c.timeStyle = 'l', "full-iso"
		case "time-style":
			c.timeStyle = strings.TrimPrefix(o.Val, "+")
			if strings.HasPrefix(o.Val, "+") {
				c.timeStyle = "+" + c.timeStyle
			}
		case "L":
			c.deref = true
		case "H":
			c.derefArgs = true
		case "group-directories-first":
			c.dirsFirst = true
		case "Q":
			c.quoteName, c.escape = true, false
		case "I":
			c.ignore = append(c.ignore, o.Val)
		case "hide":
			c.hide = append(c.hide, o.Val)
		case "B":
			c.ignore = append(c.ignore, "*~", ".*~")
		case "b":
			c.escape, c.quoteName = true, false
		case "N":
			c.escape, c.quoteName = false, false
		case "w", "T":
			n, err := strconv.ParseUint(o.Val, 10, 63)
			if err != nil {
				what := "line width"
				if o.Key == "T" {
					what = "tab size"
				}
				inv.Errorf("invalid %s: %s", what, localeQuote(inv, o.Val))
				return 2
			}
			if o.Key == "w" {
				c.width = int(n)
			} else {
				c.tabsize = int(n)
			}
		case "format":
			switch o.Val {
			case "long", "verbose":
				c.format = 'l'
			case "single-column":
				c.format = '1'
			case "commas":
				c.format = 'm'
			case "across", "horizontal":
				c.format = 'x'
			case "vertical":
				c.format = 'C'
			}
		}
	}
	c.now = inv.Now()
	c.loc = sysinfo.Location(inv)
	if c.format == 'l' {
		if !c.numeric {
			c.users = loadIDs(inv, "/etc/passwd")
			c.groups = loadIDs(inv, "/etc/group")
		}
	}
	if len(args) == 0 {
		args = []string{"."}
	}
	w := bufio.NewWriterSize(inv.Stdout, 32<<10)
	defer w.Flush()
	status := 0
	var files []*lsEntry
	var dirs []*lsEntry
	followArgs := c.deref || c.derefArgs || !(c.format == 'l' || c.dirOnly || c.classify)
	for _, a := range args {
		e, err := c.entry(inv, a, inv.Abs(a))
		if err != nil {
			inv.Errorf("cannot access %s: %s", quote(a), commands.Strerror(err))
			status = 2
			continue
		}
		isDir := e.fi.IsDir()
		if !isDir && e.fi.Mode()&fs.ModeSymlink != 0 && followArgs && e.tfi != nil && e.tfi.IsDir() {
			isDir = true
		}
		if isDir && !c.dirOnly {
			dirs = append(dirs, e)
		} else {
			files = append(files, e)
		}
	}
	c.sortEntries(files)
	c.sortEntries(dirs)
	if len(files) > 0 {
		c.print(w, files, false)
	}
	header := len(args) > 1 || c.recursive
	first := len(files) == 0
	for _, d := range dirs {
		if err := ctx.Err(); err != nil {
			return 130
		}
		if st := c.listDir(ctx, inv, w, d.name, d.abs, header, &first); st > status {
			status = st
		}
	}
	return status
}

func (c *lsConf) entry(inv *commands.Invocation, name, abs string) (*lsEntry, error) {
	var fi fs.FileInfo
	var err error
	if c.deref {
		fi, err = inv.FS.Stat(abs)
		if err != nil {
			fi, err = inv.FS.Lstat(abs)
		}
	} else {
		fi, err = inv.FS.Lstat(abs)
	}
	if err != nil {
		return nil, err
	}
	e := &lsEntry{name: name, abs: abs, fi: fi}
	if fi.Mode()&fs.ModeSymlink != 0 {
		e.target, _ = inv.FS.Readlink(abs)
		e.tfi, _ = inv.FS.Stat(abs)
	}
	return e, nil
}

func (c *lsConf) hidden(name string) bool {
	if !c.all && !c.almost && strings.HasPrefix(name, ".") {
		return true
	}
	for _, p := range c.ignore {
		if lsMatch(p, name) {
			return true
		}
	}
	if !c.all && !c.almost {
		for _, p := range c.hide {
			if lsMatch(p, name) {
				return true
			}
		}
	}
	return false
}

// localeQuote quotes s as GNU's quote() does in the invocation's locale.
func localeQuote(inv *commands.Invocation, s string) string {
	if utf8Locale(inv) {
		return "‘" + s + "’"
	}
	return quote(s)
}

// lsMatch is fnmatch(3) with FNM_PERIOD, as ls applies -I and --hide: a
// leading dot matches only a literal dot.
func lsMatch(pattern, name string) bool {
	if strings.HasPrefix(name, ".") && !strings.HasPrefix(pattern, ".") {
		return false
	}
	ok, _ := path.Match(pattern, name)
	return ok
}

func (c *lsConf) listDir(ctx context.Context, inv *commands.Invocation, w *bufio.Writer, name, abs string, header bool, first *bool) int {
	ents, err := inv.FS.ReadDir(abs)
	if err != nil {
		inv.Errorf("cannot open directory %s: %s", quote(name), commands.Strerror(err))
		return 2
	}
	status := 0
	var list []*lsEntry
	if c.all {
		for _, dot := range []string{".", ".."} {
			fi, err := inv.FS.Stat(path.Join(abs, dot))
			if err == nil {
				list = append(list, &lsEntry{name: dot, abs: path.Join(abs, dot), fi: fi})
			}
		}
	}
	for _, de := range ents {
		if c.hidden(de.Name()) {
			continue
		}
		e, err := c.entry(inv, de.Name(), path.Join(abs, de.Name()))
		if err != nil {
			inv.Errorf("cannot access %s: %s", quote(path.Join(name, de.Name())), commands.Strerror(err))
			status = 1
			continue
		}
		list = append(list, e)
	}
	c.sortEntries(list)
	if !*first {
		w.WriteString("\n")
	}
	*first = false
	if header {
		w.WriteString(c.displayName(name) + ":\n")
	}
	if c.format == 'l' || c.size {
		var blocks int64
		for _, e := range list {
			blocks += blocksOf(e.fi)
		}
		k := (blocks + 1) / 2
		if c.human {
			fmt.Fprintf(w, "total %s\n", humanSize(k*1024))
		} else {
			fmt.Fprintf(w, "total %d\n", k)
		}
	}
	c.print(w, list, true)
	if c.recursive {
		for _, e := range list {
			if e.name == "." || e.name == ".." || !e.fi.IsDir() {
				continue
			}
			if ctx.Err() != nil {
				return 130
			}
			sub := name + "/" + e.name
			if strings.HasSuffix(name, "/") {
				sub = name + e.name
			}
			if st := c.listDir(ctx, inv, w, sub, e.abs, true, first); st > status {
				status = st
			}
		}
	}
	return status
}

func (c *lsConf) entryTime(e *lsEntry) time.Time {
	switch c.timeOf {
	case 'c':
		return statOf(e.fi).Ctime
	case 'u':
		return statOf(e.fi).Atime
	}
	return e.fi.ModTime()
}

func (c *lsConf) sortEntries(list []*lsEntry) {
	if c.sortBy == 'U' {
		return
	}
	less := func(a, b *lsEntry) int {
		switch c.sortBy {
		case 't':
			ta, tb := c.entryTime(a), c.entryTime(b)
			if !ta.Equal(tb) {
				if ta.After(tb) {
					return -1
				}
				return 1
			}
		case 'S':
			if a.fi.Size() != b.fi.Size() {
				if a.fi.Size() > b.fi.Size() {
					return -1
				}
				return 1
			}
		case 'X':
			xa, xb := path.Ext(a.name), path.Ext(b.name)
			if xa != xb {
				return strings.Compare(xa, xb)
			}
		case 'v':
			return versionCompare(a.name, b.name)
		}
		return strings.Compare(a.name, b.name)
	}
	sort.SliceStable(list, func(i, j int) bool {
		if c.dirsFirst {
			di, dj := list[i].fi.IsDir(), list[j].fi.IsDir()
			if di != dj {
				return di
			}
		}
		r := less(list[i], list[j])
		if c.reverse {
			return r > 0
		}
		return r < 0
	})
}

// versionCompare orders names as ls -v / sort -V: digit runs numerically.
func versionCompare(a, b string) int {
	for a != "" && b != "" {
		da, db := a[0] >= '0' && a[0] <= '9', b[0] >= '0' && b[0] <= '9'
		if da && db {
			i, j := 0, 0
			for i < len(a) && a[i] >= '0' && a[i] <= '9' {
				i++
			}
			for j < len(b) && b[j] >= '0' && b[j] <= '9' {
				j++
			}
			na, nb := strings.TrimLeft(a[:i], "0"), strings.TrimLeft(b[:j], "0")
			if len(na) != len(nb) {
				return len(na) - len(nb)
			}
			if r := strings.Compare(na, nb); r != 0 {
				return r
			}
			a, b = a[i:], b[j:]
			continue
		}
		if a[0] != b[0] {
			return int(a[0]) - int(b[0])
		}
		a, b = a[1:], b[1:]
	}
	return len(a) - len(b)
}

func (c *lsConf) indicator(e *lsEntry) string {
	m := e.fi.Mode()
	switch {
	case m.IsDir():
		if c.classify || c.slash {
			return "/"
		}
	case !c.classify:
	case m&fs.ModeSymlink != 0:
		if c.format != 'l' {
			return "@"
		}
	case m&fs.ModeNamedPipe != 0:
		return "|"
	case m&fs.ModeSocket != 0:
		return "="
	case m.IsRegular() && m&0o111 != 0:
		return "*"
	}
	return ""
}

// displayName is n in the quoting style: -Q's "c" style, -b's "escape"
// (the same escapes, unquoted, and a blank as "\ "), else literal.
func (c *lsConf) displayName(n string) string {
	if !c.quoteName && !c.escape {
		return n
	}
	var b strings.Builder
	if c.quoteName {
		b.WriteByte('"')
	}
	for i := 0; i < len(n); {
		r, size := utf8.DecodeRuneInString(n[i:])
		ch := n[i]
		switch {
		case ch == '\\':
			b.WriteString(`\\`)
		case ch == '"' && c.quoteName:
			b.WriteString(`\"`)
		case ch == ' ' && c.escape:
			b.WriteString(`\ `)
		case ch < 0x80 && strings.IndexByte("\a\b\f\n\r\t\v", ch) >= 0:
			b.WriteByte('\\')
			b.WriteByte("abfnrtv"[strings.IndexByte("\a\b\f\n\r\t\v", ch)])
		case r == utf8.RuneError && size <= 1, ch < 0x20, ch == 0x7f, r >= 0x80 && !unicode.IsPrint(r):
			for _, x := range []byte(n[i : i+size]) {
				fmt.Fprintf(&b, "\\%03o", x)
			}
		default:
			b.WriteString(n[i : i+size])
		}
		i += size
	}
	if c.quoteName {
		b.WriteByte('"')
	}
	return b.String()
}

func (c *lsConf) print(w *bufio.Writer, list []*lsEntry, inDir bool) {
	if c.format != 'l' {
		var names []string
		for _, e := range list {
			prefix := ""
			if c.inode {
				prefix = strconv.FormatUint(statOf(e.fi).Ino, 10) + " "
			}
			if c.size {
				k := (blocksOf(e.fi) + 1) / 2
				if c.human {
					prefix += humanSize(k*1024) + " "
				} else {
					prefix += strconv.FormatInt(k, 10) + " "
				}
			}
			names = append(names, prefix+c.displayName(e.name)+c.indicator(e))
		}
		switch c.format {
		case 'm':
			separated(w, names, ',', c.width)
		case 'C', 'x':
			if c.width == 0 { // -w 0: no limit, one line
				separated(w, names, ' ', 0)
				break
			}
			columns(w, names, c.width, c.tabsize, c.format == 'x')
		default:
			for _, n := range names {
				w.WriteString(n)
				w.WriteByte('\n')
			}
		}
		return
	}
	type row struct {
		ino, blocks, mode, nlink, owner, group, size, date, name string
	}
	rows := make([]row, len(list))
	var wIno, wBlk, wLink, wOwn, wGrp, wSize int
	for i, e := range list {
		st := statOf(e.fi)
		r := row{mode: modeString(e.fi.Mode()), nlink: strconv.FormatUint(uint64(max(st.Nlink, 1)), 10)}
		if c.inode {
			r.ino = strconv.FormatUint(st.Ino, 10)
		}
		if c.size {
			k := (blocksOf(e.fi) + 1) / 2
			r.blocks = strconv.FormatInt(k, 10)
			if c.human {
				r.blocks = humanSize(k * 1024)
			}
		}
		if c.numeric {
			r.owner = strconv.FormatUint(uint64(st.Uid), 10)
			r.group = strconv.FormatUint(uint64(st.Gid), 10)
		} else {
			r.owner = c.users.name(st.Uid)
			r.group = c.groups.name(st.Gid)
		}
		if e.fi.Mode()&fs.ModeDevice != 0 {
			r.size = fmt.Sprintf("%d, %d", st.Rdev>>8&0xfff, st.Rdev&0xff|(st.Rdev>>12)&^0xff)
		} else if c.human {
			r.size = humanSize(e.fi.Size())
		} else {
			r.size = strconv.FormatInt(e.fi.Size(), 10)
		}
		r.date = c.formatTime(c.entryTime(e))
		r.name = c.displayName(e.name)
		if e.fi.Mode()&fs.ModeSymlink != 0 {
			r.name += " -> " + c.displayName(e.target)
			if c.classify && e.tfi != nil {
				r.name += c.indicator(&lsEntry{fi: e.tfi})
			}
		} else {
			r.name += c.indicator(e)
		}
		wIno, wBlk = max(wIno, len(r.ino)), max(wBlk, len(r.blocks))
		wLink, wOwn = max(wLink, len(r.nlink)), max(wOwn, len(r.owner))
		wGrp, wSize = max(wGrp, len(r.group)), max(wSize, len(r.size))
		rows[i] = r
	}
	for _, r := range rows {
		if c.inode {
			fmt.Fprintf(w, "%*s ", wIno, r.ino)
		}
		if c.size {
			fmt.Fprintf(w, "%*s ", wBlk, r.blocks)
		}
		fmt.Fprintf(w, "%s %*s ", r.mode, wLink, r.nlink)
		if !c.noOwner {
			fmt.Fprintf(w, "%-*s ", wOwn, r.owner)
		}
		if !c.noGroup {
			fmt.Fprintf(w, "%-*s ", wGrp, r.group)
		}
		fmt.Fprintf(w, "%*s %s %s\n", wSize, r.size, r.date, r.name)
	}
}

// formatTime renders t as ls -l's default time style: recent files (the
// last six months) show the time of day, older or future ones the year.
func (c *lsConf) formatTime(t time.Time) string {
	t = t.In(c.loc)
	switch c.timeStyle {
	case "full-iso":
		return t.Format("2006-01-02 15:04:05.000000000 -0700")
	case "long-iso":
		return t.Format("2006-01-02 15:04")
	case "iso":
		if c.recent(t) {
			return t.Format("01-02 15:04")
		}
		return t.Format("2006-01-02 ")
	}
	if strings.HasPrefix(c.timeStyle, "+") {
		return sysinfo.Strftime(c.timeStyle[1:], t)
	}
	if c.recent(t) {
		return t.Format("Jan _2 15:04")
	}
	return t.Format("Jan _2  2006")
}

func (c *lsConf) recent(t time.Time) bool {
	sixMonths := time.Duration(31556952/2) * time.Second
	return t.After(c.now.Add(-sixMonths)) && !t.After(c.now.Add(time.Second))
}

// separated is GNU's print_with_separator: names joined by sep and a
// blank, a line broken (sep, newline) before a name that would reach width.
func separated(w *bufio.Writer, names []string, sep byte, width int) {
	if len(names) == 0 {
		return
	}
	pos := 0
	for i, nm := range names {
		n := displayWidth(nm)
		if i > 0 {
			w.WriteByte(sep)
			if width == 0 || pos+n+2 < width {
				w.WriteByte(' ')
				pos += 2
			} else {
				w.WriteByte('\n')
				pos = 0
			}
		}
		w.WriteString(nm)
		pos += n
	}
	w.WriteByte('\n')
}

// columns lays names out like ls -C (down columns) or -x (across) within
// width, padding between columns with tabs where a tab stop (every tabsize
// columns; 0: blanks only) is crossed, as GNU's indent() does.
func columns(w *bufio.Writer, names []string, width, tabsize int, across bool) {
	n := len(names)
	if n == 0 {
		return
	}
	widths := make([]int, n)
	for i, nm := range names {
		widths[i] = displayWidth(nm)
	}
	best := 1
	var bestW []int
	for cols := n; cols >= 1; cols-- {
		rows := (n + cols - 1) / cols
		if !across && (cols-1)*rows >= n {
			continue // fewer names than this many columns need
		}
		cw := make([]int, cols)
		total := 0
		for i := range names {
			col := i / rows
			if across {
				col = i % cols
			}
			cw[col] = max(cw[col], widths[i]+2)
		}
		for i, x := range cw {
			if i == cols-1 {
				x -= 2
			}
			total += x
		}
		if total < width || cols == 1 {
			best, bestW = cols, cw
			break
		}
	}
	rows := (n + best - 1) / best
	for r := 0; r < rows; r++ {
		pos := 0
		for col := 0; col < best; col++ {
			i := col*rows + r
			if across {
				i = r*best + col
			}
			if i >= n {
				break
			}
			w.WriteString(names[i])
			next := (col+1)*rows + r
			if across {
				next = r*best + col + 1
			}
			if col == best-1 || next >= n {
				break
			}
			from, to := pos+widths[i], pos+bestW[col]
			for from < to {
				if tabsize > 0 && to/tabsize > (from+1)/tabsize {
					w.WriteByte('\t')
					from += tabsize - from%tabsize
				} else {
					w.WriteByte(' ')
					from++
				}
			}
			pos = to
		}
		w.WriteByte('\n')
	}
}

// displayWidth is the terminal width of s: wide East Asian characters take
// two columns, combining marks none.
func displayWidth(s string) int {
	n := 0
	for _, r := range s {
		switch {
		case r < 0x20 || r == 0x7f || unicode.Is(unicode.Mn, r) || unicode.Is(unicode.Me, r):
		case r >= 0x1100 && r <= 0x115F, r >= 0x2E80 && r <= 0xA4CF && r != 0x303F, r >= 0xAC00 && r <= 0xD7A3,
			r >= 0xF900 && r <= 0xFAFF, r >= 0xFE30 && r <= 0xFE4F, r >= 0xFF00 && r <= 0xFF60, r >= 0xFFE0 && r <= 0xFFE6,
			r >= 0x1F300 && r <= 0x1F64F, r >= 0x1F900 && r <= 0x1F9FF, r >= 0x20000 && r <= 0x3FFFD:
			n += 2
		default:
			n++
		}
	}
	return n
}
