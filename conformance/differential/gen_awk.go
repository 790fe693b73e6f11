package differential

import (
	"fmt"
	"math/rand/v2"
	"strings"
)

// AwkFeatures are the producers of the awk generator: each makes small
// awk programs around one area where awks are known to differ, run by
// warren's awk and by gawk (the reference: see AwkReference) over
// generated inputs.
var AwkFeatures = []string{
	"crlf", "forin", "printf", "strnum", "substr", "split", "getline", "environ",
	"vescape", "paragraph", "rsregex", "nf", "ofs", "bignum", "divzero", "pipes",
	"case", "length", "delete", "dynregex", "slashre", "match", "gensub", "time",
}

// AwkReference is the awk the generated programs are compared with. gawk,
// not Debian's default mawk: most scripts found in the wild are written
// for (and tested with) gawk, warren's awk already offers gawk's
// extensions, and Debian's mawk 1.3.4 differs from both POSIX and gawk in
// ways no script relies on (printf %d clamps at 2^31-1, print 2^53 gives
// 9.0072e+15, division by zero prints inf).
const AwkReference = "gawk"

// AwkProg is one generated awk invocation: options, the program as
// separately removable parts (so a mismatch can be minimized part by
// part), and the input file's lines (each with its own terminator).
type AwkProg struct {
	Seed    uint64   `json:"seed"`
	Feature string   `json:"feature"`
	Opts    []string `json:"opts,omitempty"` // shell words, already quoted
	Begin   []string `json:"begin,omitempty"`
	Rules   []string `json:"rules,omitempty"` // "pattern { action }" or "{ action }"
	End     []string `json:"end,omitempty"`
	Input   []string `json:"input,omitempty"`
	Env     []string `json:"env,omitempty"` // NAME=value for the awk command
	Stdin   bool     `json:"stdin,omitempty"`
}

// Program is the awk source.
func (p AwkProg) Program() string {
	var b strings.Builder
	if len(p.Begin) > 0 {
		b.WriteString("BEGIN {\n")
		for _, s := range p.Begin {
			b.WriteString("  " + s + "\n")
		}
		b.WriteString("}\n")
	}
	for _, r := range p.Rules {
		b.WriteString(r + "\n")
	}
	if len(p.End) > 0 {
		b.WriteString("END {\n")
		for _, s := range p.End {
			b.WriteString("  " + s + "\n")
		}
		b.WriteString("}\n")
	}
	return b.String()
}

// Script is the bash script that writes the input and runs the program
// with the reference's name (warren's gawk is its awk).
func (p AwkProg) Script() string {
	var b strings.Builder
	b.WriteString("printf -- '" + printfEscape(strings.Join(p.Input, "")) + "' > in\n")
	for _, e := range p.Env {
		b.WriteString(e + " ")
	}
	b.WriteString(AwkReference)
	for _, o := range p.Opts {
		b.WriteString(" " + o)
	}
	b.WriteString(" " + quoteWord(p.Program()))
	if p.Stdin {
		b.WriteString(" < in\n")
	} else {
		b.WriteString(" in\n")
	}
	return b.String()
}

// printfEscape makes s a printf format that prints s.
func printfEscape(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '\\':
			b.WriteString(`\\`)
		case '%':
			b.WriteString("%%")
		case '\'':
			b.WriteString(`'\''`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		default:
			if c < 0x20 || c == 0x7f {
				fmt.Fprintf(&b, `\%03o`, c)
			} else {
				b.WriteByte(c)
			}
		}
	}
	return b.String()
}

type awkGen struct {
	r *rand.Rand
}

func (g *awkGen) pick(xs ...string) string { return xs[g.r.IntN(len(xs))] }

func (g *awkGen) chance(n int) bool { return g.r.IntN(n) == 0 }

// fieldPool is what input fields are made of: numbers in the forms awks
// read differently, empty fields, spaces, UTF-8.
var fieldPool = []string{
	"1", "2", "10", "-3", "1e3", "0x10", "007", "3.0", ".5", "+5", "-0", "1e", "abc", "x",
	"Hello", "a1", "12abc", "inf", "nan", "", "日本", "ÄÖü", "9007199254740993", "1e16",
	"0.1", "2.50", "B", "zz", "A-B", "a.b",
}

