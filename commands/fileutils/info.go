package fileutils

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"path"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/warren-sandbox/warren/commands"
	"github.com/warren-sandbox/warren/commands/sysinfo"
	"github.com/warren-sandbox/warren/vfs"
)

// ---- stat ----

func fileType(fi fs.FileInfo) string {
	m := fi.Mode()
	switch {
	case m.IsDir():
		return "directory"
	case m&fs.ModeSymlink != 0:
		return "symbolic link"
	case m&fs.ModeNamedPipe != 0:
		return "fifo"
	case m&fs.ModeSocket != 0:
		return "socket"
	case m&fs.ModeCharDevice != 0:
		return "character special file"
	case m&fs.ModeDevice != 0:
		return "block special file"
	case fi.Size() == 0:
		return "regular empty file"
	}
	return "regular file"
}

// The sandbox filesystem's device number as stat shows it.
const devMajor, devMinor = 0, 45

func stat(ctx context.Context, inv *commands.Invocation) int {
	opts, args, err := newOpts("Lc:tf", "dereference:L", "format=:c", "printf=", "terse:t", "file-system:f", "cached=").Parse(inv.Args[1:])
	if err != nil {
		return badUsage(inv, err, 1)
	}
	deref, terse, fsMode := false, false, false
	format, printf := "", false
	for _, o := range opts {
		switch o.Key {
		case "L":
			deref = true
		case "c":
			format, printf = o.Val+"\n", false
		case "printf":
			format, printf = o.Val, true
		case "t":
			terse = true
		case "f":
			fsMode = true
		}
	}
	if len(args) == 0 {
		return missingOperand(inv)
	}
	w := bufio.NewWriter(inv.Stdout)
	defer w.Flush()
	users, groups := loadIDs(inv, "/etc/passwd"), loadIDs(inv, "/etc/group")
	loc := sysinfo.Location(inv)
	status := 0
	for _, a := range args {
		abs := inv.Abs(a)
		var fi fs.FileInfo
		var err error
		if deref {
			fi, err = inv.FS.Stat(abs)
		} else {
			fi, err = inv.FS.Lstat(abs)
		}
		if err != nil {
			inv.Errorf("cannot statx %s: %s", quote(a), commands.Strerror(err))
			status = 1
			continue
		}
		if fsMode {
			f := format
			if f == "" {
				f = "  File: \"%n\"\n    ID: 0        Namelen: 255     Type: warren\nBlock size: 4096       Fundamental block size: 4096\nBlocks: Total: %b      Free: %f      Available: %a\nInodes: Total: %c      Free: %d\n"
			}
			w.WriteString(statFS(inv, f, a))
			continue
		}
		f := format
		switch {
		case f != "":
		case terse:
			f = "%n %s %b %f %u %g %D %i %h %t %T %X %Y %Z %W %o\n"
		default:
			dev := "Device: %Hd,%Ld\tInode: %-11i Links: %-5h\n"
			if fi.Mode()&fs.ModeDevice != 0 {
				dev = "Device: %Hd,%Ld\tInode: %-11i Links: %-5h Device type: %Hr,%Lr\n"
			}
			f = "  File: %N\n  Size: %-10s\tBlocks: %-10b IO Block: %-6o %F\n" + dev +
				"Access: (%04a/%10.10A)  Uid: (%5u/%8U)   Gid: (%5g/%8G)\nAccess: %x\nModify: %y\nChange: %z\n Birth: %w\n"
		}
		if printf {
			f = unescape(f)
		}
		var tgt string
		if fi.Mode()&fs.ModeSymlink != 0 {
			tgt, _ = inv.FS.Readlink(abs)
		}
		w.WriteString(statFormat(f, a, tgt, fi, users, groups, loc, format == "" && !terse))
	}
	return status
}

func statFS(inv *commands.Invocation, f, name string) string {
	u := inv.FS.Usage()
	total, inodes := quota(inv)
	var b strings.Builder
	for i := 0; i < len(f); i++ {
		if f[i] != '%' || i+1 >= len(f) {
			b.WriteByte(f[i])
			continue
		}
		i++
		switch f[i] {
		case 'n':
			b.WriteString(name)
		case 'b':
			b.WriteString(strconv.FormatInt(total/4096, 10))
		case 'f', 'a':
			b.WriteString(strconv.FormatInt(max(0, total-u.Bytes)/4096, 10))
		case 'c':
			b.WriteString(strconv.FormatInt(inodes, 10))
		case 'd':
			b.WriteString(strconv.FormatInt(max(0, inodes-u.Inodes), 10))
		case 's', 'S':
			b.WriteString("4096")
		case 'T':
			b.WriteString("warren")
		case 'l':
			b.WriteString("255")
		case 'i':
			b.WriteString("0")
		case '%':
			b.WriteByte('%')
		default:
			b.WriteByte('?')
		}
	}
	return b.String()
}

