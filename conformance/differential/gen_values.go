package differential

import (
	"fmt"
	"strings"
)

// Producers for values and words where warren was weakest (issue 23):
// sparse and negative-index arrays, declare -p / printf %q / alias output
// fed back through eval, glob options on a real tree, namerefs, IFS
// corners and Unicode. The harness's fixed environment has LC_ALL=C.UTF-8
// (Env), so lengths, slices, case mapping and character classes are
// bash's UTF-8 ones.

// special are values whose quoting is hard to get right.
var special = []string{
	"''", "'a b'", "$'t\\tx'", "\"q'q\"", "'$(x)'", "'ünï 日本'", "$'\\x01'", "'~'", "'#c'", "'a*'",
	"$'l1\\nl2'", "'a\\b'", "'\"dq\"'", "'-n'", "'x=y'", "'  '", "$'\\e[1m'", "'!x'", "'{a,b}'",
}

func (g *gen) special() string {
	if g.r.IntN(3) == 0 {
		return quoteWord(g.word())
	}
	return special[g.r.IntN(len(special))]
}

// sparseStmt builds an array with holes, changes it through negative and
// sparse subscripts, and reads it back by slices, keys and declare -p.
func (g *gen) sparseStmt() string {
	var init []string
	for i := 0; i < 10; i++ {
		if g.r.IntN(3) == 0 {
			init = append(init, fmt.Sprintf("[%d]=%s", i, quoteWord(g.pick("x", "y", "z", "a b", "", "w"))))
		}
	}
	idx := func() string { return fmt.Sprint(g.r.IntN(10)) }
	ops := []func() string{
		func() string { return "unset 'a[" + idx() + "]'" },
		func() string { return "unset 'a[-" + g.pick("1", "2") + "]'" },
		func() string { return "a[-1]=" + quoteWord(g.word()) },
		func() string { return "a[-" + g.pick("2", "3") + "]=q" },
		func() string { return "a+=(" + g.wlist() + ")" },
		func() string { return "a[" + idx() + "]+=" + quoteWord(g.pick("s", "t")) },
		func() string { return "a=(\"${a[@]}\")" },
	}
	off := func() string { return g.pick("0", "1", "2", "5", "9", " -1", " -3") }
	reads := []func() string{
		func() string { return "echo ${#a[@]} \"${!a[@]}\"" },
		func() string { return "printf '<%s>' \"${a[@]:" + off() + "}\"; echo" },
		func() string { return "printf '<%s>' \"${a[@]:" + off() + ":" + g.pick("1", "2", "0") + "}\"; echo" },
		func() string { return "echo \"${a[-1]-none}\" \"${a[-2]-unset}\"" },
		func() string { return "echo ${#a[-1]}" },
		func() string { return "echo \"${a[*]:" + off() + "}\"" },
		func() string { return "for i in \"${!a[@]}\"; do printf '%s=%s ' $i \"${a[i]}\"; done; echo" },
		func() string { return "echo \"${a[" + idx() + "]-unset}\"" },
		func() string { return "i=-1; echo \"${a[i]-u}\" \"${a[$i-1]-u}\"" },
		func() string { return "echo \"${a[@]/#/+}\"" },
		func() string { return "b=(\"${a[@]}\"); declare -p b" },
		func() string { return "declare -p a" },
	}
	var parts []string
	for i, k := 0, g.r.IntN(3); i < k; i++ {
		parts = append(parts, ops[g.r.IntN(len(ops))]())
	}
	for i, k := 0, 1+g.r.IntN(2); i < k; i++ {
		parts = append(parts, reads[g.r.IntN(len(reads))]())
	}
	body := strings.Join(parts, "; ")
	switch g.r.IntN(5) {
	case 0:
		// A bad subscript is fatal to the (sub)shell in bash.
		bad := g.pick("a[-20]=q", "unset 'a[-20]'", "echo \"${a[-20]}\"", "a=(); a[-1]=x")
		return fmt.Sprintf("( a=(%s); %s; echo no ) 2>/dev/null; echo $?", strings.Join(init, " "), bad)
	case 1:
		return fmt.Sprintf("a=(%s); %s; declare -p a", strings.Join(init, " "), body)
	default:
		return fmt.Sprintf("a=(%s); %s", strings.Join(init, " "), body)
	}
}

