// Package find holds find and xargs. Both run other commands through
// Invocation.Exec, which goes back through the shell's execution ladder.
package find

import (
	"bufio"
	"context"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/warren-sandbox/warren/commands"
	"github.com/warren-sandbox/warren/commands/fileutils"
	"github.com/warren-sandbox/warren/commands/sysinfo"
	"github.com/warren-sandbox/warren/vfs"
)

// Register adds find and xargs to t.
func Register(t commands.Table) {
	t.Register("find", find)
	t.Register("xargs", xargs)
}

// entry is the file under evaluation.
type entry struct {
	abs, disp, root string
	depth           int
	fi              fs.FileInfo // lstat, or stat when following links
	prune           bool
}

type node interface {
	eval(f *finder, e *entry) bool
}

type finder struct {
	ctx                context.Context
	inv                *commands.Invocation
	out                *bufio.Writer
	maxDepth, minDepth int
	depthFirst         bool
	follow             byte // 'P' never, 'L' always, 'H' command line only
	now                time.Time
	status             int
	quit               bool
	batches            []*execNode
	users, groups      func(uint32) string
	loc                *time.Location
}

// parseError is a bad expression: find prints it and exits 1.
// unknown is a predicate find does not know (GNU's message is kept for when
// no other find runs it) and lacking one it knows of but does not do: both
// are refusals, so the execution ladder can run a native find instead.
type parseError struct {
	msg     string
	unknown string
	lacking string
}

func (e *parseError) Error() string { return e.msg }

func perr(format string, a ...any) error { return &parseError{msg: fmt.Sprintf(format, a...)} }

func find(ctx context.Context, inv *commands.Invocation) int {
	f := &finder{ctx: ctx, inv: inv, maxDepth: -1, follow: 'P', now: inv.Now(), loc: sysinfo.Location(inv)}
	args := inv.Args[1:]
	for len(args) > 0 {
		switch args[0] {
		case "-P", "-L", "-H":
			f.follow = args[0][1]
			args = args[1:]
			continue
		case "-D", "-O":
			if len(args) > 1 {
				args = args[2:]
				continue
			}
		}
		if strings.HasPrefix(args[0], "-O") {
			args = args[1:]
			continue
		}
		break
	}
	var roots []string
	for len(args) > 0 {
		a := args[0]
		if (strings.HasPrefix(a, "-") && a != "-") || a == "(" || a == "!" || a == "," {
			break
		}
		roots = append(roots, a)
		args = args[1:]
	}
	p := &parser{f: f, args: args}
	expr, err := p.parse()
	if err != nil {
		diag := fmt.Sprintf("%s: %s\n", inv.Args[0], err)
		if pe, ok := err.(*parseError); ok && pe.unknown+pe.lacking != "" {
			return inv.Refuse(&commands.UnsupportedError{Cmd: inv.Args[0], What: pe.unknown + pe.lacking, Diag: diag, Status: 1})
		}
		fmt.Fprint(inv.Stderr, diag)
		return 1
	}
	if !p.hasAction {
		if expr == nil {
			expr = &printNode{end: "\n"}
		} else {
			expr = &andNode{expr, &printNode{end: "\n"}}
		}
	}
	if len(roots) == 0 {
		roots = []string{"."}
	}
	f.out = bufio.NewWriterSize(inv.Stdout, 32<<10)
	defer f.out.Flush()
	for _, r := range roots {
		if f.quit || ctx.Err() != nil {
			break
		}
		abs := inv.Abs(r)
		var fi fs.FileInfo
		var err error
		if f.follow != 'P' {
			fi, err = inv.FS.Stat(abs)
			if err != nil {
				fi, err = inv.FS.Lstat(abs)
			}
		} else {
			fi, err = inv.FS.Lstat(abs)
		}
		if err != nil {
			inv.Errorf("%s: %s", quote(r), commands.Strerror(err))
			f.status = 1
			continue
		}
		f.walk(&entry{abs: abs, disp: r, root: r, fi: fi}, expr, map[uint64]bool{})
	}
	f.out.Flush()
	for _, b := range f.batches {
		b.flush(f)
	}
	if ctx.Err() != nil {
		return 130
	}
	return f.status
}

func quote(s string) string { return "'" + s + "'" }

