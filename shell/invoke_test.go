package shell

import "testing"

// A nested `bash -c` shell as bash 5.2 runs one: an expansion error that
// ends it ends it with 127 (its subshells and a script: 1), and it sees its
// command string in BASH_EXECUTION_STRING.
func TestBashDashC(t *testing.T) {
	tests := []struct{ in, out string }{
		{"bash -u -c 'echo $zz'; echo $?", "127\n"},
		{"bash -c 'echo ${x:?m}; echo no'; echo $?", "127\n"},
		{"bash -c 'set -u; (echo $zz; echo no); echo st $?'; echo $?", "st 1\n0\n"},
		{"bash -c 'set -u; f() { local a; echo $a; }; f; echo no'; echo $?", "127\n"},
		{"printf 'set -u\\necho $zz\\necho no\\n' > /tmp/u.sh; bash /tmp/u.sh; echo $?", "1\n"},
		{"set -u; (echo $zz); echo $?", "1\n"},
		{"bash -c 'echo \"$BASH_EXECUTION_STRING\"'", "echo \"$BASH_EXECUTION_STRING\"\n"},
		{"bash -n -c 'if' 2>&1; echo $?", "bash: line 2: syntax error: unexpected end of file\n2\n"},
		{"bash --version | head -1; echo $?", "GNU bash, version 5.2.15(1)-release (x86_64-pc-linux-gnu)\n0\n"},
		// BASH_SUBSHELL counts ( ), $( ) and &, not pipeline stages
		{"echo $BASH_SUBSHELL; (echo $BASH_SUBSHELL; (echo $BASH_SUBSHELL)); echo $(echo $BASH_SUBSHELL); echo $BASH_SUBSHELL | cat; (echo $BASH_SUBSHELL) | cat; bash -c 'echo $BASH_SUBSHELL'; f(){ echo $BASH_SUBSHELL; }; f & wait",
			"0\n1\n2\n1\n0\n1\n0\n1\n"},
		// a stage is one deeper, but a simple command's words expand at the
		// shell's level and a ( ) stage is not counted twice
		{"{ echo $BASH_SUBSHELL; } | cat; { (echo $BASH_SUBSHELL); } | cat; f(){ echo $BASH_SUBSHELL; }; f | cat; true | eval 'echo $BASH_SUBSHELL'; x=$(echo $BASH_SUBSHELL | cat); echo $x",
			"1\n2\n1\n1\n1\n"},
		// $LINENO in eval counts on from the eval's line; BASH_ARGV0 is $0
		{"echo\neval $'echo $LINENO\\necho $LINENO'\necho $LINENO\nf() { echo $LINENO; }\neval f", "\n2\n3\n3\n4\n"},
		{"bash -c 'echo ${BASH_ARGV0:-none}' _ a", "_\n"},
		// exec's options
		{"(exec -a NAME bash -c 'echo $0'); (exec -la NAME bash -c 'echo $0'); (exec -l bash -c 'echo $0')", "NAME\n-NAME\n-bash\n"},
		{"(exec -c printenv PATH); echo $?; (x=1 exec -c printenv x); echo $?", "1\n1\n"},
		{"exec -x true 2>&1; echo $?", "bash: line 1: exec: -x: invalid option\nexec: usage: exec [-cl] [-a name] [command [argument ...]] [redirection ...]\n2\n"},
		{"exec {v}>/tmp/ev; echo a >&$v; exec {v}>&- 2>&1; echo $?; cat /tmp/ev; unset v; exec {v}>&- 2>&1; echo $?", "0\na\nbash: line 1: v: ambiguous redirect\n1\n"},
	}
	for _, tt := range tests {
		sh := newTestShell(t, Limits{})
		out, _, _ := runScript(t, sh, tt.in)
		if out != tt.out {
			t.Errorf("%q: got %q, want %q", tt.in, out, tt.out)
		}
	}
}

// exec and env run programs as execve does: the resident (coreutils)
// command of the name, not the builtin, and never a function.
func TestExecRunsProgram(t *testing.T) {
	tests := []struct{ in, out string }{
		{`env printf '%q|' "q'q"; echo`, "\"q'q\"|\n"},
		{`(exec printf '%q|' "q'q"); echo`, "\"q'q\"|\n"},
		{`printf '%q|' "q'q"; echo`, "q\\'q|\n"},
		{`env printf -v x y 2>/dev/null; echo " $?"`, "-v 0\n"},
		{`env printf '%(%Y)T' 0 2>/dev/null; echo $?`, "1\n"},
		{`printf() { echo fn; }; env printf 'p\n'; (exec printf 'e\n'); unset -f printf`, "p\ne\n"},
		{`f() { echo fn; }; env f 2>/dev/null; echo $?`, "127\n"},
	}
	for _, tt := range tests {
		sh := newTestShell(t, Limits{})
		out, _, _ := runScript(t, sh, tt.in)
		if out != tt.out {
			t.Errorf("%q: got %q, want %q", tt.in, out, tt.out)
		}
	}
}