// roundtripStmt: what declare -p, printf %q, ${x@Q}, alias and declare -f
// print, and whether eval of it gives back the same value.
func (g *gen) roundtripStmt() string {
	q := g.special()
	switch g.r.IntN(10) {
	case 0:
		return fmt.Sprintf("x=%s; s=$(declare -p x); unset x; eval \"$s\"; declare -p x; [ \"$x\" = %s ] && echo same", q, q)
	case 1:
		return fmt.Sprintf("arr=(%s %s); arr[7]=%s; s=$(declare -p arr); unset arr; eval \"$s\"; declare -p arr", q, g.special(), g.special())
	case 2:
		// One key: bash prints an associative array in its hash order.
		k := g.special()
		return fmt.Sprintf("declare -A m=([%s]=%s); s=$(declare -p m); unset m; eval \"$s\"; declare -p m; [ \"${m[%s]}\" = %s ] && echo same", k, q, k, q)
	case 3:
		return fmt.Sprintf("printf -v q '%%q' %s; echo \"$q\"; eval \"y=$q\"; [ \"$y\" = %s ] && echo same", q, q)
	case 4:
		return fmt.Sprintf("x=%s; echo \"${x@Q}\"; eval \"y=${x@Q}\"; [ \"$y\" = \"$x\" ] && echo same; echo \"${x@A}\"", q)
	case 5:
		return fmt.Sprintf("alias p=%s; alias p; s=$(alias -p); unalias p; eval \"$s\"; alias p", g.pick(quoteWord("echo \"a  b\" $x"), quoteWord("ls -l | grep '^d'"), q))
	case 6:
		body := g.pick("echo \"$1\"", "local x=$1; echo ${#x}", "for i in 1 2; do echo $i; done", "if [ -n \"$1\" ]; then echo yes; else echo no; fi",
			"echo $((1+2)) | tr 3 x", "case $1 in a*) echo A;; *) echo O;; esac", "[[ $1 == *b* ]] && echo hasb", "while read -r l; do echo \"$l\"; done <<< \"$1\"",
			"x=( $1 ); echo ${#x[@]}", "echo \"${1:-none}\" >&2")
		arg := quoteWord(g.word())
		return g.pick(
			"f() { "+body+"; }; declare -f f",
			"f() { "+body+"; }; s=$(declare -f f); unset -f f; eval \"$s\"; f "+arg,
			"f() { "+body+"; }; bash -c \"$(declare -f f); f "+strings.ReplaceAll(arg, "\"", "\\\"")+"\"",
		)
	case 7:
		return fmt.Sprintf("a=(%s %s); echo \"${a[@]@Q}\"; echo \"${a[@]@A}\"", q, g.special())
	case 8:
		return g.pick(
			"export ev="+q+"; export -p | grep ' ev='",
			"readonly ro="+q+"; readonly -p | grep ' ro='",
			"x="+q+"; set | grep '^x='",
		)
	default:
		attrs := g.pick("i", "l", "u", "x", "r", "ai", "lx", "iu", "a", "A")
		val := g.pick("3+4", "AbC", "'x y'", "(1 2)", "([k]=v)")
		return fmt.Sprintf("declare -%s v=%s 2>/dev/null; declare -p v", attrs, val)
	}
}

// globTree lays out the tree the glob options are tried on (once).
const globTree = "[ -d g ] || { mkdir -p g/a/b g/.h/c g/B && touch g/a/x.txt g/a/b/y.TXT g/.h/c/z.txt g/B/w g/.dot g/top.txt g/Top.md 'g/sp ace.txt' && ln -s a g/ln; }; "

