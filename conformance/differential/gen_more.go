package differential

import (
	"fmt"
	"strings"
)

// Producers for bash features the first rounds did not generate (issue 23,
// round 3): mapfile, printf -v and its bash-only conversions, ${x@op}
// transformations and ${!prefix*}, case fall-through, C-style loops with
// break/continue N, nounset, xtrace, the call stack, the directory stack,
// command lookup builtins, let and arithmetic corners, attributes inside
// functions, positional parameters, exit/return in subshells and traps,
// background jobs, ANSI-C quoting and echo, regex matches, read's options,
// brace expansion, here-documents, shopt interplay, named fds, $_ and $-,
// and commands run through exec/env/command. Everything is deterministic:
// no pids, times (strftime gets fixed epochs, TZ=UTC), $RANDOM or host
// limits; jobs are waited for before anything prints their state.

// moreFeatures are this round's producers, in the order Features lists them.
var moreFeatures = []string{
	"mapfile", "printfv", "transform", "casefall", "cloop", "nounset", "xtrace",
	"callstack", "dirstack", "lookup", "letarith", "fnattr", "setpos", "exitsub",
	"bgjobs", "ansic", "regex", "readopts", "brace2", "heredoc2", "shopts",
	"namedfd", "specialvars", "extcmd",
}

func (g *gen) moreStmt(f string) (string, bool) {
	p, ok := map[string]func() string{
		"mapfile": g.mapfileStmt, "printfv": g.printfvStmt, "transform": g.transformStmt,
		"casefall": g.casefallStmt, "cloop": g.cloopStmt, "nounset": g.nounsetStmt,
		"xtrace": g.xtraceStmt, "callstack": g.callstackStmt, "dirstack": g.dirstackStmt,
		"lookup": g.lookupStmt, "letarith": g.letarithStmt, "fnattr": g.fnattrStmt,
		"setpos": g.setposStmt, "exitsub": g.exitsubStmt, "bgjobs": g.bgjobsStmt,
		"ansic": g.ansicStmt, "regex": g.regexStmt, "readopts": g.readoptsStmt,
		"brace2": g.brace2Stmt, "heredoc2": g.heredoc2Stmt, "shopts": g.shoptsStmt,
		"namedfd": g.namedfdStmt, "specialvars": g.specialvarsStmt, "extcmd": g.extcmdStmt,
	}[f]
	if !ok {
		return "", false
	}
	return p(), true
}

// lines is input for mapfile and read: a few short records.
func (g *gen) lines() string {
	return g.pick("'a\\nb\\nc\\n'", "'one\\ntwo\\n\\nfour'", "'x y\\n z\\n'", "'1\\n2\\n3\\n4\\n5\\n6\\n'", "''", "'\\n\\n'", "'a:b:c:'", "'l1\\nl2'")
}

func (g *gen) mapfileStmt() string {
	cmd := g.pick("mapfile", "readarray")
	var opts []string
	if g.r.IntN(2) == 0 {
		opts = append(opts, "-t")
	}
	if g.r.IntN(3) == 0 {
		opts = append(opts, "-d "+g.pick("':'", "''", "' '", "x"))
	}
	if g.r.IntN(3) == 0 {
		opts = append(opts, "-n "+g.pick("0", "1", "2", "-1", "x"))
	}
	if g.r.IntN(3) == 0 {
		opts = append(opts, "-O "+g.pick("0", "2", "5", "-1"))
	}
	if g.r.IntN(3) == 0 {
		opts = append(opts, "-s "+g.pick("0", "1", "3"))
	}
	show := g.pick("declare -p arr", "echo ${#arr[@]}; printf '<%s>' \"${arr[@]}\"; echo")
	arr := g.pick("arr", "arr", "")
	if arr == "" {
		show = strings.ReplaceAll(show, "arr", "MAPFILE")
	}
	o := strings.Join(opts, " ")
	switch g.r.IntN(6) {
	case 0:
		return fmt.Sprintf("%s -t -C 'echo cb' -c %s arr < <(printf %s); echo $?; declare -p arr", cmd, g.pick("1", "2", "0"), g.lines())
	case 1:
		return fmt.Sprintf("arr=(old1 old2 old3); %s %s arr < <(printf %s); echo $?; declare -p arr", cmd, o, g.lines())
	case 2:
		return fmt.Sprintf("printf %s | { %s %s %s; echo $?; %s; }", g.lines(), cmd, o, arr, show)
	case 3:
		return fmt.Sprintf("printf %s > mf; %s %s %s < mf; echo $?; %s", g.lines(), cmd, o, arr, show)
	case 4:
		return fmt.Sprintf("%s %s %s <<< %s; echo $?; %s", cmd, o, arr, quoteWord(g.word()), show)
	default:
		return fmt.Sprintf("printf %s > mf; exec 3<mf; %s -u 3 %s %s; echo $?; exec 3<&-; %s", g.lines(), cmd, o, arr, show)
	}
}

