package shell

// Builtins for the shell process's own attributes: umask and ulimit.

import (
	"io"
	"strconv"
	"strings"
)

const umaskUsage = "umask: usage: umask [-p] [-S] [mode]"

// biUmask prints the file creation mask (octal, symbolic with -S, as a
// reusable command with -p) or sets it from an octal number or a chmod-like
// symbolic mode (u=rwx,g=rx,o=), as bash does. Files and directories the
// shell and resident commands create get it.
func biUmask(r *runner, args []string) int {
	args = args[1:]
	sym, reuse := false, false
	for len(args) > 0 && len(args[0]) > 1 && args[0][0] == '-' {
		if args[0] == "--" {
			args = args[1:]
			break
		}
		for _, c := range args[0][1:] {
			switch c {
			case 'S':
				sym = true
			case 'p':
				reuse = true
			default:
				r.errf("umask: -%c: invalid option", c)
				io.WriteString(r.stderr(), umaskUsage+"\n")
				return 2
			}
		}
		args = args[1:]
	}
	if len(args) == 0 {
		prefix := ""
		if reuse {
			prefix = "umask "
			if sym {
				prefix = "umask -S "
			}
		}
		if sym {
			r.outf("%s%s\n", prefix, symbolicPerms(^r.umask&0o777))
		} else {
			r.outf("%s%04o\n", prefix, r.umask)
		}
		return 0
	}
	// bash takes the first operand and ignores the rest
	mode := args[0]
	if mode[0] >= '0' && mode[0] <= '9' {
		n, err := strconv.ParseUint(mode, 8, 32)
		if err != nil || n > 0o7777 {
			r.errf("umask: %s: octal number out of range", mode)
			return 1
		}
		r.umask = uint32(n) & 0o777
	} else {
		perms, err := applySymbolic(^r.umask&0o777, mode)
		if err != "" {
			r.errf("umask: %s", err)
			return 1
		}
		r.umask = ^perms & 0o777
	}
	if sym {
		r.outf("%s\n", symbolicPerms(^r.umask&0o777))
	}
	return 0
}

// symbolicPerms is umask -S's form of a permission set: u=rwx,g=rx,o=rx.
func symbolicPerms(m uint32) string {
	f := func(s uint32) string {
		out := ""
		if s&4 != 0 {
			out += "r"
		}
		if s&2 != 0 {
			out += "w"
		}
		if s&1 != 0 {
			out += "x"
		}
		return out
	}
	return "u=" + f(m>>6) + ",g=" + f(m>>3&7) + ",o=" + f(m&7)
}

// applySymbolic applies a chmod-like mode (who [=+-] perms, comma
// separated; no who is a) to perms, with bash's umask error texts.
func applySymbolic(perms uint32, mode string) (uint32, string) {
	for _, clause := range strings.Split(mode, ",") {
		i := 0
		var who uint32
		for ; i < len(clause); i++ {
			switch clause[i] {
			case 'u':
				who |= 0o700
			case 'g':
				who |= 0o070
			case 'o':
				who |= 0o007
			case 'a':
				who |= 0o777
			default:
				goto ops
			}
		}
	ops:
		if who == 0 {
			who = 0o777
		}
		if i >= len(clause) {
			return 0, "`" + clause[len(clause)-1:] + "': invalid symbolic mode operator"
		}
		for i < len(clause) {
			op := clause[i]
			if op != '=' && op != '+' && op != '-' {
				return 0, "`" + string(op) + "': invalid symbolic mode operator"
			}
			i++
			var bits uint32
			for ; i < len(clause) && !strings.ContainsRune("=+-", rune(clause[i])); i++ {
				switch clause[i] {
				case 'r':
					bits |= 0o444
				case 'w':
					bits |= 0o222
				case 'x':
					bits |= 0o111
				default:
					return 0, "`" + string(clause[i]) + "': invalid symbolic mode character"
				}
			}
			switch op {
			case '=':
				perms = perms&^who | bits&who
			case '+':
				perms |= bits & who
			case '-':
				perms &^= bits & who
			}
		}
	}
	return perms, ""
}

