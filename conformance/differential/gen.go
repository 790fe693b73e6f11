// Package differential runs the same script in warren and in real bash and
// compares what a user would see: stdout, whether anything went to stderr,
// the exit status and the files left in the working directory. Scripts come
// from a seeded generator over a grammar of bash features (gen.go), from a
// regression corpus of minimized mismatches (corpus.go), or from the caller.
//
// The point is to find divergences nobody wrote a test for: a mismatch is
// minimized by deleting statements while it persists (minimize.go) and kept
// with bash's outcome as its expectation. Triage (triage.go) turns a
// campaign's mismatches into distinct divergences: each script is traced
// to the statement that diverges alone, scripts are counted per statement
// and the commonest are minimized (testdata/divergences.md is one such
// report).
//
// awk has a generator of its own (gen_awk.go): small programs over features
// where awks differ, run as gawk in both shells and compared with gawk byte
// for byte, stderr included (awk_campaign.go); mismatches are minimized part
// by part and kept in testdata/awk-corpus with gawk's outcome.
package differential

import (
	"fmt"
	"math/rand/v2"
	"strings"
)

// Script is one generated script and the features it exercises.
type Script struct {
	Seed     uint64
	Features []string // one per statement, in order
	Source   string
	// Preamble and Stmts are Source's parts, so a mismatch can be traced
	// to the statement that diverges on its own (Triage).
	Preamble string
	Stmts    []string
}

// Feature names the generator's statement producers; mismatch counts are
// reported per feature.
var Features = append([]string{
	"paramexp", "arith", "array", "assoc", "split", "read", "printf", "quote",
	"test", "case", "loop", "func", "glob", "extglob", "redir", "heredoc",
	"cmdsub", "subshell", "pipeline", "errexit", "declare", "alias", "getopts",
	"trap", "umask", "string", "brace", "tilde", "positional", "local",
	// issue 23's weak areas (gen_process.go, gen_values.go)
	"exec", "time", "ulimit", "errtrap", "invoke", "sparse", "roundtrip",
	"globopt", "nameref", "ifs", "unicode",
	// round 3: features the grammar above never produced (gen_more.go)
}, moreFeatures...)

type gen struct {
	r    *rand.Rand
	vars []string // scalar variables assigned so far
}

// start seeds a generator and writes the preamble every script shares:
// three variables from the word list, a number and a small tree.
func start(seed uint64) (*gen, *strings.Builder, Script) {
	g := &gen{r: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))}
	b := &strings.Builder{}
	for _, v := range []string{"a", "b", "s"} {
		fmt.Fprintf(b, "%s=%s\n", v, quoteWord(g.word()))
		g.vars = append(g.vars, v)
	}
	b.WriteString("n=" + fmt.Sprint(g.r.IntN(7)) + "\n")
	b.WriteString("mkdir -p d/e && touch f1.txt f2.log .hid d/g.txt d/e/h.c\n")
	return g, b, Script{Seed: seed}
}

// Generate builds the script for seed: a preamble that assigns a few
// variables and files, then 3 to 7 statements drawn from Features.
func Generate(seed uint64) Script {
	g, b, s := start(seed)
	s.Preamble = b.String()
	for i, n := 0, 3+g.r.IntN(5); i < n; i++ {
		f := Features[g.r.IntN(len(Features))]
		s.Features = append(s.Features, f)
		st := g.stmt(f)
		s.Stmts = append(s.Stmts, st)
		b.WriteString(st)
		b.WriteString("\n")
	}
	s.Source = b.String()
	return s
}

// Only generates a script whose statements all come from feature f (the
// preamble stays), for per-feature campaigns.
func Only(seed uint64, f string) Script {
	g, b, s := start(seed)
	if strings.HasPrefix(f, "cmd:") {
		b.WriteString(inputs)
	}
	s.Preamble = b.String()
	for i, n := 0, 2+g.r.IntN(3); i < n; i++ {
		s.Features = append(s.Features, f)
		st := g.stmt(f)
		s.Stmts = append(s.Stmts, st)
		b.WriteString(st)
		b.WriteString("\n")
	}
	s.Source = b.String()
	return s
}

