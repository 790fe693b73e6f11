package sysinfo

import (
	"context"
	"fmt"
	"io/fs"
	"strconv"
	"strings"

	"github.com/warren-sandbox/warren/commands"
	"github.com/warren-sandbox/warren/vfs"
)

// testError is a syntax or operand error; test exits 2 on it.
type testError struct{ msg string }

func (e *testError) Error() string { return e.msg }

type tester struct {
	inv  *commands.Invocation
	args []string
	pos  int
}

// test implements test(1) and [(1) with POSIX's rules for up to four
// arguments and the classic -a/-o/!/( ) grammar beyond.
func test(ctx context.Context, inv *commands.Invocation) int {
	args := inv.Args[1:]
	if inv.Args[0] == "[" {
		if len(args) == 1 && (args[0] == "--help" || args[0] == "--version") {
			return 0
		}
		if len(args) == 0 || args[len(args)-1] != "]" {
			inv.Errorf("missing ']'")
			return 2
		}
		args = args[:len(args)-1]
	}
	t := &tester{inv: inv, args: args}
	ok, err := t.posix(len(args))
	if err == nil && t.pos < len(args) {
		err = &testError{fmt.Sprintf("extra argument %s", quoteArg(args[t.pos]))}
	}
	if err != nil {
		inv.Errorf("%s", err.Error())
		return 2
	}
	if ok {
		return 0
	}
	return 1
}

func (t *tester) posix(n int) (bool, error) {
	a := t.args[t.pos:]
	switch n {
	case 0:
		return false, nil
	case 1:
		t.pos++
		return a[0] != "", nil
	case 2:
		if a[0] == "!" {
			t.pos++
			v, err := t.posix(1)
			return !v, err
		}
		if isUnary(a[0]) {
			t.pos += 2
			return t.unary(a[0], a[1])
		}
		if len(a[0]) == 2 && a[0][0] == '-' {
			return false, &testError{fmt.Sprintf("%s: unary operator expected", quoteArg(a[0]))}
		}
		return false, &testError{fmt.Sprintf("missing argument after %s", quoteArg(a[1]))}
	case 3:
		if isBinary(a[1]) {
			t.pos += 3
			return t.binary(a[0], a[1], a[2])
		}
		if a[0] == "!" {
			t.pos++
			v, err := t.posix(2)
			return !v, err
		}
		if a[0] == "(" && a[2] == ")" {
			t.pos += 3
			return a[1] != "", nil
		}
		if a[1] == "-a" || a[1] == "-o" {
			return t.expr()
		}
		return false, &testError{fmt.Sprintf("%s: binary operator expected", quoteArg(a[1]))}
	case 4:
		if a[0] == "!" {
			t.pos++
			v, err := t.posix(3)
			return !v, err
		}
		if a[0] == "(" && a[3] == ")" {
			t.pos++
			v, err := t.posix(2)
			t.pos++
			return v, err
		}
	}
	return t.expr()
}

func (t *tester) peek() (string, bool) {
	if t.pos < len(t.args) {
		return t.args[t.pos], true
	}
	return "", false
}

func (t *tester) expr() (bool, error) {
	v, err := t.and()
	if err != nil {
		return false, err
	}
	for {
		s, ok := t.peek()
		if !ok || s != "-o" {
			return v, nil
		}
		t.pos++
		r, err := t.and()
		if err != nil {
			return false, err
		}
		v = v || r
	}
}

func (t *tester) and() (bool, error) {
	v, err := t.not()
	if err != nil {
		return false, err
	}
	for {
		s, ok := t.peek()
		if !ok || s != "-a" {
			return v, nil
		}
		t.pos++
		r, err := t.not()
		if err != nil {
			return false, err
		}
		v = v && r
	}
}

func (t *tester) not() (bool, error) {
	neg := false
	for {
		s, ok := t.peek()
		if ok && s == "!" && t.pos+1 < len(t.args) {
			neg = !neg
			t.pos++
			continue
		}
		break
	}
	v, err := t.primary()
	return v != neg, err
}

func (t *tester) primary() (bool, error) {
	s, ok := t.peek()
	if !ok {
		prev := ""
		if t.pos > 0 {
			prev = t.args[t.pos-1]
		}
		return false, &testError{fmt.Sprintf("missing argument after %s", quoteArg(prev))}
	}
	if s == "(" {
		t.pos++
		v, err := t.expr()
		if err != nil {
			return false, err
		}
		c, ok := t.peek()
		if !ok || c != ")" {
			if !ok {
				return false, &testError{fmt.Sprintf("missing argument after %s", quoteArg(t.args[t.pos-1]))}
			}
			return false, &testError{fmt.Sprintf("')' expected, found %s", quoteArg(c))}
		}
		t.pos++
		return v, nil
	}
	if t.pos+2 < len(t.args) && isBinary(t.args[t.pos+1]) {
		a, op, b := t.args[t.pos], t.args[t.pos+1], t.args[t.pos+2]
		t.pos += 3
		return t.binary(a, op, b)
	}
	if isUnary(s) {
		if t.pos+1 >= len(t.args) {
			return false, &testError{fmt.Sprintf("missing argument after %s", quoteArg(s))}
		}
		arg := t.args[t.pos+1]
		t.pos += 2
		return t.unary(s, arg)
	}
	t.pos++
	return s != "", nil
}