func statFormat(f, name, target string, fi fs.FileInfo, users, groups idNames, loc *time.Location, dflt bool) string {
	st := statOf(fi)
	var b strings.Builder
	ts := func(t time.Time) string {
		return t.In(loc).Format("2006-01-02 15:04:05.000000000 -0700")
	}
	for i := 0; i < len(f); i++ {
		c := f[i]
		if c != '%' || i+1 >= len(f) {
			b.WriteByte(c)
			continue
		}
		j := i + 1
		for j < len(f) && strings.IndexByte("-+ #0'", f[j]) >= 0 {
			j++
		}
		for j < len(f) && (f[j] >= '0' && f[j] <= '9' || f[j] == '.') {
			j++
		}
		spec := f[i+1 : j]
		if j >= len(f) {
			b.WriteString(f[i:])
			break
		}
		verb := f[j]
		hl := byte(0)
		if (verb == 'H' || verb == 'L') && j+1 < len(f) && (f[j+1] == 'd' || f[j+1] == 'r') {
			hl, j = verb, j+1
			verb = f[j]
		}
		i = j
		if w, prec, ok := strings.Cut(spec, "."); ok && strings.IndexByte("XYZ", verb) >= 0 {
			// %.3Y: seconds with that many digits of the nanoseconds (9
			// for a bare "."), right-aligned to the width
			t := map[byte]time.Time{'X': st.Atime, 'Y': fi.ModTime(), 'Z': st.Ctime}[verb]
			p, err := strconv.Atoi(prec)
			if err != nil || p > 9 {
				p = 9
			}
			v := strconv.FormatInt(t.Unix(), 10)
			if p > 0 {
				v += "." + fmt.Sprintf("%09d", t.Nanosecond())[:p]
			}
			width, _ := strconv.Atoi(strings.TrimLeft(w, "-+ #0'"))
			if pad := min(width, 4096) - len(v); pad > 0 {
				if strings.Contains(w, "-") {
					v += strings.Repeat(" ", pad)
				} else {
					v = strings.Repeat(" ", pad) + v
				}
			}
			b.WriteString(v)
			continue
		}
		var s string
		num := false
		switch verb {
		case '%':
			b.WriteByte('%')
			continue
		case 'a':
			s, num = strconv.FormatUint(uint64(unixMode(fi.Mode())), 8), true
			if strings.Contains(spec, "0") || strings.HasPrefix(spec, "04") {
				n, _ := strconv.ParseUint(s, 10, 64)
				s = strconv.FormatUint(n, 10)
			}
		case 'A':
			s = modeString(fi.Mode())
		case 'b':
			s, num = strconv.FormatInt(blocksOf(fi), 10), true
		case 'B':
			s, num = "512", true
		case 'd':
			switch hl {
			case 'H':
				s = strconv.Itoa(devMajor)
			case 'L':
				s = strconv.Itoa(devMinor)
			default:
				s = strconv.Itoa(devMajor<<8 | devMinor)
			}
			num = true
		case 'D':
			s = strconv.FormatInt(devMajor<<8|devMinor, 16)
		case 'f':
			s = strconv.FormatUint(uint64(typeBits(fi.Mode())|unixMode(fi.Mode())), 16)
		case 'F':
			s = fileType(fi)
		case 'g':
			s, num = strconv.FormatUint(uint64(st.Gid), 10), true
		case 'G':
			s = groups.name(st.Gid)
		case 'h':
			s, num = strconv.FormatUint(uint64(max(st.Nlink, 1)), 10), true
		case 'i':
			s, num = strconv.FormatUint(st.Ino, 10), true
		case 'm':
			s = "/"
		case 'n':
			s = name
		case 'N':
			if dflt {
				s = name
				if target != "" {
					s += " -> " + target
				}
			} else {
				s = quote(name)
				if target != "" {
					s += " -> " + quote(target)
				}
			}
		case 'o':
			s, num = "4096", true
		case 's':
			s, num = strconv.FormatInt(fi.Size(), 10), true
		case 'r':
			maj, min := st.Rdev>>8&0xfff, st.Rdev&0xff|(st.Rdev>>12)&^0xff
			switch hl {
			case 'H':
				s = strconv.FormatUint(maj, 10)
			case 'L':
				s = strconv.FormatUint(min, 10)
			default:
				s = strconv.FormatUint(st.Rdev, 10)
			}
			num = true
		case 't':
			s = strconv.FormatUint(st.Rdev>>8&0xfff, 16)
		case 'T':
			s = strconv.FormatUint(st.Rdev&0xff, 16)
		case 'u':
			s, num = strconv.FormatUint(uint64(st.Uid), 10), true
		case 'U':
			s = users.name(st.Uid)
		case 'w':
			s = "-"
		case 'W':
			s, num = "0", true
		case 'x':
			s = ts(st.Atime)
		case 'X':
			s, num = strconv.FormatInt(st.Atime.Unix(), 10), true
		case 'y':
			s = ts(fi.ModTime())
		case 'Y':
			s, num = strconv.FormatInt(fi.ModTime().Unix(), 10), true
		case 'z':
			s = ts(st.Ctime)
		case 'Z':
			s, num = strconv.FormatInt(st.Ctime.Unix(), 10), true
		default:
			b.WriteString("?")
			continue
		}
		if spec == "" {
			b.WriteString(s)
			continue
		}
		if num {
			n, _ := strconv.ParseInt(s, 10, 64)
			fmt.Fprintf(&b, "%"+spec+"d", n)
		} else {
			fmt.Fprintf(&b, "%"+spec+"s", s)
		}
	}
	return b.String()
}

