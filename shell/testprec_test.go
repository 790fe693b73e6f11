package shell

import "testing"

// TestCondPrecedence: in [[ ]] && binds tighter than ||, both group from
// the left and ! negates the next term only (each status recorded from
// bash 5.2; mvdan's tree gave the other answer in the first five).
func TestCondPrecedence(t *testing.T) {
	tests := []struct {
		expr string
		want string
	}{
		{`-z x && x || y`, "0"},
		{`! -z x && -z x`, "1"},
		{`! x || x`, "0"},
		{`-z x || ! -z x && y`, "0"},
		{`! ( -z x ) || y`, "0"},
		{`y || -z x && -z x`, "0"},
		{`-z x || y && -z x`, "1"},
		{`! ! ! 1 -eq 1`, "1"},
		{`( -z x || y ) && ! -z x`, "0"},
		{`-n x && ( -z x || -z y ) || -z z`, "1"},
	}
	for _, tt := range tests {
		sh := newTestShell(t, Limits{})
		out, errs, _ := runScript(t, sh, "[[ "+tt.expr+" ]]; echo -n $?")
		if out != tt.want {
			t.Errorf("[[ %s ]]: got %q, want %s (stderr %q)", tt.expr, out, tt.want, errs)
		}
	}
	// eval text and function bodies get the same tree
	sh := newTestShell(t, Limits{})
	if out, errs, _ := runScript(t, sh, `eval '[[ -z x && x || y ]]'; echo $?; f() { [[ ! x || x ]]; }; f; echo $?`); out != "0\n0\n" {
		t.Errorf("eval/function: got %q (stderr %q)", out, errs)
	}
}
