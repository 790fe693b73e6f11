// Package testcmds is a minimal resident command set (cat, wc, grep, ls,
// mkdir, rm, head, tail, tr, sort, seq, touch, sleep, env, printenv, yes,
// uniq, basename, dirname, chmod, ln) so the shell's tests and the
// conformance runner can run pipelines before commands/std is wired in.
// It is deliberately small: the real commands live in commands/*.
package testcmds

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"io/fs"
	"path"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/warren-sandbox/warren/commands"
	"github.com/warren-sandbox/warren/vfs"
)

// Register adds the commands to t (without replacing existing entries).
func Register(t commands.Table) {
	for name, fn := range map[string]commands.Func{
		"cat": cat, "wc": wc, "grep": grep, "egrep": grep, "ls": ls, "mkdir": mkdir, "rm": rm,
		"head": head, "tail": tail, "tr": tr, "sort": sortCmd, "seq": seq, "touch": touch,
		"sleep": sleep, "env": env, "printenv": printenv, "yes": yes, "uniq": uniq,
		"basename": basename, "dirname": dirname, "chmod": chmod, "ln": ln, "whoami": whoami,
		"hostname": hostname, "rmdir": rmdir, "tee": tee, "mv": mv, "cp": cp,
	} {
		if _, ok := t[name]; !ok {
			t[name] = fn
		}
	}
}

func files(inv *commands.Invocation, args []string, fn func(name string, r io.Reader) error) int {
	if len(args) == 0 {
		args = []string{"-"}
	}
	st := 0
	for _, a := range args {
		f, err := inv.Open(a)
		if err != nil {
			inv.Errorf("%s", commands.Describe(err))
			st = 1
			continue
		}
		err = fn(a, f)
		f.Close()
		if err != nil {
			if isPipe(err) {
				return 141
			}
			inv.Errorf("%s: %s", a, commands.Strerror(err))
			st = 1
		}
	}
	return st
}

func isPipe(err error) bool { return err != nil && strings.Contains(err.Error(), "broken pipe") }

func cat(ctx context.Context, inv *commands.Invocation) int {
	return files(inv, inv.Args[1:], func(_ string, r io.Reader) error {
		bp := copyBufs.Get().(*[]byte)
		defer copyBufs.Put(bp)
		_, err := io.CopyBuffer(inv.Stdout, ctxReader{ctx, r}, *bp)
		return err
	})
}

var copyBufs = sync.Pool{New: func() any { b := make([]byte, 8<<10); return &b }}

type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

func wc(ctx context.Context, inv *commands.Invocation) int {
	var flags string
	var args []string
	for _, a := range inv.Args[1:] {
		if strings.HasPrefix(a, "-") && len(a) > 1 {
			flags += a[1:]
		} else {
			args = append(args, a)
		}
	}
	if flags == "" {
		flags = "lwc"
	}
	st := files(inv, args, func(name string, r io.Reader) error {
		data, err := io.ReadAll(r)
		if err != nil {
			return err
		}
		var parts []string
		if strings.Contains(flags, "l") {
			parts = append(parts, strconv.Itoa(bytes.Count(data, []byte("\n"))))
		}
		if strings.Contains(flags, "w") {
			parts = append(parts, strconv.Itoa(len(bytes.Fields(data))))
		}
		if strings.Contains(flags, "c") || strings.Contains(flags, "m") {
			parts = append(parts, strconv.Itoa(len(data)))
		}
		line := strings.Join(parts, " ")
		if len(args) > 0 {
			line += " " + name
		}
		_, err = fmt.Fprintln(inv.Stdout, line)
		return err
	})
	return st
}

