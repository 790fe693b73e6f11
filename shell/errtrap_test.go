package shell

import "testing"

// The ERR trap and set -e as bash 5.2 applies them (expectations recorded
// from it): a compound command is not checked again after its inner
// command; a function call is a simple command whatever list inside
// produced its status; without set -E a subshell lists the inherited ERR
// trap but does not run it.
func TestErrTrapAndErrexit(t *testing.T) {
	tests := []struct{ in, out string }{
		{"set -E; trap \"echo ERR\" ERR; f() { false; }; f; echo done", "ERR\nERR\ndone\n"},
		{"set -E; trap \"echo ERR\" ERR; f() { if true; then false; fi; }; f; echo done", "ERR\nERR\ndone\n"},
		{"set -E; trap \"echo ERR\" ERR; { false; }; echo done", "ERR\ndone\n"},
		{"trap \"echo ERR\" ERR; (false); echo done", "ERR\ndone\n"},
		{"set -E; trap \"echo ERR\" ERR; (false); echo done", "ERR\nERR\ndone\n"},
		{"set -e; f() { false && true; }; f; echo survived", ""},
		{"set -e; { false && true; }; echo survived", "survived\n"},
		{"trap \"echo E\" ERR; (trap -p ERR; false); echo done", "trap -- 'echo E' ERR\nE\ndone\n"},
		{"trap \"echo E\" ERR; f() { false && true; }; f; echo done", "E\ndone\n"},
		{"set -E; trap \"echo E\" ERR; x=$(false); echo \"[$x]\" done", "E\n[E] done\n"},
		{"(trap \"echo E\" ERR; false); echo done", "E\ndone\n"},
		{"trap \"echo E\" ERR; case x in x) false;; esac; echo d", "E\nd\n"},
		{"set -e; { echo in; } > /nonexistent/f; echo no", ""},
		{"trap 'echo E' ERR; while false; do :; done > /nonexistent/f; echo d", "E\nd\n"},
		// an ERR trap that exits keeps its own status
		{"(trap 'exit 3' ERR; false; echo no); echo $?", "3\n"},
		{"x=$(trap 'exit 3' ERR; false; echo no); echo $? \"[$x]\"", "3 []\n"},
		{"(set -e; trap 'exit 4' ERR; false); echo $?", "4\n"},
		{"(trap 'exit' ERR; false; echo no); echo $?", "1\n"},
	}
	for _, tt := range tests {
		sh := newTestShell(t, Limits{})
		if out, _, _ := runScript(t, sh, tt.in); out != tt.out {
			t.Errorf("%q: got %q, want %q", tt.in, out, tt.out)
		}
	}
}