func (g *gen) printfvStmt() string {
	w := g.special()
	epoch := g.pick("0", "86399", "1000000000", "1700000000", "-1", "951782400")
	tf := g.pick("%Y-%m-%d", "%H:%M:%S", "%s", "%a %b %e", "%j %U %u", "%F %T", "%D", "%%", "%y%m%d", "%I %p", "%C %G %V", "")
	switch g.r.IntN(8) {
	case 0:
		return fmt.Sprintf("printf -v x '%%s|%%s' %s %s; echo \"[$x]\" $?", w, quoteWord(g.word()))
	case 1:
		return fmt.Sprintf("printf -v 'arr[%s]' '%%q' %s; declare -p arr", g.pick("0", "2", "k"), w)
	case 2:
		return fmt.Sprintf("printf '%%q\\n' %s %s", w, g.special())
	case 3:
		return fmt.Sprintf("printf '%%b|' %s; echo", g.pick("'a\\tb'", "'\\0101'", "'\\x41\\c tail'", "'\\u00e9'", "'x\\\\y'", "'\\e[0m'", "'a\\nb'", "'\\101\\'"))
	case 4:
		return fmt.Sprintf("printf '%%(%s)T\\n' %s", tf, epoch)
	case 5:
		return fmt.Sprintf("printf -v x '%%(%s)T' %s; echo \"$x\"", tf, epoch)
	case 6:
		return fmt.Sprintf("printf -v %s x; echo $?", g.pick("1x", "'a b'", "''", "x[", "-", "ok"))
	default:
		return fmt.Sprintf("printf '%%s %%q %%b\\n' %s %s %s", w, w, g.pick("'\\t'", "'\\\\'", "%", "'\\x'"))
	}
}

func (g *gen) transformStmt() string {
	op := g.pick("Q", "E", "P", "A", "a", "U", "u", "L", "K", "k")
	switch g.r.IntN(6) {
	case 0:
		return fmt.Sprintf("x=%s; printf '<%%s>\\n' \"${x@%s}\"", g.special(), op)
	case 1:
		return fmt.Sprintf("arr=(%s %s); printf '<%%s>' \"${arr[@]@%s}\" \"${arr[*]@%s}\"; echo", g.special(), g.special(), op, op)
	case 2:
		// One key: warren lists keys sorted, bash in hash order (docs/shell.md).
		return fmt.Sprintf("declare -A m=([k]=%s); printf '<%%s>' \"${m[@]@%s}\"; echo", g.special(), op)
	case 3:
		return fmt.Sprintf("%s x=%s; echo \"${x@a}\" \"${x@A}\"", g.pick("declare -i", "declare -r", "declare -x", "declare -l", "declare -u", "declare -a", "readonly", "export"), g.pick("3", "Ab", "'x y'"))
	case 4:
		return fmt.Sprintf("pre_a=1 pre_b=2 prex=3 other=4; echo ${!pre%s}; for v in \"${!pre%s}\"; do echo $v; done", g.pick("*", "@", "_*", "_@"), g.pick("*", "@"))
	default:
		return fmt.Sprintf("set -- %s %s; printf '<%%s>' \"${@@%s}\" \"${unset_v@%s}\"; echo", g.special(), g.special(), op, op)
	}
}

func (g *gen) casefallStmt() string {
	term := func() string { return g.pick(";;", ";&", ";;&") }
	return fmt.Sprintf("case \"$%s\" in %s) echo one%s %s|%s) echo two%s %s) echo three%s *) echo other%s esac; echo $?",
		g.v(), g.pattern(), term(), g.pattern(), g.pattern(), term(), g.pattern(), term(), term())
}