func (g *gen) pick(xs ...string) string { return xs[g.r.IntN(len(xs))] }

// cond is a [[ ]] expression: terms joined by && and ||, some negated,
// some in parentheses (depth levels deep), where precedence decides.
func (g *gen) cond(depth int) string {
	var b strings.Builder
	for i, n := 0, 1+g.r.IntN(4); i < n; i++ {
		if i > 0 {
			b.WriteString(g.pick(" && ", " || "))
		}
		if g.r.IntN(3) == 0 {
			b.WriteString("! ")
		}
		if depth > 0 && g.r.IntN(4) == 0 {
			b.WriteString("( " + g.cond(depth-1) + " )")
			continue
		}
		b.WriteString(g.pick("-n $"+g.v(), "-z $"+g.v(), "$"+g.v()+" == "+g.pattern(), "$n -gt "+g.num(), "-f f1.txt", "-d nope", "$"+g.v()))
	}
	return b.String()
}

// oldCond is a test/[ expression with -a, -o and !.
func (g *gen) oldCond() string {
	var b strings.Builder
	for i, n := 0, 1+g.r.IntN(3); i < n; i++ {
		if i > 0 {
			b.WriteString(g.pick(" -a ", " -o "))
		}
		if g.r.IntN(3) == 0 {
			b.WriteString("! ")
		}
		b.WriteString(g.pick("-n \"$"+g.v()+"\"", "-z \"$"+g.v()+"\"", "\"$"+g.v()+"\" = x", "-f f1.txt", "-d nope", "$n -lt "+g.num()))
	}
	return b.String()
}

var words = []string{
	"", "x", "hello", "hello world", "a b  c", " lead", "trail ", "a*b", "*.txt",
	"f?.log", "[ab]c", "x=y", "-n", "--", "a,b,c", "1", "42", "-7", "0x1F", "3.5",
	"foo/bar/baz.tar.gz", "AbC dEf", "tab\there", "multi\nline", "a\\b", "$x", "'q'",
	"\"dq\"", "ünï", "日本", "{a,b}", "~", "a:b:c", "  ", "%s%d", "!x",
}

func (g *gen) word() string { return words[g.r.IntN(len(words))] }

func (g *gen) v() string { return g.vars[g.r.IntN(len(g.vars))] }

// quoteWord single-quotes w so the script assigns it literally.
func quoteWord(w string) string {
	return "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
}

func (g *gen) pattern() string {
	return g.pick("*", "?", "a*", "*o", "*.", "[a-h]*", "l*o", "o", "l", "' '", "\\*", "*/", "[[:space:]]", "[!a]")
}

func (g *gen) num() string {
	return g.pick("0", "1", "2", "3", "-1", "-2", "7", "10", "$n", "${#s}")
}

