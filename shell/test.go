package shell

import (
	"errors"
	"fmt"
	"io/fs"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/warren-sandbox/warren/vfs"
	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

var rxCache = newBoundedCache[*regexp.Regexp](1024)

func compileRx(expr string) (*regexp.Regexp, error) {
	if rx, ok := rxCache.get(expr); ok {
		return rx, nil
	}
	rx, err := regexp.Compile(expr)
	if err != nil {
		return nil, err
	}
	rxCache.put(expr, rx)
	return rx, nil
}

// testExpr evaluates [[ ... ]].
func (r *runner) testExpr(x syntax.TestExpr) (bool, error) { return r.testExprNot(x, "") }

// testExprNot is testExpr; not is "! " when x is negated, which set -x
// shows on x's line as bash does ([[ ! -z 4 ]]).
func (r *runner) testExprNot(x syntax.TestExpr, not string) (bool, error) {
	switch x := x.(type) {
	case *syntax.Word:
		s, ok := r.literal(x)
		if !ok {
			return false, errSilent
		}
		if r.opts[optXtrace] {
			r.xtraceText("[[ " + not + "-n " + s + " ]]")
		}
		return s != "", nil
	case *syntax.ParenTest:
		return r.testExpr(x.X)
	case *syntax.UnaryTest:
		if x.Op == syntax.TsNot {
			b, err := r.testExprNot(x.X, "! ")
			return !b, err
		}
		w, _ := x.X.(*syntax.Word)
		s, ok := r.literal(w)
		if !ok {
			return false, errSilent
		}
		if r.opts[optXtrace] {
			r.xtraceText("[[ " + not + x.Op.String() + " " + s + " ]]")
		}
		return r.unaryTest(x.Op.String(), s)
	case *syntax.BinaryTest:
		switch x.Op {
		case syntax.AndTest:
			a, err := r.testExpr(x.X)
			if err != nil || !a {
				return false, err
			}
			return r.testExpr(x.Y)
		case syntax.OrTest:
			a, err := r.testExpr(x.X)
			if err != nil || a {
				return a, err
			}
			return r.testExpr(x.Y)
		}
		lw, _ := x.X.(*syntax.Word)
		left, ok := r.literal(lw)
		if !ok {
			return false, errSilent
		}
		rw, _ := x.Y.(*syntax.Word)
		if r.opts[optXtrace] {
			// bash traces each test with its operands expanded, the
			// right side of == and =~ as the pattern it reads
			right := ""
			if rw != nil {
				right, _ = r.literal(rw)
			}
			r.xtraceText("[[ " + not + left + " " + x.Op.String() + " " + right + " ]]")
		}
		switch x.Op {
		case syntax.TsMatch, syntax.TsMatchShort, syntax.TsNoMatch:
			pat, ok := r.pattern(rw)
			if !ok {
				return false, errSilent
			}
			m := r.matchPattern(pat, left, false)
			if x.Op == syntax.TsNoMatch {
				return !m, nil
			}
			return m, nil
		case syntax.TsReMatch:
			re, ok := r.regexWord(rw)
			if !ok {
				return false, errSilent
			}
			if r.shopts["nocasematch"] {
				re = "(?i)" + re
			}
			rx, err := compileRx(re)
			if err != nil {
				return false, &testSyntaxError{status: 2}
			}
			m := rx.FindStringSubmatch(left)
			r.own()
			if m == nil {
				r.global.vars["BASH_REMATCH"] = &Var{Set: true, Kind: expand.Indexed, List: []string{}}
				return false, nil
			}
			r.global.vars["BASH_REMATCH"] = &Var{Set: true, Kind: expand.Indexed, List: m}
			return true, nil
		}
		right, ok := r.literal(rw)
		if !ok {
			return false, errSilent
		}
		return r.binaryTest(x.Op.String(), left, right)
	}
	return false, fmt.Errorf("unsupported test expression %T", x)
}

type testSyntaxError struct{ status int }

func (e *testSyntaxError) Error() string { return "" }

// regexWord turns the right side of =~ into a Go regexp: quoted parts match
// literally.
func (r *runner) regexWord(w *syntax.Word) (string, bool) {
	var b strings.Builder
	for _, p := range w.Parts {
		switch p := p.(type) {
		case *syntax.Lit:
			b.WriteString(p.Value)
		case *syntax.SglQuoted:
			s := p.Value
			if p.Dollar {
				s2, ok := r.literal(&syntax.Word{Parts: []syntax.WordPart{p}})
				if !ok {
					return "", false
				}
				s = s2
			}
			b.WriteString(regexp.QuoteMeta(s))
		case *syntax.DblQuoted:
			s, ok := r.literal(&syntax.Word{Parts: []syntax.WordPart{p}})
			if !ok {
				return "", false
			}
			b.WriteString(regexp.QuoteMeta(s))
		default:
			s, ok := r.literal(&syntax.Word{Parts: []syntax.WordPart{p}})
			if !ok {
				return "", false
			}
			b.WriteString(s)
		}
	}
	return b.String(), true
}

func (r *runner) stat(name string, follow bool) (fs.FileInfo, error) {
	p := r.abs(name)
	if strings.HasPrefix(p, "/dev/") || strings.HasPrefix(p, "/proc/self") {
		if _, handled, err := r.openSpecial(p, 0); handled {
			if err != nil {
				return nil, err
			}
			return devInfo{name: p}, nil
		}
	}
	if follow {
		return r.sh.cfg.FS.Stat(p)
	}
	return r.sh.cfg.FS.Lstat(p)
}

type devInfo struct{ name string }

func (d devInfo) Name() string           { return d.name }
func (d devInfo) Size() int64            { return 0 }
func (d devInfo) Mode() fs.FileMode      { return fs.ModeDevice | fs.ModeCharDevice | 0o666 }
func (d devInfo) ModTime() (t time.Time) { return }
func (d devInfo) IsDir() bool            { return false }
func (d devInfo) Sys() any               { return nil }

func (r *runner) unaryTest(op, s string) (bool, error) {
	switch op {
	case "-z":
		return s == "", nil
	case "-n":
		return s != "", nil
	case "-o":
		return r.optByName(s), nil
	case "-v":
		if i := strings.IndexByte(s, '['); i > 0 && strings.HasSuffix(s, "]") {
			v := r.lookupRef(s[:i])
			if v == nil {
				return false, nil
			}
			key := s[i+1 : len(s)-1]
			if v.Kind == expand.Associative {
				k, ok := r.assocKey(key)
				if !ok {
					return false, errSilent
				}
				_, ok = v.Map[k]
				return ok, nil
			}
			n, err := r.arithString(key)
			if err != nil {
				return false, err
			}
			if n < 0 {
				n += int64(v.maxIndex() + 1)
			}
			_, ok := v.index(int(n))
			return ok, nil
		}
		v := r.lookupRef(s)
		if s == "#" || s == "?" || s == "$" || s == "-" {
			return true, nil
		}
		if n, err := strconv.Atoi(s); err == nil {
			return n <= len(r.params), nil
		}
		if v == nil {
			return false, nil
		}
		if v.Kind == expand.Indexed {
			_, ok := v.index(0)
			return ok, nil
		}
		if v.Kind == expand.Associative {
			_, ok := v.Map["0"]
			return ok, nil
		}
		return v.Set, nil
	case "-R":
		v := r.lookup(s)
		return v != nil && v.Attr&attrNameref != 0 && v.Set, nil
	case "-t":
		return r.isTerminal(s), nil
	}
	follow := op != "-L" && op != "-h"
	fi, err := r.stat(s, follow)
	if s == "" {
		return false, nil
	}
	if err != nil {
		return false, nil
	}
	m := fi.Mode()
	switch op {
	case "-e", "-a":
		return true, nil
	case "-f":
		return m.IsRegular(), nil
	case "-d":
		return m.IsDir(), nil
	case "-c":
		return m&fs.ModeCharDevice != 0, nil
	case "-b":
		return m&fs.ModeDevice != 0 && m&fs.ModeCharDevice == 0, nil
	case "-p":
		return m&fs.ModeNamedPipe != 0, nil
	case "-S":
		return m&fs.ModeSocket != 0, nil
	case "-L", "-h":
		return m&fs.ModeSymlink != 0, nil
	case "-k":
		return m&fs.ModeSticky != 0, nil
	case "-g":
		return m&fs.ModeSetgid != 0, nil
	case "-u":
		return m&fs.ModeSetuid != 0, nil
	case "-s":
		return fi.Size() > 0, nil
	case "-r", "-w", "-x":
		bit := fs.FileMode(4)
		if op == "-w" {
			bit = 2
		} else if op == "-x" {
			bit = 1
		}
		if r.sh.cfg.Uid == 0 {
			if op == "-x" {
				return m.IsDir() || m&0o111 != 0, nil
			}
			return true, nil
		}
		uid, gid := -1, -1
		if st, ok := fi.Sys().(*vfs.Stat); ok {
			uid, gid = int(st.Uid), int(st.Gid)
		}
		switch {
		case uid == r.sh.cfg.Uid:
			return m&(bit<<6) != 0, nil
		case gid == r.sh.cfg.Gid:
			return m&(bit<<3) != 0, nil
		}
		return m&bit != 0, nil
	case "-O":
		if st, ok := fi.Sys().(*vfs.Stat); ok {
			return int(st.Uid) == r.sh.cfg.Uid, nil
		}
		return r.sh.cfg.Uid == 0, nil
	case "-G":
		if st, ok := fi.Sys().(*vfs.Stat); ok {
			return int(st.Gid) == r.sh.cfg.Gid, nil
		}
		return r.sh.cfg.Gid == 0, nil
	case "-N":
		return false, nil
	}
	return false, fmt.Errorf("%s: unary operator expected", op)
}

func (r *runner) intArg(s string) (int64, error) {
	t := strings.TrimSpace(s)
	n, err := strconv.ParseInt(t, 10, 64)
	if err != nil {
		return 0, &testErr{msg: s + ": integer expression expected"}
	}
	return n, nil
}

type testErr struct{ msg string }

func (e *testErr) Error() string { return e.msg }

func (r *runner) binaryTest(op, a, b string) (bool, error) {
	switch op {
	case "=", "==":
		return a == b, nil
	case "!=":
		return a != b, nil
	case "<":
		return a < b, nil
	case ">":
		return a > b, nil
	case "-eq", "-ne", "-lt", "-le", "-gt", "-ge":
		x, err := r.testInt(a)
		if err != nil {
			return false, err
		}
		y, err := r.testInt(b)
		if err != nil {
			return false, err
		}
		switch op {
		case "-eq":
			return x == y, nil
		case "-ne":
			return x != y, nil
		case "-lt":
			return x < y, nil
		case "-le":
			return x <= y, nil
		case "-gt":
			return x > y, nil
		}
		return x >= y, nil
	case "-nt", "-ot":
		fa, errA := r.stat(a, true)
		fb, errB := r.stat(b, true)
		if op == "-nt" {
			if errA != nil {
				return false, nil
			}
			if errB != nil {
				return true, nil
			}
			return fa.ModTime().After(fb.ModTime()), nil
		}
		if errB != nil {
			return false, nil
		}
		if errA != nil {
			return true, nil
		}
		return fa.ModTime().Before(fb.ModTime()), nil
	case "-ef":
		fa, errA := r.stat(a, true)
		fb, errB := r.stat(b, true)
		if errA != nil || errB != nil {
			return false, nil
		}
		sa, ok1 := fa.Sys().(*vfs.Stat)
		sb, ok2 := fb.Sys().(*vfs.Stat)
		return ok1 && ok2 && sa.Ino == sb.Ino, nil
	}
	return false, &testErr{msg: op + ": binary operator expected"}
}

// testInt: [[ ]] evaluates operands arithmetically; test/[ wants integers.
func (r *runner) testInt(s string) (int64, error) {
	if r.inBracket {
		return r.intArg(s)
	}
	return r.arithString(s)
}

// ---- test / [ ----

func biTest(r *runner, args []string) int {
	name := args[0]
	args = args[1:]
	if name == "[" {
		if len(args) == 0 || args[len(args)-1] != "]" {
			r.errf("[: missing `]'")
			return 2
		}
		args = args[:len(args)-1]
	}
	r.inBracket = true
	defer func() { r.inBracket = false }()
	t := &testParser{r: r, args: args}
	ok, err := t.eval()
	if err != nil {
		var te *testErr
		if errors.As(err, &te) {
			r.errf("%s: %s", name, te.msg)
		} else {
			r.arithErr(err)
		}
		return 2
	}
	return b2i(!ok)
}

type testParser struct {
	r    *runner
	args []string
	i    int
}

var unaryOps = map[string]bool{"-a": true, "-b": true, "-c": true, "-d": true, "-e": true, "-f": true, "-g": true, "-h": true, "-k": true, "-L": true, "-n": true, "-N": true, "-o": true, "-O": true, "-G": true, "-p": true, "-r": true, "-R": true, "-s": true, "-S": true, "-t": true, "-u": true, "-v": true, "-w": true, "-x": true, "-z": true}
var binaryOps = map[string]bool{"=": true, "==": true, "!=": true, "<": true, ">": true, "-eq": true, "-ne": true, "-lt": true, "-le": true, "-gt": true, "-ge": true, "-nt": true, "-ot": true, "-ef": true}

func (t *testParser) eval() (bool, error) {
	n := len(t.args)
	// POSIX rules by argument count.
	switch n {
	case 0:
		return false, nil
	case 1:
		return t.args[0] != "", nil
	case 2:
		if t.args[0] == "!" {
			return t.args[1] == "", nil
		}
		if unaryOps[t.args[0]] {
			return t.r.unaryTest(t.args[0], t.args[1])
		}
		return false, &testErr{msg: t.args[0] + ": unary operator expected"}
	case 3:
		if binaryOps[t.args[1]] {
			return t.r.binaryTest(t.args[1], t.args[0], t.args[2])
		}
		if t.args[1] == "-a" {
			return t.args[0] != "" && t.args[2] != "", nil
		}
		if t.args[1] == "-o" {
			return t.args[0] != "" || t.args[2] != "", nil
		}
		if t.args[0] == "!" {
			t2 := &testParser{r: t.r, args: t.args[1:]}
			b, err := t2.eval()
			return !b, err
		}
		if t.args[0] == "(" && t.args[2] == ")" {
			return t.args[1] != "", nil
		}
		return false, &testErr{msg: t.args[1] + ": binary operator expected"}
	case 4:
		if t.args[0] == "!" {
			t2 := &testParser{r: t.r, args: t.args[1:]}
			b, err := t2.eval()
			return !b, err
		}
		if t.args[0] == "(" && t.args[3] == ")" {
			t2 := &testParser{r: t.r, args: t.args[1:3]}
			return t2.eval()
		}
	}
	b, err := t.or()
	if err != nil {
		return false, err
	}
	if t.i < len(t.args) {
		return false, &testErr{msg: "too many arguments"}
	}
	return b, nil
}

func (t *testParser) peek() string {
	if t.i < len(t.args) {
		return t.args[t.i]
	}
	return ""
}

func (t *testParser) or() (bool, error) {
	a, err := t.and()
	if err != nil {
		return false, err
	}
	for t.peek() == "-o" {
		t.i++
		b, err := t.and()
		if err != nil {
			return false, err
		}
		a = a || b
	}
	return a, nil
}

func (t *testParser) and() (bool, error) {
	a, err := t.not()
	if err != nil {
		return false, err
	}
	for t.peek() == "-a" {
		t.i++
		b, err := t.not()
		if err != nil {
			return false, err
		}
		a = a && b
	}
	return a, nil
}

func (t *testParser) not() (bool, error) {
	if t.peek() == "!" {
		t.i++
		b, err := t.not()
		return !b, err
	}
	return t.primary()
}

func (t *testParser) primary() (bool, error) {
	if t.i >= len(t.args) {
		return false, &testErr{msg: "argument expected"}
	}
	a := t.args[t.i]
	if a == "(" {
		t.i++
		b, err := t.or()
		if err != nil {
			return false, err
		}
		if t.peek() != ")" {
			return false, &testErr{msg: "`)' expected"}
		}
		t.i++
		return b, nil
	}
	if t.i+2 < len(t.args)+0 && binaryOps[t.args[t.i+1]] {
		l, op, rr := a, t.args[t.i+1], t.args[t.i+2]
		t.i += 3
		return t.r.binaryTest(op, l, rr)
	}
	if unaryOps[a] && t.i+1 < len(t.args) {
		t.i += 2
		return t.r.unaryTest(a, t.args[t.i-1])
	}
	t.i++
	return a != "", nil
}
