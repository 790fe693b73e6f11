package shell

import "testing"

// Divergences the round-3 differential producers found (mapfile, traps,
// return, hash), each checked against bash 5.2's output.
func TestRound3Builtins(t *testing.T) {
	tests := []struct{ in, out string }{
		{"mapfile -t arr < /dev/null; declare -p arr", "declare -a arr=()\n"},
		{"readarray -t -C 'echo cb' -c 1 arr < <(printf 'x y\\n z\\n'); declare -p arr", "cb 0 x y\ncb 1  z\ndeclare -a arr=([0]=\"x y\" [1]=\" z\")\n"},
		{"mapfile -t -C 'echo cb' -c 2 arr < <(printf 'a\\nb\\nc\\n'); echo ${#arr[@]}", "cb 1 b\n3\n"},
		{"mapfile -n x arr <<< a 2>&1; echo $?", "bash: line 1: mapfile: x: invalid line count\n1\n"},
		{"mapfile -c 0 arr <<< a 2>/dev/null; echo $?; mapfile -O -1 arr <<< a 2>/dev/null; echo $?", "1\n1\n"},
		{"x=a; mapfile -O 2 x < /dev/null; declare -p x", "declare -a x=([0]=\"a\")\n"},
		{"( trap 'echo t $?; exit' EXIT; exit 255 ); echo $?", "t 255\n255\n"},
		{"trap 'false; return' USR1; f() { kill -USR1 $BASHPID; echo after $?; }; f; echo $?", "0\n"},
		{"f() { trap 'echo t; return 6' USR1; kill -USR1 $BASHPID; echo after; }; ( f; echo $? )", "t\n6\n"},
		{"(return 5) 2>/dev/null; echo $?", "2\n"},
		{"hash nosuch_x 2>&1; echo $?; hash ls; echo $?", "bash: line 1: hash: nosuch_x: not found\n1\n0\n"},
		{"hash -x 2>/dev/null; echo $?; hash -r; hash -d ls; echo $?", "2\n0\n"},
	}
	for _, tt := range tests {
		sh := newTestShell(t, Limits{})
		out, _, _ := runScript(t, sh, tt.in)
		if out != tt.out {
			t.Errorf("%q: got %q, want %q", tt.in, out, tt.out)
		}
	}
}
