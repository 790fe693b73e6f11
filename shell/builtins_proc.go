package shell

// Builtins for the shell process's own attributes: umask and ulimit.

import (
	"strconv"
)

// biUmask prints the file creation mask (octal, or symbolic with -S) or
// sets it from an octal number; symbolic masks are not accepted.
func biUmask(r *runner, args []string) int {
	args = args[1:]
	sym := false
	if len(args) > 0 && args[0] == "-S" {
		sym = true
		args = args[1:]
	}
	if len(args) == 0 {
		if sym {
			m := ^r.umask & 0o777
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
			r.outf("u=%s,g=%s,o=%s\n", f(m>>6), f(m>>3&7), f(m&7))
			return 0
		}
		r.outf("%04o\n", r.umask)
		return 0
	}
	n, err := strconv.ParseUint(args[0], 8, 32)
	if err != nil {
		r.errf("umask: %s: octal number out of range", args[0])
		return 1
	}
	r.umask = uint32(n) & 0o777
	return 0
}

// biUlimit reports the sandbox's limits in ulimit's format: -u is MaxJobs,
// -t the run's Timeout, -a both among fixed values, anything else
// unlimited. The host sets the limits, so it never changes them.
func biUlimit(r *runner, args []string) int {
	lim := r.rs.lim
	all := len(args) > 1 && args[1] == "-a"
	if all {
		r.outf("core file size          (blocks, -c) 0\n")
		r.outf("file size               (blocks, -f) unlimited\n")
		r.outf("max user processes              (-u) %d\n", lim.MaxJobs)
		r.outf("stack size              (kbytes, -s) 8192\n")
		r.outf("cpu time               (seconds, -t) %d\n", int(lim.Timeout.Seconds()))
		return 0
	}
	if len(args) > 1 && args[1] == "-u" {
		r.outf("%d\n", lim.MaxJobs)
		return 0
	}
	if len(args) > 1 && args[1] == "-t" {
		r.outf("%d\n", int(lim.Timeout.Seconds()))
		return 0
	}
	r.out("unlimited\n")
	return 0
}