// unescape interprets printf-style backslash escapes (stat --printf).
func unescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' || i+1 >= len(s) {
			b.WriteByte(s[i])
			continue
		}
		i++
		switch s[i] {
		case 'n':
			b.WriteByte('\n')
		case 't':
			b.WriteByte('\t')
		case 'r':
			b.WriteByte('\r')
		case 'a':
			b.WriteByte('\a')
		case 'b':
			b.WriteByte('\b')
		case 'f':
			b.WriteByte('\f')
		case 'v':
			b.WriteByte('\v')
		case '\\':
			b.WriteByte('\\')
		case '"':
			b.WriteByte('"')
		case '0', '1', '2', '3', '4', '5', '6', '7':
			n := 0
			k := 0
			for k < 3 && i < len(s) && s[i] >= '0' && s[i] <= '7' {
				n = n*8 + int(s[i]-'0')
				i++
				k++
			}
			i--
			b.WriteByte(byte(n))
		default:
			b.WriteByte('\\')
			b.WriteByte(s[i])
		}
	}
	return b.String()
}

// ---- readlink / realpath ----

// canonMode says how much of a path must exist: 'e' all, 'f' all but the
// last component, 'm' none.
func canonicalize(inv *commands.Invocation, name string, mode byte) (string, error) {
	abs := inv.Abs(name)
	parts := strings.Split(strings.TrimPrefix(abs, "/"), "/")
	cur := "/"
	hops := 0
	for i := 0; i < len(parts); i++ {
		p := parts[i]
		switch p {
		case "", ".":
			continue
		case "..":
			cur = path.Dir(cur)
			continue
		}
		next := path.Join(cur, p)
		fi, err := inv.FS.Lstat(next)
		if err != nil {
			last := true
			for _, r := range parts[i+1:] {
				if r != "" && r != "." {
					last = false
				}
			}
			if mode == 'm' || (mode == 'f' && last && isNotExist(err)) {
				cur = next
				continue
			}
			return "", err
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			hops++
			if hops > 40 {
				return "", syscall.ELOOP
			}
			t, err := inv.FS.Readlink(next)
			if err != nil {
				return "", err
			}
			rest := append(strings.Split(t, "/"), parts[i+1:]...)
			if strings.HasPrefix(t, "/") {
				cur = "/"
			}
			parts = rest
			i = -1
			continue
		}
		if !fi.IsDir() && i < len(parts)-1 {
			more := false
			for _, r := range parts[i+1:] {
				if r != "" {
					more = true
				}
			}
			if more && mode != 'm' {
				return "", syscall.ENOTDIR
			}
		}
		cur = next
	}
	return cur, nil
}