func (g *gen) stmt(f string) string {
	switch f {
	case "paramexp":
		ops := []string{
			":-" + g.pick("dflt", "$a", ""), "-dflt", ":+alt", "+alt", "#" + g.pattern(), "##" + g.pattern(),
			"%" + g.pattern(), "%%" + g.pattern(), "/" + g.pattern() + "/R", "//" + g.pattern() + "/R",
			"/#" + g.pattern() + "/R", "/%" + g.pattern() + "/R", ":" + g.num(), ":" + g.num() + ":" + g.num(),
			": -2", "^", "^^", ",", ",,", "~~", "@Q", "@U", "@L", "@u", "//[aeiou]/", "/?/",
		}
		v := g.pick(g.v(), g.v(), "unset_v", "n")
		return fmt.Sprintf("printf '<%%s>\\n' \"${%s%s}\" \"${#%s}\"", v, ops[g.r.IntN(len(ops))], v)
	case "arith":
		return g.pick(
			"echo $(( "+g.arith(3)+" ))",
			"(( "+g.arith(2)+" )); echo $?",
			"x=5; (( x "+g.pick("+=", "-=", "*=", "/=", "%=", "<<=", "|=", "^=")+" "+g.pick("2", "3", "n+1")+" )); echo $x",
			"let 'y = "+g.arith(2)+"' 'z = y * 2'; echo $y $z",
			"i=0; echo $((i++)) $((++i)) $((i--)) $i",
			"echo $(( "+g.pick("2**10", "7/2", "-7/2", "-7%3", "1<<62", "0x10+010", "2#101+36#z", "'a'", "n?1:2", "(1,2)")+" ))",
			"(( "+g.pick("1/0", "n % 0", "'1'", "x = 'a'")+" )); echo same $?",
			"f() { echo $((1/"+g.pick("0", "n", "(n-n)")+")); echo inf; }; f; echo same\necho next $?",
			"let "+g.pick("1/0", "'y = 2 * 3'", "'z = n / 0'")+"; echo $? ${y-}",
		)
	case "array":
		return g.pick(
			"arr=("+g.wlist()+"); arr[5]=five; unset 'arr[1]'; echo ${#arr[@]} \"${!arr[@]}\"; printf '<%s>' \"${arr[@]}\"; echo",
			"arr=("+g.wlist()+"); echo \"${arr[-1]}\" \"${arr[@]:1:2}\" \"${#arr[0]}\"",
			"arr=(x y z); arr+=(\"$a\" w); printf '[%s]' \"${arr[@]}\" \"${arr[*]}\"; echo",
			"arr=(3 1 2); for i in \"${!arr[@]}\"; do echo $i=${arr[i]}; done",
			"arr=("+g.wlist()+"); echo \"${arr[@]/#/-}\" \"${arr[@]^}\"",
			"arr=([2]=b [0]=a [7]=c); arr[-1]=Z; declare -p arr",
			"read -ra arr <<< \"$"+g.v()+"\"; echo ${#arr[@]}; printf '<%s>' \"${arr[@]}\"; echo",
		)
	case "assoc":
		return g.pick(
			"declare -A m=([one]=1 [two]=2 [\"sp ace\"]=3); echo ${#m[@]} \"${m[sp ace]}\"; printf '%s\\n' \"${!m[@]}\" | sort",
			"declare -A m; m[$a]=x; m[k]+=y; m[k]+=z; echo \"${m[k]}\" ${#m[@]}",
			"declare -A m=([x]=1); unset 'm[x]'; echo ${#m[@]} \"${m[x]-gone}\"",
			"declare -A m; e=; m[$e]=x; echo same $?\nf() { m[\"$e\"]+=y; echo inf; }; f; echo ${#m[@]}",
		)
	case "split":
		return fmt.Sprintf("IFS=%s; set -- $%s; echo $#; printf '<%%s>' \"$@\"; echo; unset IFS", g.pick("' '", "','", "':'", "''", "' ,'", "$'\\t'", "'a'"), g.v())
	case "read":
		return g.pick(
			"read -r x y <<< \"$"+g.v()+"\"; printf '<%s|%s>\\n' \"$x\" \"$y\"",
			"IFS=, read -r x y z <<< 'a,b,c,d'; echo \"$x|$y|$z\"",
			"printf 'l1\\nl2\\nl3' | while read -r l; do echo \"[$l]\"; done",
			"read -d : x <<< 'ab:cd'; echo \"$x\"",
			"IFS=: read -ra p <<< 'a::b:'; echo ${#p[@]}",
			"read -n 2 x <<< 'abcdef'; echo $x",
		)
	case "printf":
		if g.r.IntN(4) == 0 {
			return fmt.Sprintf("printf %s %s %s; echo $?", quoteWord(g.pick("%*d|", "%-*s|", "%.*s|", "%0*x|", "%c|%c|")), quoteWord(g.pick("'x", "0x1F", "' ", "-3", "  ", "\"d", "010")), quoteWord(g.pick("7", "ab", "3.14159", "-2")))
		}
		return fmt.Sprintf("printf %s %s %s; echo", quoteWord(g.pick("%s|", "%5s|", "%-5s|", "%05d|", "%x|", "%o|", "%X|", "%e|", "%.2f|", "%c|", "%b|", "%q|", "%3.1s|", "%+d|", "%#x|", "%%|", "%s %s|", "%*d|", "%-*d|", "%i|")), quoteWord(g.word()), quoteWord(g.pick("12", "-3", "x", "", "255", "3.14159", "1e3", "' ", "a\\tb")))
	case "quote":
		return g.pick(
			"echo \"$"+g.v()+"\" '$"+g.v()+"' $'a\\tb\\x41\\u00e9' \"a\\\"b\\$c\\\\d\"",
			"echo $"+g.v()+"; echo \"${"+g.v()+"}\"",
			"x=\"$"+g.v()+"\"; printf '%q\\n' \"$x\"",
			"echo \"$(echo \"$"+g.v()+"\")\" `echo back`",
			"echo a\\ b \\$x \"\\a\" '\\n'",
			"printf '%s\\n' \"${"+g.v()+"@Q}\"",
		)
	case "test":
		return g.pick(
			"[[ $"+g.v()+" == "+g.pattern()+" ]]; echo $?",
			"[[ $"+g.v()+" =~ "+g.pick("^h", "o$", "([a-z]+)\\ ([a-z]+)", "[0-9]+", "^$")+" ]]; echo $? \"${BASH_REMATCH[@]}\"",
			"[ \"$"+g.v()+"\" "+g.pick("=", "!=", "<", ">")+" \"$"+g.v()+"\" ]; echo $?",
			"[ "+g.num()+" "+g.pick("-eq", "-ne", "-lt", "-le", "-gt", "-ge")+" "+g.num()+" ]; echo $?",
			"test -"+g.pick("f", "d", "e", "s", "r", "z", "n", "L")+" "+g.pick("f1.txt", "d", "nope", "\"$a\"", "''")+"; echo $?",
			"[[ -n $a && ( -z $b || $n -gt 2 ) ]]; echo $?",
			"[ ! -d d -o -f f1.txt ]; echo $?",
			"[[ f1.txt -nt d ]]; echo $? ; [[ 10 -lt 9 ]]; echo $?",
			"[[ "+g.cond(2)+" ]]; echo $?",
			"[ "+g.oldCond()+" ]; echo $?",
		)
	case "case":
		return fmt.Sprintf("case \"$%s\" in %s) echo one;; %s|%s) echo two;;& *) echo other;; esac", g.v(), g.pattern(), g.pattern(), g.pattern())
	case "loop":
		return g.pick(
			"for i in 1 2 3 4; do [ $i = "+g.num()+" ] && continue; [ $i = 3 ] && break; echo $i; done",
			"i=0; while (( i < n )); do echo -n $i; ((i++)); done; echo",
			"i=0; until [ $i -ge 3 ]; do i=$((i+1)); done; echo $i",
			"for ((i=0; i<3; i++)); do for j in a b; do [ $j = b ] && continue 2; echo $i$j; done; done",
			"for w in $"+g.v()+"; do echo \"<$w>\"; done",
			"for f in *; do echo $f; done",
			"select x in a b; do break; done <<< '1'; echo \"$x\"",
		)
	case "func":
		return g.pick(
			"f() { local x=$1; echo \"$x $#\"; return 3; }; f \"$"+g.v()+"\" z; echo $?",
			"f() { echo \"$@\"; shift; echo $*; }; f a \"b c\" d",
			"fact() { (( $1 <= 1 )) && echo 1 && return; echo $(( $1 * $(fact $(( $1 - 1 ))) )); }; fact 5",
			"f() { g() { echo inner; }; }; f; g; unset -f g; type g >/dev/null 2>&1; echo $?",
			"f() ( x=inside; echo $x ); x=out; f; echo $x",
			"function f { echo \"${FUNCNAME[0]}\" $#; }; f 1 2",
		)
	case "glob":
		return g.pick(
			"echo *", "echo *.txt d/*", "echo */", "echo ?1.*", "echo [fd]*", "echo nomatch*",
			"shopt -s nullglob; echo nomatch* end; shopt -u nullglob",
			"shopt -s dotglob; echo *; shopt -u dotglob",
			"shopt -s globstar; echo **/*.c; echo **; shopt -u globstar",
			"ls -d */", "echo d/*/", "printf '%s\\n' d/**",
			"shopt -s failglob; echo nomatch*; echo $?",
			"shopt -s nocaseglob; echo F*; shopt -u nocaseglob",
			"shopt -s failglob\nf() { echo in; echo nomatch*; echo after; }; f; echo same\necho next $?; shopt -u failglob",
			"echo */ d/*/ "+g.pick("*/*/", "./*/", "d*/", "*.txt/"),
			"shopt -s globstar "+g.pick("", "dotglob")+"; echo "+g.pick("**/", "d/**/", "**/*/", "./**/")+"; shopt -u globstar dotglob",
		)
	case "extglob":
		return g.pick(
			"shopt -s extglob\necho !(f1*)", "shopt -s extglob\necho @(f1|d).*", "shopt -s extglob\necho *(f)[0-9]*",
			"shopt -s extglob\n[[ $"+g.v()+" == +([a-z]) ]]; echo $?", "shopt -s extglob\nx=aaab; echo ${x##*(a)}",
			"shopt -s extglob\necho "+g.pick("!(*.txt|*.log)", "f!(1).*", "!(f)*.txt", "d/!(g*)", "!(d|f*)", "*.!(txt)"),
			"shopt -s extglob\n[[ $"+g.v()+" == "+g.pick("!(*o*)", "*.!(h)", "!(hello)", "!(?)", "a!(b)*")+" ]]; echo $?",
			"shopt -s extglob\ncase $"+g.v()+" in !(*[0-9]*)) echo nodigit;; *) echo digit;; esac",
		)
	case "redir":
		return g.pick(
			"echo one > o; echo two >> o; cat o; wc -l < o",
			"{ echo out; echo err >&2; } > o 2>&1; cat o",
			"exec 3> o3; echo via3 >&3; exec 3>&-; cat o3",
			"echo x 2>/dev/null >&2; echo $?",
			"cat < nope 2>/dev/null; echo $?",
			"echo hi > d; echo $?",
			"ls nope 2>&1 >/dev/null | wc -l",
			"echo a >| o; set -C; echo b > o; echo $?; set +C; cat o",
			"cat <<< \"$"+g.v()+"\"",
		)
	case "heredoc":
		return g.pick(
			"cat <<EOF\nv=$"+g.v()+" $(echo sub) \\$x\nEOF",
			"cat <<'EOF'\nraw $a `x`\nEOF",
			"cat <<-EOF\n\ttabbed $n\n\tEOF",
			"while read -r l; do echo \"<$l>\"; done <<EOF\n"+g.word()+"\nlast\nEOF",
			"cat <<A; cat <<B\na\nA\nb\nB",
		)
	case "cmdsub":
		return g.pick(
			"x=$(printf 'a\\n\\n\\n'); echo \"[$x]\"",
			"echo $(echo \"$"+g.v()+"\")",
			"x=$(exit 4); echo $?",
			"echo \"$(cd d && pwd | sed 's,.*/,,')\"",
			"x=`echo a; echo b`; echo \"$x\"",
			"echo $(( $(echo 3) + $(echo 4) ))",
		)
	case "subshell":
		return g.pick(
			"( x=in; exit 3 ); echo $? ${x-unset}",
			"(cd d; pwd | sed 's,.*/,,'); pwd | sed 's,.*/,,'",
			"{ echo a; false; }; echo $?",
			"( set -e; false; echo never ); echo $?",
			"x=1; ( x=2 ); echo $x",
		)
	case "pipeline":
		return g.pick(
			"printf '3\\n1\\n2\\n1\\n' | sort "+g.pick("", "-n", "-r", "-u", "-nr")+" | uniq -c | sed 's/^ *//'",
			"echo \"$"+g.v()+"\" | tr "+g.pick("a-z A-Z", "-d ' '", "-s ' '", "'a-e' 'A-E'", "-c 'a-z' '_'")+"",
			"printf 'a,b,c\\nd,e,f\\n' | cut -d, -f"+g.pick("1", "2-", "1,3", "-2"),
			"printf 'x y\\nz w\\n' | awk '{print $2, NR}'",
			"false | true; echo $? ${PIPESTATUS[@]}",
			"set -o pipefail; false | true; echo $?; set +o pipefail",
			"printf 'l1\\nl2\\nl3\\n' | head -"+g.pick("1", "2", "n 2")+" | tail -1",
			"echo \"$"+g.v()+"\" | wc -c",
			"printf 'ab\\ncd\\n' | grep -"+g.pick("c", "v", "n", "o", "i")+" "+g.pick("a", "b", "'[bc]'"),
			"echo hello | sed "+g.pick("'s/l/L/'", "'s/l/L/g'", "-n '/h/p'", "'y/el/ip/'", "'s/\\(h\\)\\(e\\)/\\2\\1/'"),
		)
	case "errexit":
		return g.pick(
			"( set -e; false || echo ok; echo after ); echo $?",
			"( set -e; if false; then :; fi; echo iffine ); echo $?",
			"( set -e; f() { false; echo inf; }; f; echo after ); echo $?",
			"( set -e; x=$(false); echo assigned ); echo $?",
			"( set -u; echo ${undefined_v}; echo after ) 2>/dev/null; echo $?",
			"( set -e; ! true; echo negated ); echo $?",
			"( set -e; false && true; echo andlist ); echo $?",
		)
	case "declare":
		return g.pick(
			"declare -i x=3+4; x+=1; echo $x",
			"declare -u x=$"+g.v()+"; declare -l y=ABC; echo \"$x\" $y",
			"x="+quoteWord(g.word())+"; declare -p x",
			"x=$'"+g.pick("a\\tb", "l1\\nl2", "\\e[1m", "bell\\a", "q'\\''s", "\\x7f")+"'; declare -A m=([$x]=$x); declare -p x m",
			"readonly r=1; (r=2) 2>/dev/null; echo $?",
			"declare -a x=(1 2); declare -p x",
			"f() { declare -g gv=glob; }; f; echo $gv",
			"x=5; declare -n ref=x; ref=9; echo $x; unset -n ref",
			"export ev=1; env | grep -c '^ev='",
		)
	case "alias":
		return g.pick(
			"shopt -s expand_aliases\nalias hi='echo hi '\nalias w=world\nhi w",
			"shopt -s expand_aliases\nalias ll='echo long'\nll; unalias ll; ll 2>/dev/null; echo $?",
			"alias x='echo nope'\nx 2>/dev/null; echo $?",
			"shopt -s expand_aliases; alias sl='echo same'; sl 2>/dev/null; echo $?",
			"shopt -s expand_aliases\nalias x='echo def'\nf() { x "+g.pick("a", "\"$a\"", "$n")+"; }\nalias x='echo later'\nf; x b",
			"shopt -s expand_aliases\nalias a='b ' b='echo B ' c=C\na c; a "+quoteWord(g.word()),
			"shopt -s expand_aliases\nalias e='echo e'\neval 'e 1'; eval $'alias e=\"echo z\"\\ne 2'; y=$(e 3); echo \"$y\"",
			"shopt -s expand_aliases\nalias l='echo one; echo two'\nl three; 'l' 2>/dev/null; echo $?",
		)
	case "getopts":
		return "f() { local OPTIND o; while getopts 'ab:c' o; do echo \"$o=${OPTARG-}\"; done; shift $((OPTIND-1)); echo rest \"$@\"; }; f " + g.pick("-a -b x y", "-ac z", "-b", "-x", "--", "-a -- -b")
	case "trap":
		return g.pick(
			"( trap 'echo bye' EXIT; echo body )",
			"( trap 'echo err $?' ERR; false; echo next )",
			"( trap 'echo int' INT; kill -INT $BASHPID; echo after )",
			"trap 'echo t' USR1; trap; trap - USR1",
			"( f() { return 2; }; trap 'echo ret' RETURN; f )",
			"( g() { trap 'echo ret-g' RETURN; echo g; }; h() { echo h; }; g; h; trap -p RETURN; set -o functrace; h )",
		)
	case "umask":
		return g.umaskStmt()
	case "exec":
		return g.execStmt()
	case "time":
		return g.timeStmt()
	case "ulimit":
		return g.ulimitStmt()
	case "errtrap":
		return g.errtrapStmt()
	case "invoke":
		return g.invokeStmt()
	case "sparse":
		return g.sparseStmt()
	case "roundtrip":
		return g.roundtripStmt()
	case "globopt":
		return g.globoptStmt()
	case "nameref":
		return g.namerefStmt()
	case "ifs":
		return g.ifsStmt()
	case "unicode":
		return g.unicodeStmt()
	case "string":
		return g.pick(
			"x=$"+g.v()+"; echo ${#x} \"${x:1}\" \"${x: -1}\"",
			"x=\"$"+g.v()+"\"; y=${x//[^a-z]/}; echo \"$y\"",
			"printf '%s' \"$"+g.v()+"\" | od -An -c | tr -s ' ' | head -2",
			"s2=\"$a$b\"; echo ${#s2}",
			"x=abc; echo ${x:5} ${x:1:-1} ${x: -5}",
		)
	case "brace":
		return g.pick("echo {1..5}", "echo {a,b}{c,d}", "echo {5..1..2}", "echo {a..e}", "echo x{,y}z", "echo {01..10..3}", "echo {a,{b,c}}", "echo {1..3", "echo {z..w}")
	case "tilde":
		return g.pick("echo ~ | sed 's,.*/,H,'", "x=~/y; echo ${x##*/}", "echo '~' \"~\"", "echo a=~ | grep -c /")
	case "positional":
		return g.pick(
			"set -- a \"b c\" d; echo $# \"$*\" \"$@\"; shift 2; echo $1",
			"set -- 1 2 3; echo \"${@:2}\" \"${*: -1}\" ${#@}",
			"set -- x; IFS=-; echo \"$*\"; unset IFS",
			"set -- $(seq 1 12); echo ${10} $12",
		)
	case "local":
		return g.pick(
			"x=g; f() { local x=l; g; }; g() { echo $x; }; f; echo $x",
			"f() { local -a arr=(1 2); echo ${#arr[@]}; }; f",
			"f() { local x; echo \"${x-unset}\"; }; x=outer; f",
			"f() { x=changed; }; x=orig; f; echo $x",
		)
	}
	if strings.HasPrefix(f, "cmd:") {
		return g.cmdStmt(f)
	}
	if st, ok := g.moreStmt(f); ok {
		return st
	}
	return "echo unknown feature " + f
}

func (g *gen) arith(depth int) string {
	if depth == 0 || g.r.IntN(3) == 0 {
		return g.pick("0", "1", "2", "3", "7", "10", "n", "x", "-4", "255", "0x1f", "010")
	}
	switch g.r.IntN(4) {
	case 0:
		return g.pick("-", "!", "~") + "(" + g.arith(depth-1) + ")"
	case 1:
		return "(" + g.arith(depth-1) + " ? " + g.arith(depth-1) + " : " + g.arith(depth-1) + ")"
	default:
		op := g.pick("+", "-", "*", "/", "%", "<<", ">>", "&", "|", "^", "&&", "||", "<", "<=", "==", "!=", ">", "**")
		return g.arith(depth-1) + " " + op + " " + g.arith(depth-1)
	}
}

func (g *gen) wlist() string {
	var ws []string
	for i, n := 0, 1+g.r.IntN(4); i < n; i++ {
		ws = append(ws, quoteWord(g.word()))
	}
	return strings.Join(ws, " ")
}
