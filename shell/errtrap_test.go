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
		// a pipeline stage's own status is the pipeline's to judge: no ERR
		// trap in the stage for it (one from inside a compound stage)
		{"set -E; trap 'echo E $BASH_SUBSHELL' ERR; false | true; (false) | cat; { false; echo x; } | cat", "E 1\nE 1\nx\n"},
		{"(set -eE; trap 'echo ERR $?' ERR; set -o pipefail; false | true); echo $?", "ERR 1\n1\n"},
		// eval and source are simple commands: ERR runs inside, then for
		// them, with $BASH_COMMAND back to the eval; a sourced file is not a
		// function (the trap runs there without set -E, local fails)
		{"trap 'echo \"c: $BASH_COMMAND\"' ERR; eval false; f() { false; }; eval f", "c: false\nc: eval false\nc: false\nc: eval f\n"},
		{"trap 'echo \"c: $BASH_COMMAND\"' ERR; source /dev/stdin <<< 'false; echo in'", "c: false\nin\n"},
		{"trap 'echo \"c: $BASH_COMMAND\"' ERR; source /dev/stdin <<< false", "c: false\nc: source /dev/stdin <<< false\n"},
		{"source /dev/stdin <<< 'local x 2>/dev/null; echo $?'", "1\n"},
	}
	for _, tt := range tests {
		sh := newTestShell(t, Limits{})
		if out, _, _ := runScript(t, sh, tt.in); out != tt.out {
			t.Errorf("%q: got %q, want %q", tt.in, out, tt.out)
		}
	}
}
