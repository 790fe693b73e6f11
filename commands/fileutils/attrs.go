package fileutils

import (
	"context"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/warren-sandbox/warren/commands"
	"github.com/warren-sandbox/warren/commands/sysinfo"
	"github.com/warren-sandbox/warren/vfs"
)

// parseMode applies an octal or symbolic chmod mode to cur (which carries
// permission and setuid/setgid/sticky bits). mask is the umask used for
// clauses without a who part.
func parseMode(spec string, cur fs.FileMode, isDir bool, mask fs.FileMode) (fs.FileMode, bool) {
	if spec == "" {
		return 0, false
	}
	if spec[0] >= '0' && spec[0] <= '7' {
		n, err := strconv.ParseUint(spec, 8, 32)
		if err != nil || n > 0o7777 {
			return 0, false
		}
		m := fsMode(uint32(n))
		// like GNU, a directory keeps set-id bits unless the mode names them
		if isDir && len(spec) <= 3 {
			m |= cur & (fs.ModeSetuid | fs.ModeSetgid)
		}
		return m, true
	}
	u := unixMode(cur)
	for _, clause := range strings.Split(spec, ",") {
		i := 0
		var who uint32
		for i < len(clause) && strings.IndexByte("ugoa", clause[i]) >= 0 {
			switch clause[i] {
			case 'u':
				who |= 0o4700
			case 'g':
				who |= 0o2070
			case 'o':
				who |= 0o1007
			case 'a':
				who |= 0o7777
			}
			i++
		}
		if i == len(clause) {
			return 0, false
		}
		explicit := who != 0
		if !explicit {
			who = 0o7777
		}
		for i < len(clause) {
			op := clause[i]
			if op != '+' && op != '-' && op != '=' {
				return 0, false
			}
			i++
			var bits uint32
			copied := false
			for i < len(clause) && strings.IndexByte("rwxXstugo", clause[i]) >= 0 {
				switch clause[i] {
				case 'r':
					bits |= 0o444
				case 'w':
					bits |= 0o222
				case 'x':
					bits |= 0o111
				case 'X':
					if isDir || u&0o111 != 0 {
						bits |= 0o111
					}
				case 's':
					bits |= 0o6000
				case 't':
					bits |= 0o1000
				case 'u', 'g', 'o':
					var v uint32
					switch clause[i] {
					case 'u':
						v = (u >> 6) & 7
					case 'g':
						v = (u >> 3) & 7
					case 'o':
						v = u & 7
					}
					bits |= v<<6 | v<<3 | v
					copied = true
				}
				i++
			}
			_ = copied
			eff := bits & who
			if !explicit {
				eff &^= uint32(mask)
			}
			switch op {
			case '+':
				u |= eff
			case '-':
				u &^= eff
			case '=':
				clear := who & 0o777
				if explicit {
					clear |= who & 0o7000 &^ 0o1000
					if who&0o1007 == 0o1007 {
						clear |= 0o1000
					}
				}
				if isDir {
					clear &^= 0o6000
				}
				u = u&^clear | eff
			}
		}
	}
	return fsMode(u), true
}

var modeArg = regexp.MustCompile(`^-[rwxXstugo=+,-]*[rwxXst]`)