func readlink(ctx context.Context, inv *commands.Invocation) int {
	opts, args, err := newOpts("femnqsvz", "canonicalize:f", "canonicalize-existing:e", "canonicalize-missing:m",
		"no-newline:n", "quiet:q", "silent:s", "verbose:v", "zero:z").Parse(inv.Args[1:])
	if err != nil {
		return badUsage(inv, err, 1)
	}
	var mode byte
	noNL, verbose, zero := false, false, false
	for _, o := range opts {
		switch o.Key {
		case "f", "e", "m":
			mode = o.Key[0]
		case "n":
			noNL = true
		case "v":
			verbose = true
		case "q", "s":
			verbose = false
		case "z":
			zero = true
		}
	}
	if len(args) == 0 {
		return missingOperand(inv)
	}
	end := "\n"
	if zero {
		end = "\x00"
	} else if noNL && len(args) == 1 {
		end = ""
	}
	status := 0
	for _, a := range args {
		var out string
		var err error
		if mode == 0 {
			out, err = inv.FS.Readlink(inv.Abs(a))
		} else {
			out, err = canonicalize(inv, a, mode)
		}
		if err != nil {
			if verbose {
				inv.Errorf("%s: %s", a, commands.Strerror(err))
			}
			status = 1
			continue
		}
		io.WriteString(inv.Stdout, out+end)
	}
	return status
}

func realpath(ctx context.Context, inv *commands.Invocation) int {
	opts, args, err := newOpts("emLPqsz", "canonicalize-existing:e", "canonicalize-missing:m", "logical:L",
		"physical:P", "quiet:q", "strip:s", "no-symlinks:s", "zero:z", "relative-to=", "relative-base=").Parse(inv.Args[1:])
	if err != nil {
		return badUsage(inv, err, 1)
	}
	mode := byte('f')
	quiet, strip, zero := false, false, false
	relTo, relBase := "", ""
	for _, o := range opts {
		switch o.Key {
		case "e", "m":
			mode = o.Key[0]
		case "q":
			quiet = true
		case "s":
			strip = true
		case "z":
			zero = true
		case "relative-to":
			relTo = o.Val
		case "relative-base":
			relBase = o.Val
		}
	}
	if len(args) == 0 {
		return missingOperand(inv)
	}
	resolve := func(n string) (string, error) {
		if strip {
			return inv.Abs(n), nil
		}
		return canonicalize(inv, n, mode)
	}
	if relTo != "" {
		r, err := resolve(relTo)
		if err != nil {
			inv.Errorf("%s: %s", relTo, commands.Strerror(err))
			return 1
		}
		relTo = r
	}
	if relBase != "" {
		r, err := resolve(relBase)
		if err != nil {
			inv.Errorf("%s: %s", relBase, commands.Strerror(err))
			return 1
		}
		relBase = r
		if relTo == "" {
			relTo = r
		}
	}
	end := "\n"
	if zero {
		end = "\x00"
	}
	status := 0
	for _, a := range args {
		out, err := resolve(a)
		if err != nil {
			if !quiet {
				inv.Errorf("%s: %s", a, commands.Strerror(err))
			}
			status = 1
			continue
		}
		if relTo != "" && (relBase == "" || (isWithin(out, relBase) && isWithin(relTo, relBase))) {
			out = relPath(relTo, out)
		}
		io.WriteString(inv.Stdout, out+end)
	}
	return status
}

// ---- mktemp ----

func mktemp(ctx context.Context, inv *commands.Invocation) int {
	opts, args, err := newOpts("dup:qt", "directory:d", "dry-run:u", "tmpdir?:p", "quiet:q", "suffix=").Parse(inv.Args[1:])
	if err != nil {
		return badUsage(inv, err, 1)
	}
	dir, quiet, dry, useTmp, tflag := false, false, false, false, false
	tmpdir, suffix := "", ""
	for _, o := range opts {
		switch o.Key {
		case "d":
			dir = true
		case "u":
			dry = true
		case "q":
			quiet = true
		case "p":
			useTmp, tmpdir = true, o.Val
		case "t":
			tflag = true
		case "suffix":
			suffix = o.Val
		}
	}
	fail := func(format string, a ...any) int {
		if !quiet {
			inv.Errorf(format, a...)
		}
		return 1
	}
	if len(args) > 1 {
		return fail("too many templates")
	}
	tmpl := "tmp.XXXXXXXXXX"
	if len(args) == 1 {
		tmpl = args[0]
	} else {
		useTmp = true
	}
	if tflag {
		useTmp = true
	}
	if useTmp {
		if tmpdir == "" {
			tmpdir = inv.Getenv("TMPDIR")
		}
		if tmpdir == "" {
			tmpdir = "/tmp"
		}
		if strings.Contains(tmpl, "/") && len(args) == 1 && (tflag || useTmp) && tflag {
			return fail("invalid template, %s, contains directory separator", quote(tmpl))
		}
		tmpl = path.Join(tmpdir, tmpl)
	}
	base := tmpl
	if suffix == "" {
		// a suffix is whatever follows the last run of X's
		i := strings.LastIndex(base, "X")
		if i >= 0 {
			suffix, base = base[i+1:], base[:i+1]
			if strings.Contains(suffix, "/") {
				suffix, base = "", tmpl
			}
		}
	}
	n := 0
	for n < len(base) && base[len(base)-1-n] == 'X' {
		n++
	}
	if n < 3 {
		return fail("too few X's in template %s", quote(tmpl))
	}
	const chars = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	for try := 0; try < 100; try++ {
		b := []byte(base)
		for i := len(b) - n; i < len(b); i++ {
			b[i] = chars[rand.IntN(len(chars))]
		}
		name := string(b) + suffix
		abs := inv.Abs(name)
		if dry {
			if _, err := inv.FS.Lstat(abs); err == nil {
				continue
			}
			fmt.Fprintln(inv.Stdout, name)
			return 0
		}
		var err error
		if dir {
			err = inv.FS.Mkdir(abs, 0o700)
		} else {
			var f *vfs.File
			f, err = inv.FS.OpenFile(abs, vfs.O_RDWR|vfs.O_CREATE|vfs.O_EXCL, 0o600)
			if err == nil {
				f.Close()
			}
		}
		if errnoOf(err) == syscall.EEXIST {
			continue
		}
		if err != nil {
			kind := "file"
			if dir {
				kind = "directory"
			}
			return fail("failed to create %s via template %s: %s", kind, quote(tmpl), commands.Strerror(err))
		}
		fmt.Fprintln(inv.Stdout, name)
		return 0
	}
	return fail("failed to create file via template %s: File exists", quote(tmpl))
}