func (g *gen) cloopStmt() string {
	n := g.pick("1", "2", "3")
	switch g.r.IntN(6) {
	case 0:
		return fmt.Sprintf("for ((i=0; i<4; i++)); do for ((j=0; j<3; j++)); do (( j == %s )) && continue %s; (( i == 2 )) && break %s; echo $i$j; done; done; echo end $i", g.pick("0", "1", "2"), n, n)
	case 1:
		return "i=0; for ((;;)); do (( i++ >= " + g.pick("0", "2", "4") + " )) && break; echo $i; done; echo $i"
	case 2:
		return "for ((i=10, j=0; i>j; i-=" + g.pick("3", "4") + ", j++)); do echo $i $j; done"
	case 3:
		return "for i in a b; do while :; do echo $i; break " + g.pick("1", "2", "5", "0") + "; done; echo after $i; done; echo $?"
	case 4:
		return "for ((i=0; i<3; i++)); do continue " + g.pick("1", "2", "-1", "x") + "; echo no; done; echo $? $i"
	default:
		return "for (( i = " + g.pick("0", "5", "n") + " ; i < " + g.num() + " ; i += 2 )) ; do printf '%s,' $i; done; echo; for ((;0;)); do echo never; done; echo $?"
	}
}

func (g *gen) nounsetStmt() string {
	switch g.r.IntN(6) {
	case 0:
		return "( set -u; echo \"${unset_v" + g.pick("-d", ":-d", "+a", ":+a", "", "#x", "%x", "/a/b") + "}\"; echo after ) 2>/dev/null; echo $?"
	case 1:
		return "( set -u; arr=(); echo \"${arr[@]" + g.pick("", "-e") + "}\" ${#arr[@]}; echo after ) 2>/dev/null; echo $?"
	case 2:
		return "( set -u; echo $" + g.pick("1", "#", "@", "*", "9") + "; echo after ) 2>/dev/null; echo $?"
	case 3:
		return "( set -u; f() { echo ${1-none} $#; echo $2; echo after; }; f a ) 2>/dev/null; echo $?"
	case 4:
		return "( set -u; declare -A m; echo ${m[k]" + g.pick("", "-d") + "}; echo after ) 2>/dev/null; echo $?"
	default:
		return "( set -u; x=; echo \"<$x>\" \"${!x" + g.pick("*", "@") + "}\"; echo $((unset_v + 1)); echo after ) 2>/dev/null; echo $?"
	}
}

func (g *gen) xtraceStmt() string {
	ps4 := g.pick("", "PS4='> '; ", "PS4='+$LINENO: '; ", "PS4='[${#FUNCNAME[@]}] '; ")
	body := g.pick(
		"x="+quoteWord(g.word())+"; echo \"$x\"",
		"echo $(echo sub) done",
		"f() { local y=1; echo f$y; }; f a 'b c'",
		"for i in 1 2; do :; done",
		"[[ $a == h* ]]; (( n + 1 ))",
		"arr=(1 '2 3'); echo \"${arr[@]}\"",
		"case $a in x) echo x;; *) : other;; esac",
		"echo a | cat; true && false || :",
		"x=$'t\\tx' y='q\"q'; echo \"$x$y\"",
		"declare -i k=1+2; export E=1; cd . ; test -n x",
	)
	return "{ " + ps4 + "set -x; " + body + "; set +x; } 2>&1"
}

func (g *gen) callstackStmt() string {
	switch g.r.IntN(5) {
	case 0:
		return "f() { echo \"${FUNCNAME[@]}\" \"${#BASH_LINENO[@]}\"; }; g() { f; }; g"
	case 1:
		return "f() { caller " + g.pick("", "0", "1", "2") + " | sed 's/ [^ ]*$//'; echo $?; }; g() { f; }; g"
	case 2:
		return "echo $LINENO\nf() {\n  echo in $LINENO\n}\nf; echo $LINENO"
	case 3:
		return "f() { echo ${BASH_LINENO[0]} ${FUNCNAME[1]-none}; }\nf\n( f )\nx=$(f); echo $x"
	default:
		return "caller; echo $?; echo \"${FUNCNAME[@]-empty}\" ${#FUNCNAME[@]}"
	}
}

