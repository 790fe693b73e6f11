package shell

import (
	"strings"
	"testing"
)

// POSIX mode (set -o posix, bash --posix, bash run as sh) and readonly
// variables, as bash 5.2.15 does (each expectation recorded from it; the
// exit statuses differ between a -c string and a script read from stdin).
func TestPosixModeAssignErrors(t *testing.T) {
	tests := []struct {
		in, out, stderr string
	}{
		{"bash --posix -c 'readonly r=1; r=2; echo no'; echo $?", "127\n", "r: readonly variable"},
		{"bash --posix -c 'readonly r=1; r=2 true; echo no'; echo $?", "1\n", "r: readonly variable"},
		{"bash --posix -c 'readonly r=1; r=2 :; echo no'; echo $?", "127\n", "r: readonly variable"},
		{"bash --posix -c 'readonly r; export r=1; echo no'; echo $?", "1\n", "r: readonly variable"},
		{"bash --posix -c 'readonly r; for r in 1; do :; done; echo no'; echo $?", "127\n", "r: readonly variable"},
		{"bash --posix -c 'f() { readonly r=1; r=2; }; f; echo no'; echo $?", "127\n", "r: readonly variable"},
		{"bash --posix -c '(readonly r=1; r=2; echo no); echo $?'", "1\n", "r: readonly variable"},
		{"set -o posix; f() { readonly r=1; r=2; echo no; }; f; echo $?", "", "r: readonly variable"},
		{"sh -c 'readonly r=1; r=2; echo no'; echo $?", "127\n", "r: readonly variable"},
		// shift_verbose follows posix
		{"set -o posix; shopt shift_verbose; set +o posix; shopt shift_verbose", "shift_verbose  \ton\nshift_verbose  \toff\n", ""},
		{"sh -c 'shift; echo $?' --", "1\n", "--: line 1: shift: shift count out of range"},
		{"shopt -s shift_verbose; set -- a; shift 3; echo $?", "1\n", "shift: 3: shift count out of range"},
		{"shift -1; echo $?", "1\n", "shift: -1: shift count out of range"},
		{"shift; echo $?", "1\n", ""},
		// a local may not shadow a readonly variable; declare names itself
		{"readonly r; f() { local r=5; echo \"[$r]\"; }; f", "[]\n", "local: r: readonly variable"},
		{"readonly r; declare r=1; echo $?", "1\n", "declare: r: readonly variable"},
		{"readonly r; export r=1; echo $?", "1\n", "line 1: r: readonly variable"},
	}
	for _, tt := range tests {
		sh := newTestShell(t, Limits{})
		out, errs, _ := runScript(t, sh, tt.in)
		if out != tt.out || (tt.stderr == "" && errs != "") || !strings.Contains(errs, tt.stderr) {
			t.Errorf("%q: got %q %q, want %q %q", tt.in, out, errs, tt.out, tt.stderr)
		}
	}
}