func grep(ctx context.Context, inv *commands.Invocation) int {
	var pat string
	var args []string
	invert, count, quiet, icase, fixed, onlyN := false, false, false, false, false, false
	havePat := false
	for i := 1; i < len(inv.Args); i++ {
		a := inv.Args[i]
		if strings.HasPrefix(a, "-") && len(a) > 1 && !havePat {
			if a == "-e" && i+1 < len(inv.Args) {
				i++
				pat, havePat = inv.Args[i], true
				continue
			}
			for _, c := range a[1:] {
				switch c {
				case 'v':
					invert = true
				case 'c':
					count = true
				case 'q':
					quiet = true
				case 'i':
					icase = true
				case 'F':
					fixed = true
				case 'E':
				case 'o':
					onlyN = true
				}
			}
			continue
		}
		if !havePat {
			pat, havePat = a, true
			continue
		}
		args = append(args, a)
	}
	if fixed {
		pat = regexp.QuoteMeta(pat)
	}
	if icase {
		pat = "(?i)" + pat
	}
	rx, err := regexp.Compile(pat)
	if err != nil {
		inv.Errorf("%v", err)
		return 2
	}
	found := false
	st := files(inv, args, func(name string, r io.Reader) error {
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 0, 4<<10), 16<<20)
		n := 0
		for sc.Scan() {
			line := sc.Text()
			m := rx.MatchString(line)
			if m == invert {
				continue
			}
			found = true
			n++
			if quiet || count {
				continue
			}
			out := line
			if onlyN {
				out = rx.FindString(line)
			}
			if len(args) > 1 {
				out = name + ":" + out
			}
			if _, err := fmt.Fprintln(inv.Stdout, out); err != nil {
				return err
			}
		}
		if count {
			fmt.Fprintln(inv.Stdout, n)
		}
		return sc.Err()
	})
	if st != 0 {
		return 2
	}
	if !found {
		return 1
	}
	return 0
}

func ls(ctx context.Context, inv *commands.Invocation) int {
	var args []string
	all, one := false, false
	for _, a := range inv.Args[1:] {
		if strings.HasPrefix(a, "-") && len(a) > 1 {
			all = all || strings.Contains(a, "a")
			one = one || strings.Contains(a, "1")
			continue
		}
		args = append(args, a)
	}
	_ = one
	if len(args) == 0 {
		args = []string{"."}
	}
	st := 0
	for _, a := range args {
		p := inv.Abs(a)
		fi, err := inv.FS.Stat(p)
		if err != nil {
			inv.Errorf("cannot access '%s': %s", a, commands.Strerror(err))
			st = 2
			continue
		}
		if !fi.IsDir() {
			fmt.Fprintln(inv.Stdout, a)
			continue
		}
		ents, err := inv.FS.ReadDir(p)
		if err != nil {
			inv.Errorf("cannot open directory '%s': %s", a, commands.Strerror(err))
			st = 2
			continue
		}
		if len(args) > 1 {
			fmt.Fprintf(inv.Stdout, "%s:\n", a)
		}
		for _, e := range ents {
			if !all && strings.HasPrefix(e.Name(), ".") {
				continue
			}
			fmt.Fprintln(inv.Stdout, e.Name())
		}
	}
	return st
}

func mkdir(ctx context.Context, inv *commands.Invocation) int {
	parents := false
	st := 0
	for _, a := range inv.Args[1:] {
		if a == "-p" {
			parents = true
			continue
		}
		var err error
		if parents {
			err = inv.FS.MkdirAll(inv.Abs(a), 0o755)
		} else {
			err = inv.FS.Mkdir(inv.Abs(a), 0o755)
		}
		if err != nil {
			inv.Errorf("cannot create directory '%s': %s", a, commands.Strerror(err))
			st = 1
		}
	}
	return st
}

func rm(ctx context.Context, inv *commands.Invocation) int {
	rec, force := false, false
	st := 0
	for _, a := range inv.Args[1:] {
		if strings.HasPrefix(a, "-") && len(a) > 1 {
			rec = rec || strings.ContainsAny(a, "rR")
			force = force || strings.Contains(a, "f")
			continue
		}
		var err error
		if rec {
			err = inv.FS.RemoveAll(inv.Abs(a))
		} else {
			err = inv.FS.Remove(inv.Abs(a))
		}
		if err != nil && !force {
			inv.Errorf("cannot remove '%s': %s", a, commands.Strerror(err))
			st = 1
		}
	}
	return st
}