func (g *awkGen) field() string { return fieldPool[g.r.IntN(len(fieldPool))] }

// lines makes n input records: fields joined by sep (sometimes doubled or
// a tab when sep is a space), with eol after each (the last one sometimes
// without it).
func (g *awkGen) lines(n int, sep, eol string) []string {
	var out []string
	for i := 0; i < n; i++ {
		var fs []string
		for j, m := 0, 1+g.r.IntN(4); j < m; j++ {
			fs = append(fs, g.field())
		}
		s := sep
		if sep == " " && g.chance(4) {
			s = g.pick("  ", "\t", " \t ")
		}
		line := strings.Join(fs, s)
		if sep == " " && g.chance(6) {
			line = g.pick(" ", "  ", "\t") + line
		}
		if g.chance(10) {
			line = ""
		}
		out = append(out, line+eol)
	}
	if len(out) > 0 && g.chance(6) {
		out[len(out)-1] = strings.TrimSuffix(out[len(out)-1], eol)
	}
	return out
}

func (g *awkGen) eol() string {
	if g.chance(7) {
		return "\r\n"
	}
	return "\n"
}

// value is an awk expression of any type.
func (g *awkGen) value() string {
	return g.pick("$1", "$2", "$NF", "NR", "x", "\"\"", "\"10\"", "\"abc\"", "10", "1e3", "0", "-1",
		"\" 12 \"", "\"0x10\"", "$1+0", "$2 \"\"", "length($0)", "\"3.0\"", "y[1]", "2^53", "0.1")
}

func (g *awkGen) num() string {
	return g.pick("0", "1", "2", "3", "-1", "1.5", "-2.5", "100", "\"2\"", "\"x\"", "NR", "$1", "1e9", "log(-1)", "-log(0)")
}

func (g *awkGen) str() string {
	return g.pick("\"hello\"", "\"\"", "$0", "$1", "\"a,b,,c\"", "\"  a  b \"", "\"ÄbC日本\"", "\"x.y.z\"", "\"a\\tb\"", "\"aXbXc\"")
}

