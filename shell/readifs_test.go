package shell

import (
	"strings"
	"testing"
)

// TestReadTrailingSeparator: the last variable loses one trailing IFS
// separator after its only field, as in bash 5.2 (outputs from bash).
func TestReadTrailingSeparator(t *testing.T) {
	tests := []struct{ script, want string }{
		{`echo "a b: " | { IFS=" :" read x y; echo "[$x][$y]"; }`, "[a][b]\n"},
		{`echo "a b : " | { IFS=" :" read x y; echo "[$x][$y]"; }`, "[a][b]\n"},
		{`echo "a:b:" | { IFS=: read x y; echo "[$x][$y]"; }`, "[a][b]\n"},
		{`echo "a:b::" | { IFS=: read x y; echo "[$x][$y]"; }`, "[a][b::]\n"},
		{`echo "a:b:c:" | { IFS=: read x y; echo "[$x][$y]"; }`, "[a][b:c:]\n"},
		{`echo "a b c " | { read x y; echo "[$x][$y]"; }`, "[a][b c]\n"},
		{`echo 'a b\: ' | { IFS=": " read x y; echo "[$x][$y]"; }`, "[a][b:]\n"},
		{`echo 'a b\:' | { IFS=":" read -r x y; echo "[$x][$y]"; }`, "[a b\\][]\n"},
		{`echo 'a,b,c,,' | { IFS="," read x y z; echo "[$x][$y][$z]"; }`, "[a][b][c,,]\n"},
		{`echo 'a,b,c,' | { IFS="," read x y z; echo "[$x][$y][$z]"; }`, "[a][b][c]\n"},
	}
	for _, tt := range tests {
		sh := newTestShell(t, Limits{})
		if out, errs, _ := runScript(t, sh, tt.script); out != tt.want {
			t.Errorf("%s: got %q (stderr %q), want %q", tt.script, out, errs, tt.want)
		}
	}
}

// TestArithErrorAtRunTime: a malformed arithmetic expression is reported
// when its command runs, as bash does; the script goes on (bash 5.2's
// output).
func TestArithErrorAtRunTime(t *testing.T) {
	script := "echo a\n(( 1 + ))\necho st=$?\nx=$(( 2 * ))\necho st=$?\nif (( 3 - )); then echo yes; else echo no; fi\nfor ((i=0; i<2; i++)); do echo $i; done\n"
	sh := newTestShell(t, Limits{})
	out, errs, st := runScript(t, sh, script)
	if out != "a\nst=1\nst=1\nno\n0\n1\n" || st != 0 {
		t.Fatalf("got %q status %d", out, st)
	}
	for _, want := range []string{
		`line 2: ((: 1 + : syntax error: operand expected (error token is "+ ")`,
		`line 4: 2 * : syntax error: operand expected (error token is "* ")`,
		`line 6: ((: 3 - : syntax error: operand expected (error token is "- ")`,
	} {
		if !strings.Contains(errs, want) {
			t.Errorf("stderr %q lacks %q", errs, want)
		}
	}
}

// read -n and -N count characters, not bytes, as bash does in a UTF-8
// locale (recorded from /usr/bin/bash with LC_ALL=C.UTF-8).
func TestReadCountsCharacters(t *testing.T) {
	script := `read -n 1 c <<< 'é'; echo "$c"
read -n 1 c <<<'😀x'; echo "$c"
read -N 2 c <<<'ﬁn'; echo "$c"
read -n 3 c <<< 'aé日'; echo "$c"
read -n 2 a b <<< 'é ü'; echo "[$a][$b]"
read -n 5 c <<< 'aé'; echo "[$c]"
printf 'a\\\xc3\xa9b\n' | { read -n 2 c; echo "[$c]"; }
printf '\xc3\xa9\xe6\x97\xa5' | { read -N 2 c; echo "[$c] $?"; }`
	want := "é\n😀\nﬁn\naé日\n[é][]\n[aé]\n[aé]\n[é日] 0\n"
	sh := newTestShell(t, Limits{})
	if out, errs, _ := runScript(t, sh, script); out != want {
		t.Errorf("got %q (%q), want %q", out, errs, want)
	}
}
