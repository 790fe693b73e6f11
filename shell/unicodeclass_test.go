package shell

import "testing"

// POSIX classes in patterns take the UTF-8 locale's members outside ASCII,
// as bash 5.2 does in C.UTF-8 (recorded from /usr/bin/bash; non-ASCII
// digits, which glibc counts as alpha, are the known exception).
func TestUnicodeClasses(t *testing.T) {
	script := `for c in é ǅ ß ﬁ İ Ω 日 ² ½ © € « a Z 5 '!' ' '; do printf '%s:' "$c"; for cl in alpha upper lower alnum punct digit graph print space; do [[ $c == [[:$cl:]] ]] && printf ' %s' $cl; done; echo; done
s='İi'; echo "${s//[[:upper:]]/u}" "${s//[[:lower:]]/l}" "${s//[^[:alnum:]]/_}"
case 'é' in [[:alpha:]]*) echo alpha;; *) echo other ;; esac
shopt -s nocasematch; [[ é == [[:upper:]] ]] && echo folded; [[ É == [[:upper:]] ]] && echo upper`
	want := `é: alpha lower alnum graph print
ǅ: alpha upper lower alnum graph print
ß: alpha lower alnum graph print
ﬁ: alpha lower alnum graph print
İ: alpha upper alnum graph print
Ω: alpha upper alnum graph print
日: alpha alnum graph print
²: punct graph print
½: punct graph print
©: punct graph print
€: punct graph print
«: punct graph print
a: alpha lower alnum graph print
Z: alpha upper alnum graph print
5: alnum digit graph print
!: punct graph print
 : print space
ui İl İi
alpha
upper
`
	sh := newTestShell(t, Limits{})
	if out, errs, _ := runScript(t, sh, script); out != want {
		t.Errorf("got\n%s(%q)\nwant\n%s", out, errs, want)
	}
}