func (g *gen) dirstackStmt() string {
	// dirs prints paths under the fresh directory, which differs per run,
	// so only the last component and counts are compared.
	tail := " | sed 's,[^ ]*/,,g'"
	switch g.r.IntN(5) {
	case 0:
		return "pushd d >/dev/null; pushd e >/dev/null; dirs" + tail + "; popd >/dev/null; pwd | sed 's,.*/,,'; popd >/dev/null; dirs -v | wc -l"
	case 1:
		return "( pushd " + g.pick("nope", "", "+1", "-1", "-x") + " >/dev/null; echo $? ) 2>/dev/null"
	case 2:
		return "( popd " + g.pick("", "+1", "-0", "x") + "; echo $? ) 2>/dev/null"
	case 3:
		return "( pushd d >/dev/null; pushd -n .. >/dev/null; dirs -p" + tail + "; dirs -l +1" + tail + "; dirs -c; dirs" + tail + " )"
	default:
		return "( pushd d >/dev/null; pushd " + g.pick("+1", "-0", "+0") + " >/dev/null; echo $?; pwd | sed 's,.*/,,'; echo ${#DIRSTACK[@]} ${DIRSTACK[0]##*/} )"
	}
}

func (g *gen) lookupStmt() string {
	name := g.pick("echo", "cd", "ls", "nosuch_x", "f", "if", "ll", "printf", "sed", "type", "[[", "cat")
	pre := "shopt -s expand_aliases; alias ll='ls -l'; f() { :; }; "
	switch g.r.IntN(6) {
	case 0:
		return pre + "command -v " + name + "; echo $?"
	case 1:
		return pre + "command -V " + name + " 2>/dev/null | head -1; echo ${PIPESTATUS[0]}"
	case 2:
		return pre + "type -t " + name + "; echo $?"
	case 3:
		return pre + "type -" + g.pick("a", "P", "p", "f", "tP") + " " + name + " 2>/dev/null | head -3; echo ${PIPESTATUS[0]}"
	case 4:
		return g.pick("hash; echo $?", "hash -r; echo $?", "hash nosuch_x; echo $?", "hash -t nosuch_x; echo $?", "hash -d nosuch_x; echo $?") + " 2>/dev/null"
	default:
		return pre + "command " + g.pick("-p echo hi", "f; echo $?", "ll 2>/dev/null; echo $?", "nosuch_x 2>/dev/null; echo $?", "-v -p cat") + "; echo $?"
	}
}

func (g *gen) letarithStmt() string {
	switch g.r.IntN(9) {
	case 0:
		return "echo $(( " + g.pick("2**0", "2**63", "3**-1", "(-2)**3", "0**0", "2**62*2") + " )) 2>&1 | sed 's/^.*: //'"
	case 1:
		return "echo $(( " + g.pick("2#101", "16#ff", "36#Zz", "64#@_", "8#17", "2#2", "1#1", "65#1", "0b1", "0777", "09") + " )) 2>/dev/null; echo $?"
	case 2:
		return "echo $(( " + g.pick("9223372036854775807 + 1", "-9223372036854775808 / -1", "-9223372036854775808 % -1", "1 << 64", "1 << -1", "9223372036854775807 * 3") + " ))"
	case 3:
		return "( echo $(( " + g.pick("5 / 0", "5 % 0", "x /= 0") + " )); echo after ) 2>&1 | sed 's/^[^:]*: line [0-9]*: //'; echo ${PIPESTATUS[0]}"
	case 4:
		return "x=1; echo $(( x++, x++, x )) $(( x = x > 2 ? x * 2 : -x )) $x"
	case 5:
		return "a=(1 2 3); (( a[1]++, ++a[2], a[0] += 5 )); echo ${a[@]} $(( a[1]-- )) ${a[1]}"
	case 6:
		return "let " + g.pick("x=2**3 y=x+1", "'x = 1, y = x << 3'", "x++ x++", "0", "'1 ? 0 : 1'", "x=010 y=0x10", "x= ") + " 2>/dev/null; echo $? ${x-} ${y-}"
	case 7:
		return "x=3; (( x " + g.pick("**=", ">>=", "&=", "|=", "^=", "%=") + " 2 )) 2>/dev/null; echo $? $x"
	default:
		return "declare -i i=" + g.pick("'2 + 3'", "'x'", "07", "'1,2'") + " 2>/dev/null; x=4; i+=x; echo $i; i=i*2; echo $i"
	}
}

