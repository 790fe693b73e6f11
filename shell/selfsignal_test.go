package shell

import "testing"

// TestSelfSignalStatus: a signal the shell sends itself (kill $$) ends it
// with 128+N, or with the status its trap's exit gives; kill's own 0 used
// to replace it. Outputs and statuses recorded from bash 5.2.
func TestSelfSignalStatus(t *testing.T) {
	for _, tc := range []struct {
		script, out string
		status      int
	}{
		{`kill $$; echo no`, "", 143},
		{`kill -USR1 $$; echo no`, "", 138},
		{`trap "exit 7" USR1; kill -USR1 $$; echo after`, "", 7},
		{`trap "echo t; exit 7" TERM; kill $$; echo no`, "t\n", 7},
		{`trap "echo t" TERM; kill $$; echo yes $?`, "t\nyes 0\n", 0},
		{`f() { kill -HUP $$; }; f; echo no`, "", 129},
		{`trap '' TERM; kill $$; echo ignored`, "ignored\n", 0},
	} {
		sh := newTestShell(t, Limits{})
		out, _, st := runScript(t, sh, tc.script)
		if out != tc.out || st != tc.status {
			t.Errorf("%s: %q status %d, want %q status %d", tc.script, out, st, tc.out, tc.status)
		}
	}
}
