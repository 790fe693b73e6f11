package shell

import (
	"strings"
	"testing"
)

// TestAssocOrderLikeBash: associative arrays list their keys in bash
// 5.2's hash-table order, through growth, unset and compound assignment
// (recorded from bash 5.2; assocorder.go has the model).
func TestAssocOrderLikeBash(t *testing.T) {
	tests := []recorded{
		{`declare -A m=([x]=1 [y]=2 [z]=3 [foo]=4 [bar]=5); echo "${!m[@]}"; echo "${m[@]}"`, "z y x foo bar\n3 2 1 4 5\n", ""},
		{`declare -A m; for k in a b c d e f g h i j; do m[$k]=$k; done; for k in "${!m[@]}"; do printf %s "$k"; done; echo`, "jihgfedcba\n", ""},
		{`declare -A m=([zz]=1 [aa]=2); m+=([mm]=3 [a]=4); echo ${!m[*]}; m=([q]=1 [r]=2); echo ${!m[*]}`, "aa a zz mm\nr q\n", ""},
		{`declare -A e; e[w]=1; e[v]=2; e[u]=3; unset "e[v]"; e[v]=4; echo ${!e[@]}; declare -p e`, "w v u\ndeclare -A e=([w]=\"1\" [v]=\"4\" [u]=\"3\" )\n", ""},
		{`declare -A m=(["a b"]=1 [c]=2); echo "<${m[@]@K}>"; printf "<%s>" "${m[@]@k}"; echo`, "<c \"2\" \"a b\" \"1\" >\n<c><2><a b><1>\n", ""},
		{`f() { local -A l=([p]=1 [o]=2 [i]=3); echo ${!l[@]}; }; f`, "p o i\n", ""},
		{`declare -A m; for ((i=0;i<2100;i++)); do m[k$i]=1; done; k=(${!m[@]}); echo ${#k[@]} ${k[0]} ${k[1]} ${k[2]} ${k[1000]} ${k[2099]}`, "2100 k1698 k1699 k1696 k1009 k1048\n", ""},
		{`declare -A m; for ((i=0;i<2100;i++)); do m[k$i]=1; done; for ((i=0;i<2000;i++)); do unset "m[k$i]"; done; m[x]=1; m[y]=2; echo ${!m[@]} | cut -c1-60`, "k2095 k2094 k2097 k2096 k2091 k2090 k2093 k2092 k2099 k2098 \n", ""},
	}
	checkRecorded(t, tests, false)
}

// TestStateKeepsAssocOrder: a hibernated and restored session lists an
// associative array (grown past bash's first table size) in the same
// order as one that never stopped.
func TestStateKeepsAssocOrder(t *testing.T) {
	first := `declare -A m; for ((i=0;i<2100;i++)); do m[k$i]=$i; done; m[x]=1`
	second := `echo "${!m[@]}"; m[y]=2; echo "${!m[@]}" | cut -c1-40`
	unbroken := newTestShell(t, Limits{})
	runScript(t, unbroken, first)
	want, _, _ := runScript(t, unbroken, second)

	half := newTestShell(t, Limits{})
	runScript(t, half, first)
	state, err := half.MarshalState()
	if err != nil {
		t.Fatal(err)
	}
	restored, err := Restore(half.cfg, state)
	if err != nil {
		t.Fatal(err)
	}
	got, _, _ := runScript(t, restored, second)
	if got != want {
		t.Errorf("restored order differs:\n got %.200q\nwant %.200q", got, want)
	}
	if !strings.HasPrefix(want, "k1698 k1699 k1696") {
		t.Errorf("unexpected order %.80q", want)
	}
}

// TestTransformAttrsLikeBash: "${a[@]@A}" is three words (one when IFS
// has no space), "${a[*]@A}" one, and @K/@A of an unset array none
// (found by the transform producer; recorded from bash 5.2).
func TestTransformAttrsLikeBash(t *testing.T) {
	tests := []recorded{
		{`arr=("#c" "a b"); printf "<%s>" "${arr[@]@A}" "${arr[*]@A}"; echo`, `<declare><-a><arr=([0]="#c" [1]="a b")><declare -a arr=([0]="#c" [1]="a b")>` + "\n", ""},
		{`arr=(x); IFS=:; printf "<%s>" "${arr[@]@A}"; echo`, `<declare -a arr=([0]="x")>` + "\n", ""},
		{`declare -a x=Ab; echo "${x@A}" "${x@a}"; declare -A m2=([k]=v); echo "${m2@A}"`, "declare -a x='Ab' a\ndeclare -A m2\n", ""},
		{`unset arr; printf "<%s>" "${arr[@]@A}" "${arr[*]@A}"; echo`, "<>\n", ""},
	}
	checkRecorded(t, tests, false)
}