// GenerateAwk builds the awk program for seed exercising feature f.
func GenerateAwk(seed uint64, f string) AwkProg {
	g := &awkGen{r: rand.New(rand.NewPCG(seed, seed^0x51ed2701a4c3b9f5))}
	p := AwkProg{Seed: seed, Feature: f}
	p.Input = g.lines(1+g.r.IntN(5), " ", g.eol())
	stmt := func(n int, mk func() string) []string {
		var out []string
		for i := 0; i < n; i++ {
			out = append(out, mk())
		}
		return out
	}
	k := 1 + g.r.IntN(3)
	switch f {
	case "crlf":
		p.Input = g.lines(1+g.r.IntN(4), g.pick(" ", " ", ",", "\t"), "\r\n")
		if g.chance(3) {
			p.Opts = append(p.Opts, g.pick("-F,", "-F'\\t'", "-F' '", "-v RS='\\r\\n'", "-v RS='\\n'", "-v 'FS=[ ,]'"))
		}
		p.Rules = stmt(k, func() string {
			return g.pick("{print $NF \"|\"}", "{print NF}", "{print length($0)}", "{print $1 \"|\" $2 \"|\"}",
				"{$1 = $1; print}", "{n = split($0, a); print n, a[n] \"|\"}", "$NF == \"x\" {print \"hit\"}",
				"{print ($NF+0)}", "/\\r$/ {print \"cr\"}", "{sub(/\\r$/, \"\"); print $NF \"|\"}", "{print}")
		})
	case "forin":
		p.Begin = stmt(1, func() string {
			return g.pick(
				"for (i = 1; i <= 12; i++) a[i] = i * i",
				"n = split(\"z y x w v u t\", a)",
				"a[5]; a[1]; a[10]; a[3]; a[-2]; a[0]",
				"for (i = 20; i >= 1; i -= 3) a[i]",
				"a[\"k\"]; a[\"b\"]; a[\"a\"]",
				"for (i = 1; i <= 5; i++) a[i * 100]",
				"split(\"3 1 2\", a); a[7] = 7",
			)
		})
		p.Rules = stmt(g.r.IntN(2), func() string { return g.pick("{c[NR] = $1}", "{c[$1]++}", "{c[NF]++}", "{c[FNR * 2] = $0}") })
		p.End = stmt(1, func() string {
			return g.pick("for (k in a) printf \"%s \", k; print \"\"", "for (k in c) print k, c[k]",
				"for (k in a) { delete a[k]; printf \"%s,\", k }; print length(a)", "for (k in a) s = s k; print s",
				"for (k in c) n++; print n+0")
		})
	case "printf":
		p.Rules = stmt(k, func() string {
			fm := g.pick("%c", "%i", "%5.2s", "%*d", "%-*d", "%-5d", "%05.1f", "%+d", "% d", "%x", "%o", "%X",
				"%e", "%G", "%.0f", "%#o", "%#x", "%u", "%c%c", "%.3c", "%5c", "%d", "%.10g", "%s", "%-3s|%3s", "%.*f", "%%")
			args := g.pick(g.value(), g.value()+", "+g.value(), g.num()+", "+g.value(), "65", "256", "\"\"", "-3, 7", "1e3", "\"A\"", "65.9", "-65")
			if g.chance(2) {
				return fmt.Sprintf("{printf \"[%s]\\n\", %s}", fm, args)
			}
			return fmt.Sprintf("{s = sprintf(\"%s\", %s); print length(s) \":\" s}", fm, args)
		})
	case "strnum":
		p.Rules = stmt(k, func() string {
			op := g.pick("<", "==", ">", "!=", "<=")
			return fmt.Sprintf("{print (%s %s %s), (%s %s %s)}", g.value(), op, g.value(), g.value(), op, g.pick("x", "\"\"", "0", "$3", "y[2]"))
		})
		if g.chance(2) {
			p.Opts = append(p.Opts, g.pick("-v x=10", "-v x=' 3 '", "-v x=0x1A", "-v x=1e3", "-v x=abc", "-v x="))
		}
	case "substr":
		p.Rules = stmt(k, func() string {
			if g.chance(2) {
				return fmt.Sprintf("{print \"<\" substr(%s, %s) \">\"}", g.str(), g.num())
			}
			return fmt.Sprintf("{print \"<\" substr(%s, %s, %s) \">\"}", g.str(), g.num(), g.num())
		})
	case "split":
		p.Rules = stmt(k, func() string {
			sep := g.pick("\" \"", "\",\"", "\"\"", "/,+/", "\"[,.]\"", "/X/", "\"\\t\"", "\".\"", "/ /", "\"a\"", "\"^a\"")
			if g.chance(3) {
				return fmt.Sprintf("{n = split(%s, p); printf \"%%d:\", n; for (i = 1; i <= n; i++) printf \"<%%s>\", p[i]; print \"\"}", g.str())
			}
			return fmt.Sprintf("{n = split(%s, p, %s); printf \"%%d:\", n; for (i = 1; i <= n; i++) printf \"<%%s>\", p[i]; print \"\"}", g.str(), sep)
		})
	case "getline":
		p.Rules = stmt(k, func() string {
			return g.pick("NR == 1 {getline; print \"got\", $0, NR}", "{r = getline line; print r, line, NR, $0}",
				"NR == 1 {while ((getline l) > 0) n++; print n, l}", "{getline x; print x + 1}",
				"{r = getline; print r, NF}", "END {r = getline; print r, $0}", "{print; getline < \"-\"}")
		})
		if g.chance(3) {
			p.Stdin = true
		}
	case "environ":
		p.Env = []string{g.pick("FOO=bar", "FOO=' 12 '", "FOO=1e3", "FOO=", "FOO='a b'")}
		p.Begin = stmt(k, func() string {
			return g.pick("print ENVIRON[\"FOO\"] \"|\"", "print (ENVIRON[\"FOO\"] == 12), (ENVIRON[\"FOO\"] < 2)",
				"print ARGC, ARGV[0], ARGV[1]", "for (i = 0; i < ARGC; i++) print i, ARGV[i]", "print (\"FOO\" in ENVIRON), (\"NOPE_X\" in ENVIRON)",
				"ARGV[1] = \"\"; print ARGC", "print length(ARGV)", "print ENVIRON[\"HOME\"] != \"\"")
		})
		if g.chance(2) {
			p.Opts = append(p.Opts, "-v v=1")
		}
	case "vescape":
		p.Opts = append(p.Opts, "-v "+quoteWord("v="+g.pick(`a\tb`, `a\nb`, `\\`, `x\`, `\101`, `\x41`, `a\/b`, `\"q\"`, `a\qb`, `1\0562`, `  7  `)))
		p.Begin = stmt(k, func() string {
			return g.pick("print \"<\" v \">\"", "print length(v)", "print (v == 7), (v < 10)", "print v + 0", "printf \"%s|\\n\", v")
		})
	case "paragraph":
		p.Input = nil
		for i, n := 0, 2+g.r.IntN(3); i < n; i++ {
			p.Input = append(p.Input, g.pick("", "\n", "\n\n")+strings.Join(g.lines(1+g.r.IntN(3), " ", ""), "\n")+g.pick("\n\n", "\n\n\n", "\n \n"))
		}
		if g.chance(3) {
			p.Input = append(p.Input, "tail")
		}
		p.Begin = []string{"RS = \"\""}
		if g.chance(3) {
			p.Begin = append(p.Begin, g.pick("FS = \",\"", "FS = \":\"", "FS = \"\\n\"", "RS = \"\\n\\n+\""))
		}
		p.Rules = stmt(k, func() string {
			return g.pick("{print NR \": \" NF \" [\" $0 \"]\"}", "{print $1 \"|\" $NF}", "{n = split($0, l, \"\\n\"); print n}", "END {print NR}", "{print length($0)}")
		})
	case "rsregex":
		p.Input = g.lines(2+g.r.IntN(4), g.pick(" ", ",", ";"), g.pick("\n", ";", "\n\n", ";;\n", "\r\n"))
		p.Begin = []string{"RS = " + g.pick("\";\"", "\"[;\\n]+\"", "\";+\"", "\"\\n|;\"", "\"x|\\n\"", "\"\\r?\\n\"", "\"[[:space:]]+\"", "\"\\n\\n\"", "\"ab\"")}
		p.Rules = stmt(k, func() string {
			return g.pick("{print NR \"<\" $0 \">\"}", "{print NF}", "END {print NR}", "{printf \"%s|\", $1} END {print \"\"}")
		})
	case "nf":
		p.Rules = stmt(k, func() string {
			return g.pick("{NF = 2; print; print NF}", "{NF = 5; print $0 \"|\"}", "{$5 = \"e\"; print; print NF}",
				"{$0 = \"a b c\"; print NF, $2}", "{NF++; $NF = \"z\"; print}", "{$3 = \"\"; print; print NF}",
				"{NF = 0; print length($0)}", "{$(NF+2) = \"q\"; print}", "{NF -= 1; print}", "{$1 = $1; print}")
		})
		if g.chance(2) {
			p.Opts = append(p.Opts, g.pick("-v OFS=-", "-v OFS=", "-v 'OFS=\\t'"))
		}
	case "ofs":
		p.Begin = stmt(g.r.IntN(3), func() string {
			return g.pick("OFS = \"-\"", "ORS = \"|\\n\"", "CONVFMT = \"%.2g\"", "OFMT = \"%.2f\"", "OFS = \"\"", "OFMT = \"%d\"", "CONVFMT = \"%d\"")
		})
		p.Rules = stmt(k, func() string {
			return g.pick("{print $1, $2}", "{x = 3.14159; print x; print x \"\"}", "{print 0.1 + 0.2, 1/3}", "{a[0.1] = 1; for (k in a) print k}",
				"{y = 17; print y / 3; print (y / 3) \"\"}", "{$2 = 2.5 * 1.1; print}", "{print 1e6, 1e7 * 1.5, 123456789012}",
				"{printf \"%s %d\\n\", 2.0, \"3.7\"}")
		})
	case "bignum":
		p.Rules = stmt(k, func() string {
			return "{print " + g.pick("2^53", "2^53 + 1", "1e16", "-0", "0 * -1", "-0.0", "2^63", "2^64", "1e300 * 10", "-2^53", "100000000000000000000",
				"1e15 + 0.3", "123456789 * 1000", "2^31", "int(-0.5)", "-(0)", "1e6", "1e17 / 10", "0.1 * 3", "2^1024", "-2^1024", "log(-1)") +
				", " + g.pick("$1 * 1", "$1 + 0", "int($1)", "$1 / 1") + "}"
		})
		if g.chance(2) {
			p.Rules = append(p.Rules, "{printf \"%d %i %.0f\\n\", "+g.pick("2^53", "1e16", "-0", "2^64", "1e30", "-1e30", "$1")+", "+g.pick("2^63", "1e19", "-2^63", "\"1e3\"")+", 1e16}")
		}
	case "divzero":
		p.Rules = stmt(k, func() string {
			return g.pick("{print $1 / 0}", "{print 1 % 0}", "{x = 0; print 5 / x}", "{print NR / (NF - NF)}",
				"NR == 2 {print 1 / 0}", "{x = 1; x /= 0; print x}", "{x %= 0}", "{print $1 / 2}")
		})
		p.End = []string{"print \"end\""}
	case "pipes":
		p.Rules = stmt(k, func() string {
			// commands that write only when their input ends (sort, tr
			// to a pipe): cat writes as it reads, and then gawk's own
			// output order depends on the scheduler
			return g.pick("{print $1 | \"sort\"}", "{print | \"tr a-z A-Z\"}", "END {close(\"sort\"); print \"after\"}",
				"{system(\"echo sys \" NR)}", "{r = system(\"exit 3\"); print r}", "NR == 1 {\"echo hi\" | getline v; print v}",
				"{print $0 | \"sort -r\"} END {close(\"sort -r\"); print \"done\"}", "{printf \"%s\\n\", $1 | \"sort 1>&2\"}",
				"NR == 1 {while ((\"printf \\\"a\\\\nb\\\\n\\\"\" | getline l) > 0) print \"l:\" l}", "END {print close(\"nothing\")}",
				"{fflush(); system(\"\")}")
		})
	case "case":
		p.Rules = stmt(k, func() string {
			return fmt.Sprintf("{print %s(%s)}", g.pick("toupper", "tolower"), g.pick(g.str(), "$0", "\"ÿÄé\"", "\"MiXeD 123\"", "$1 \"\""))
		})
	case "length":
		p.Rules = stmt(k, func() string {
			return g.pick("{a[NR] = $1} END {print length(a)}", "{print length()}", "{print length}", "{print length($1), length(12345), length(1/3)}",
				"{split($0, q); print length(q)}", "{print length(\"日本\")}", "{n = length; print n}")
		})
	case "delete":
		p.Rules = stmt(k, func() string {
			return g.pick("{a[$1]; a[NR]} END {delete a; print length(a)}", "{split($0, a); delete a[1]; print length(a), (1 in a), (2 in a)}",
				"{a[1] = 1; delete a; a[2] = 2; for (k in a) print k}", "{delete a[\"x\"]; print length(a)}", "{a[NR]=$0} END {for (k in a) delete a[k]; print length(a)}")
		})
	case "dynregex":
		p.Rules = stmt(k, func() string {
			re := g.pick("\"\\\\.\"", "\"a|b\"", "\"^[0-9]+$\"", "\"\\\\$\"", "\"[[:upper:]]\"", "\"\\\\/\"", "\"x*\"", "\"\\\\(\"", "\"(\"", "\"\\\\t\"", "\"[.]\"", "\"\\\\<a\"", "\"a{2}\"", "\"\\\\y\"")
			return g.pick(
				fmt.Sprintf("{print ($0 ~ %s)}", re),
				fmt.Sprintf("{r = %s; print ($1 ~ r), match($0, r), RSTART, RLENGTH}", re),
				fmt.Sprintf("{s = $0; n = gsub(%s, \"<&>\", s); print n, s}", re),
				fmt.Sprintf("{s = $0; sub(%s, \"\\\\&\", s); print s}", re),
			)
		})
	case "slashre":
		p.Input = append(p.Input, "a/b c\n", "/usr/bin x\n")
		p.Rules = stmt(k, func() string {
			return g.pick("/\\// {print \"slash\", $1}", "{gsub(/\\//, \"|\"); print}", "$1 ~ /^\\/usr/ {print}", "{print match($0, /[\\/]b/), RSTART}",
				"/a\\/b/ {print \"ab\"}", "{n = split($0, p, /\\//); print n}", "{sub(/\\/+$/, \"\"); print}")
		})
	case "match":
		p.Rules = stmt(k, func() string {
			return g.pick(
				fmt.Sprintf("{print index(%s, %s)}", g.str(), g.pick("\"b\"", "\"\"", "\"日\"", "\",\"", "$2")),
				fmt.Sprintf("{print match(%s, %s), RSTART, RLENGTH}", g.str(), g.pick("/b+/", "/^/", "/$/", "/x*/", "/日/", "/[0-9]+/", "\"\"", "/Z/")),
				"{if (match($0, /[0-9]+/)) print substr($0, RSTART, RLENGTH); else print RSTART, RLENGTH}",
				"{print match($0, /(a)(b)?/, m), m[1], m[2]}",
			)
		})
	case "gensub":
		p.Rules = stmt(k, func() string {
			return g.pick("{print gensub(/([0-9]+)/, \"<\\\\1>\", \"g\")}", "{print gensub(/a/, \"A\", 2)}", "{print gensub(\"\\\\.\", \"!\", \"G\", $0)}",
				"{print gensub(/(.)(.)/, \"\\\\2\\\\1\", 1, $1)}", "{print gensub(/x*/, \"-\", \"g\")}", "{print gensub(/b/, \"[&]\", \"g\", \"abcb\")}",
				"{print gensub(/o/, \"0\", 0)}", "{print gensub(/$/, \"!\", \"g\")}")
		})
	case "time":
		p.Begin = stmt(k, func() string {
			return g.pick("print strftime(\"%Y-%m-%d %H:%M:%S\", 0, 1)", "print strftime(\"%j %a %b %e\", 86400 * 400, 1)",
				"print (systime() > 1600000000)", "print mktime(\"2024 02 30 12 00 00\")", "print strftime(\"%s\", 1234567890)",
				"print mktime(\"1970 01 01 00 00 00\")", "print strftime(\"[%5Y]\", 0)", "print length(strftime())",
				"print strftime(\"%H\", -1, 1)", "print mktime(\"2024 1 1 0 0 0 -1\")")
		})
	default:
		p.Begin = []string{"print \"unknown feature " + f + "\""}
	}
	if len(p.Begin) == 0 && len(p.Rules) == 0 && len(p.End) == 0 {
		p.Rules = []string{"{print}"}
	}
	return p
}

// shrinkAwk minimizes p while still reports true: one part (an option, a
// BEGIN/END statement, a rule, an input line) removed at a time, until no
// removal keeps the mismatch or maxTries evaluations are spent.
func shrinkAwk(p AwkProg, still func(AwkProg) bool, maxTries int) AwkProg {
	tries := 0
	lists := func(q *AwkProg) []*[]string {
		return []*[]string{&q.Opts, &q.Env, &q.Rules, &q.Begin, &q.End, &q.Input}
	}
	for changed := true; changed && tries < maxTries; {
		changed = false
		for li := 0; li < 6 && tries < maxTries; li++ {
			for i := 0; i < len(*lists(&p)[li]) && tries < maxTries; i++ {
				cand := p
				cand.Opts = append([]string{}, p.Opts...)
				cand.Env = append([]string{}, p.Env...)
				cand.Rules = append([]string{}, p.Rules...)
				cand.Begin = append([]string{}, p.Begin...)
				cand.End = append([]string{}, p.End...)
				cand.Input = append([]string{}, p.Input...)
				l := lists(&cand)[li]
				*l = append((*l)[:i], (*l)[i+1:]...)
				if len(cand.Begin)+len(cand.Rules)+len(cand.End) == 0 {
					continue
				}
				tries++
				if still(cand) {
					p, changed = cand, true
					i--
				}
			}
		}
	}
	return p
}