func chmod(ctx context.Context, inv *commands.Invocation) int {
	// a leading "-w" or "-x" is a mode, not an option
	var raw []string
	var modeSpec string
	for _, a := range inv.Args[1:] {
		if modeSpec == "" && modeArg.MatchString(a) && !strings.HasPrefix(a, "--") {
			modeSpec = a
			continue
		}
		raw = append(raw, a)
	}
	opts, args, err := newOpts("RvcfH", "recursive:R", "verbose:v", "changes:c", "silent:f",
		"quiet:f", "reference=", "preserve-root", "no-preserve-root").Parse(raw)
	if err != nil {
		return badUsage(inv, err, 1)
	}
	recursive, verbose, changes, silent := false, false, false, false
	var ref fs.FileMode
	haveRef := false
	for _, o := range opts {
		switch o.Key {
		case "R":
			recursive = true
		case "v":
			verbose = true
		case "c":
			changes = true
		case "f":
			silent = true
		case "reference":
			fi, err := inv.FS.Stat(inv.Abs(o.Val))
			if err != nil {
				inv.Errorf("failed to get attributes of %s: %s", quote(o.Val), commands.Strerror(err))
				return 1
			}
			ref, haveRef = fi.Mode()&(fs.ModePerm|fs.ModeSetuid|fs.ModeSetgid|fs.ModeSticky), true
		}
	}
	if modeSpec == "" && !haveRef {
		if len(args) == 0 {
			return missingOperand(inv)
		}
		modeSpec, args = args[0], args[1:]
	}
	if len(args) == 0 {
		inv.Errorf("missing operand after %s", quote(modeSpec))
		fmt.Fprintf(inv.Stderr, "Try '%s --help' for more information.\n", inv.Args[0])
		return 1
	}
	if !haveRef {
		if _, ok := parseMode(modeSpec, 0, false, 0); !ok {
			inv.Errorf("invalid mode: %s", quote(modeSpec))
			fmt.Fprintf(inv.Stderr, "Try '%s --help' for more information.\n", inv.Args[0])
			return 1
		}
	}
	status := 0
	var apply func(abs, name string, top bool)
	apply = func(abs, name string, top bool) {
		if ctx.Err() != nil {
			return
		}
		lfi, err := inv.FS.Lstat(abs)
		if err != nil {
			if !silent {
				inv.Errorf("cannot access %s: %s", quote(name), commands.Strerror(err))
			}
			status = 1
			return
		}
		if lfi.Mode()&fs.ModeSymlink != 0 && !top {
			return // chmod -R skips symlinks met in the walk
		}
		fi, err := inv.FS.Stat(abs)
		if err != nil {
			if !silent {
				inv.Errorf("cannot operate on dangling symlink %s", quote(name))
			}
			status = 1
			return
		}
		old := fi.Mode() & (fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky)
		nm := ref
		if !haveRef {
			nm, _ = parseMode(modeSpec, old, fi.IsDir(), umask(inv))
		}
		if err := inv.FS.Chmod(abs, nm); err != nil {
			if !silent {
				inv.Errorf("changing permissions of %s: %s", quote(name), commands.Strerror(err))
			}
			status = 1
		} else if verbose || (changes && nm != old) {
			if nm == old {
				fmt.Fprintf(inv.Stdout, "mode of %s retained as %04o (%s)\n", quote(name), unixMode(nm), modeString(nm)[1:])
			} else {
				fmt.Fprintf(inv.Stdout, "mode of %s changed from %04o (%s) to %04o (%s)\n", quote(name),
					unixMode(old), modeString(old)[1:], unixMode(nm), modeString(nm)[1:])
			}
		}
		if recursive && fi.IsDir() {
			ents, err := inv.FS.ReadDir(abs)
			if err != nil {
				inv.Errorf("cannot read directory %s: %s", quote(name), commands.Strerror(err))
				status = 1
				return
			}
			for _, e := range ents {
				apply(path.Join(abs, e.Name()), path.Join(name, e.Name()), false)
			}
		}
	}
	for _, a := range args {
		apply(inv.Abs(a), a, true)
	}
	return status
}

func chown(ctx context.Context, inv *commands.Invocation) int { return chownCmd(ctx, inv, false) }
func chgrp(ctx context.Context, inv *commands.Invocation) int { return chownCmd(ctx, inv, true) }

