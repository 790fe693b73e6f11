package shell

import "testing"

const (
	errTrapEcho = "trap 'echo \"e: $BASH_COMMAND\"' ERR\n"
	dbgTrapEcho = "trap 'echo \"d: $BASH_COMMAND\"' DEBUG\n"
)

// bashCommandCases: $BASH_COMMAND, the DEBUG trap's reach and assignment
// errors, as bash 5.2 has them (recorded from /usr/bin/bash reading the
// script on stdin).
var bashCommandCases = []struct{ in, out, stderr string }{
	{errTrapEcho + "false; x=1; ls /nope 2>/dev/null", "e: false\ne: ls /nope 2> /dev/null\n", ""},
	{"trap 'echo \"x: $BASH_COMMAND\"' EXIT; echo hi; false", "hi\nx: false\n", ""},
	{`echo "$BASH_COMMAND"`, "echo \"$BASH_COMMAND\"\n", ""},
	{"BASH_COMMAND=x; echo $BASH_COMMAND", "echo $BASH_COMMAND\n", ""},
	{errTrapEcho + "f(){ return 3; }; f a b", "e: return 3\n", ""},
	{errTrapEcho + "false | true | false", "e: false\n", ""},
	{errTrapEcho + "[[ 1 = 2 ]]", "e: [[ 1 = 2 ]]\n", ""},
	{errTrapEcho + "x=$(false)", "e: x=$(false)\n", ""},
	{errTrapEcho + "(false)", "e: ( false )\n", ""},
	{errTrapEcho + "cat <<EOF >/nope/x\nhi\nEOF", "e: cat <<EOF > /nope/x\nhi\nEOF\n\n",
		"bash: line 2: /nope/x: No such file or directory\n"},
	{dbgTrapEcho + "echo a | cat >/dev/null\nlet x=1\necho 2>&1 >/dev/null", "d: echo a\nd: cat > /dev/null\nd: let x=1\nd: echo 2>&1 > /dev/null\n", ""},
	{dbgTrapEcho + "{ echo b; } | cat; ( echo in )", "d: cat\nb\nin\n", ""},
	{"declare -r q=1; q=2; echo after", "", "bash: line 1: q: readonly variable\n"},
	{"declare -r q=1; q=2 echo hi; echo $?", "hi\n0\n", "bash: line 1: q: readonly variable\n"},
	{"declare -r q=1; eval 'q=2; echo inner'; echo after $?", "after 1\n", "bash: line 1: q: readonly variable\n"},
	{"a=(); a[-1]=x; echo after", "", "bash: line 1: a[-1]: bad array subscript\n"},
	{"declare -r q=1; (q=2; echo in); echo after $?", "after 1\n", "bash: line 1: q: readonly variable\n"},
	{"declare -r q=1\nq=2\necho after $?", "after 1\n", "bash: line 2: q: readonly variable\n"},
	{"set -o posix; declare -r q=1\nq=2\necho after $?", "", "bash: line 2: q: readonly variable\n"},
	{"declare -r q=1; f(){ q=3; echo inf; }\nf\necho after $?", "after 1\n", "main: line 1: q: readonly variable\n"},
	// Messages name the file a function or sourced text came from.
	{"f(){ cd /nope; }\nf\nf(){ echo \"${BASH_SOURCE[@]}\"; }; f", "main\n", "main: line 1: cd: /nope: No such file or directory\n"},
	{"echo 'cd /nope' > /tmp/bc.sh; . /tmp/bc.sh", "", "/tmp/bc.sh: line 1: cd: /nope: No such file or directory\n"},
	{"bash -c 'f(){ cd /nope; echo \"${BASH_SOURCE[@]}\"; }; f'", "environment\n", "environment: line 1: cd: /nope: No such file or directory\n"},
	// a syntax error names eval and quotes the line it could not read
	{"echo\neval \"if\"\neval \"echo )\"\neval \"x=\\\"a\"\neval \"cd /nope\"", "\n",
		"bash: eval: line 3: syntax error: unexpected end of file\nbash: eval: line 3: syntax error near unexpected token `)'\nbash: eval: line 3: `echo )'\nbash: eval: line 4: unexpected EOF while looking for matching `\"'\nbash: line 5: cd: /nope: No such file or directory\n"},
	{"if true; then\n  echo )\nfi", "", "bash: line 2: syntax error near unexpected token `)'\nbash: line 2: `  echo )'\n"},
}

func TestBashCommand(t *testing.T) {
	for _, tt := range bashCommandCases {
		sh := newTestShell(t, Limits{})
		if out, errs, _ := runScript(t, sh, tt.in); out != tt.out || errs != tt.stderr {
			t.Errorf("%q: got %q %q, want %q %q", tt.in, out, errs, tt.out, tt.stderr)
		}
	}
}

// (( )) in $BASH_COMMAND and declare -f keeps the blanks inside its
// parentheses as written (recorded from bash 5.2; warren printed ((0))).
func TestArithCmdText(t *testing.T) {
	checkRecorded(t, []recorded{
		{"trap 'echo \"[$BASH_COMMAND]\"' DEBUG; (( 1 )); ((y = 3)); ((z))", "[(( 1 ))]\n[((y = 3))]\n[((z))]\n", ""},
		{"f(){ (( 1 )); ((y = 3)); (( x += 1 )); }; declare -f f", "f () \n{ \n    (( 1 ));\n    ((y = 3));\n    (( x += 1 ))\n}\n", ""},
		{"( set -e; trap 'echo \"cmd: $BASH_COMMAND\"' ERR; (( 0 )); echo end ); echo $?", "cmd: (( 0 ))\n1\n", ""},
	}, true)
}