func (f *finder) walk(e *entry, expr node, ancestors map[uint64]bool) {
	if f.quit || f.ctx.Err() != nil {
		return
	}
	inRange := e.depth >= f.minDepth
	if !f.depthFirst && inRange {
		expr.eval(f, e)
	}
	if e.fi.IsDir() && !e.prune && (f.maxDepth < 0 || e.depth < f.maxDepth) && !f.quit {
		ino := uint64(0)
		if st, ok := e.fi.Sys().(*vfs.Stat); ok {
			ino = st.Ino
		}
		if f.follow == 'L' && ino != 0 && ancestors[ino] {
			f.inv.Errorf("File system loop detected; %s is part of the same file system loop as %s.", quote(e.disp), quote(e.root))
			f.status = 1
		} else {
			if ino != 0 {
				ancestors[ino] = true
			}
			ents, err := f.inv.FS.ReadDir(e.abs)
			if err != nil {
				f.out.Flush()
				f.inv.Errorf("%s: %s", quote(e.disp), commands.Strerror(err))
				f.status = 1
			}
			for _, de := range ents {
				if f.quit {
					break
				}
				cabs := path.Join(e.abs, de.Name())
				var cfi fs.FileInfo
				var err error
				if f.follow == 'L' {
					cfi, err = f.inv.FS.Stat(cabs)
					if err != nil {
						cfi, err = f.inv.FS.Lstat(cabs)
					}
				} else if cfi, err = de.Info(); err != nil {
					// Info reads the entry from the listed directory
					// without resolving the path again
					cfi, err = f.inv.FS.Lstat(cabs)
				}
				if err != nil {
					continue
				}
				disp := e.disp + "/" + de.Name()
				if strings.HasSuffix(e.disp, "/") {
					disp = e.disp + de.Name()
				}
				f.walk(&entry{abs: cabs, disp: disp, root: e.root, depth: e.depth + 1, fi: cfi}, expr, ancestors)
			}
			delete(ancestors, ino)
		}
	}
	if f.depthFirst && inRange {
		expr.eval(f, e)
	}
}

// ---- expression nodes ----

type andNode struct{ l, r node }

func (n *andNode) eval(f *finder, e *entry) bool { return n.l.eval(f, e) && n.r.eval(f, e) }

type orNode struct{ l, r node }

func (n *orNode) eval(f *finder, e *entry) bool { return n.l.eval(f, e) || n.r.eval(f, e) }

type commaNode struct{ l, r node }

func (n *commaNode) eval(f *finder, e *entry) bool { n.l.eval(f, e); return n.r.eval(f, e) }

type notNode struct{ x node }

func (n *notNode) eval(f *finder, e *entry) bool { return !n.x.eval(f, e) }

type testFunc func(f *finder, e *entry) bool

func (t testFunc) eval(f *finder, e *entry) bool { return t(f, e) }

type printNode struct{ end string }

func (n *printNode) eval(f *finder, e *entry) bool {
	f.out.WriteString(e.disp)
	f.out.WriteString(n.end)
	return true
}

// ---- parser ----

type parser struct {
	f         *finder
	args      []string
	pos       int
	hasAction bool
	sawTest   bool
}

func (p *parser) peek() (string, bool) {
	if p.pos < len(p.args) {
		return p.args[p.pos], true
	}
	return "", false
}

func (p *parser) parse() (node, error) {
	if len(p.args) == 0 {
		return nil, nil
	}
	n, err := p.comma()
	if err != nil {
		return nil, err
	}
	if tok, ok := p.peek(); ok {
		if tok == ")" {
			return nil, perr("you have too many ')'")
		}
		return nil, perr("paths must precede expression: `%s'", tok)
	}
	if n == nil {
		return nil, nil
	}
	return n, nil
}

func (p *parser) comma() (node, error) {
	l, err := p.or()
	if err != nil {
		return nil, err
	}
	for {
		tok, ok := p.peek()
		if !ok || tok != "," {
			return l, nil
		}
		p.pos++
		r, err := p.or()
		if err != nil {
			return nil, err
		}
		l = &commaNode{l, r}
	}
}