func (g *gen) fnattrStmt() string {
	switch g.r.IntN(7) {
	case 0:
		return "f() { local -; set -" + g.pick("f", "u", "e", "C") + "; echo $- | tr -cd fueC; echo; }; f; echo $- | tr -cd fueC; echo"
	case 1:
		return "f() { declare -i x=" + g.pick("1+2", "'a'", "3*3") + "; x+=1; echo $x; }; f; echo ${x-unset}"
	case 2:
		return "f() { declare -" + g.pick("l", "u") + " x=" + quoteWord(g.word()) + "; x+=" + g.pick("Mix", "eD") + "; echo \"$x\"; }; f"
	case 3:
		return "f() { declare -r ro=1; ro=2; echo in $?; }; f 2>/dev/null; echo out $? ${ro-unset}"
	case 4:
		return "f() { declare -g" + g.pick("", "i", "a", "x") + " gx=" + g.pick("5", "'(1 2)'", "v") + "; local gx=l; echo $gx; }; f; declare -p gx"
	case 5:
		return "x=outer; f() { local x; declare -p x 2>&1 | sed 's/^.*: //'; local x=$x; echo \"<$x>\"; }; f"
	default:
		return "f() { local -a a=(1 2); local -A m=([k]=v); local -i i=2*3; local -l l=ABC; declare -p a m i l; }; f; declare -p a 2>/dev/null; echo $?"
	}
}

func (g *gen) setposStmt() string {
	switch g.r.IntN(6) {
	case 0:
		return "set -- a b c; shift " + g.pick("0", "1", "3", "4", "-1", "x", "1 2") + " 2>/dev/null; echo $? $# \"$*\""
	case 1:
		return "set -- " + g.wlist() + "; set -- \"$@\" end; echo $#; printf '<%s>' \"$@\"; echo"
	case 2:
		return "set -- a b; set --; echo $# \"${1-none}\"; set -- -x -v; echo $# \"$1\"; set -"
	case 3:
		return "f() { set -- \"$@\" x; shift; echo $# \"$@\"; }; set -- p q; f a b; echo \"$@\""
	case 4:
		return "set -- 1 2 3 4 5 6 7 8 9 10 11; echo ${11} ${@: -2} ${*:3:2} \"${@:1:1}\""
	default:
		return "set -- a 'b c'; for x; do echo \"<$x>\"; done; set -- \"${@:2}\"; echo $#"
	}
}

func (g *gen) exitsubStmt() string {
	st := g.pick("0", "3", "255", "256", "", "-1")
	switch g.r.IntN(7) {
	case 0:
		return "( exit " + st + " ); echo $?"
	case 1:
		return "x=$(echo out; exit " + st + "; echo no); echo \"$x\" $?"
	case 2:
		return "( trap 'echo trap $?; exit " + g.pick("7", "") + "' EXIT; exit " + st + " ); echo $?"
	case 3:
		return "f() { ( return " + st + " ); echo sub $?; return 4; }; f; echo $?"
	case 4:
		return "( return 2 ) 2>/dev/null; echo $?; ( trap 'return 5' EXIT; : ) 2>/dev/null; echo $?"
	case 5:
		return "f() { trap 'echo t; return 6' " + g.pick("USR1", "RETURN") + "; kill -USR1 $BASHPID 2>/dev/null; echo after; }; ( f; echo $? )"
	default:
		// true, not echo: a writer into a stage that exits may or may not
		// get SIGPIPE (141), as the scheduler has it.
		return "true | ( exit " + st + " ); echo $? ${PIPESTATUS[@]}; ( false; exit ); echo $?"
	}
}

func (g *gen) bgjobsStmt() string {
	switch g.r.IntN(6) {
	case 0:
		return "( exit " + g.pick("0", "3", "7") + " ) & wait $!; echo $?"
	case 1:
		return "f() { return " + g.pick("2", "5") + "; }; f & f & wait; echo $?"
	case 2:
		return "( exit 4 ) & wait -n; echo $?; wait -n 2>/dev/null; echo $?"
	case 3:
		// sleep must not hold the harness's stdout open; jobs runs in the
		// shell itself (its output in a pipeline is a subshell's view).
		return "sleep 5 >/dev/null & jobs > jo; sed 's/ \\{2,\\}/ /g' jo; kill %1; wait %1; echo $?; jobs"
	case 4:
		return "echo bg > bgo & wait; cat bgo; [ -n \"$!\" ]; echo $?; wait 99999 2>/dev/null; echo $?"
	default:
		return "{ echo x; exit 3; } & wait $!; echo $?; x=1; { x=2; } & wait; echo $x"
	}
}

