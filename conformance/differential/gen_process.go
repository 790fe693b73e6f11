package differential

import (
	"fmt"
	"strings"
)

// Producers for the shell's process environment, where warren was weakest
// (issue 23): exec and exit forms, time/times, ulimit, umask applied to
// created files, ERR traps with set -e exemptions, and bash invoked as a
// command. Each statement runs its state changes in a subshell (or undoes
// them) so the statements after it see the preamble's shell; nothing reads
// the script's own stdin (bash reads the script from there), and error
// messages stay on stderr (their text, which names the shell, is not
// compared).

func (g *gen) fd() string { return g.pick("3", "4", "5", "7", "9") }

// execStmt: exec with only redirections (fds opened, moved and closed),
// exec replacing the subshell, its options, and exit's argument handling.
func (g *gen) execStmt() string {
	fd, f := g.fd(), g.pick("o1", "o2")
	w := quoteWord(g.word())
	switch g.r.IntN(12) {
	case 0:
		return fmt.Sprintf("exec %s>%s; echo %s >&%s; exec %s>&-; cat %s", fd, f, w, fd, fd, f)
	case 1:
		return fmt.Sprintf("( exec >%s; echo %s; echo e >&2 ) 2>/dev/null; cat %s", f, w, f)
	case 2:
		return "( exec 2>/dev/null; " + g.pick("ls nope", "cat nope", "cd nope", "nosuchcmd_x") + "; echo $? )"
	case 3:
		return fmt.Sprintf("printf 'l1\\nl2\\n' > in; exec %s<in; read -r x <&%s; read -r y <&%s; echo \"$x $y\"; exec %s<&-", fd, fd, fd, fd)
	case 4:
		return g.pick(
			"( exec -- echo "+w+" ); echo $?",
			"( exec printf '<%s>' "+w+"; echo never ); echo $?",
			"( exec nosuchcmd_x ); echo $?",
			"( exec -a NAME bash -c 'echo $0' ); echo $?",
			"( exec -l bash -c 'echo $0' )",
			"( exec -c printenv PATH ); echo $?",
			"exec; echo $?",
			"exec 2>&2; echo $?",
		)
	case 5:
		// A variable names the fd bash picks (10 or above): the value
		// itself is bash's choice, so only its use is compared.
		return fmt.Sprintf("exec {v}>%s; echo %s >&$v; exec {v}>&-; cat %s; [ \"$v\" -ge 10 ]; echo $?", f, w, f)
	case 6:
		return fmt.Sprintf("exec %s<>rw; echo %s >&%s; exec %s>&-; cat rw", fd, w, fd, fd)
	case 7:
		return fmt.Sprintf("echo x >&%s; echo $?", fd)
	case 8:
		return fmt.Sprintf("( exec %s>&1 1>%s; echo file; echo term >&%s ); cat %s", fd, f, fd, f)
	case 9:
		return fmt.Sprintf("f() { exec %s>fo; echo inf >&%s; }; f; echo after >&%s; exec %s>&-; cat fo", fd, fd, fd, fd)
	case 10:
		return fmt.Sprintf("( exec %s>%s; ( echo sub >&%s ); echo main >&%s ); cat %s", fd, f, fd, fd, f)
	default:
		arg := g.pick("abc", "1 2", "256", "-1", "3.5", "''", "' 4'", "0x10", "08", "+3", "-- 5", "1 2 3", "", "$n")
		return g.pick(
			"( exit "+arg+" ); echo $?",
			"( exit "+arg+"; echo still ); echo $?",
			"( false; exit "+arg+" ); echo $?",
			"( trap 'echo t $?' EXIT; exit "+arg+" ); echo $?",
			"f() { exit "+arg+"; }; ( f; echo no ); echo $?",
			"( exit "+arg+" ) 2>/dev/null; echo $?",
		)
	}
}

