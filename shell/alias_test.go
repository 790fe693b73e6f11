package shell

import "testing"

// TestAliasReadTime: aliases are expanded as bash reads each command (the
// outputs are real bash 5.2's, run as a script file).
func TestAliasReadTime(t *testing.T) {
	const on = "shopt -s expand_aliases\n"
	tests := []struct{ name, in, out string }{
		{"trailing blank", on + "alias hi='echo hi '\nalias w=world\nhi w", "hi world\n"},
		{"same line keeps expansion", on + "alias ll='echo long'\nll; unalias ll; ll 2>/dev/null; echo $?", "long\nlong\n0\n"},
		{"defined on the same line", on + "alias x='echo a'; x 2>/dev/null; echo $?", "127\n"},
		{"function keeps definition time", on + "alias x='echo a'\nf() { x b; }\nalias x='echo c'\nf; x d", "a b\nc d\n"},
		{"self reference", on + "alias ls='echo ls -F'\nls x", "ls -F x\n"},
		{"chain", on + "alias a='b ' b='echo B ' c=C\na c", "B C\n"},
		{"eval", on + "alias x='echo a'\neval 'x e'; eval $'alias x=\"echo z\"\\nx f'", "a e\nz f\n"},
		{"quoted word", on + "alias x='echo a'\n'x' 2>/dev/null; echo $?; \\x 2>/dev/null; echo $?", "127\n127\n"},
		{"substitution and loop", on + "alias x='echo a'\ny=$(x q); echo \"$y\"; for i in 1; do x $i; done", "a q\na 1\n"},
		{"substitutions expand when run", on + "alias e=\"echo a\"\nf() { echo $(e f); x=`e g`; echo $x; }\nalias e=\"echo b\"; echo $(e 1) \"$(e 2)\" >/dev/null; echo $(e 4)\nf\nalias ls=\"echo ls -F\"\necho $(ls x)", "b 4\nb f\nb g\nls -F x\n"},
		{"eval then substitution", on + "eval $'alias e=\"echo z\"\\ne 2'; y=$(e 3); echo \"$y\"", "z 2\nz 3\n"},
		{"off by default", "alias x='echo a'\nx 2>/dev/null; echo $?", "127\n"},
		{"list value", on + "alias x='echo one; echo two'\nx three", "one\ntwo three\n"},
		{"compound read whole", on + "alias x='echo a'\nif true; then\n alias x='echo b'\n x 1\nfi\nx 2", "a 1\nb 2\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sh := newTestShell(t, Limits{})
			out, errs, _ := runScript(t, sh, tt.in)
			if out != tt.out {
				t.Errorf("stdout %q, want %q (stderr %q)", out, tt.out, errs)
			}
		})
	}
}

// TestAliasExpansionBounded: aliases that grow the text at every use stop
// at maxAliasGrowth with a limit error, not by exhausting memory.
func TestAliasExpansionBounded(t *testing.T) {
	sh := newTestShell(t, Limits{})
	script := "shopt -s expand_aliases\nbig=$(printf '%0100000d' 0)\nalias x=\"echo $big\"\n" +
		"x; x; x; x; x; x; x; x; x; x; x; x; x; x; x; x; x; x; x; x; x; x; x; x; x; x; x; x; x; x; x; x; x; x; x; x; x; x; x; x; x; x; x; x; x; x; x; x; x\necho after\n"
	out, errs, st := runScript(t, sh, script)
	if st != StatusLimit || len(out) != 0 {
		t.Errorf("status %d stdout %d bytes, want %d and nothing (stderr %q)", st, len(out), StatusLimit, errs)
	}
}

// TestAliasProcSubstRace: a process substitution expands its aliases on
// its own runner while the parent goes on (a -race report once).
func TestAliasProcSubstRace(t *testing.T) {
	sh := newTestShell(t, Limits{})
	out, errs, _ := runScript(t, sh, "shopt -s expand_aliases\nalias e='echo p'\nf() { alias g=h; cat \"$1\"; }\nf <(e 1) | cat; f <(e 2)")
	if out != "p 1\np 2\n" {
		t.Errorf("got %q (stderr %q)", out, errs)
	}
}