func rmdir(ctx context.Context, inv *commands.Invocation) int {
	st := 0
	for _, a := range inv.Args[1:] {
		if err := inv.FS.Remove(inv.Abs(a)); err != nil {
			inv.Errorf("failed to remove '%s': %s", a, commands.Strerror(err))
			st = 1
		}
	}
	return st
}

func numArg(args []string, def int) (int, []string, bool) {
	n := def
	bytesMode := false
	var rest []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case (a == "-n" || a == "-c") && i+1 < len(args):
			bytesMode = a == "-c"
			n, _ = strconv.Atoi(strings.TrimPrefix(args[i+1], "+"))
			i++
		case strings.HasPrefix(a, "-n") && len(a) > 2:
			n, _ = strconv.Atoi(a[2:])
		case strings.HasPrefix(a, "-c") && len(a) > 2:
			bytesMode = true
			n, _ = strconv.Atoi(a[2:])
		case len(a) > 1 && a[0] == '-' && a[1] >= '0' && a[1] <= '9':
			n, _ = strconv.Atoi(a[1:])
		default:
			rest = append(rest, a)
		}
	}
	return n, rest, bytesMode
}

func head(ctx context.Context, inv *commands.Invocation) int {
	n, args, bytesMode := numArg(inv.Args[1:], 10)
	return files(inv, args, func(_ string, r io.Reader) error {
		if bytesMode {
			_, err := io.Copy(inv.Stdout, io.LimitReader(ctxReader{ctx, r}, int64(n)))
			return err
		}
		br := bufio.NewReader(r)
		for i := 0; i < n; i++ {
			line, err := br.ReadString('\n')
			if line != "" {
				if _, werr := io.WriteString(inv.Stdout, line); werr != nil {
					return werr
				}
			}
			if err != nil {
				break
			}
		}
		return nil
	})
}

func tail(ctx context.Context, inv *commands.Invocation) int {
	n, args, _ := numArg(inv.Args[1:], 10)
	return files(inv, args, func(_ string, r io.Reader) error {
		data, err := io.ReadAll(r)
		if err != nil {
			return err
		}
		lines := strings.SplitAfter(string(data), "\n")
		if len(lines) > 0 && lines[len(lines)-1] == "" {
			lines = lines[:len(lines)-1]
		}
		if n < len(lines) {
			lines = lines[len(lines)-n:]
		}
		_, err = io.WriteString(inv.Stdout, strings.Join(lines, ""))
		return err
	})
}

func expandSet(s string) []rune {
	var out []rune
	rs := []rune(s)
	for i := 0; i < len(rs); i++ {
		c := rs[i]
		if c == '\\' && i+1 < len(rs) {
			i++
			switch rs[i] {
			case 'n':
				c = '\n'
			case 't':
				c = '\t'
			default:
				c = rs[i]
			}
		}
		if i+2 < len(rs) && rs[i+1] == '-' {
			for x := c; x <= rs[i+2]; x++ {
				out = append(out, x)
			}
			i += 2
			continue
		}
		out = append(out, c)
	}
	return out
}

func tr(ctx context.Context, inv *commands.Invocation) int {
	args := inv.Args[1:]
	del := false
	if len(args) > 0 && args[0] == "-d" {
		del = true
		args = args[1:]
	}
	if len(args) == 0 {
		inv.Errorf("missing operand")
		return 1
	}
	from := expandSet(args[0])
	var to []rune
	if len(args) > 1 {
		to = expandSet(args[1])
	}
	data, err := io.ReadAll(inv.Stdin)
	if err != nil {
		return 1
	}
	var b strings.Builder
	for _, c := range string(data) {
		idx := -1
		for i, f := range from {
			if f == c {
				idx = i
				break
			}
		}
		switch {
		case idx < 0:
			b.WriteRune(c)
		case del:
		case len(to) == 0:
			b.WriteRune(c)
		case idx < len(to):
			b.WriteRune(to[idx])
		default:
			b.WriteRune(to[len(to)-1])
		}
	}
	io.WriteString(inv.Stdout, b.String())
	return 0
}

