package shell

import (
	"context"
	"strings"
	"testing"
	"time"
)

// Issue 23: bash reads, parses and runs one complete command (a line's
// list) at a time, so the commands before a syntax error run, the bad line
// runs none of its commands, and then a script ends with status 2 while
// source and eval only return 2. Expectations are bash 5.2's stdout and
// status (stderr is checked for the message, not the line it quotes).
func TestIncrementalSyntaxError(t *testing.T) {
	tests := []struct {
		name, in, out string
		status        int
		stderr        string // a substring
	}{
		{"before run", "echo a\necho b )\necho c\n", "a\n", 2, "line 2: syntax error near unexpected token `)'"},
		{"bad line runs nothing", "echo a; echo b )\necho c\n", "", 2, "line 1: syntax error near unexpected token `)'"},
		{"compound never runs", "echo a\nif true; then\n  echo in\n  )\nfi\necho c\n", "a\n", 2, "line 4: syntax error near unexpected token `)'"},
		{"functions before run", "f() { echo f; }\nf\nwhile true; do\n f\n )\ndone\nf\n", "f\n", 2, "syntax error near unexpected token `)'"},
		{"heredoc before", "cat <<E\nhd\nE\necho b\n(\n", "hd\nb\n", 2, "syntax error: unexpected end of file"},
		{"exit before", "echo a\nexit 3\n)\n", "a\n", 3, ""},
		{"EXIT trap runs", "trap 'echo trap' EXIT\necho a\n)\n", "a\ntrap\n", 2, "syntax error near unexpected token `)'"},
		{"set -e before", "set -e\necho a\nfalse\n)\n", "a\n", 1, ""},
		{"background job before", "echo a &\nwait\n)\n", "a\n", 2, "syntax error"},
		{"unterminated if", "echo a\nif true; then\n", "a\n", 2, "syntax error: unexpected end of file"},
		{"eval one line", "eval 'echo a; )'; echo after $?\n", "after 2\n", 0, "syntax error near unexpected token `)'"},
		{"eval lines before", "eval 'echo a\n)\necho b'; echo after $?\n", "a\nafter 2\n", 0, "syntax error near unexpected token `)'"},
		{"eval exit before", "eval 'echo a; exit 4\n)'; echo no\n", "a\n", 4, ""},
		{"eval in function", "f() { eval 'echo a\n)'; echo in $?; }; f; echo out\n", "a\nin 2\nout\n", 0, "syntax error"},
		{"source lines before", "printf 'echo s1\\n)\\necho s2\\n' > /tmp/brk.sh\n. /tmp/brk.sh; echo after $?\n", "s1\nafter 2\n", 0, "syntax error near unexpected token `)'"},
		{"source in posix mode", "set -o posix\nprintf 'echo s1\\n)\\n' > /tmp/brk.sh\n. /tmp/brk.sh; echo after $?\n", "s1\nafter 2\n", 0, "syntax error"},
		{"DEBUG trap broken", "trap 'echo t\n)' DEBUG; echo x; echo y\n", "t\nx\nt\ny\n", 0, "syntax error near unexpected token `)'"},
		{"ERR trap broken", "trap 'echo t\n)' ERR; false; echo after $?\n", "t\nafter 1\n", 0, "syntax error"},
		{"ERR trap broken set -e", "set -e; trap 'echo t\n)' ERR; false; echo after $?\n", "t\n", 2, "syntax error"},
		{"signal trap broken", "trap 'echo t\n)' USR1; kill -USR1 $$; echo after $?\n", "t\nafter 0\n", 0, "syntax error"},
		{"EXIT trap broken", "trap 'echo t\n)' EXIT; echo b\n", "b\nt\n", 0, "syntax error"},
		{"EXIT trap exit before", "trap 'echo t\nexit 5\n)' EXIT; echo b\n", "b\nt\n", 5, ""},
		{"bash -c", "bash -c 'echo a\n)'; echo st $?\n", "a\nst 2\n", 0, "syntax error near unexpected token `)'"},
		{"mended line before a bad one", "echo $(( x=9 y=41 ))\necho next\n)\necho after\n", "next\n", 2, "line 3: syntax error near unexpected token `)'"},
		{"(( as two subshells", "((echo abc; echo def;); echo ghi)\n((echo a) )\n", "abc\ndef\nghi\na\n", 0, ""},
		{"null arithmetic", "(( ))\necho $? $(( )) $(())\n", "1 0 0\n", 0, ""},
		{"arithmetic with text after it", "(( x=9 y=41 )); echo st $?\n", "st 1\n", 0, "syntax error in expression (error token is \"y=41"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sh := newTestShell(t, Limits{})
			out, errs, st := runScript(t, sh, tt.in)
			if out != tt.out || st != tt.status || !strings.Contains(errs, tt.stderr) {
				t.Errorf("%q:\n got %q status %d stderr %q\nwant %q status %d stderr containing %q", tt.in, out, st, errs, tt.out, tt.status, tt.stderr)
			}
			// The session is still usable after the error.
			if out, _, st := runScript(t, sh, "echo ok"); !strings.HasSuffix(out, "ok\n") || st != 0 { // (a DEBUG trap stays set)
				t.Errorf("next Run: %q %d", out, st)
			}
		})
	}
}