// ---- du ----

func (c *duConf) size(fi fs.FileInfo) int64 {
	if st, ok := fi.Sys().(*vfs.Stat); ok && st.Nlink > 1 && !fi.IsDir() && !c.countLinks {
		if c.seen[st.Ino] {
			return 0
		}
		c.seen[st.Ino] = true
	}
	if c.apparent {
		if fi.IsDir() {
			return 4096
		}
		return fi.Size()
	}
	return blocksOf(fi) * 512
}

func (c *duConf) emit(bytes int64, name string) {
	var s string
	switch {
	case c.human:
		s = humanSize(bytes)
		if bytes == 0 {
			s = "0"
		}
	default:
		s = strconv.FormatInt((bytes+c.blockSize-1)/c.blockSize, 10)
	}
	end := "\n"
	if c.nullEnd {
		end = "\x00"
	}
	c.w.WriteString(s + "\t" + name + end)
}

func (c *duConf) walk(ctx context.Context, inv *commands.Invocation, abs, name string, fi fs.FileInfo, depth int) (int64, int) {
	if ctx.Err() != nil {
		return 0, 130
	}
	if st, ok := fi.Sys().(*vfs.Stat); ok && st.Nlink > 1 && !fi.IsDir() && !c.countLinks && c.seen[st.Ino] {
		// GNU neither counts nor lists a hard link met before
		return 0, 0
	}
	total := c.size(fi)
	status := 0
	if fi.IsDir() {
		ents, err := inv.FS.ReadDir(abs)
		if err != nil {
			inv.Errorf("cannot read directory %s: %s", quote(name), commands.Strerror(err))
			status = 1
		}
		for _, e := range ents {
			if c.excluded(e.Name()) {
				continue
			}
			cabs := path.Join(abs, e.Name())
			cfi, err := inv.FS.Lstat(cabs)
			if err != nil {
				continue
			}
			cname := name + "/" + e.Name()
			if strings.HasSuffix(name, "/") {
				cname = name + e.Name()
			}
			s, st := c.walk(ctx, inv, cabs, cname, cfi, depth+1)
			if st != 0 {
				status = st
			}
			total += s
		}
		if c.maxDepth < 0 || depth <= c.maxDepth {
			c.emit(total, name)
		}
		return total, status
	}
	if depth == 0 || (c.all && (c.maxDepth < 0 || depth <= c.maxDepth)) {
		c.emit(total, name)
	}
	return total, status
}

func (c *duConf) excluded(name string) bool {
	for _, p := range c.exclude {
		if ok, _ := path.Match(p, name); ok {
			return true
		}
	}
	return false
}

// utf8Locale reports whether the sandbox environment selects UTF-8.
func utf8Locale(inv *commands.Invocation) bool {
	for _, k := range []string{"LC_ALL", "LC_CTYPE", "LANG"} {
		if v, ok := inv.LookupEnv(k); ok && v != "" {
			v = strings.ToLower(v)
			return strings.Contains(v, "utf-8") || strings.Contains(v, "utf8")
		}
	}
	return false
}