func chownCmd(ctx context.Context, inv *commands.Invocation, grpOnly bool) int {
	opts, args, err := newOpts("RvcfhHLP", "recursive:R", "verbose:v", "changes:c", "silent:f",
		"quiet:f", "no-dereference:h", "dereference", "reference=", "from=", "preserve-root", "no-preserve-root").Parse(inv.Args[1:])
	if err != nil {
		return badUsage(inv, err, 1)
	}
	recursive, verbose, silent, noDeref := false, false, false, false
	uid, gid := -1, -1
	haveRef := false
	for _, o := range opts {
		switch o.Key {
		case "R":
			recursive = true
		case "v", "c":
			verbose = true
		case "f":
			silent = true
		case "h":
			noDeref = true
		case "reference":
			fi, err := inv.FS.Stat(inv.Abs(o.Val))
			if err != nil {
				inv.Errorf("failed to get attributes of %s: %s", quote(o.Val), commands.Strerror(err))
				return 1
			}
			st := statOf(fi)
			uid, gid, haveRef = int(st.Uid), int(st.Gid), true
			if grpOnly {
				uid = -1
			}
		}
	}
	if !haveRef {
		if len(args) == 0 {
			return missingOperand(inv)
		}
		spec := args[0]
		args = args[1:]
		users, groups := loadIDs(inv, "/etc/passwd"), loadIDs(inv, "/etc/group")
		var u, g string
		if grpOnly {
			g = spec
		} else {
			var sep bool
			u, g, sep = strings.Cut(spec, ":")
			if !sep {
				u, g, _ = strings.Cut(spec, ".")
			}
		}
		if u != "" {
			id, ok := users.lookup(u)
			if !ok {
				inv.Errorf("invalid user: %s", quote(spec))
				return 1
			}
			uid = int(id)
		}
		if g != "" {
			id, ok := groups.lookup(g)
			if !ok {
				if grpOnly {
					inv.Errorf("invalid group: %s", quote(spec))
				} else {
					inv.Errorf("invalid group: %s", quote(spec))
				}
				return 1
			}
			gid = int(id)
		}
	}
	if len(args) == 0 {
		inv.Errorf("missing operand after %s", quote(inv.Args[len(inv.Args)-1]))
		fmt.Fprintf(inv.Stderr, "Try '%s --help' for more information.\n", inv.Args[0])
		return 1
	}
	status := 0
	var apply func(abs, name string, top bool)
	apply = func(abs, name string, top bool) {
		fi, err := inv.FS.Lstat(abs)
		if err != nil {
			if !silent {
				inv.Errorf("cannot access %s: %s", quote(name), commands.Strerror(err))
			}
			status = 1
			return
		}
		if fi.Mode()&fs.ModeSymlink != 0 && (noDeref || !top) {
			err = inv.FS.Lchown(abs, uid, gid)
		} else {
			err = inv.FS.Chown(abs, uid, gid)
		}
		if err != nil {
			if !silent {
				inv.Errorf("changing ownership of %s: %s", quote(name), commands.Strerror(err))
			}
			status = 1
		} else if verbose {
			fmt.Fprintf(inv.Stdout, "ownership of %s retained\n", quote(name))
		}
		if recursive && fi.IsDir() {
			ents, _ := inv.FS.ReadDir(abs)
			for _, e := range ents {
				apply(path.Join(abs, e.Name()), path.Join(name, e.Name()), false)
			}
		}
	}
	for _, a := range args {
		apply(inv.Abs(a), a, true)
	}
	return status
}

// ---- touch ----