func sortCmd(ctx context.Context, inv *commands.Invocation) int {
	rev, num, uniq := false, false, false
	var args []string
	for _, a := range inv.Args[1:] {
		if strings.HasPrefix(a, "-") && len(a) > 1 {
			rev = rev || strings.Contains(a, "r")
			num = num || strings.Contains(a, "n")
			uniq = uniq || strings.Contains(a, "u")
			continue
		}
		args = append(args, a)
	}
	var lines []string
	st := files(inv, args, func(_ string, r io.Reader) error {
		data, err := io.ReadAll(r)
		if err != nil {
			return err
		}
		s := strings.TrimSuffix(string(data), "\n")
		if s != "" || len(data) > 0 {
			lines = append(lines, strings.Split(s, "\n")...)
		}
		return nil
	})
	less := func(i, j int) bool { return lines[i] < lines[j] }
	if num {
		less = func(i, j int) bool {
			a, _ := strconv.ParseFloat(strings.TrimSpace(lines[i]), 64)
			b, _ := strconv.ParseFloat(strings.TrimSpace(lines[j]), 64)
			if a == b {
				return lines[i] < lines[j]
			}
			return a < b
		}
	}
	sort.SliceStable(lines, less)
	if rev {
		for i, j := 0, len(lines)-1; i < j; i, j = i+1, j-1 {
			lines[i], lines[j] = lines[j], lines[i]
		}
	}
	var prev *string
	for i := range lines {
		if uniq && prev != nil && *prev == lines[i] {
			continue
		}
		prev = &lines[i]
		fmt.Fprintln(inv.Stdout, lines[i])
	}
	return st
}

func uniq(ctx context.Context, inv *commands.Invocation) int {
	count := false
	var args []string
	for _, a := range inv.Args[1:] {
		if a == "-c" {
			count = true
			continue
		}
		args = append(args, a)
	}
	return files(inv, args, func(_ string, r io.Reader) error {
		sc := bufio.NewScanner(r)
		var prev string
		n := 0
		flush := func() {
			if n == 0 {
				return
			}
			if count {
				fmt.Fprintf(inv.Stdout, "%7d %s\n", n, prev)
			} else {
				fmt.Fprintln(inv.Stdout, prev)
			}
		}
		for sc.Scan() {
			if n > 0 && sc.Text() == prev {
				n++
				continue
			}
			flush()
			prev, n = sc.Text(), 1
		}
		flush()
		return nil
	})
}

func seq(ctx context.Context, inv *commands.Invocation) int {
	args := inv.Args[1:]
	sep := "\n"
	for len(args) > 1 && args[0] == "-s" {
		sep = args[1]
		args = args[2:]
	}
	first, inc, last := 1, 1, 0
	var err error
	switch len(args) {
	case 1:
		last, err = strconv.Atoi(args[0])
	case 2:
		first, _ = strconv.Atoi(args[0])
		last, err = strconv.Atoi(args[1])
	case 3:
		first, _ = strconv.Atoi(args[0])
		inc, _ = strconv.Atoi(args[1])
		last, err = strconv.Atoi(args[2])
	default:
		inv.Errorf("missing operand")
		return 1
	}
	if err != nil || inc == 0 {
		inv.Errorf("invalid argument")
		return 1
	}
	w := bufio.NewWriter(inv.Stdout)
	firstOut := true
	for i := first; (inc > 0 && i <= last) || (inc < 0 && i >= last); i += inc {
		if ctx.Err() != nil {
			return 1
		}
		if !firstOut {
			w.WriteString(sep)
		}
		firstOut = false
		w.WriteString(strconv.Itoa(i))
	}
	if !firstOut {
		w.WriteString("\n")
	}
	if err := w.Flush(); err != nil {
		return 1
	}
	return 0
}

func touch(ctx context.Context, inv *commands.Invocation) int {
	st := 0
	for _, a := range inv.Args[1:] {
		if strings.HasPrefix(a, "-") {
			continue
		}
		p := inv.Abs(a)
		if _, err := inv.FS.Stat(p); err == nil {
			now := inv.Now()
			inv.FS.Chtimes(p, now, now)
			continue
		}
		f, err := inv.FS.OpenFile(p, vfs.O_WRONLY|vfs.O_CREATE, 0o644)
		if err != nil {
			inv.Errorf("cannot touch '%s': %s", a, commands.Strerror(err))
			st = 1
			continue
		}
		f.Close()
	}
	return st
}