func (p *parser) or() (node, error) {
	l, err := p.and()
	if err != nil {
		return nil, err
	}
	for {
		tok, ok := p.peek()
		if !ok || (tok != "-o" && tok != "-or") {
			return l, nil
		}
		p.pos++
		if l == nil {
			return nil, perr("invalid expression; you have used a binary operator '%s' with nothing before it.", tok)
		}
		r, err := p.and()
		if err != nil {
			return nil, err
		}
		if r == nil {
			return nil, perr("invalid expression; you have used a binary operator '%s' with nothing after it.", tok)
		}
		l = &orNode{l, r}
	}
}

func (p *parser) and() (node, error) {
	l, err := p.unary()
	if err != nil {
		return nil, err
	}
	for {
		tok, ok := p.peek()
		if !ok || tok == "-o" || tok == "-or" || tok == ")" || tok == "," {
			return l, nil
		}
		if tok == "-a" || tok == "-and" {
			p.pos++
			if l == nil {
				return nil, perr("invalid expression; you have used a binary operator '%s' with nothing before it.", tok)
			}
		}
		r, err := p.unary()
		if err != nil {
			return nil, err
		}
		if r == nil {
			if l == nil {
				continue
			}
			return l, nil
		}
		if l == nil {
			l = r
		} else {
			l = &andNode{l, r}
		}
	}
}

func (p *parser) unary() (node, error) {
	tok, ok := p.peek()
	if !ok {
		return nil, nil
	}
	switch tok {
	case "!", "-not":
		p.pos++
		x, err := p.unary()
		if err != nil {
			return nil, err
		}
		if x == nil {
			return nil, perr("invalid expression; you have used a unary operator '%s' with nothing after it.", tok)
		}
		return &notNode{x}, nil
	case "(":
		p.pos++
		x, err := p.comma()
		if err != nil {
			return nil, err
		}
		if t, ok := p.peek(); !ok || t != ")" {
			return nil, perr("invalid expression; I was expecting to find a ')' somewhere but did not see one.")
		}
		p.pos++
		if x == nil {
			return nil, perr("invalid expression; empty parentheses are not allowed.")
		}
		return x, nil
	}
	return p.primary()
}

func (p *parser) arg(name string) (string, error) {
	if p.pos >= len(p.args) {
		return "", perr("missing argument to `%s'", name)
	}
	a := p.args[p.pos]
	p.pos++
	return a, nil
}

// numArg parses find's +N / -N / N into a comparison.
func numArg(s, name string) (func(int64) bool, int64, error) {
	cmp := byte('=')
	t := s
	if strings.HasPrefix(t, "+") || strings.HasPrefix(t, "-") {
		cmp, t = t[0], t[1:]
	}
	n, err := strconv.ParseInt(t, 10, 64)
	if err != nil || t == "" {
		return nil, 0, perr("invalid argument `%s' to `%s'", s, name)
	}
	switch cmp {
	case '+':
		return func(v int64) bool { return v > n }, n, nil
	case '-':
		return func(v int64) bool { return v < n }, n, nil
	}
	return func(v int64) bool { return v == n }, n, nil
}

func typeMatch(m fs.FileMode, c byte) bool {
	switch c {
	case 'f':
		return m.IsRegular()
	case 'd':
		return m.IsDir()
	case 'l':
		return m&fs.ModeSymlink != 0
	case 'p':
		return m&fs.ModeNamedPipe != 0
	case 's':
		return m&fs.ModeSocket != 0
	case 'c':
		return m&fs.ModeCharDevice != 0
	case 'b':
		return m&fs.ModeDevice != 0 && m&fs.ModeCharDevice == 0
	}
	return false
}

func typeChar(m fs.FileMode) string {
	for _, c := range "fdlpscb" {
		if typeMatch(m, byte(c)) {
			return string(c)
		}
	}
	return "U"
}

func globMatch(pat, name string, fold bool) bool {
	if fold {
		pat, name = strings.ToLower(pat), strings.ToLower(name)
	}
	ok, err := path.Match(pat, name)
	if err != nil {
		return pat == name
	}
	return ok
}

// pathMatch is fnmatch without FNM_PATHNAME: '*' also matches '/'.
func pathMatch(pat, name string, fold bool) bool {
	if fold {
		pat, name = strings.ToLower(pat), strings.ToLower(name)
	}
	re, err := globRegexp(pat)
	if err != nil {
		return pat == name
	}
	return re.MatchString(name)
}