func touch(ctx context.Context, inv *commands.Invocation) int {
	opts, args, err := newOpts("acd:fhmr:t:", "no-create:c", "date=:d", "reference=:r", "time=",
		"no-dereference:h").Parse(inv.Args[1:])
	if err != nil {
		return badUsage(inv, err, 1)
	}
	now := inv.Now()
	at, mt := now, now
	onlyA, onlyM, noCreate := false, false, false
	for _, o := range opts {
		switch o.Key {
		case "a":
			onlyA = true
		case "m":
			onlyM = true
		case "c":
			noCreate = true
		case "time":
			switch o.Val {
			case "atime", "access", "use":
				onlyA = true
			case "mtime", "modify":
				onlyM = true
			}
		case "d":
			t, err := sysinfo.ParseDate(o.Val, now, sysinfo.Location(inv))
			if err != nil {
				inv.Errorf("invalid date format %s", quote(o.Val))
				return 1
			}
			at, mt = t, t
		case "t":
			t, ok := parseStamp(o.Val, now, sysinfo.Location(inv))
			if !ok {
				inv.Errorf("invalid date format %s", quote(o.Val))
				return 1
			}
			at, mt = t, t
		case "r":
			fi, err := inv.FS.Stat(inv.Abs(o.Val))
			if err != nil {
				inv.Errorf("failed to get attributes of %s: %s", quote(o.Val), commands.Strerror(err))
				return 1
			}
			mt = fi.ModTime()
			at = statOf(fi).Atime
			if at.IsZero() {
				at = mt
			}
		}
	}
	if len(args) == 0 {
		inv.Errorf("missing file operand")
		fmt.Fprintf(inv.Stderr, "Try '%s --help' for more information.\n", inv.Args[0])
		return 1
	}
	status := 0
	for _, a := range args {
		abs := inv.Abs(a)
		fi, err := inv.FS.Stat(abs)
		if err != nil {
			if noCreate {
				continue
			}
			f, err := inv.FS.OpenFile(abs, vfs.O_WRONLY|vfs.O_CREATE, 0o666&^umask(inv))
			if err != nil {
				inv.Errorf("cannot touch %s: %s", quote(a), commands.Strerror(err))
				status = 1
				continue
			}
			f.Close()
			fi, err = inv.FS.Stat(abs)
			if err != nil {
				continue
			}
		}
		a2, m2 := at, mt
		if onlyA && !onlyM {
			m2 = fi.ModTime()
		}
		if onlyM && !onlyA {
			a2 = statOf(fi).Atime
			if a2.IsZero() {
				a2 = fi.ModTime()
			}
		}
		if err := inv.FS.Chtimes(abs, a2, m2); err != nil {
			inv.Errorf("setting times of %s: %s", quote(a), commands.Strerror(err))
			status = 1
		}
	}
	return status
}

// parseStamp reads touch -t's [[CC]YY]MMDDhhmm[.ss].
func parseStamp(s string, now time.Time, loc *time.Location) (time.Time, bool) {
	sec := 0
	if i := strings.IndexByte(s, '.'); i >= 0 {
		v, err := strconv.Atoi(s[i+1:])
		if err != nil || len(s[i+1:]) != 2 {
			return time.Time{}, false
		}
		sec, s = v, s[:i]
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return time.Time{}, false
		}
	}
	year := now.In(loc).Year()
	switch len(s) {
	case 8:
	case 10:
		yy, _ := strconv.Atoi(s[:2])
		if yy < 69 {
			year = 2000 + yy
		} else {
			year = 1900 + yy
		}
		s = s[2:]
	case 12:
		year, _ = strconv.Atoi(s[:4])
		s = s[4:]
	default:
		return time.Time{}, false
	}
	mo, _ := strconv.Atoi(s[0:2])
	d, _ := strconv.Atoi(s[2:4])
	h, _ := strconv.Atoi(s[4:6])
	mi, _ := strconv.Atoi(s[6:8])
	if mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || sec > 60 {
		return time.Time{}, false
	}
	return time.Date(year, time.Month(mo), d, h, mi, sec, 0, loc), true
}

// ---- truncate ----

