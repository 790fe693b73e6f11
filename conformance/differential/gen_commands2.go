package differential

import (
	"fmt"
	"strings"
)

// CommandFeatures2 cover option families the first producers leave out:
// sort keys, stat and find formats over files with fixed times (touch -d;
// the harness runs with TZ=UTC), date formats with GNU's padding flags,
// sed's hold space and cycle commands, grep's multi-pattern and recursive
// forms, tr classes, path tools, checksums and the split/truncate family.
// Owners, inodes and block counts are host facts and stay out.
var CommandFeatures2 = []string{
	"cmd:sortkeys", "cmd:stat", "cmd:findpred", "cmd:datefmt", "cmd:sedcycle",
	"cmd:grepmulti", "cmd:trclass", "cmd:paths", "cmd:sums", "cmd:splitting",
	"cmd:seqfmt", "cmd:textfmt", "cmd:lsopts", "cmd:envprintf", "cmd:du",
}

// touched gives t's files fixed, distinct times (the stat, find and ls
// producers read them).
const touched = "touch -d '2024-01-02 03:04:05' t/a.txt; touch -d '2023-06-07 08:09:10.5' t/u/s; touch -d '2020-02-29 23:59:59' t/u/b.c t/.h; touch -d '2024-03-04 05:06:07' t/u t; "