// ulimit: the sandbox's resource limits as the session sees them. Each
// has a soft and a hard value (-1 is unlimited) that scripts read, lower
// and (root only) raise; subshells get a copy. What warren enforces is
// its own limits (docs/limits.md): -u is the job limit, -t the exec's time
// limit, -v the memory budget, so those report the real values; -n holds
// the shell's redirections (up to 4096); the others are kept for scripts
// that check or set them and are not enforced.

// ulimitRes is one resource: its option letter, bash's label and whether
// it can change (the pipe size cannot).
type ulimitRes struct {
	flag  byte
	label string
	fixed bool
}

// ulimitTable is in `ulimit -a` order, with bash's labels.
var ulimitTable = []ulimitRes{
	{'R', "real-time non-blocking time  (microseconds, -R)", false},
	{'c', "core file size              (blocks, -c)", false},
	{'d', "data seg size               (kbytes, -d)", false},
	{'e', "scheduling priority                 (-e)", false},
	{'f', "file size                   (blocks, -f)", false},
	{'i', "pending signals                     (-i)", false},
	{'l', "max locked memory           (kbytes, -l)", false},
	{'m', "max memory size             (kbytes, -m)", false},
	{'n', "open files                          (-n)", false},
	{'p', "pipe size                (512 bytes, -p)", true},
	{'q', "POSIX message queues         (bytes, -q)", false},
	{'r', "real-time priority                  (-r)", false},
	{'s', "stack size                  (kbytes, -s)", false},
	{'t', "cpu time                   (seconds, -t)", false},
	{'u', "max user processes                  (-u)", false},
	{'v', "virtual memory              (kbytes, -v)", false},
	{'x', "file locks                          (-x)", false},
}

// name is the label's text before the unit, as bash's errors say it.
func (u ulimitRes) name() string {
	return strings.TrimRight(u.label[:strings.IndexByte(u.label, '(')], " ")
}

// ulimits holds the session's values, indexed as ulimitTable.
type ulimits struct{ soft, hard [17]int64 }

func (r *runner) defaultUlimits() *ulimits {
	u := &ulimits{}
	set := func(f byte, soft, hard int64) {
		for i, res := range ulimitTable {
			if res.flag == f {
				u.soft[i], u.hard[i] = soft, hard
			}
		}
	}
	for i := range ulimitTable {
		u.soft[i], u.hard[i] = -1, -1
	}
	set('c', 0, -1)
	set('e', 0, 0)
	set('l', 8192, 8192)
	set('n', 1024, 1<<20)
	set('p', 8, 8)
	set('q', 819200, 819200)
	set('r', 0, 0)
	set('s', 8192, -1)
	jobs := int64(r.rs.lim.MaxJobs)
	set('i', jobs, jobs)
	set('u', jobs, jobs)
	if t := int64(r.rs.lim.Timeout.Seconds()); t > 0 {
		set('t', t, t)
	}
	if s := r.sh.cfg.Sys; s != nil && s.MaxMemoryBytes > 0 {
		set('v', s.MaxMemoryBytes>>10, s.MaxMemoryBytes>>10)
	}
	return u
}

// openFilesLimit is ulimit -n's soft value, which redirections hold to
// (a descriptor at or past it is refused, as the kernel refuses bash),
// never above maxFd: each subshell and pipeline stage copies the
// descriptor table, so its size stays bounded whatever a script raises.
func (r *runner) openFilesLimit() int {
	if r.ulimits == nil {
		return 1024
	}
	for i, res := range ulimitTable {
		if res.flag == 'n' {
			if n := r.ulimits.soft[i]; n >= 0 && n < maxFd {
				return int(n)
			}
		}
	}
	return maxFd
}

const maxFd = 4096

const ulimitUsage = "ulimit: usage: ulimit [-SHabcdefiklmnpqrstuvxPRT] [limit]"