// globoptStmt: shopt's glob options (alone and together) on the tree.
func (g *gen) globoptStmt() string {
	var opts []string
	for _, o := range []string{"globstar", "dotglob", "nullglob", "failglob", "nocaseglob"} {
		if g.r.IntN(3) == 0 {
			opts = append(opts, o)
		}
	}
	pat := g.pick(
		"g/**", "g/**/", "g/**/*.txt", "**/*.c", "g/*/", "*/", "g/*", "g/.*", "g/*.none", "g/[a-z]*", "g/*/*.TXT",
		"g/**/*.[tT]*", "g/ln/*", "g/*/b/", "g/?/", "g/[[:upper:]]*", "g/**/b", "./g/*/", "g/a/**", "d/**/", "g/t*", "g/**/.*",
	)
	use := g.pick(
		"echo "+pat, "printf '<%s>' "+pat+"; echo", "arr=("+pat+"); echo ${#arr[@]}",
		"for f in "+pat+"; do echo \"$f\"; done", "ls -d "+pat+" 2>/dev/null | cat", "echo "+pat+"; echo st $?",
	)
	set := ""
	if len(opts) > 0 {
		set = "shopt -s " + strings.Join(opts, " ") + "; "
	}
	switch g.r.IntN(6) {
	case 0:
		return globTree + "( GLOBIGNORE=" + g.pick("'g/*.txt:g/B'", "'g/a'", "'*'", "'g/.*'") + "; echo g/* )"
	case 1:
		// extglob changes parsing, so it is set on a line of its own.
		return "shopt -s extglob\n" + globTree + "( " + set + "echo " + g.pick("g/@(a|B)/*", "g/!(a)", "g/+([a-z]).txt", "g/**/!(*.txt)", "g/*(?)") + " ); echo $?"
	default:
		return globTree + "( " + set + use + " ); echo $?"
	}
}

// namerefStmt: declare -n to variables, array elements and arrays, in and
// out of functions, unset -n against unset, and the errors.
func (g *gen) namerefStmt() string {
	q := quoteWord(g.word())
	return g.pick(
		"x="+q+"; declare -n nr=x; nr="+quoteWord(g.word())+"; echo \"$x\" \"${!nr}\"; unset -n nr; echo \"${nr-unset}\" \"$x\"",
		"arr=(a b c); declare -n nr='arr["+g.pick("0", "1", "2", "5", "-1")+"]'; nr="+q+"; declare -p arr; echo \"$nr\"; unset -n nr",
		"x=1; declare -n nr=x; unset nr; echo ${x-gone}; declare -p nr; unset -n nr",
		"declare -n nr; nr=x; x=7; echo $nr; declare -p nr; unset -n nr",
		"a=1 b=2; declare -n nr; for nr in a b s; do echo \"$nr\"; done; unset -n nr",
		"f() { local -n out=$1; out=("+g.wlist()+"); }; f res; declare -p res",
		"declare -n nr=nr; echo $?; unset -n nr",
		"arr=(x y z); declare -n nr=arr; echo ${nr[1]} ${#nr[@]} \"${!nr[@]}\"; nr+=(w); echo ${arr[@]}; unset -n nr",
		"declare -n nr="+g.pick("1bad", "'a b'", "''", "x-y", "'arr[1'")+"; echo $?; unset -n nr 2>/dev/null",
		"x=global; f() { local x=loc; declare -n nr=x; echo $nr; }; f; h() { declare -n nr=x; local x=inner; echo $nr; }; h; echo $x",
		"declare -A m=([k]=v); declare -n nr=m; nr[j]="+q+"; echo \"${m[j]}\" ${#m[@]}; unset -n nr",
		"f() { declare -n ref2=$1; ref2+="+q+"; }; v=base; f v; echo \"$v\"",
		"x=1; declare -n nr1=x nr2=nr1; nr2=9; echo $x; declare -p nr1 nr2; unset -n nr1 nr2",
		"declare -n nr=undefined_v; echo \"${nr-empty}\"; nr=set; echo $undefined_v; unset -n nr",
		"f() { local -n a1=$1 a2=$2; a2=(\"${a1[@]}\"); }; src=("+g.wlist()+"); f src dst; declare -p dst",
		"declare -n nr=s; [[ -R nr ]] && echo isref; declare +n nr; declare -p nr; [[ -R nr ]]; echo $?; unset nr",
		"f() { local -n v1=$1; v1=$2; }; f s "+q+"; echo \"$s\"; f 'arr[3]' x; declare -p arr",
		"declare -n nr=x; x="+q+"; echo \"${#nr}\" \"${nr^^}\" \"${nr@Q}\"; unset -n nr",
	)
}

