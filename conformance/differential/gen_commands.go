package differential

import (
	"fmt"
	"strings"
)

// CommandFeatures are producers that run one resident command with
// generated options over generated inputs, compared byte for byte with the
// GNU/Debian tool of the same name (the reference for warren's commands).
var CommandFeatures = append([]string{
	"cmd:sort", "cmd:uniq", "cmd:cut", "cmd:tr", "cmd:sed", "cmd:awk", "cmd:grep",
	"cmd:head", "cmd:tail", "cmd:wc", "cmd:seq", "cmd:printf", "cmd:od", "cmd:nl",
	"cmd:paste", "cmd:fold", "cmd:tac", "cmd:rev", "cmd:expand", "cmd:comm",
	"cmd:join", "cmd:xargs", "cmd:find", "cmd:ls", "cmd:basename", "cmd:expr",
	"cmd:date", "cmd:jq", "cmd:base64", "cmd:sha256sum", "cmd:column", "cmd:diff",
	"cmd:odtrad", "cmd:xxd", "cmd:hexdump", "cmd:crlf", "cmd:envsubst", "cmd:dos2unix",
	"cmd:file", "cmd:dd", "cmd:bc", "cmd:numfmt", "cmd:cp", "cmd:dc",
	"cmd:uu",
}, CommandFeatures2...)

// inputs writes the files every command statement may read: numbers,
// fields, words with repeats, a file without a final newline, blank lines,
// UTF-8 and CRLF.
const inputs = `printf '10 b x\n2 a y\n10 a z\n-3 c x\n2 a y\n\n1.5 d w\n' > nums
printf 'k1,v1,1\nk2,,22\nk3,v3,333\nk1,v4,4\n' > csv
printf 'apple\tred\t3\nbanana\tyellow\t12\ncherry\tred\t7\n' > tsv
printf 'the cat\nThe Dog\nthe  end\ncat\n' > words
printf 'no newline' > nonl
printf 'a\r\nb\r\n' > crlf
printf 'ünï\n日本語\nabc\n' > utf
printf 'a\nb\nc\nd\n' > s1
printf 'b\nc\ne\n' > s2
printf '{"a":1,"b":[1,2,{"c":"x"}],"d":null,"e":"s t"}\n' > j.json
mkdir -p t/u && touch t/a.txt t/u/b.c t/.h && printf x > t/u/s
`

func inputFile(g *gen) string {
	return g.pick("nums", "csv", "tsv", "words", "nonl", "crlf", "utf", "s1")
}