func (g *gen) cmdStmt2(f string) string {
	in := inputFile(g)
	opt := func(xs ...string) string { // 1-3 distinct options
		var out []string
		seen := map[string]bool{}
		for i, n := 0, 1+g.r.IntN(3); i < n; i++ {
			o := xs[g.r.IntN(len(xs))]
			if !seen[o] {
				seen[o] = true
				out = append(out, o)
			}
		}
		return strings.Join(out, " ")
	}
	switch f {
	case "cmd:sortkeys":
		keys := g.pick("-k1.2,1.3", "-k2,2 -k1,1", "-t, -k3n", "-t, -k2,2r -k1,1", "-k1,1n -k2", "-t' ' -k2.1b", "-k3,3 -k1.1,1.1", "-t: -k1", "-k2b,2", "-k1,1g", "-k1V", "-t, -k1,1 -k3,3nr", "")
		flags := opt("-n", "-r", "-u", "-s", "-f", "-b", "-g", "-h", "-V", "-d", "-i", "-R0", "--debug0")
		flags = strings.NewReplacer("-R0", "-M", "--debug0", "-z").Replace(flags)
		return g.pick(
			fmt.Sprintf("sort %s %s %s", flags, keys, in),
			fmt.Sprintf("sort %s %s %s | sort -c %s %s; echo $?", flags, keys, in, flags, keys),
			fmt.Sprintf("sort -C %s %s; echo $?", flags, in),
			fmt.Sprintf("sort %s s1 > a; sort %s s2 > b; sort -m %s a b", flags, flags, flags),
			fmt.Sprintf("printf '1e3\\n-inf\\nnan\\n0x10\\n2.5\\n-0\\n+1\\n 7\\n1K\\n2M\\n1.5k\\n' | sort %s", flags),
			fmt.Sprintf("printf 'a1.10\\na1.9\\na1.10a\\nb-2\\nA\\n_x\\n' | sort %s %s", flags, keys),
			fmt.Sprintf("sort %s -o out %s && cat out", flags, in),
			fmt.Sprintf("sort %s %s nope; echo $?", flags, in),
		)
	case "cmd:stat":
		return touched + "stat " + g.pick("-c", "--printf") + " " + g.pick(
			"'%n %s %a %A %F\\n'", "'%Y\\n'", "'%y\\n'", "'%N|%h\\n'", "'%y|%.3Y|%.9Y|%.Y\\n'", "'[%10s][%-6a][%06s]\\n'", "'%f %t %T\\n'", "'%%|%n\\n'", "'%s\\t%n\\n'", "'%F\\n'",
		) + " " + g.pick("t/a.txt", "t/u/s t/u/b.c", "t/u/b.c t/.h", "t/.h nope; echo $?")
	case "cmd:findpred":
		pred := g.pick("-newer t/u/b.c", "-mtime +100", "-mtime -1", "-mmin +5", "-type f -newer t/a.txt", "-regex '.*/[ab].*'",
			"-iregex '.*A.*'", "-name '*.c' -prune -o -print", "-path t/u -prune -o -type f -print", "-size 1c", "-size -2c -type f",
			"-empty -type f", "-type f -name '[a-s]*'", "-maxdepth 1 -type d", "-mindepth 1 -maxdepth 1", "! -type d", "-links 1 -type f",
			"-perm -u+r -type f", "-perm 644", "-newermt '2023-01-01'", "\\( -name s -o -name a.txt \\) -print", "-type f -a -not -empty",
			"-depth", "-name '*' -type l", "-lname '*'", "-true", "-false")
		act := g.pick("", "-print", "-print0 | tr '\\0' '\\n'", "-printf '%p %y %d %m\\n'", "-printf '%f|%h|%P\\n'",
			"-printf '%TY-%Tm-%Td %TH:%TM\\n'", "-printf '%t\\n'", "-printf '%-10f|%5d|%-4m|\\n'", "-exec echo {} + | tr ' ' '\\n'", "-exec echo X{}X \\;",
			"-exec test -f {} \\; -print", "-printf '%k %b\\n' | head -0", "-ls | head -0")
		return touched + fmt.Sprintf("find t %s %s | sort", pred, act)
	case "cmd:datefmt":
		d := g.pick("'2024-02-29 13:04:05'", "@0", "'2021-01-03'", "'2020-12-31 23:59:59'", "@1234567890", "'2024-07-04 00:00:00'", "'1999-12-31 12:00'", "@-86400")
		return "date -u -d " + d + " " + g.pick(
			"'+%-d|%_d|%e|%-m|%_H|%-I|%-j'", "'+%^a %^b %#p %P %p'", "'+%C %y %G %g %V %u %w'", "'+%D %T %R %r'",
			"'+%x %X'", "'+%c'", "'+%10A|%-10B|%010d'", "'+%s %N %3N %6N'", "'+%:z %::z %z %Z'", "'+%h %n%t|'",
			"'+%U %W %j %a'", "'+%I %l %k %M %S'", "+%F", "-R", "-I", "-Iseconds", "-Ins", "--rfc-3339=seconds", "--rfc-3339=date",
			"'+%q %Q'", "'+%5%'", "'+%_5j|%-5j|%05j'", "'+%#a %#A %#b'", "'+%^B %^p'",
		)
	case "cmd:sedcycle":
		return "sed " + g.pick(
			"-n 'h;n;G;p'", "'$!N;P;D'", "'N;N;s/\\n/,/g'", "-n '$!{h;d};x;G;p'", "'1~3{N;s/\\n/ /}'", "-n '/a/{n;p}'",
			"'x;1d;$!d;x'", "-n 'H;${x;s/\\n/,/g;s/^,//;p}'", "'$a\\\nEND'", "'2c\\\nCHANGED'", "'/^$/,$d'", "'s/a/&&/2g'",
			"-n 's/a/X/gp'", "'s/[aeiou]/\\u&/g'", "-E 's/(.)(.*)/\\2\\1/'", "'y/abcdefghij/ABCDEFGHIJ/'", "-n '/b/,+1p'",
			"'0,/a/s//A/'", "-n 'l 5'", "'s/\\(a\\|e\\)/[\\1]/g'", "-z 's/\\n/|/g'", "-s '1i\\\n--'", "-n '$!{$!p}'",
			"'=' | sed 'N;s/\\n/ /'", "-E 's/a{2,}|b+/_/g'", "'s/./\\n/2' | od -c", "-n '2{p;q}'", "'2,4!d'", "'s/.\\{3\\}/&\\n/'",
			"-n '/the/I p'", "'s/THE/x/Ig'", "'e echo hi' 2>/dev/null | head -0", "-n 'x;p;x;p'", "'n;d'", "'$!d'", "-n '/a/='",
		) + " " + in
	case "cmd:grepmulti":
		printf := "printf 'cat\\n^t\\n' > pats; mkdir -p r/s; printf 'a cat\\nx\\n' > r/one.txt; printf 'the\\ncat\\n' > r/s/two.md; printf 'cat' > r/s/three.txt; "
		return printf + fmt.Sprintf("grep %s %s; echo $?", opt("-c", "-n", "-o", "-i", "-v", "-w", "-x", "-l", "-L", "-h", "-H", "-s", "-m1", "-b", "-z", "--color=never", "-T", "--label=L", "-Z"),
			g.pick("-f pats "+in, "-e cat -e '^t' "+in, "-E -e 'c(a|o)t' -e end "+in, "-r cat r | sort", "-r --include='*.txt' cat r | sort", "-r --exclude='*.md' cat r | sort",
				"-rl cat r | sort", "-R -c cat r | sort", "-F -f pats "+in, "-e cat -f pats "+in, "-F -x -e cat "+in, "-w -e 'the' -e 'cat' "+in,
				"cat - < "+in, "-P 'c\\wt' "+in, "--exclude-dir=s -r cat r | sort", "-A1 -B1 -e end "+in, "-C1 cat "+in, "cat r/one.txt r/s/three.txt"))
	case "cmd:trclass":
		return g.pick("tr", "tr -d", "tr -s", "tr -c", "tr -cd", "tr -cs", "tr -t", "tr -ds") + " " + g.pick(
			"'[:alpha:]' '[:upper:]'", "'[:digit:]' '#'", "'[:space:]' '_'", "'[:punct:]' '.'", "'[:alnum:]' 'x'", "'a-z' 'A-Z'",
			"'[:upper:][:lower:]' '[:lower:][:upper:]'", "'a-f' '1-3'", "'\\n\\t' ' '", "'\\101-\\132' 'a-z'", "'[a*3]b' 'xyz'",
			"'abc' '[x*]'", "'[=a=]' 'A'", "'[:blank:]' '-'", "'[:cntrl:]' '?'", "'[:xdigit:]' 'h'", "'\\\\' '/'", "'a-c' ''",
			"'[:lower:]' '[:upper:]x'", "'z-a' 'x'", "'[:graph:]' 'g'", "'[:print:]' 'p'",
		) + " < " + in + "; echo $?"
	case "cmd:paths":
		return g.pick(
			"basename "+g.pick("/a/b/", "a//", "//", "''", "-z a/b", "-a -s .txt a.txt b.txt c", "a.txt .txt", ".txt .txt", "--suffix=.c x.c y.c"),
			"dirname "+g.pick("/a/b/", "a", "/", "a/b//c//", "''", "-z a/b c/d", "///a", "../x", ". ..", "a/./b"),
			"mkdir -p p/q && ln -s p/q lq && ln -s nope dang && "+g.pick("readlink -f lq", "readlink lq", "readlink -e dang; echo $?", "readlink -m dang/x/../y", "readlink -f p/../lq/.", "readlink -n lq; echo", "readlink s1; echo $?", "readlink -v s1 2>&1; echo $?", "readlink -f lq dang p")+" | sed \"s,$PWD,PWD,\"",
			"mkdir -p p/q && ln -s p/q lq && "+g.pick("realpath lq", "realpath -s lq", "realpath --relative-to=p lq", "realpath -e nope; echo $?", "realpath -m a/../../b", "realpath --relative-base=. p/q /", "realpath -z lq | tr '\\0' '\\n'", "realpath -q nope; echo $?")+" | sed \"s,$PWD,PWD,\"",
		)
	case "cmd:sums":
		sum := g.pick("md5sum", "sha1sum", "sha224sum", "sha384sum", "sha512sum", "cksum", "sum", "sum -s", "cksum -a md5", "cksum -a sha256 --untagged", "cksum -a crc", "base64 -w0", "md5sum --tag", "sha1sum -z")
		return g.pick(
			sum+" "+in,
			sum+" "+in+" s2",
			sum+" < "+in,
			"md5sum s1 s2 > m; printf x >> s2; md5sum -c m; echo $?; md5sum --quiet -c m; echo $?; md5sum --status -c m; echo $?",
			"sha1sum --tag s1 > m && sha1sum -c m",
			"printf '0123 s1\\n' > m; md5sum -c m 2>&1; echo $?; md5sum -w -c m 2>&1; echo $?",
			"base64 "+in+" | base64 -d | cmp - "+in+" && echo same",
			"printf 'Zm9v\\nYmFy\\n' | base64 -d; echo; printf 'Zm9\\n' | base64 -d; echo $?; printf 'Z!m9v' | base64 -di",
		)
	case "cmd:splitting":
		return g.pick(
			"split -l 2 "+in+" && head x?? && ls x*",
			"split -b 5 "+in+" p_ && ls p_* && cat p_ab",
			"split -n 3 "+in+" && wc -c x*",
			"split -d -l 1 -a 3 "+in+" n && ls n*",
			"split -l 3 --additional-suffix=.txt "+in+" && ls *.txt",
			"split -n l/2 "+in+" && cat xab",
			"split -C 8 "+in+" && wc -c x*",
			"cp "+in+" tt && truncate -s 5 tt && od -c tt",
			"cp "+in+" tt && truncate -s +3 tt && od -c tt",
			"cp "+in+" tt && truncate -s -2 tt && wc -c tt",
			"truncate -s 1K new && wc -c new",
			"cp "+in+" tt && truncate -s '<4' tt && wc -c tt",
			"cp "+in+" tt && truncate -s %7 tt && wc -c tt",
			"truncate -c -s 4 nothere; ls nothere; echo $?",
			"cp "+in+" tt && truncate -r s1 tt && wc -c tt",
		)
	case "cmd:seqfmt":
		return "seq " + g.pick("-f '%.2f' 1 0.25 2", "-f 'x%gy' 3", "-f %e 1 3", "-s ' ' 5", "-s '' 4", "-w 9 11", "-w -5 2 5", "-w 1.5 0.5 3",
			"-f '%5.1f|' 0 2", "1 0.1 1.3", "-s, -w 98 101", "3 -1 -2", "0", "1 1 1", "-f %x 10 ; echo $?", "-f '%%' 1; echo $?",
			"1e0 3", "0x10 0x12", "-- -3 -1", "1.0 3", "1 .5 2.01", "-f %G 1e6 1e6", "-s '\\n' 3", "2>&1 a; echo $?", "10 1 1; echo $?")
	case "cmd:textfmt":
		return g.pick(
			fmt.Sprintf("fmt %s %s", g.pick("-w 10", "-w5", "-s -w 8", "-u", "-c -w 12", "-t -w 9", "-p the -w 5", "-g 6 -w 8"), in),
			fmt.Sprintf("fold %s %s", g.pick("-w 4 -s", "-b -w 3", "-w 6", "-s -w 1", "-w 10"), in),
			fmt.Sprintf("paste %s", g.pick("-s -d, "+in, "-d '\\n' s1 s2", "-s -d ',;' s1", "- - - < "+in, "-d '' s1 s2", "-s "+in+" s1", "-d '\\\\' s1 s2", "-z s1 s2 | od -c")),
			fmt.Sprintf("cut %s %s", g.pick("-b 2-", "-c -2", "-f 1 -d 'a'", "-d, -f 3,1", "-d, -f 2- -s", "--complement -d, -f2", "-c 1,3-4 --output-delimiter=_", "-d ' ' -f 1,3 --output-delimiter=::", "-z -c1", "-f 9", "-b 1-2,2-3", "-n -b 2"), in),
			fmt.Sprintf("nl %s %s", g.pick("-b a -n rz -w 3", "-s '|' -b t", "-b p'^t'", "-v 5 -i 5", "-n ln", "-l 2 -b a"), in),
			fmt.Sprintf("%s %s", g.pick("expand -t 3", "expand -t 2,5,9", "unexpand -t 4 -a", "unexpand --first-only", "expand --tabs=4"), in),
			fmt.Sprintf("tail %s %s", g.pick("-c +4", "-n +0", "-n -1", "-z -n1", "--lines=2", "-q -n1", "-v -n1"), in),
			fmt.Sprintf("head %s %s", g.pick("-c -1", "-n -0", "-z -n1", "-v -n1", "--bytes=3", "-c 2K"), in),
		)
	case "cmd:lsopts":
		return touched + "ls " + g.pick("-1", "-1a", "-1A", "-1r", "-1t", "-1tr", "-1S", "-1Sr", "-1X", "-1U | sort", "-1p", "-1F", "-1R", "-1d", "-1i | head -0",
			"-l --time-style=+%F | awk '{print $1, $6, $7}'", "-lt --time-style=long-iso | awk '{print $1, $6, $7, $8}'", "-m", "-x -w 20", "-C -w 20",
			"-1 --sort=size", "-1 --sort=time", "-1 --sort=extension", "-1 --group-directories-first", "-1 -I '*.c'", "-1 --hide='a*'", "-1 -B", "-Q", "-1b", "-1 --indicator-style=slash",
			"-l --time-style=+%Y | awk '{print $6, $NF}'", "-1 --full-time | head -0", "-n --time-style=+x | awk '{print $1, $6, $7}'", "-sh | head -0") + " " + g.pick("t", "t/u", "t t/u", "t/a.txt t/u/s", "-d t/*", "t/u/s t nope; echo $?")
	case "cmd:envprintf":
		return "env printf " + g.pick("'%s-%s\\n' a b c", "'%5.2f|%-8.3e|%g\\n' 3.14159 2 1e-5", "'%x %o %X %#x %#o\\n' 255 8 171 255 8", "'%b\\n' 'a\\tb\\0101\\c'", "'%q\\n' 'a b' \"it's\"",
			"'%03d|%+d|% d|%-5d|\\n' 7 7 7 7", "'%c%c\\n' hello world", "'%d\\n' \"'A\" '\"B'", "'%s\\n'", "'%.3s|%10.2s|\\n' abcdef xyz", "'%i\\n' 0x10 010",
			"'%d\\n' abc; echo $?", "'%d\\n' 9999999999999999999; echo $?", "'\\x41\\101\\u00e9\\n'", "'%%|%5%|\\n'", "'%*d|%-*d|\\n' 4 1 3 2", "'%.*f\\n' 2 3.14159",
			"'%a\\n' 1", "'%s' 'a\\nb'; echo", "'%z\\n'; echo $?", "-- '%s\\n' x", "'%5b|\\n' ab", "'%e\\n' inf -nan", "'%u %ld\\n' -1 3")
	case "cmd:du":
		return "mkdir -p dd/e && head -c 5000 /dev/zero > dd/a && head -c 100 /dev/zero > dd/e/b && ln dd/a dd/e/h; du " + g.pick("-b", "-ab", "-sb", "--apparent-size", "-cb", "-bl", "-cbl", "-b -0 | tr '\\0' '\\n'", "-bh", "-b --apparent-size -c") + " dd/a dd/e/b dd/e/h | sort -k2"
	}
	return "echo unknown feature " + f
}