// ifsInput joins a few fields with separators, sometimes with one at
// either end, the shapes IFS splitting treats differently.
func (g *gen) ifsInput() string {
	var b strings.Builder
	if g.r.IntN(3) == 0 {
		b.WriteString(g.pick(":", " ", ","))
	}
	for i, k := 0, 1+g.r.IntN(4); i < k; i++ {
		if i > 0 {
			b.WriteString(g.pick(":", ",", " ", "  ", "::", " : ", "\t", "-"))
		}
		b.WriteString(g.pick("a", "bb", "", " c", "d\\:e", "f g"))
	}
	if g.r.IntN(3) == 0 {
		b.WriteString(g.pick(":", " ", ",", "::", "  "))
	}
	return "$'" + strings.NewReplacer("\\", "\\\\", "\t", "\\t", "'", "\\'").Replace(b.String()) + "'"
}

func (g *gen) ifsStmt() string {
	ifs := g.pick("':'", "','", "' :'", "':,'", "''", "$'\\t'", "'x'", "' '", "$' \\t'", "$' \\t\\n:'", "'-'", "': '")
	in := g.ifsInput()
	vars := g.pick("v1", "v1 v2", "v1 v2 v3")
	show := "printf '<%s>'"
	for _, v := range strings.Fields(vars) {
		show += " \"$" + v + "\""
	}
	show += "; echo"
	switch g.r.IntN(10) {
	case 0:
		return "IFS=" + ifs + " read -r " + vars + " <<< " + in + "; " + show
	case 1:
		return "IFS=" + ifs + " read " + vars + " <<< " + in + "; " + show
	case 2:
		return "IFS=" + ifs + " read -ra parts <<< " + in + "; echo ${#parts[@]}; printf '<%s>' \"${parts[@]}\"; echo"
	case 3:
		return "v=" + in + "; IFS=" + ifs + "; set -- $v; echo $#; printf '<%s>' \"$@\"; echo; unset IFS"
	case 4:
		return "set -- " + g.wlist() + "; IFS=" + ifs + "; echo \"$*\"; printf '<%s>' $*; echo; printf '<%s>' $@; echo; unset IFS"
	case 5:
		return "IFS=" + ifs + "; v=" + in + "; arr=($v); echo ${#arr[@]}; for i in $v; do printf '[%s]' \"$i\"; done; echo; unset IFS"
	case 6:
		return "f() { local IFS=" + ifs + "; echo \"$*\"; read -r " + vars + " <<< \"$1\"; " + show + "; }; f " + in + " z; printf '[%s]' \"$IFS\" | od -An -c"
	case 7:
		return "IFS=" + ifs + "; x=$(printf '%s' " + in + "); y=$x; echo \"[$y]\" [$x]; unset IFS"
	case 8:
		return "while IFS=" + ifs + " read -r k v; do echo \"$k=$v\"; done <<< " + strings.TrimSuffix(in, "'") + "\\n" + strings.TrimPrefix(g.ifsInput(), "$'")
	default:
		return "IFS=" + ifs + "; arr=(" + g.wlist() + "); echo \"${arr[*]}\" \"${arr[@]}\"; s2=\"${arr[*]}\"; echo ${#s2}; unset IFS"
	}
}