func (g *gen) cmdStmt(f string) string {
	in := inputFile(g)
	opt := func(xs ...string) string { // 0-2 distinct options
		var out []string
		seen := map[string]bool{}
		for i, n := 0, g.r.IntN(3); i < n; i++ {
			o := xs[g.r.IntN(len(xs))]
			if !seen[o] {
				seen[o] = true
				out = append(out, o)
			}
		}
		return strings.Join(out, " ")
	}
	switch f {
	case "cmd:sort":
		return fmt.Sprintf("sort %s %s", opt("-n", "-r", "-u", "-f", "-b", "-k2", "-k1,1n", "-k2,2 -k1,1nr", "-t, -k2", "-s -k1,1", "-g", "-h", "-V", "-M", "-d", "-c", "-z"), in)
	case "cmd:uniq":
		return fmt.Sprintf("sort %s | uniq %s", in, opt("-c", "-d", "-u", "-i", "-f1", "-s2", "-w2", "-D"))
	case "cmd:cut":
		return fmt.Sprintf("cut %s %s", g.pick("-c1-3", "-c2", "-b1,3", "-d, -f2", "-d, -f1,3", "-f2", "-d' ' -f2-", "-s -d, -f1", "--complement -c1", "-d, -f2 --output-delimiter=:"), in)
	case "cmd:tr":
		return fmt.Sprintf("tr %s < %s", g.pick("a-z A-Z", "-d aeiou", "-s ' '", "-c 'a-z\\n' _", "-d '\\r'", "'[:lower:]' '[:upper:]'", "-s '\\n'", "a-c x", "-cd '[:digit:]\\n'", "'\\t' ,"), in)
	case "cmd:sed":
		return fmt.Sprintf("sed %s %s", g.pick("'s/a/A/'", "'s/a/A/g'", "-n '2p'", "'1d'", "'$d'", "-n '/a/p'", "'s/\\(.\\)\\(.\\)/\\2\\1/'", "-E 's/([a-z]+)/<\\1>/g'", "'2,3d'", "'y/abc/xyz/'", "'a\\\nadded'", "'1i\\\ntop'", "-n '$='", "'s/x*/-/g'", "'N;s/\\n/+/'", "'/^$/d'", "'s/[[:space:]]\\+/ /g'", "-n 'l'", "'1!G;h;$!d'", "'s/.*/\\U&/'", "= ", "'2q'", "-s -n '$p'", "'s/a/b/2'", "'0~2d'", "'1d;1,3p'", "-n '2d;2,/c/p'", "'s&a&[\\&]&'", "-n '/a/{p;b end};p;:end'", "'s/a/x/;T;s/$/!/'"), in)
	case "cmd:awk":
		return fmt.Sprintf("awk %s %s", g.pick("'{print $1}'", "'{print NF}'", "-F, '{print $2}'", "'{s+=$1} END{print s}'", "'NR%2'", "'{print length($0)}'", "'{$2=\"X\"; print}'", "-F'\\t' -v OFS=: '{$1=$1; print}'", "'/a/{c++} END{print c+0}'", "'{print toupper($0)}'", "'{printf \"%5.1f|\\n\", $1}'", "'BEGIN{print substr(\"hello\",2,3), index(\"abc\",\"c\")}'", "'{a[$1]++} END{for(k in a) n++; print n}'", "'{gsub(/a/,\"[&]\"); print}'", "'{print $NF}'", "'{split($0,p,\",\"); print p[1]}'", "'END{print NR}'", "'{print; next} END{print \"x\"}'", "'{print sprintf(\"%c\", 65)}'", "'BEGIN{printf \"%d %s\\n\", \"3x\", 1e3}'", "'{FS=\",\"; print $1}'", "'NR==2{FS=\"a\"} {print $1}'"), in)
	case "cmd:grep":
		return fmt.Sprintf("grep %s %s %s; echo $?", opt("-i", "-v", "-c", "-n", "-o", "-w", "-x", "-E", "-F", "-q", "-s", "-h", "-H", "-m1", "-A1", "-B1", "-b"), g.pick("a", "the", "'^[0-9]'", "'a|b'", "'c.t'", "''", "'[[:upper:]]'", "'\\bcat'", "'x$'", "-e a -e b"), in)
	case "cmd:head":
		return fmt.Sprintf("head %s %s", g.pick("-n2", "-n -2", "-c5", "-c -3", "-n0", "-q", "-1"), in)
	case "cmd:tail":
		return fmt.Sprintf("tail %s %s", g.pick("-n2", "-n +2", "-c5", "-c +3", "-n0", "-1", "-r"), in)
	case "cmd:wc":
		return fmt.Sprintf("wc %s %s", opt("-l", "-w", "-c", "-m", "-L"), in)
	case "cmd:seq":
		return "seq " + g.pick("5", "2 5", "1 2 10", "-w 8 11", "-s, 3", "0.5 0.5 2", "-f %03g 3", "10 -3 1", "5 1", "-w -1 1", "1e2 1e2", "-w 003 10", "-w 1 010", "-w 0.5 1.50")
	case "cmd:printf":
		return "printf " + g.pick("'%s-%s\\n' a b c", "'%5.2f\\n' 3.14159", "'%x %o %X\\n' 255 8 171", "'%-4s|\\n' ab", "'%b\\n' 'a\\tb'", "'%q\\n' 'a b'", "'%03d\\n' 7", "'%c\\n' hello", "'%e\\n' 12345", "'%d\\n' \"'A\"", "'%s\\n'", "'%5s|%-5s|\\n' x y", "'%.3s\\n' abcdef", "'%i\\n' 0x10", "'%d\\n' abc; echo $?")
	case "cmd:od":
		return fmt.Sprintf("od %s %s", g.pick("-c", "-An -tx1", "-b", "-x", "-An -c", "-t d2", "-N4 -c", "-j2 -c", "-w4 -tx1", "-o", "-d", "-An -tu1 -v"), in)
	case "cmd:nl":
		return fmt.Sprintf("nl %s %s", opt("-ba", "-nln", "-nrz", "-w3", "-s:", "-v10", "-i2"), in)
	case "cmd:paste":
		return "paste " + g.pick("s1 s2", "-d, s1 s2", "-s s1", "-s -d: s1", "- - < s1", "-d'\\t,' s1 s2 s1")
	case "cmd:fold":
		return fmt.Sprintf("fold %s %s", g.pick("-w3", "-w5 -s", "-b -w2", "-w1"), in)
	case "cmd:tac":
		return "tac " + in
	case "cmd:rev":
		return "rev " + in
	case "cmd:expand":
		return fmt.Sprintf("%s %s", g.pick("expand", "expand -t4", "expand -t2,6", "unexpand -a", "expand -i"), in)
	case "cmd:comm":
		return "comm " + g.pick("s1 s2", "-12 s1 s2", "-3 s1 s2", "-23 s1 s2", "--output-delimiter=: s1 s2")
	case "cmd:join":
		return g.pick("join s1 s2", "sort csv > c2; join -t, c2 c2", "join -a1 s1 s2", "join -v2 s1 s2", "join -t, -1 1 -2 1 -o 1.2,2.3 csv csv 2>&1")
	case "cmd:xargs":
		return g.pick("printf 'a b\\nc\\n' | xargs echo", "printf 'a b c d' | xargs -n2 echo", "printf 'x\\0y\\0' | xargs -0 echo", "printf '1\\n2\\n' | xargs -I{} echo '<{}>'", "echo a b | xargs -t echo 2>&1", "printf '' | xargs echo empty", "printf '' | xargs -r echo empty; echo $?", "echo 'a\"b' | xargs echo; echo $?")
	case "cmd:find":
		return "find t " + g.pick("", "-name '*.c'", "-type d", "-type f | sort", "-maxdepth 1", "-mindepth 2", "-name '.*'", "-empty", "-size -1k", "-path '*u*'", "-not -name '*.txt'", "-name a.txt -o -name s", "-print0 | tr '\\0' '\\n' | sort", "-type f -printf '%f %s\\n' | sort", "-iname 'A*'") + " | sort"
	case "cmd:ls":
		return "ls " + g.pick("", "-a", "-A", "-1 t", "-R t", "-d t/*", "-F t t/u", "-r", "-la t | cut -c1-10", "-S t/u", "--color=never t", "-p t", "t/u t", "-1d t/*/", "nope; echo $?")
	case "cmd:basename":
		return g.pick("basename /a/b/c.txt .txt", "dirname /a/b/c", "basename -a x/y z/w", "dirname a", "basename /", "dirname //", "basename -s .c a.c b.c", "realpath -m a/../b/./c | sed 's,.*/,,'")
	case "cmd:expr":
		return "expr " + g.pick("1 + 2", "7 / 2", "5 % 3", "abc : 'a\\(.\\)'", "length hello", "substr hello 2 3", "index hello l", "3 \\< 10", "a = a", "0 \\| 5", "1 - x; echo $?", "match abc 'ab*'")
	case "cmd:date":
		if g.r.IntN(4) == 0 { // POSIX TZ strings with daylight-saving rules
			return "TZ=" + g.pick("EST5EDT", "'CET-1CEST,M3.5.0,M10.5.0/3'", "'<+0530>-5:30'", "'NZST-12NZDT,M9.5.0,M4.1.0/3'", "JST-9") + " date -d " + g.pick("@0", "@1720000000", "@1700000000") + " '+%F %T %Z %z'"
		}
		return "date -u -d " + g.pick("@0", "@86400", "'2024-02-29 12:34:56'", "'2020-01-01 +1 day'", "@1700000000") + " " + g.pick("+%F", "+%s", "'+%Y-%m-%d %H:%M:%S'", "+%j", "+%a%b", "+%U%W%V", "-R", "-I", "+%e|%k|%l", "+%N", "+%%")
	case "cmd:jq":
		return "jq " + g.pick(".", "-c .", ".a", ".b[2].c", "-r .e", "'.b | length'", "'keys'", "'.[]' -c", "'to_entries|map(.key)' -c", "-S .", "'.d // \"def\"'", "'.b|map(type)' -c", "'[paths]' -c", "'.e|@base64'", "-n '1+1'", "'.a as $x | $x*3'", "--arg v q '{v:$v}' -c", "'.x.y'") + " j.json"
	case "cmd:base64":
		return fmt.Sprintf("%s %s", g.pick("base64", "base64 -w4", "base64 | base64 -d", "md5sum", "cksum", "sha1sum"), in)
	case "cmd:sha256sum":
		return fmt.Sprintf("sha256sum %s; sha256sum %s | sha256sum -c", in, in)
	case "cmd:column":
		return g.pick("column -t tsv", "column -t -s, csv", "column -t nums", "column -s, -t -o ' | ' csv")
	case "cmd:diff":
		return "diff " + g.pick("s1 s2", "-u s1 s2 | tail -n +3", "-q s1 s2", "-c s1 s2 | tail -n +3", "s1 s1", "-i words words", "-w nums nums", "--normal s2 s1", "-y -W 20 s1 s2", "-e s1 s2", "- - < s1", "-B nums nums", "-B s1 nums") + "; echo $?"
	case "cmd:odtrad": // od's traditional options and float types
		return fmt.Sprintf("od %s %s", g.pick("-B", "-D", "-H", "-X", "-h", "-O", "-I", "-L", "-i", "-l", "-s", "-f", "-tf4", "-tf8", "-An -tx2", "-e", "-F", "-w8 -tx1z", "-tc -N3 -j1", "-Ax -tx1"), in)
	case "cmd:xxd":
		dump := g.pick("xxd ", "xxd -p ", "xxd -i < ", "xxd -c4 ", "xxd -g1 ", "xxd -u ", "xxd -l5 ", "xxd -s2 ", "xxd -b -c2 ", "xxd -p ")
		if strings.Contains(dump, "-p") {
			// Plain hex read back as "OFFSET:" lines can send the real
			// xxd seeking for ever: only -r -p for these.
			return dump + in + g.pick("", " | xxd -r -p")
		}
		return dump + in + g.pick("", " | xxd -r", " | xxd -r | od -c")
	case "cmd:hexdump":
		return "hexdump " + g.pick("-C", "", "-c", "-b", "-x", "-d", "-e '16/1 \"%02x \" \"\\n\"'", "-e '\"%07.7_ax \" 8/1 \"%02x\" \"\\n\"'", "-v -e '/1 \"%u,\"'", "-n4 -C", "-s2 -C") + " " + in
	case "cmd:crlf": // CR handling the GNU way in the text tools
		return g.pick("tr -d '\\r' < crlf | od -c", "tr '\\r' x < crlf", "sed 's/\\r$//' crlf | od -c", "sed -n 'l' crlf", "cut -c1 crlf | od -c", "grep -c 'a$' crlf", "wc -c crlf", "sort -r crlf | od -c", "awk '{print length}' crlf", "uniq crlf | od -c", "paste -d, crlf crlf | od -c", "head -c3 crlf | od -c")
	case "cmd:envsubst":
		return g.pick("echo 'h=$HOME u=${USER} x=$NOPE' | envsubst", "echo 'a $USER ${USER} $HOME' | envsubst '$USER'", "envsubst -v 'a $X ${Y} $X'", "echo '${USER:-d} $$ $1 ${' | envsubst", "X=1 envsubst < csv", "echo '$LOGNAME_x ${LOGNAME}_x' | envsubst")
	case "cmd:dos2unix":
		return g.pick("cp crlf c && dos2unix c 2>&1 && od -c c", "cp s1 c && unix2dos -q c && od -c c", "dos2unix < crlf | od -c", "unix2dos < crlf | od -c", "dos2unix -n crlf c 2>&1; od -c c", "unix2dos < nonl | od -c", "cp crlf c && unix2dos c c 2>/dev/null; od -c c", "dos2unix -q nope; echo $?")
	case "cmd:file":
		return "file " + g.pick(in, "-b "+in, "t", "t/a.txt", "j.json", "nope; echo $?", "-i "+in, "--mime-type -b "+in)
	case "cmd:dd":
		return "dd " + g.pick("if="+in+" bs=2 count=2", "if="+in+" skip=1 bs=3", "if="+in+" of=o bs=1 count=4 && od -c o", "if="+in+" conv=ucase", "if="+in+" ibs=1 obs=2 count=3", "if="+in+" bs=1 skip=2 count=3 status=none", "if=/dev/zero bs=4 count=2 | od -c", "if="+in+" conv=lcase,swab") + " 2>/dev/null; echo $?"
	case "cmd:bc":
		return "echo " + g.pick("'1+2*3'", "'scale=3; 10/3'", "'2^64'", "'sqrt(2)'", "'obase=16; 255'", "'ibase=2; 1011'", "'x=5; x*x'", "'define f(n){ if(n<2) return 1; return n*f(n-1) }; f(20)'", "'-7 % 3'", "'scale=2; 1/3*3'", "'12345678901234567890*98765432109876543210'", "'a[2]=3; a[2]+1'", "'1/0'", "'length(123.45)'", "'for(i=0;i<3;i++) i'") + " | bc" + g.pick("", " -l", " -q") + "; echo $?"
	case "cmd:uu":
		return g.pick("uuencode "+in+" name", "uuencode -m "+in+" name", "uuencode name < "+in, "uuencode "+in+" x | uudecode -o - | od -c", "uuencode -m "+in+" x | uudecode -o /dev/stdout", "uuencode "+in+" x > e && uudecode e && cmp x "+in+" && echo same", "printf 'junk\\n' | uudecode; echo $?")
	case "cmd:dc":
		return "echo " + g.pick("'2 3 + p'", "'2 k 10 3 / p'", "'_5 3 % p'", "'16 o 255 p'", "'16 i FF p'", "'4 k 2 v p'", "'1 2 3 f'", "'[hello] p'", "'3 sa la la * p'", "'10 [d p 1 - d 0 <a] sa la x'", "'2 3 ~ f'", "'2 3 10 | p'", "'1 0 / p'", "'2 1000 ^ p'", "'65 P'", "'1 2 3 4 5 3 R f'", "'p'", "'9 1 q 8 p'") + " | dc" + g.pick("", " 2>&1") + "; echo $?"
	case "cmd:numfmt":
		return "numfmt " + g.pick("--to=si 1500", "--to=iec 1048576", "--from=si 1.5K", "--from=iec 2M", "--to=iec-i 4096", "--padding=8 42", "--field=2 --to=si < nums 2>&1", "--format='%.2f' 3.14159", "--suffix=B --to=si 2000", "--from=auto 1Ki", "--to=si --round=down 1999", "--invalid=ignore abc 2>&1; echo $?")
	case "cmd:cp":
		return g.pick("cp --parents t/u/s d 2>&1; mkdir d; cp --parents t/u/s d && find d | sort", "cp -r t d && find d | sort", "cp -a t d && ls -la d | cut -c1-10", "ln t/u/s h && cp -d h c; ls c", "ln s1 h && mkdir d && cp -d s1 h d && stat -c %h d/s1 d/h", "ln s1 h && cp -a s1 h t && stat -c %h t/h", "cp nope d; echo $?", "cp t d; echo $?")
	}
	return g.cmdStmt2(f)
}