func truncate(ctx context.Context, inv *commands.Invocation) int {
	opts, args, err := newOpts("cos:r:", "no-create:c", "io-blocks:o", "size=:s", "reference=:r").Parse(inv.Args[1:])
	if err != nil {
		return badUsage(inv, err, 1)
	}
	noCreate := false
	sizeSpec, ref := "", ""
	for _, o := range opts {
		switch o.Key {
		case "c":
			noCreate = true
		case "s":
			sizeSpec = o.Val
		case "r":
			ref = o.Val
		}
	}
	if sizeSpec == "" && ref == "" {
		inv.Errorf("you must specify either '--size' or '--reference'")
		fmt.Fprintf(inv.Stderr, "Try '%s --help' for more information.\n", inv.Args[0])
		return 1
	}
	if len(args) == 0 {
		inv.Errorf("missing file operand")
		fmt.Fprintf(inv.Stderr, "Try '%s --help' for more information.\n", inv.Args[0])
		return 1
	}
	var refSize int64 = -1
	if ref != "" {
		fi, err := inv.FS.Stat(inv.Abs(ref))
		if err != nil {
			inv.Errorf("cannot stat %s: %s", quote(ref), commands.Strerror(err))
			return 1
		}
		refSize = fi.Size()
	}
	var op byte
	var n int64
	if sizeSpec != "" {
		s := sizeSpec
		if strings.IndexByte("+-<>/%", s[0]) >= 0 {
			op, s = s[0], s[1:]
		}
		v, ok := parseSize(s)
		if !ok {
			inv.Errorf("Invalid number: %s", quote(sizeSpec))
			return 1
		}
		n = v
	}
	status := 0
	for _, a := range args {
		abs := inv.Abs(a)
		fi, err := inv.FS.Stat(abs)
		var cur int64
		if err != nil {
			if noCreate {
				continue
			}
			f, cerr := inv.FS.OpenFile(abs, vfs.O_WRONLY|vfs.O_CREATE, 0o666&^umask(inv))
			if cerr != nil {
				inv.Errorf("cannot open %s for writing: %s", quote(a), commands.Strerror(cerr))
				status = 1
				continue
			}
			f.Close()
		} else {
			cur = fi.Size()
		}
		size := n
		if refSize >= 0 && op == 0 && sizeSpec == "" {
			size = refSize
		} else if refSize >= 0 {
			cur = refSize
		}
		switch op {
		case '+':
			size = cur + n
		case '-':
			size = max(0, cur-n)
		case '<':
			size = min(cur, n)
		case '>':
			size = max(cur, n)
		case '/':
			if n == 0 {
				inv.Errorf("division by zero")
				return 1
			}
			size = cur / n * n
		case '%':
			if n == 0 {
				inv.Errorf("division by zero")
				return 1
			}
			size = (cur + n - 1) / n * n
		}
		if err := inv.FS.Truncate(abs, size); err != nil {
			inv.Errorf("failed to truncate %s at %d bytes: %s", quote(a), size, commands.Strerror(err))
			status = 1
		}
	}
	return status
}

// parseSize reads a GNU size: digits with K M G T P E (powers of 1024),
// KB MB ... (powers of 1000), KiB ..., or b (512).
func parseSize(s string) (int64, bool) {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	if i == 0 {
		return 0, false
	}
	n, err := strconv.ParseInt(s[:i], 10, 64)
	if err != nil {
		return 0, false
	}
	suf := s[i:]
	if suf == "" {
		return n, true
	}
	if suf == "b" {
		return n * 512, true
	}
	if suf == "c" || suf == "w" {
		if suf == "w" {
			return n * 2, true
		}
		return n, true
	}
	idx := strings.IndexByte("KMGTPEZY", strings.ToUpper(suf[:1])[0])
	if idx < 0 {
		return 0, false
	}
	base := int64(1024)
	switch suf[1:] {
	case "", "iB":
	case "B":
		base = 1000
	default:
		return 0, false
	}
	for k := 0; k <= idx; k++ {
		if n > (1<<62)/base {
			return 0, false
		}
		n *= base
	}
	return n, true
}

// ParseMode applies an octal or symbolic mode (chmod syntax) to cur; it is
// exported for find -perm.
func ParseMode(spec string, cur fs.FileMode, isDir bool) (fs.FileMode, bool) {
	return parseMode(spec, cur, isDir, 0)
}

// ModeString renders m as ls -l does ("-rw-r--r--").
func ModeString(m fs.FileMode) string { return modeString(m) }

// UnixMode is m's st_mode permission bits (07777).
func UnixMode(m fs.FileMode) uint32 { return unixMode(m) }

// Names maps uids/gids to names from the sandbox's /etc/passwd or /etc/group.
func Names(inv *commands.Invocation, file string) func(uint32) string {
	return loadIDs(inv, file).name
}
