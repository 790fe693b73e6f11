package shell

import (
	"strings"
	"testing"
)

func TestQuoteSubscripts(t *testing.T) {
	tests := []struct{ in, out string }{
		{`echo "${m[sp ace]}"`, `echo "${m["sp ace"]}"`},
		{`m[sp ace]=1; x=2`, `m["sp ace"]=1; x=2`},
		{"declare -A m\n  m[a b]+=x", "declare -A m\n  m[\"a b\"]+=x"},
		{`echo m[a b]=1`, `echo m[a b]=1`},
		{`echo '${m[a b]}'`, `echo '${m[a b]}'`},
		{`echo ${m[$k x]}`, `echo ${m[$k x]}`},
		{`echo ${a[1+2]}`, `echo ${a[1+2]}`},
		{`m[a.b]=1`, `m["a.b"]=1`},
		{`declare -A m=([a.b]=1 [x y]=3 [k]=2)`, `declare -A m=(["a.b"]=1 ["x y"]=3 [k]=2)`},
		{`echo ${m[x.gz]}`, `echo ${m["x.gz"]}`},
		{`a=(x [b.c]=y)`, `a=(x ["b.c"]=y)`},
	}
	for _, tt := range tests {
		if got, _ := quoteSubscripts(tt.in); got != tt.out {
			t.Errorf("%s: got %s, want %s", tt.in, got, tt.out)
		}
	}
}

// TestAssocBlankKeys: keys with blanks in subscripts work as in bash 5.2.
func TestAssocBlankKeys(t *testing.T) {
	sh := newTestShell(t, Limits{})
	out, errs, _ := runScript(t, sh, `declare -A m=([one]=1 [two]=2 ["sp ace"]=3); echo ${#m[@]} "${m[sp ace]}"; m[a b]=4; m[a b]+=5; echo "${m[a b]}" ${m[sp ace]}; eval 'echo ${m[a b]}'`)
	if out != "3 3\n45 3\n45\n" {
		t.Errorf("got %q (stderr %q)", out, errs)
	}
}

// TestAssocTextKeys: keys the parser cannot read as a subscript (dots,
// slashes, colons, !) are literal text to bash 5.2, in assignments, array
// literals and expansions.
func TestAssocTextKeys(t *testing.T) {
	tests := []recorded{
		{`declare -A m; m[a.b]=1; m[x.gz]+=z; m[c/d]=2; echo "${m[a.b]} ${m[x.gz]} ${m[c/d]}"`, "1 z 2\n", ""},
		{`declare -A n=([a.b]=1 [x y]=3); echo "${n[a.b]} ${n[x y]} ${#n[@]}"`, "1 3 2\n", ""},
		{`declare -A p; p[a:b]=q; p[a!b]=r; echo "${p[a:b]}${p[a!b]}"`, "qr\n", ""},
	}
	checkRecorded(t, tests, false)
}

// TestAssocBlankKeysWithAliases: alias expansion splices the text the
// statements were parsed from, which quoting subscripts changed.
func TestAssocBlankKeysWithAliases(t *testing.T) {
	src := "declare -A m=([\"sp ace\"]=3); echo \"${m[sp ace]}\"\nshopt -s expand_aliases\nalias ll='echo long'\nll; unalias ll; ll 2>/dev/null; echo $?\n"
	sh := newTestShell(t, Limits{})
	out, errs, _ := runScript(t, sh, src)
	if out != "3\nlong\nlong\n0\n" {
		t.Errorf("Run: got %q (stderr %q)", out, errs)
	}
	sh = newTestShell(t, Limits{})
	var o, e strings.Builder
	if _, err := sh.RunStdinScript(t.Context(), src, &o, &e); err != nil || o.String() != "3\nlong\nlong\n0\n" {
		t.Errorf("stdin: got %q (stderr %q, %v)", o.String(), e.String(), err)
	}
}

// TestCaseToggle: ${x~~} and ${x~} (real bash 5.2's output).
func TestCaseToggle(t *testing.T) {
	sh := newTestShell(t, Limits{})
	out, errs, _ := runScript(t, sh, `x=aBc; a=(hI Yo); printf '<%s>' "${x~~}" "${x~}" ${a[@]~~} "${a[1]~}" "${x}~"; echo`)
	if out != "<AbC><ABc><Hi><yO><yo><aBc~>\n" {
		t.Errorf("got %q (stderr %q)", out, errs)
	}
}