func (g *gen) ansicStmt() string {
	esc := g.pick("\\t", "\\n", "\\x41", "\\101", "\\u00e9", "\\U0001F600", "\\e", "\\cA", "\\'", "\\\"", "\\?", "\\z", "\\x", "\\0", "\\c?", "\\x4g", "\\u", "\\1234")
	switch g.r.IntN(4) {
	case 0:
		return "x=$'a" + esc + "b'; printf '%s' \"$x\" | od -An -tx1 | tr -s ' '"
	case 1:
		return "echo " + g.pick("-e", "-E", "-n", "-ne", "-en", "-eE", "-Ee", "-e -n", "-x", "--", "-") + " 'a\\tb" + g.pick("\\c", "\\n", "\\0101", "\\x41", "\\\\", "\\e", "") + "z'; echo"
	case 2:
		return "shopt -s xpg_echo; echo 'a\\tb\\n'; shopt -u xpg_echo; echo 'a\\tb'"
	default:
		return "printf '%s|' $'" + esc + "' \"$'x'\" $\"y\"; echo"
	}
}

func (g *gen) regexStmt() string {
	re := g.pick("^(a+)(b*)$", "([a-z]+)@([a-z]+)", "'a.b'", "a\\.b", "\"(x)\"(y)", "^[[:digit:]]+$", "(a|b)+", "x*", "^h(el)+o", "$re", "'('", "[[:space:]]", "(((a)))")
	subj := g.pick("aab", "me@host", "a.b", "axb", "(x)y", "123", "abba", "", "hello", "helelo", "a b")
	return fmt.Sprintf("re='(e)(l+)'; [[ %s =~ %s ]]; echo $?; declare -p BASH_REMATCH 2>/dev/null | sed 's/^declare -a //'", quoteWord(subj), re)
}

func (g *gen) readoptsStmt() string {
	in := quoteWord(g.pick("ab cd ef", "a\\ b c", " lead  trail ", "x:y:z", "abc\ndef", "", "ünï日本", "a\tb\tc"))
	switch g.r.IntN(6) {
	case 0:
		return "read " + g.pick("-d :", "-d ''", "-d x", "-rd :") + " x y <<< " + in + "; echo $? \"<$x|$y>\""
	case 1:
		return "read " + g.pick("-n 2", "-n 0", "-N 3", "-N 20", "-rn 4", "-n 1") + " x <<< " + in + "; echo $? \"<$x>\""
	case 2:
		return "read -a arr" + g.pick("", " -r", " -d ''") + " <<< " + in + "; echo $?; declare -p arr"
	case 3:
		return "IFS=" + g.pick(":", "' :'", "''", "$'\\t'") + " read -r" + g.pick("", "a") + " x y <<< " + in + "; echo \"<$x|${y-}>\"; unset IFS"
	case 4:
		return "read -r <<< " + in + "; echo \"<$REPLY>\"; read x <<< " + in + "; echo \"<$x>\""
	default:
		return "printf " + in + " | { read " + g.pick("-N 2", "-n 3", "-d b", "") + " x; echo $? \"<$x>\"; read -r y; echo $? \"<$y>\"; }"
	}
}

func (g *gen) brace2Stmt() string {
	return "echo " + g.pick("{a..z..3}", "{01..10}", "{1..10..-3}", "{-3..3}", "{a..C}", "{Z..a}", "{0..-5..2}",
		"x{a,b{1..3},c}y", "{a,b}{,-}{1,2}", "pre{A..C}post", "{1..2}{a..b}", "{,}", "{a}", "{a,}", "{007..10}", "{-05..5..5}",
		"{a..e..0}", "{1...3}", "\\{a,b}", "{\"a b\",c}", "{a,b\\,c}", "$a{1,2}", "{$n..3}", "a{b,c}d{e,f}g", "{x..x}", "{1..1..9}")
}

