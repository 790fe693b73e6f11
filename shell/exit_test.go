package shell

import (
	"strings"
	"testing"
)

// exit's and return's operand as bash 5.2 reads it.
func TestExitOperand(t *testing.T) {
	tests := []struct {
		in, out, stderr string
		status          int
	}{
		{"exit 1 2; echo after", "", "exit: too many arguments", 1},
		{"(exit 1 2); echo $?", "1\n", "exit: too many arguments", 0},
		{"(exit abc 2); echo $?", "2\n", "exit: abc: numeric argument required", 0},
		{"(exit -- 3); echo $?", "3\n", "", 0},
		{"(exit -1); echo $?", "255\n", "", 0},
		{"(exit ' 4 '); echo $?", "4\n", "", 0},
		{"(exit 99999999999999999999); echo $?", "2\n", "numeric argument required", 0},
		{"f() { return -- 5; }; f; echo $?", "5\n", "", 0},
		{"f() { return abc; echo in; }; f; echo $?", "2\n", "return: abc: numeric argument required", 0},
	}
	for _, tt := range tests {
		sh := newTestShell(t, Limits{})
		out, errs, st := runScript(t, sh, tt.in)
		if out != tt.out || st != tt.status || !strings.Contains(errs, tt.stderr) {
			t.Errorf("%q: got %q %q %d, want %q %q %d", tt.in, out, errs, st, tt.out, tt.stderr, tt.status)
		}
	}
}
