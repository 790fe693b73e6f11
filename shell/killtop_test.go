package shell

import "testing"

// kill $$ in a subshell signals the top shell ($$ is its pid), which takes
// the signal when the subshell is done, as bash's parent does while it
// waits (expectations from bash 5.2).
func TestKillTopFromSubshell(t *testing.T) {
	tests := []struct {
		in, out string
		status  int
	}{
		{"(kill $$); echo after", "", 143},
		{"(kill $$; echo in); echo after", "in\n", 143},
		{"trap 'echo trapped' TERM; (kill $$; echo in); echo after $?", "in\ntrapped\nafter 0\n", 0},
		{"(kill -USR1 $$) && echo and", "", 138},
		{"( (kill $$); echo mid ); echo after", "mid\n", 143},
		{"trap 'echo t' USR1; (kill -USR1 $$); echo after $?", "t\nafter 0\n", 0},
		{"(kill -0 $$); echo after $?", "after 0\n", 0},
		{"x=$(kill $$; echo x); echo after \"$x\"", "", 143},
		{"(kill $BASHPID; echo no); echo after $?", "after 143\n", 0},
	}
	for _, tt := range tests {
		sh := newTestShell(t, Limits{})
		out, _, st := runScript(t, sh, tt.in)
		if out != tt.out || st != tt.status {
			t.Errorf("%q: got %q status %d, want %q status %d", tt.in, out, st, tt.out, tt.status)
		}
		// the signal does not linger into the next Run
		if out, _, st := runScript(t, sh, "echo ok"); out != "ok\n" || st != 0 {
			t.Errorf("%q: next Run got %q %d", tt.in, out, st)
		}
	}
}