// The statements run before a syntax error are under the Run's limits and
// context like any others.
func TestIncrementalLimits(t *testing.T) {
	sh := newTestShell(t, Limits{MaxCommands: 100})
	_, errs, st := runScript(t, sh, "while :; do :; done\n)\n")
	if st != 125 || !strings.Contains(errs, "limit") || strings.Contains(errs, "syntax error") {
		t.Errorf("command limit before a syntax error: status %d stderr %q", st, errs)
	}
	sh = newTestShell(t, Limits{})
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	var out, eb strings.Builder
	st, err := sh.Run(ctx, "while :; do :; done\n)\n", strings.NewReader(""), &out, &eb)
	if err != nil || st == 0 || st == 2 {
		t.Errorf("cancelled before a syntax error: status %d err %v stderr %q", st, err, eb.String())
	}
	sh = newTestShell(t, Limits{MaxCallDepth: 5})
	_, errs, st = runScript(t, sh, "f() { eval 'f\n)'; }; f\n")
	if st != 125 || !strings.Contains(errs, "nesting limit") {
		t.Errorf("eval nesting before a syntax error: status %d stderr %q", st, errs)
	}
}

// bash reports an unexpected end of file on the line after a script's
// last, but an unclosed quote or arithmetic on the line it opened on.
// (Expectations from bash 5.2 -c and a script file.)
func TestSyntaxErrorEOFLine(t *testing.T) {
	tests := []struct{ in, stderr string }{
		{"if true; then", "bash: line 2: syntax error: unexpected end of file\n"},
		{"if true; then\n", "bash: line 2: syntax error: unexpected end of file\n"},
		{"if true; then\n\n\n", "bash: line 4: syntax error: unexpected end of file\n"},
		{"echo a\n(\necho b", "a\nbash: line 4: syntax error: unexpected end of file\n"},
		{"f() {\necho", "bash: line 3: syntax error: unexpected end of file\n"},
		{"echo a &&\n", "bash: line 2: syntax error: unexpected end of file\n"},
		{"echo $(\nb", "bash: line 3: unexpected EOF while looking for matching `)'\n"},
		{"echo \"a\nb", "bash: line 1: unexpected EOF while looking for matching `\"'\n"},
		{"x=$((1+\n", "bash: line 1: unexpected EOF while looking for matching `)'\n"},
		{"printf 'echo s\\nif true; then\\n' > /tmp/e.sh; . /tmp/e.sh", "s\n/tmp/e.sh: line 3: syntax error: unexpected end of file\n"},
	}
	for _, tt := range tests {
		sh := newTestShell(t, Limits{})
		out, errs, st := runScript(t, sh, tt.in)
		if out+errs != tt.stderr || st != 2 && !strings.Contains(tt.in, "/tmp/e.sh") {
			t.Errorf("%q: output %q status %d, want %q", tt.in, out+errs, st, tt.stderr)
		}
	}
}