func sleep(ctx context.Context, inv *commands.Invocation) int {
	if len(inv.Args) < 2 {
		inv.Errorf("missing operand")
		return 1
	}
	f, err := strconv.ParseFloat(strings.TrimSuffix(inv.Args[1], "s"), 64)
	if err != nil {
		inv.Errorf("invalid time interval '%s'", inv.Args[1])
		return 1
	}
	t := time.NewTimer(time.Duration(f * float64(time.Second)))
	defer t.Stop()
	select {
	case <-t.C:
		return 0
	case <-ctx.Done():
		return 130
	}
}

func env(ctx context.Context, inv *commands.Invocation) int {
	args := inv.Args[1:]
	e := append([]string(nil), inv.Env...)
	for len(args) > 0 {
		if args[0] == "-i" {
			e = nil
			args = args[1:]
			continue
		}
		if strings.Contains(args[0], "=") {
			e = append(e, args[0])
			args = args[1:]
			continue
		}
		break
	}
	if len(args) == 0 {
		for _, kv := range e {
			fmt.Fprintln(inv.Stdout, kv)
		}
		return 0
	}
	if inv.Exec == nil {
		inv.Errorf("cannot run commands")
		return 126
	}
	return inv.Exec(ctx, args, inv.Stdin, inv.Stdout, inv.Stderr, e)
}

func printenv(ctx context.Context, inv *commands.Invocation) int {
	if len(inv.Args) == 1 {
		for _, kv := range inv.Env {
			fmt.Fprintln(inv.Stdout, kv)
		}
		return 0
	}
	st := 0
	for _, k := range inv.Args[1:] {
		v, ok := inv.LookupEnv(k)
		if !ok {
			st = 1
			continue
		}
		fmt.Fprintln(inv.Stdout, v)
	}
	return st
}

func yes(ctx context.Context, inv *commands.Invocation) int {
	s := "y"
	if len(inv.Args) > 1 {
		s = strings.Join(inv.Args[1:], " ")
	}
	line := []byte(strings.Repeat(s+"\n", max(1, 8192/(len(s)+1))))
	for {
		if ctx.Err() != nil {
			return 1
		}
		if _, err := inv.Stdout.Write(line); err != nil {
			if isPipe(err) {
				return 141
			}
			return 1
		}
	}
}

func basename(ctx context.Context, inv *commands.Invocation) int {
	if len(inv.Args) < 2 {
		return 1
	}
	b := path.Base(inv.Args[1])
	if len(inv.Args) > 2 {
		b = strings.TrimSuffix(b, inv.Args[2])
	}
	fmt.Fprintln(inv.Stdout, b)
	return 0
}

func dirname(ctx context.Context, inv *commands.Invocation) int {
	if len(inv.Args) < 2 {
		return 1
	}
	fmt.Fprintln(inv.Stdout, path.Dir(inv.Args[1]))
	return 0
}

func chmod(ctx context.Context, inv *commands.Invocation) int {
	if len(inv.Args) < 3 {
		inv.Errorf("missing operand")
		return 1
	}
	mode := inv.Args[1]
	st := 0
	for _, a := range inv.Args[2:] {
		p := inv.Abs(a)
		fi, err := inv.FS.Stat(p)
		if err != nil {
			inv.Errorf("cannot access '%s': %s", a, commands.Strerror(err))
			st = 1
			continue
		}
		m := fi.Mode().Perm()
		if n, err := strconv.ParseUint(mode, 8, 32); err == nil {
			m = fs.FileMode(n)
		} else {
			add := !strings.Contains(mode, "-")
			var bits fs.FileMode
			if strings.Contains(mode, "x") {
				bits |= 0o111
			}
			if strings.Contains(mode, "w") {
				bits |= 0o222
			}
			if strings.Contains(mode, "r") {
				bits |= 0o444
			}
			if strings.HasPrefix(mode, "u") {
				bits &= 0o700
			}
			if add {
				m |= bits
			} else {
				m &^= bits
			}
		}
		if err := inv.FS.Chmod(p, m); err != nil {
			inv.Errorf("%s", commands.Describe(err))
			st = 1
		}
	}
	return st
}