// timeStmt: the time keyword and times builtin, their digits normalized
// (sed) or their output discarded, so only formats and statuses compare.
func (g *gen) timeStmt() string {
	cmd := g.pick("true", "sleep 0", "( exit 3 )", "echo hi", "false | true", "f1() { :; }; f1")
	norm := " 2>&1 | sed 's/[0-9][0-9]*/N/g'"
	switch g.r.IntN(7) {
	case 0:
		fm := g.pick("''", "'x%%y'", "'%R'", "'%3R'", "'%lR'", "'%P'", "'r=%2R u=%U'", "'%0R'", "$'a\\tb %R'", "'%S %%'")
		return "TIMEFORMAT=" + fm + "; { time " + cmd + "; }" + norm + "; unset TIMEFORMAT"
	case 1:
		return "{ time -p " + cmd + "; }" + norm
	case 2:
		return "{ time " + cmd + "; } 2>/dev/null; echo $?"
	case 3:
		return g.pick("times | sed 's/[0-9][0-9]*/N/g'", "times >/dev/null; echo $?", "{ time; }"+norm)
	case 4:
		return "f() { time -p " + cmd + "; }; f 2>/dev/null; echo $?"
	case 5:
		return g.pick("{ time ! true; } 2>/dev/null; echo $?", "{ time -p -- true; } 2>/dev/null; echo $?", "{ time -- true; } 2>/dev/null; echo $?")
	default:
		return "{ time " + cmd + "; }" + norm
	}
}

// ulimitStmt: only limits the script set itself are printed (the host's
// own are not the same everywhere); the effects compared are the file
// size limit on a write and the descriptor limit on an open.
func (g *gen) ulimitStmt() string {
	sh := g.pick("", "-S ", "-H ")
	switch g.r.IntN(8) {
	case 0, 1:
		l := g.pick("-f", "-n", "-c", "-t", "-v", "-s")
		val := g.pick("0", "16", "64", "1024", "unlimited", "abc", "-1", "99999999999", "0x10", "''", "1.5")
		switch l {
		case "-n":
			val = g.pick("16", "64", "1024", "unlimited", "abc", "99999999999", "0x10", "''")
		case "-t":
			val = g.pick("10", "100", "unlimited", "abc", "-1")
		case "-v", "-s":
			val = g.pick("8192000", "unlimited", "abc", "-1")
		}
		return fmt.Sprintf("( ulimit %s%s %s; echo $?; ulimit %s%s )", sh, l, val, sh, l)
	case 2:
		k, bytes := g.pick("1", "2", "4"), g.pick("100", "1024", "4096")
		return g.pick(
			"( ulimit -f "+k+"; head -c "+bytes+" /dev/zero > big ); echo $?; wc -c < big",
			"( ulimit -f "+k+"; printf '%"+bytes+"s' x > big; echo $? ); echo $?; wc -c < big",
		)
	case 3:
		l := g.pick("-n", "-f", "-c")
		return fmt.Sprintf("h=$(ulimit -H %s); s=$(ulimit -S %s); [ \"$h\" = unlimited ] || [ \"$h\" -ge \"$s\" ]; echo $?", l, l)
	case 4:
		return g.pick("( ulimit -S -n 32; ulimit -a | grep -c . )", "( ulimit -f 8 -n 40; ulimit -f -n )", "( ulimit 100; ulimit; ulimit -f )", "( ulimit -H -f 4; ulimit -f 8; echo $?; ulimit -H -f 8; echo $? )")
	case 5:
		return "( ulimit " + g.pick("-x", "-Z", "-f -1", "-n 1 2", "-q", "--") + " ); echo $?"
	case 6:
		return fmt.Sprintf("( ulimit -n %s; exec %s>of; echo $? ) 2>/dev/null", g.pick("4", "6", "8", "12"), g.fd())
	default:
		return fmt.Sprintf("( ulimit -H -n %s; ulimit -S -n %s; echo $?; ulimit -n )", g.pick("64", "128"), g.pick("32", "64", "256"))
	}
}