var uwords = []string{"ü", "ünï", "日本語", "é", "Éüß", "straße", "😀x", "aé日", "ÀB", "ﬁn", "ǅx", "Ωmega", "ß", "İi", "ça va"}

func (g *gen) uword() string { return quoteWord(uwords[g.r.IntN(len(uwords))]) }

// unicodeStmt: character (not byte) semantics in the UTF-8 locale.
func (g *gen) unicodeStmt() string {
	u := g.uword()
	i, k := g.pick("0", "1", "2"), g.pick("1", "2", "3")
	return g.pick(
		"s="+u+"; echo ${#s} \"${s:"+i+":"+k+"}\" \"${s: -"+k+"}\"",
		"s="+u+"; echo \"${s^^}\" \"${s,,}\" \"${s~~}\" \"${s^}\" \"${s~}\"",
		"printf '"+g.pick("%5s", "%-5s", "%.2s", "%3.1s", "%-3s", "%2s")+"|\\n' "+u,
		"s="+u+"; [[ $s == "+g.pick("?", "??", "???", "ü*", "*本*", "[[:alpha:]]*", "[^a]*", "*[[:upper:]]*", "[[:lower:]]*")+" ]]; echo $?",
		"read -"+g.pick("n", "N")+" "+k+" c <<< "+u+"; echo \"$c\"",
		"s="+u+"; echo \"${s#?}\" \"${s%?}\" \"${s//?/.}\" \"${s/[[:upper:]]/U}\"",
		"s="+u+"; printf '%d ' \"'${s:0:1}\" \"'${s: -1}\"; echo",
		"s="+u+"; printf '%q\\n' \"$s\"; echo \"${s@Q}\"",
		"case "+u+" in [[:alpha:]]*) echo alpha;; [[:punct:]]*) echo punct;; *) echo other;; esac",
		"s="+u+"; for ((i=0; i<${#s}; i++)); do printf '[%s]' \"${s:i:1}\"; done; echo",
		"s="+u+"; [[ $s =~ ^(.)(.*)$ ]] && echo \"${BASH_REMATCH[1]}|${BASH_REMATCH[2]}\"",
		"s="+u+"; printf '%s' \"$s\" | wc -m; echo ${#s}",
		"x=$'"+g.pick("\\xff\\xfe", "a\\xffb", "\\xc3", "\\xe6\\x97", "\\xc3\\xbc\\xff")+"'; echo ${#x}; printf '%s' \"${x:1:1}\" | od -An -tx1",
		"s="+u+"; echo \"${s//[[:upper:]]/u}\" \"${s//[[:lower:]]/l}\" \"${s//[^[:alnum:]]/_}\"",
		"printf '"+g.pick("\\u00e9", "\\u65e5", "\\U0001F600", "\\u0041", "\\u00df")+"\\n'; echo $'"+g.pick("\\u00fc", "\\u2603", "\\U0001f600")+"'",
		"arr=("+u+" "+g.uword()+"); echo ${#arr[0]} ${#arr[@]} \"${arr[@]:1}\"",
		"s="+u+"; printf '%s' \"${s:0:1}\" | od -An -tx1",
		"[[ "+u+" < "+g.uword()+" ]]; echo $?",
		"s=a本b本c; IFS=本; set -- $s; echo $#; printf '<%s>' \"$@\"; echo; unset IFS",
		"s="+u+"; x=${s:"+i+"}; echo \"${#x}\" \"${x%%[[:space:]]*}\"",
		"printf '%-6s|%6s|\\n' "+u+" "+g.uword(),
	)
}