func isUnary(s string) bool {
	if len(s) != 2 || s[0] != '-' {
		return false
	}
	return strings.IndexByte("bcdefgGhkLnOprsStuwxz", s[1]) >= 0
}

func isBinary(s string) bool {
	switch s {
	case "=", "==", "!=", "-eq", "-ne", "-lt", "-le", "-gt", "-ge", "-ef", "-nt", "-ot":
		return true
	}
	return false
}

func (t *tester) unary(op, arg string) (bool, error) {
	switch op {
	case "-n":
		return arg != "", nil
	case "-z":
		return arg == "", nil
	case "-t":
		if _, err := strconv.Atoi(arg); err != nil {
			return false, &testError{fmt.Sprintf("invalid integer %s", quoteArg(arg))}
		}
		return false, nil // the sandbox has no terminals
	}
	if arg == "" {
		return false, nil
	}
	abs := t.inv.Abs(arg)
	var fi fs.FileInfo
	var err error
	if op == "-h" || op == "-L" {
		fi, err = t.inv.FS.Lstat(abs)
	} else {
		fi, err = t.inv.FS.Stat(abs)
	}
	if err != nil {
		return false, nil
	}
	m := fi.Mode()
	s := sys(t.inv)
	st, _ := fi.Sys().(*vfs.Stat)
	uid, gid := uint32(0), uint32(0)
	if st != nil {
		uid, gid = st.Uid, st.Gid
	}
	perm := func(bit fs.FileMode) bool {
		if s.Uid == 0 {
			if bit == 0o1 {
				return m&0o111 != 0 || m.IsDir()
			}
			return true
		}
		switch {
		case uid == uint32(s.Uid):
			return m&(bit<<6) != 0
		case gid == uint32(s.Gid):
			return m&(bit<<3) != 0
		}
		return m&bit != 0
	}
	switch op {
	case "-e":
		return true, nil
	case "-f":
		return m.IsRegular(), nil
	case "-d":
		return m.IsDir(), nil
	case "-h", "-L":
		return m&fs.ModeSymlink != 0, nil
	case "-b":
		return m&fs.ModeDevice != 0 && m&fs.ModeCharDevice == 0, nil
	case "-c":
		return m&fs.ModeCharDevice != 0, nil
	case "-p":
		return m&fs.ModeNamedPipe != 0, nil
	case "-S":
		return m&fs.ModeSocket != 0, nil
	case "-s":
		return fi.Size() > 0, nil
	case "-g":
		return m&fs.ModeSetgid != 0, nil
	case "-u":
		return m&fs.ModeSetuid != 0, nil
	case "-k":
		return m&fs.ModeSticky != 0, nil
	case "-r":
		return perm(0o4), nil
	case "-w":
		return perm(0o2), nil
	case "-x":
		return perm(0o1), nil
	case "-O":
		return uid == uint32(s.Uid), nil
	case "-G":
		return gid == uint32(s.Gid), nil
	}
	return false, nil
}

func (t *tester) integer(s string) (int64, error) {
	v, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	if err != nil {
		return 0, &testError{fmt.Sprintf("invalid integer %s", quoteArg(s))}
	}
	return v, nil
}

func (t *tester) binary(a, op, b string) (bool, error) {
	switch op {
	case "=", "==":
		return a == b, nil
	case "!=":
		return a != b, nil
	case "-ef", "-nt", "-ot":
		fa, ea := t.inv.FS.Stat(t.inv.Abs(a))
		fb, eb := t.inv.FS.Stat(t.inv.Abs(b))
		switch op {
		case "-ef":
			if ea != nil || eb != nil {
				return false, nil
			}
			sa, _ := fa.Sys().(*vfs.Stat)
			sb, _ := fb.Sys().(*vfs.Stat)
			return sa != nil && sb != nil && sa.Ino == sb.Ino && sa.Ino != 0, nil
		case "-nt":
			if ea != nil {
				return false, nil
			}
			return eb != nil || fa.ModTime().After(fb.ModTime()), nil
		default:
			if eb != nil {
				return false, nil
			}
			return ea != nil || fa.ModTime().Before(fb.ModTime()), nil
		}
	}
	x, err := t.integer(a)
	if err != nil {
		return false, err
	}
	y, err := t.integer(b)
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
}
