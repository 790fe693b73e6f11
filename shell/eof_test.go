package shell

import (
	"strings"
	"testing"
)

// Where the text ends inside a quote, an expansion or a here-document,
// bash says what it was looking for (a here-document is closed by the end
// of the text, with a warning, and runs). Expectations are bash 5.2's.
func TestEOFErrors(t *testing.T) {
	tests := []struct {
		name, in, out, stderr string
		status                int
	}{
		{"single quote", "echo 'a", "", "bash: line 1: unexpected EOF while looking for matching `''\n", 2},
		{"double quote lines", "echo ok\necho \"a\nb\n", "ok\n", "bash: line 2: unexpected EOF while looking for matching `\"'\n", 2},
		{"backquote", "echo `a\n", "", "bash: line 1: unexpected EOF while looking for matching ``'\n", 2},
		{"cmdsubst after the end", "echo $(a\nb", "", "bash: line 3: unexpected EOF while looking for matching `)'\n", 2},
		{"paramexp", "x=${a", "", "bash: line 1: unexpected EOF while looking for matching `}'\n", 2},
		{"paramexp empty", "echo ok\nx=${", "ok\n", "bash: line 2: unexpected EOF while looking for matching `}'\n", 2},
		{"arith operator", "echo $((1+", "", "bash: line 1: unexpected EOF while looking for matching `)'\n", 2},
		{"arith empty", "echo $((", "", "bash: line 1: unexpected EOF while looking for matching `)'\n", 2},
		{"arith unclosed", "echo $((1+2", "", "bash: line 1: unexpected EOF while looking for matching `)'\n", 2},
		{"subshell stays eof", "(echo a", "", "bash: line 2: syntax error: unexpected end of file\n", 2},
		{"eval paramexp", "eval 'x=${'; echo st=$?", "st=2\n", "unexpected EOF while looking for matching `}'\n", 0},
		{"heredoc", "cat <<EOT\nabc", "abc\n", "bash: line 2: warning: here-document at line 1 delimited by end-of-file (wanted `EOT')\n", 0},
		{"heredoc after stderr", "echo a >&2\ncat <<EOT\nabc\n$x\n", "abc\n\n", "a\nbash: line 4: warning: here-document at line 2 delimited by end-of-file (wanted `EOT')\n", 0},
		{"heredoc quoted", "x=1\ncat <<'E O'\n$x\n", "$x\n", "bash: line 3: warning: here-document at line 2 delimited by end-of-file (wanted `E O')\n", 0},
		{"heredoc tab strip", "cat <<-EOT\n\tabc\n", "abc\n", "bash: line 2: warning: here-document at line 1 delimited by end-of-file (wanted `EOT')\n", 0},
		{"heredoc in open function", "f() { cat <<EOT\nabc\n", "", "bash: line 2: warning: here-document at line 1 delimited by end-of-file (wanted `EOT')\nbash: line 3: syntax error: unexpected end of file\n", 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sh := newTestShell(t, Limits{})
			out, errs, st := runScript(t, sh, tt.in)
			if out != tt.out || st != tt.status || (errs != tt.stderr && !(strings.HasPrefix(tt.name, "eval") && strings.HasSuffix(errs, tt.stderr))) {
				t.Errorf("%q:\n got %q status %d stderr %q\nwant %q status %d stderr %q", tt.in, out, st, errs, tt.out, tt.status, tt.stderr)
			}
		})
	}
}