func ln(ctx context.Context, inv *commands.Invocation) int {
	sym := false
	var args []string
	for _, a := range inv.Args[1:] {
		if strings.HasPrefix(a, "-") {
			sym = sym || strings.Contains(a, "s")
			continue
		}
		args = append(args, a)
	}
	if len(args) != 2 {
		inv.Errorf("missing operand")
		return 1
	}
	var err error
	if sym {
		err = inv.FS.Symlink(args[0], inv.Abs(args[1]))
	} else {
		err = inv.FS.Link(inv.Abs(args[0]), inv.Abs(args[1]))
	}
	if err != nil {
		inv.Errorf("failed to create link '%s': %s", args[1], commands.Strerror(err))
		return 1
	}
	return 0
}

func whoami(ctx context.Context, inv *commands.Invocation) int {
	u := "root"
	if inv.Sys != nil && inv.Sys.User != "" {
		u = inv.Sys.User
	}
	fmt.Fprintln(inv.Stdout, u)
	return 0
}

func hostname(ctx context.Context, inv *commands.Invocation) int {
	h := "sandbox"
	if inv.Sys != nil && inv.Sys.Hostname != "" {
		h = inv.Sys.Hostname
	}
	fmt.Fprintln(inv.Stdout, h)
	return 0
}

func tee(ctx context.Context, inv *commands.Invocation) int {
	var ws []io.Writer
	ws = append(ws, inv.Stdout)
	var fs []commands.File
	appendMode := false
	for _, a := range inv.Args[1:] {
		if a == "-a" {
			appendMode = true
			continue
		}
		flag := vfs.O_WRONLY | vfs.O_CREATE | vfs.O_TRUNC
		if appendMode {
			flag = vfs.O_WRONLY | vfs.O_CREATE | vfs.O_APPEND
		}
		f, err := inv.OpenFile(a, flag, 0o666)
		if err != nil {
			inv.Errorf("%s", commands.Describe(err))
			continue
		}
		fs = append(fs, f)
		ws = append(ws, f)
	}
	io.Copy(io.MultiWriter(ws...), inv.Stdin)
	for _, f := range fs {
		f.Close()
	}
	return 0
}

func mv(ctx context.Context, inv *commands.Invocation) int {
	args := inv.Args[1:]
	if len(args) != 2 {
		inv.Errorf("missing operand")
		return 1
	}
	dst := inv.Abs(args[1])
	if fi, err := inv.FS.Stat(dst); err == nil && fi.IsDir() {
		dst = path.Join(dst, path.Base(args[0]))
	}
	if err := inv.FS.Rename(inv.Abs(args[0]), dst); err != nil {
		inv.Errorf("cannot move '%s': %s", args[0], commands.Strerror(err))
		return 1
	}
	return 0
}

func cp(ctx context.Context, inv *commands.Invocation) int {
	var args []string
	for _, a := range inv.Args[1:] {
		if !strings.HasPrefix(a, "-") {
			args = append(args, a)
		}
	}
	if len(args) != 2 {
		inv.Errorf("missing operand")
		return 1
	}
	data, err := inv.FS.ReadFile(inv.Abs(args[0]))
	if err != nil {
		inv.Errorf("cannot stat '%s': %s", args[0], commands.Strerror(err))
		return 1
	}
	dst := inv.Abs(args[1])
	if fi, err := inv.FS.Stat(dst); err == nil && fi.IsDir() {
		dst = path.Join(dst, path.Base(args[0]))
	}
	if err := inv.FS.WriteFile(dst, data, 0o644); err != nil {
		inv.Errorf("cannot create '%s': %s", args[1], commands.Strerror(err))
		return 1
	}
	return 0
}
