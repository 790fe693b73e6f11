package shell

import "testing"

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