// umaskStmt: umask set octally, symbolically or wrongly, printed each way,
// and its effect on what redirections and commands create (stat's modes,
// and the modes of the files left behind, which the harness compares).
func (g *gen) umaskStmt() string {
	mode := g.pick(
		"000", "002", "007", "022", "027", "077", "277", "777", "0022", "22", "7",
		"u=rwx,g=rx,o=", "g+w", "o-rwx", "a=", "ug=rwx,o=rx", "go-x", "u-w", "a+r", "=", "+x", "o=u", "g=u-w",
		"089", "8", "u=q", "u+s", "x=r", "abc", "-1",
	)
	n := g.pick("um1", "um2")
	create := g.pick(
		"echo x > "+n, "touch "+n, "mkdir "+n, "mkdir -p "+n+"/sub", ": >> "+n, "cp f1.txt "+n,
		"printf x | tee "+n+" >/dev/null", "mkdir -m 700 "+n, "exec 3>"+n+"; exec 3>&-",
		"sed 's/x/y/' f1.txt > "+n, "cat f1.txt >| "+n, "ln -s f1.txt "+n,
	)
	switch g.r.IntN(6) {
	case 0:
		return g.pick(
			"( umask 077; touch um; ls -l um | cut -c1-10 )",
			"( umask 022; mkdir umd; ls -ld umd | cut -c1-10 )",
			"( umask 027; umask; umask -S )",
		)
	case 1, 2:
		return fmt.Sprintf("( umask %s; echo $?; umask; %s; stat -c '%%a %%n' %s )", mode, create, n)
	case 3:
		return fmt.Sprintf("( umask %s; umask -S; umask -p; umask -S -p )", mode)
	case 4:
		return fmt.Sprintf("( umask %s; %s; umask %s; %s; ls -ld %s | cut -c1-10 )", g.pick("022", "077", "002"), create, mode, strings.ReplaceAll(create, n, n+"b"), n+"b")
	default:
		return fmt.Sprintf("( umask %s; mkdir -p p/q; : > p/q/f; stat -c '%%a %%n' p p/q p/q/f )", mode)
	}
}

// errtrapStmt: an ERR trap with and without set -E/-e over bodies that do
// and do not trigger it (the set -e exemptions: tested conditions, && and
// || lists but the last, !, functions called in a tested context).
func (g *gen) errtrapStmt() string {
	opts := g.pick("", "set -E; ", "set -e; ", "set -eE; ", "set -o errtrace; ", "shopt -s inherit_errexit; set -e; ")
	action := g.pick("echo ERR $?", "echo \"cmd: $BASH_COMMAND\"", "echo \"ERR at $LINENO\"", "echo \"${FUNCNAME[0]:-main} $?\"", "exit 3")
	parts := []string{
		"false", "f() { false; echo inf; }; f", "f() { false; echo inf; }; f || echo caught",
		"if false; then :; fi", "false || true", "! false", "while false; do :; done", "false && true",
		"true && false", "x=$(false)", "(false)", "false | true", "set -o pipefail; false | true",
		"ls nope 2>/dev/null", "cmd=false; $cmd", "g() { return 2; }; g", "until false; do break; done",
		"{ false; }", "case x in x) false;; esac", "[[ -z x ]]", "(( 0 ))", "let 0", "[ 1 -eq 2 ]",
		"h() { local v=$(false); echo lv; }; h", "f() { false; echo inf; }; if f; then echo yes; fi",
		"y=$(false; echo in); echo \"[$y]\"", "trap -p ERR", "eval false", "for i in 1; do false; done",
	}
	var body []string
	for i, k := 0, 1+g.r.IntN(3); i < k; i++ {
		body = append(body, parts[g.r.IntN(len(parts))])
	}
	return fmt.Sprintf("( %strap '%s' ERR; %s; echo end ); echo $?", opts, strings.ReplaceAll(action, "'", `'\''`), strings.Join(body, "; "))
}