func (g *gen) heredoc2Stmt() string {
	switch g.r.IntN(6) {
	case 0:
		return "cat <<-EOF\n\t\tindented $n\n  spaces stay\n\t\tEOF"
	case 1:
		return "cat <<-'E O'\n\t$a `x`\n\tE O"
	case 2:
		return "cat <<< " + g.pick("$a", "\"$a $b\"", "''", "$(printf 'x\\n\\n')", "a\\ b", "'multi\nline'") + " | od -c | sed 's/^[0-9]* *//' | head -3"
	case 3:
		return "x=$(cat <<EOF\n${" + g.v() + "^^} \\\\ \\$ \\` \"q\"\nEOF\n); echo \"$x\""
	case 4:
		return "f() { cat <<EOF; }\nin f $1\nEOF\nf arg; f"
	default:
		return "cat <<E1 - <<E2\none\nE1\ntwo\nE2"
	}
}

func (g *gen) shoptsStmt() string {
	switch g.r.IntN(6) {
	case 0:
		return "( shopt -s lastpipe; set +m; echo piped | read -r v; echo \"<$v>\" )"
	case 1:
		return "( shopt -s nocasematch; [[ ABC == a* ]]; echo $?; case XyZ in xyz) echo ci;; *) echo cs;; esac; [[ ABC =~ ^ab ]]; echo $? )"
	case 2:
		return "( shopt -s nullglob; arr=(nomatch*); echo ${#arr[@]}; ls nomatch* 2>/dev/null | wc -l; echo *.zzz end )"
	case 3:
		return "( shopt -s nullglob failglob; echo nomatch*; echo $? ) 2>/dev/null; echo $?"
	case 4:
		return "( shopt -s nocaseglob nullglob; echo F*.TXT D; shopt nocaseglob nullglob )"
	default:
		return "( shopt -u expand_aliases; alias e='echo al'; e 2>/dev/null; echo $?; shopt -s expand_aliases\neval e; shopt -p expand_aliases lastpipe )"
	}
}

func (g *gen) namedfdStmt() string {
	switch g.r.IntN(5) {
	case 0:
		return "exec {fd}>nf; echo " + quoteWord(g.word()) + " >&$fd; exec {fd}>&-; cat nf"
	case 1:
		return "printf 'l1\\nl2\\n' > nf; exec {rd}<nf; read -r x <&$rd; read -r y <&$rd; exec {rd}<&-; echo \"$x $y\""
	case 2:
		return "exec {a}>nf {b}>nf2; [ $a -ne $b ]; echo $?; echo A >&$a; echo B >&$b; exec {a}>&- {b}>&-; cat nf nf2"
	case 3:
		return "{ echo in >&$o; } {o}>nf; cat nf; echo ${o+set}"
	default:
		return "exec {fd}>nf; exec {fd}>&-; echo x >&$fd 2>/dev/null; echo $?"
	}
}

func (g *gen) specialvarsStmt() string {
	switch g.r.IntN(5) {
	case 0:
		return "echo " + quoteWord(g.word()) + " last; echo \"$_\""
	case 1:
		return "true a b; x=$_; echo \"$x\"; f() { echo \"$_\"; }; f one two; echo \"$_\""
	case 2:
		return "echo $- | tr -cd 'aefhuvxBCH'; echo; set -" + g.pick("f", "u", "a", "C") + "; echo $- | tr -cd 'aefhuvxBCH'; echo; set +" + g.pick("f", "u", "a", "C")
	case 3:
		return "( set -e -u; echo $- | tr -cd 'eu'; echo ); bash -c 'echo $-' | tr -cd 'hBc'; echo"
	default:
		return "for i in p q; do :; done; echo \"$_\"; [ -n x ]; echo \"$_\"; : \"$a\"; echo \"$_\""
	}
}

func (g *gen) extcmdStmt() string {
	how := g.pick("exec", "env", "command", "env --", "\\command", "command -p")
	var c string
	switch g.r.IntN(5) {
	case 0:
		c = "printf '%q|' " + g.special()
	case 1:
		c = "printf -v x y"
	case 2:
		c = "printf '%b|%s\\n' 'a\\tb' " + g.special()
	case 3:
		c = "echo -e 'a\\tb'"
	default:
		c = "printf '%(%Y)T\\n' 0"
	}
	if strings.HasPrefix(how, "exec") {
		return "( " + how + " " + c + " ) 2>/dev/null; echo $?"
	}
	return how + " " + c + " 2>/dev/null; echo $?"
}
