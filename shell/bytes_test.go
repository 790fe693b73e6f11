package shell

import "testing"

// Scripts are bytes: invalid UTF-8 in words, quotes, variable values, file
// names and case patterns runs as in bash (expected output from bash
// 5.2.15). Go's regexp cannot tell invalid bytes apart, so in patterns
// with metacharacters an invalid byte matches any one invalid byte.
func TestScriptBytes(t *testing.T) {
	tests := []struct{ script, out string }{
		{"echo \xff\xfe", "\xff\xfe\n"},
		{"echo '\xff' \"a\x80b\"", "\xff a\x80b\n"},
		{"x=\xff\xfe; echo \"$x\" ${#x}", "\xff\xfe 2\n"},
		{"x=a\xffb; echo ${x/\xff/-} ${x#a}", "a-b \xffb\n"},
		{"touch /tmp/\xff.txt; for f in /tmp/*.txt; do echo \"$f\"; done", "/tmp/\xff.txt\n"},
		{"echo hi > /tmp/\xfe; cat /tmp/\xfe", "hi\n"},
		{"case \xffz in \xff*) echo match;; *) echo no;; esac", "match\n"},
		{"[[ a\xffb == a*b ]] && echo glob", "glob\n"},
		{"x=a\xffb; y=\xff; echo ${x//$y/-}", "a-b\n"},
		{"cat <<EOF\n\xff$((1+1))\nEOF", "\xff2\n"},
		{"eval 'echo \xfe'", "\xfe\n"},
		{"echo \U0010FF80", "\U0010FF80\n"}, // a valid script keeps its code points
	}
	for _, tt := range tests {
		sh := newTestShell(t, Limits{})
		out, errs, st := runScript(t, sh, tt.script)
		if out != tt.out || st != 0 {
			t.Errorf("%q: %q %q %d, want %q", tt.script, out, errs, st, tt.out)
		}
	}
}

// ${x:off:len} keeps invalid bytes as they are (each one character), as
// bash does (recorded from /usr/bin/bash with LC_ALL=C.UTF-8).
func TestSliceInvalidBytes(t *testing.T) {
	tests := []struct{ in, out string }{
		{`x=$'\xc3\xbc\xff'; printf '%s' "${x:1:1}"`, "\xff"},
		{`x=$'\xff\xfe'; printf '%s' "${x:1:1}"`, "\xfe"},
		{`x=$'a\xffb'; printf '%s|%s' "${#x}" "${x:1}"`, "3|\xffb"},
		{`x=$'\xe6\x97'; printf '%s|%s' "${#x}" "${x:0:1}"`, "2|\xe6"},
		{`x=$'\xffé'; printf '%s' "${x: -1}"`, "é"},
		{`s=héllo; echo "${s:1:3}|${s: -2}|${s:2}|${s:0:0}|${s:9}|${s: -9}|${s:1:-1}"`, "éll|lo|llo||||éll\n"},
	}
	for _, tt := range tests {
		sh := newTestShell(t, Limits{})
		if out, errs, _ := runScript(t, sh, tt.in); out != tt.out {
			t.Errorf("%q: got %q (%q), want %q", tt.in, out, errs, tt.out)
		}
	}
}