func biUlimit(r *runner, args []string) int {
	soft, hard, all := false, false, false
	// Each resource option takes its value as bash's getopt gives it:
	// the rest of the word, or the next word unless it is an option; a
	// trailing operand goes to the last option left without one.
	type ulimitCmd struct {
		k   int
		arg string
		set bool
	}
	var cmds []ulimitCmd
	i := 1
	for ; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			i++
			break
		}
		if len(a) < 2 || a[0] != '-' {
			break
		}
	word:
		for ci := 1; ci < len(a); ci++ {
			c := a[ci]
			switch c {
			case 'S':
				soft = true
			case 'H':
				hard = true
			case 'a':
				all = true
			default:
				k := -1
				for j, res := range ulimitTable {
					if res.flag == c {
						k = j
					}
				}
				if k < 0 {
					r.errf("ulimit: -%c: invalid option", c)
					io.WriteString(r.stderr(), ulimitUsage+"\n")
					return 2
				}
				switch {
				case ci+1 < len(a):
					cmds = append(cmds, ulimitCmd{k, a[ci+1:], true})
					break word
				case i+1 < len(args) && !strings.HasPrefix(args[i+1], "-"):
					i++
					cmds = append(cmds, ulimitCmd{k, args[i], true})
					break word
				}
				cmds = append(cmds, ulimitCmd{k: k})
			}
		}
	}
	u := r.ulimits
	if u == nil {
		u = r.defaultUlimits()
	}
	show := func(k int, labelled bool) {
		v := u.soft[k]
		if hard && !soft {
			v = u.hard[k]
		}
		s := "unlimited"
		if v >= 0 {
			s = strconv.FormatInt(v, 10)
		}
		if labelled {
			r.outf("%s %s\n", ulimitTable[k].label, s)
		} else {
			r.outf("%s\n", s)
		}
	}
	if all {
		for k := range ulimitTable {
			show(k, true)
		}
		return 0
	}
	if len(cmds) == 0 {
		cmds = []ulimitCmd{{k: 4}} // -f
	}
	if i < len(args) && !cmds[len(cmds)-1].set {
		cmds[len(cmds)-1].arg, cmds[len(cmds)-1].set = args[i], true
	}
	// a value set without -S or -H sets both; a query reads the soft one
	setSoft, setHard := soft || !hard, hard || !soft
	for _, c := range cmds {
		if !c.set {
			show(c.k, len(cmds) > 1)
			continue
		}
		if st := r.setUlimit(u, c.k, c.arg, setSoft, setHard); st != 0 {
			return st
		}
		u = r.ulimits
	}
	return 0
}

// setUlimit sets resource k's soft and/or hard value from arg.
func (r *runner) setUlimit(u *ulimits, k int, arg string, soft, hard bool) int {
	var v int64
	switch arg {
	case "unlimited":
		v = -1
	case "soft":
		v = u.soft[k]
	case "hard":
		v = u.hard[k]
	default:
		n, err := strconv.ParseInt(arg, 10, 64)
		if err != nil || n < 0 {
			r.errf("ulimit: %s: invalid number", arg)
			return 1
		}
		v = n
	}
	res := ulimitTable[k]
	less := func(a, b int64) bool { return b < 0 && a >= 0 || a >= 0 && b >= 0 && a < b } // a < b, -1 as infinity
	newSoft, newHard := u.soft[k], u.hard[k]
	if soft {
		newSoft = v
	}
	if hard {
		newHard = v
	}
	switch {
	case res.fixed && (newSoft != u.soft[k] || newHard != u.hard[k]):
		r.errf("ulimit: %s: cannot modify limit: Invalid argument", res.name())
		return 1
	case less(u.hard[k], newHard) && r.sh.cfg.Uid != 0:
		r.errf("ulimit: %s: cannot modify limit: Operation not permitted", res.name())
		return 1
	case less(newHard, newSoft):
		r.errf("ulimit: %s: cannot modify limit: Invalid argument", res.name())
		return 1
	}
	nu := *u // copied on write: a subshell's change stays its own
	nu.soft[k], nu.hard[k] = newSoft, newHard
	r.ulimits = &nu
	return 0
}