// invokeStmt: bash run as a command the way scripts run it: -c with a
// name and arguments, options, -n, -s, scripts run by path.
func (g *gen) invokeStmt() string {
	args := g.pick("", "a", "a 'b c'", "'' x", "-x y", "\"$a\" \"$b\"")
	switch g.r.IntN(9) {
	case 0, 1:
		cmd := g.pick("'echo $0 $1 $#'", "'printf \"<%s>\" \"$@\"; echo'", "'shift; echo \"$@\"'", "'echo \"$*\"'", "'exit 7'",
			"'echo ${BASH_ARGV0:-none}'", "'echo $-'", "'echo \"$BASH_EXECUTION_STRING\"'", "'f() { echo \"$0 $1\"; }; f x'",
			"'echo $SHLVL $BASH_SUBSHELL'", "'exit $1'")
		name := g.pick("", "name", "-", "--", "'my name'", "_")
		if name == "" {
			args = ""
		}
		return fmt.Sprintf("%s -c %s %s %s; echo $?", g.pick("bash", "bash", "sh"), cmd, name, args)
	case 2, 3:
		opts := g.pick("-e", "-u", "-o pipefail", "-eu", "-x", "-n", "+e", "-f", "-C", "-o errexit -o nounset", "-O extglob", "--norc --noprofile")
		cmd := g.pick("'false; echo no'", "'false | true; echo st $?'", "'echo $nope'", "'echo f*'", "'echo x > f1.txt'",
			"'set -o | grep -E \"^(errexit|nounset|pipefail|noglob|noclobber) \"'", "'shopt extglob'", "'echo $-'",
			"'f() { false; echo in; }; f || echo or'", "'echo ${1:-d}'")
		return fmt.Sprintf("bash %s -c %s 2>/dev/null; echo $?", opts, cmd)
	case 4:
		script := g.pick("'echo in $0 $# \"$1\"\\n'", "'if then\\n'", "'echo a; exit 3\\n'", "'#!/bin/bash\\necho \"$@\"\\n'",
			"'echo ${BASH_SOURCE[0]} $LINENO\\n'", "'set -e\\nfalse\\necho no\\n'")
		return g.pick(
			"printf "+script+" > s.sh; bash s.sh "+args+"; echo $?",
			"printf "+script+" > s.sh; chmod +x s.sh; ./s.sh "+args+"; echo $?",
			"printf "+script+" > s.sh; bash -n s.sh; echo $?",
			"printf "+script+" > s.sh; ( . ./s.sh "+args+" ); echo $?",
			"printf "+script+" > s.sh; sh s.sh "+args+"; echo $?",
		)
	case 5:
		src := g.pick("'echo $1 $# $0'", "'echo ok; if true; then echo x; fi'", "'if; then'", "'exit 4'", "'read -r l; echo \"[$l]\"'")
		return g.pick(
			"bash -s "+args+" <<< "+src+"; echo $?",
			"bash -n <<< "+src+"; echo $?",
			"echo "+src+" | bash -s "+args+"; echo $?",
		)
	case 6:
		return g.pick(
			"bash -c 'if'; echo $?", "bash -c 'echo ('; echo $?", "bash -c; echo $?", "bash --version | head -1 | cut -c1-14",
			"x=out; export y=exp; bash -c 'echo \"[$x][$y]\"'", "bash -c 'read -r l; echo got $l' <<< "+quoteWord(g.word()),
			"bash -c 'trap \"echo bye\" EXIT; exit 2'; echo $?", "bash -c \"echo \\$(( $n + 1 ))\"",
		)
	case 7:
		return "echo ${0##*/} $#"
	default:
		return fmt.Sprintf("bash -c 'exit $1' _ %s; echo $?", g.pick("0", "3", "255", "256", "-1", "abc"))
	}
}