func globRegexp(pat string) (*regexp.Regexp, error) {
	var b strings.Builder
	b.WriteString("^(?s:")
	for i := 0; i < len(pat); i++ {
		c := pat[i]
		switch c {
		case '*':
			b.WriteString(".*")
		case '?':
			b.WriteString(".")
		case '\\':
			if i+1 < len(pat) {
				i++
				b.WriteString(regexp.QuoteMeta(string(pat[i])))
			} else {
				b.WriteString(`\\`)
			}
		case '[':
			j := i + 1
			if j < len(pat) && (pat[j] == '!' || pat[j] == '^') {
				j++
			}
			if j < len(pat) && pat[j] == ']' {
				j++
			}
			for j < len(pat) && pat[j] != ']' {
				j++
			}
			if j >= len(pat) {
				b.WriteString(`\[`)
				continue
			}
			class := pat[i+1 : j]
			if strings.HasPrefix(class, "!") {
				class = "^" + class[1:]
			}
			b.WriteString("[" + strings.ReplaceAll(class, `\`, `\\`) + "]")
			i = j
		default:
			b.WriteString(regexp.QuoteMeta(string(c)))
		}
	}
	b.WriteString(")$")
	return regexp.Compile(b.String())
}

func (p *parser) primary() (node, error) {
	f := p.f
	tok := p.args[p.pos]
	p.pos++
	if !strings.HasPrefix(tok, "-") {
		return nil, perr("paths must precede expression: `%s'", tok)
	}
	switch tok {
	// ---- options ----
	case "-maxdepth", "-mindepth":
		a, err := p.arg(tok)
		if err != nil {
			return nil, err
		}
		n, err := strconv.Atoi(a)
		if err != nil || n < 0 {
			return nil, perr("Expected a positive decimal integer argument to %s, but got '%s'", tok, a)
		}
		if tok == "-maxdepth" {
			f.maxDepth = n
		} else {
			f.minDepth = n
		}
		return testFunc(func(*finder, *entry) bool { return true }), nil
	case "-depth", "-d":
		f.depthFirst = true
		return testFunc(func(*finder, *entry) bool { return true }), nil
	case "-follow":
		f.follow = 'L'
		return testFunc(func(*finder, *entry) bool { return true }), nil
	case "-xdev", "-mount", "-noleaf", "-ignore_readdir_race", "-noignore_readdir_race", "-daystart", "-nowarn", "-warn":
		if tok == "-daystart" {
			y, m, d := f.now.In(f.loc).Date()
			f.now = time.Date(y, m, d+1, 0, 0, 0, 0, f.loc)
		}
		return testFunc(func(*finder, *entry) bool { return true }), nil
	case "-regextype":
		if _, err := p.arg(tok); err != nil {
			return nil, err
		}
		return testFunc(func(*finder, *entry) bool { return true }), nil
	// ---- tests ----
	case "-true":
		return testFunc(func(*finder, *entry) bool { return true }), nil
	case "-false":
		return testFunc(func(*finder, *entry) bool { return false }), nil
	case "-name", "-iname":
		pat, err := p.arg(tok)
		if err != nil {
			return nil, err
		}
		fold := tok == "-iname"
		return testFunc(func(f *finder, e *entry) bool {
			base := path.Base(e.disp)
			if e.disp == "/" {
				base = "/"
			}
			return globMatch(pat, base, fold)
		}), nil
	case "-path", "-wholename", "-ipath", "-iwholename":
		pat, err := p.arg(tok)
		if err != nil {
			return nil, err
		}
		fold := strings.HasPrefix(tok, "-i")
		return testFunc(func(f *finder, e *entry) bool { return pathMatch(pat, e.disp, fold) }), nil
	case "-lname", "-ilname":
		pat, err := p.arg(tok)
		if err != nil {
			return nil, err
		}
		return testFunc(func(f *finder, e *entry) bool {
			if e.fi.Mode()&fs.ModeSymlink == 0 {
				return false
			}
			t, _ := f.inv.FS.Readlink(e.abs)
			return pathMatch(pat, t, tok == "-ilname")
		}), nil
	case "-regex", "-iregex":
		pat, err := p.arg(tok)
		if err != nil {
			return nil, err
		}
		flags := ""
		if tok == "-iregex" {
			flags = "(?i)"
		}
		re, err := regexp.Compile(flags + "^(?:" + pat + ")$")
		if err != nil {
			return nil, perr("Invalid regular expression %s: %v", quote(pat), err)
		}
		return testFunc(func(f *finder, e *entry) bool { return re.MatchString(e.disp) }), nil
	case "-type", "-xtype":
		a, err := p.arg(tok)
		if err != nil {
			return nil, err
		}
		var types []byte
		for _, t := range strings.Split(a, ",") {
			if len(t) != 1 || !strings.Contains("fdlpscbD", t) {
				if a == "" {
					return nil, perr("Arguments to %s should contain at least one letter", tok)
				}
				return nil, perr("Unknown argument to %s: %s", tok, t)
			}
			types = append(types, t[0])
		}
		xt := tok == "-xtype"
		return testFunc(func(f *finder, e *entry) bool {
			m := e.fi.Mode()
			if xt {
				if f.follow == 'L' {
					if fi, err := f.inv.FS.Lstat(e.abs); err == nil {
						m = fi.Mode()
					}
				} else if m&fs.ModeSymlink != 0 {
					if fi, err := f.inv.FS.Stat(e.abs); err == nil {
						m = fi.Mode()
					}
				}
			}
			for _, t := range types {
				if typeMatch(m, t) {
					return true
				}
			}
			return false
		}), nil
	case "-empty":
		return testFunc(func(f *finder, e *entry) bool {
			if e.fi.IsDir() {
				ents, err := f.inv.FS.ReadDir(e.abs)
				return err == nil && len(ents) == 0
			}
			return e.fi.Mode().IsRegular() && e.fi.Size() == 0
		}), nil
	case "-size":
		a, err := p.arg(tok)
		if err != nil {
			return nil, err
		}
		unit := int64(512)
		s := a
		if s != "" {
			switch s[len(s)-1] {
			case 'c':
				unit, s = 1, s[:len(s)-1]
			case 'w':
				unit, s = 2, s[:len(s)-1]
			case 'b':
				unit, s = 512, s[:len(s)-1]
			case 'k':
				unit, s = 1024, s[:len(s)-1]
			case 'M':
				unit, s = 1<<20, s[:len(s)-1]
			case 'G':
				unit, s = 1<<30, s[:len(s)-1]
			}
		}
		cmp, _, err := numArg(s, tok)
		if err != nil {
			return nil, perr("Invalid argument `%s' to -size", a)
		}
		return testFunc(func(f *finder, e *entry) bool {
			sz := e.fi.Size()
			return cmp((sz + unit - 1) / unit)
		}), nil
	case "-mtime", "-atime", "-ctime", "-mmin", "-amin", "-cmin":
		a, err := p.arg(tok)
		if err != nil {
			return nil, err
		}
		cmp, _, err := numArg(a, tok)
		if err != nil {
			return nil, err
		}
		per := 24 * time.Hour
		if strings.HasSuffix(tok, "min") {
			per = time.Minute
		}
		which := tok[1]
		return testFunc(func(f *finder, e *entry) bool {
			t := fileTime(e.fi, which)
			age := f.now.Sub(t)
			n := int64(age / per)
			if age < 0 && age%per != 0 {
				n--
			}
			if per == time.Minute && age > 0 && age%per != 0 {
				// -mmin rounds up: a file 30s old is in minute 1
				n++
			}
			return cmp(n)
		}), nil
	case "-newermt", "-newerat", "-newerct":
		// the reference is a date string, read as touch -d reads it
		a, err := p.arg(tok)
		if err != nil {
			return nil, err
		}
		ref, err := sysinfo.ParseDate(a, f.now, sysinfo.Location(f.inv))
		if err != nil {
			return nil, perr("I cannot figure out how to interpret %s as a date or time", quote(a))
		}
		mine := tok[6]
		return testFunc(func(f *finder, e *entry) bool { return fileTime(e.fi, mine).After(ref) }), nil
	case "-newer", "-anewer", "-cnewer", "-newermm", "-newerma", "-newermc", "-neweram", "-newercm", "-neweraa", "-newercc":
		a, err := p.arg(tok)
		if err != nil {
			return nil, err
		}
		fi, err := f.inv.FS.Stat(f.inv.Abs(a))
		if err != nil {
			return nil, perr("%s: %s", quote(a), commands.Strerror(err))
		}
		mine, theirs := byte('m'), byte('m')
		switch tok {
		case "-anewer":
			mine = 'a'
		case "-cnewer":
			mine = 'c'
		default:
			if len(tok) == 8 {
				mine, theirs = tok[6], tok[7]
			}
		}
		ref := fileTime(fi, theirs)
		return testFunc(func(f *finder, e *entry) bool { return fileTime(e.fi, mine).After(ref) }), nil
	case "-perm":
		a, err := p.arg(tok)
		if err != nil {
			return nil, err
		}
		kind := byte('=')
		spec := a
		if strings.HasPrefix(spec, "-") || strings.HasPrefix(spec, "/") || strings.HasPrefix(spec, "+") && len(spec) > 1 && spec[1] >= '0' && spec[1] <= '7' {
			kind, spec = spec[0], spec[1:]
		}
		m, ok := fileutils.ParseMode(spec, 0, false)
		if !ok {
			return nil, perr("invalid mode %s", quote(a))
		}
		want := fileutils.UnixMode(m)
		return testFunc(func(f *finder, e *entry) bool {
			have := fileutils.UnixMode(e.fi.Mode())
			switch kind {
			case '-':
				return have&want == want
			case '/', '+':
				return want == 0 || have&want != 0
			}
			return have == want
		}), nil
	case "-user", "-group", "-uid", "-gid":
		a, err := p.arg(tok)
		if err != nil {
			return nil, err
		}
		var cmp func(int64) bool
		if tok == "-uid" || tok == "-gid" {
			if cmp, _, err = numArg(a, tok); err != nil {
				return nil, err
			}
		} else {
			id, ok := lookupID(f.inv, tok, a)
			if !ok {
				return nil, perr("%s is not the name of a known %s", quote(a), tok[1:])
			}
			cmp = func(v int64) bool { return v == int64(id) }
		}
		group := tok == "-group" || tok == "-gid"
		return testFunc(func(f *finder, e *entry) bool {
			st := statOf(e.fi)
			if group {
				return cmp(int64(st.Gid))
			}
			return cmp(int64(st.Uid))
		}), nil
	case "-nouser", "-nogroup":
		return testFunc(func(*finder, *entry) bool { return false }), nil
	case "-links", "-inum":
		a, err := p.arg(tok)
		if err != nil {
			return nil, err
		}
		cmp, _, err := numArg(a, tok)
		if err != nil {
			return nil, err
		}
		return testFunc(func(f *finder, e *entry) bool {
			st := statOf(e.fi)
			if tok == "-links" {
				return cmp(int64(st.Nlink))
			}
			return cmp(int64(st.Ino))
		}), nil
	case "-samefile":
		a, err := p.arg(tok)
		if err != nil {
			return nil, err
		}
		fi, err := f.inv.FS.Lstat(f.inv.Abs(a))
		if err != nil {
			return nil, perr("%s: %s", quote(a), commands.Strerror(err))
		}
		ino := statOf(fi).Ino
		return testFunc(func(f *finder, e *entry) bool { return statOf(e.fi).Ino == ino }), nil
	case "-readable", "-writable", "-executable":
		return testFunc(func(f *finder, e *entry) bool {
			m := e.fi.Mode()
			switch tok {
			case "-executable":
				return m&0o111 != 0
			case "-writable":
				return m&0o222 != 0
			}
			return m&0o444 != 0
		}), nil
	// ---- actions ----
	case "-print":
		p.hasAction = true
		return &printNode{end: "\n"}, nil
	case "-print0":
		p.hasAction = true
		return &printNode{end: "\x00"}, nil
	case "-printf", "-fprintf":
		p.hasAction = true
		if tok == "-fprintf" {
			return nil, perr("-fprintf is not supported in the sandbox; use -printf with a redirection")
		}
		a, err := p.arg(tok)
		if err != nil {
			return nil, err
		}
		return testFunc(func(f *finder, e *entry) bool {
			f.out.WriteString(f.printf(a, e))
			return true
		}), nil
	case "-ls":
		p.hasAction = true
		return testFunc(func(f *finder, e *entry) bool {
			f.out.WriteString(f.lsLine(e))
			return true
		}), nil
	case "-prune":
		return testFunc(func(f *finder, e *entry) bool {
			if !f.depthFirst {
				e.prune = true
			}
			return true
		}), nil
	case "-quit":
		p.hasAction = true
		return testFunc(func(f *finder, e *entry) bool { f.quit = true; return true }), nil
	case "-delete":
		p.hasAction = true
		f.depthFirst = true
		return testFunc(func(f *finder, e *entry) bool {
			if e.disp == "." || strings.HasSuffix(e.disp, "/.") {
				return true
			}
			if err := f.inv.FS.Remove(e.abs); err != nil {
				f.out.Flush()
				f.inv.Errorf("cannot delete %s: %s", quote(e.disp), commands.Strerror(err))
				f.status = 1
				return false
			}
			return true
		}), nil
	case "-exec", "-execdir", "-ok", "-okdir":
		p.hasAction = true
		var argv []string
		for {
			if p.pos >= len(p.args) {
				return nil, perr("missing argument to `%s'", tok)
			}
			a := p.args[p.pos]
			p.pos++
			if a == ";" {
				break
			}
			if a == "+" && len(argv) > 0 && argv[len(argv)-1] == "{}" {
				n := &execNode{argv: argv[:len(argv)-1], batch: true, dir: strings.HasSuffix(tok, "dir")}
				f.batches = append(f.batches, n)
				return n, nil
			}
			argv = append(argv, a)
		}
		if len(argv) == 0 {
			return nil, perr("missing argument to `%s'", tok)
		}
		return &execNode{argv: argv, dir: strings.HasSuffix(tok, "dir")}, nil
	case "-fprint", "-fprint0", "-fls":
		return nil, &parseError{msg: tok + " is not supported in the sandbox; use a redirection", lacking: tok}
	}
	return nil, &parseError{msg: fmt.Sprintf("unknown predicate `%s'", tok), unknown: tok}
}

func lookupID(inv *commands.Invocation, tok, name string) (uint32, bool) {
	if n, err := strconv.ParseUint(name, 10, 32); err == nil {
		return uint32(n), true
	}
	file := "/etc/passwd"
	if tok == "-group" {
		file = "/etc/group"
	}
	data, err := inv.FS.ReadFile(file)
	if err != nil {
		if name == "root" {
			return 0, true
		}
		return 0, false
	}
	for _, line := range strings.Split(string(data), "\n") {
		fld := strings.Split(line, ":")
		if len(fld) >= 3 && fld[0] == name {
			n, err := strconv.ParseUint(fld[2], 10, 32)
			return uint32(n), err == nil
		}
	}
	return 0, false
}

func statOf(fi fs.FileInfo) *vfs.Stat {
	if st, ok := fi.Sys().(*vfs.Stat); ok && st != nil {
		return st
	}
	return &vfs.Stat{Nlink: 1}
}

func fileTime(fi fs.FileInfo, which byte) time.Time {
	switch which {
	case 'a':
		if t := statOf(fi).Atime; !t.IsZero() {
			return t
		}
	case 'c':
		if t := statOf(fi).Ctime; !t.IsZero() {
			return t
		}
	}
	return fi.ModTime()
}

// ---- -exec ----

type execNode struct {
	argv    []string
	batch   bool
	dir     bool
	pending []string
	size    int
}

// batchLimit bounds one -exec ... {} + command line, like ARG_MAX.
const batchLimit = 128 << 10

func (n *execNode) eval(f *finder, e *entry) bool {
	name := e.disp
	if n.dir {
		// the Invocation cannot change the child's cwd, so -execdir gets
		// the absolute path instead of ./NAME
		name = e.abs
	}
	if n.batch {
		n.pending = append(n.pending, name)
		n.size += len(name) + 1
		if n.size >= batchLimit {
			n.flush(f)
		}
		return true
	}
	argv := make([]string, len(n.argv))
	for i, a := range n.argv {
		argv[i] = strings.ReplaceAll(a, "{}", name)
	}
	return f.run(argv) == 0
}

func (n *execNode) flush(f *finder) {
	if len(n.pending) == 0 {
		return
	}
	argv := append(append([]string(nil), n.argv...), n.pending...)
	n.pending, n.size = nil, 0
	if f.run(argv) != 0 {
		f.status = 1
	}
}

func (f *finder) run(argv []string) int {
	f.out.Flush()
	if f.inv.Exec == nil {
		f.inv.Errorf("cannot run %s: command execution is not available", quote(argv[0]))
		f.status = 1
		return 127
	}
	return f.inv.Exec(f.ctx, argv, f.inv.Stdin, f.inv.Stdout, f.inv.Stderr, f.inv.Env)
}

// ---- -printf and -ls ----
