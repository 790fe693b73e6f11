package shell

import "testing"

// TestPrintfNumbers: 'c arguments (a blank c too) and * widths convert as
// %d arguments do (outputs and statuses are real bash 5.2's).
func TestPrintfNumbers(t *testing.T) {
	tests := []struct {
		in, out string
		st      int
	}{
		{`printf '%d|%+d|%#x|' "' " "' " "' "`, "32|+32|0x20|", 0},
		{`printf '%05d|' "'x"`, "00120|", 0},
		{`printf '%-*d|' 0x1F 255`, "255                            |", 0},
		{`printf '%*d|' '"d' 7`, "                                                                                                   7|", 0},
		{`printf '%*d|' '  ' 3`, "3|", 1},
		{`printf '%d|' '  '`, "0|", 1},
		{`printf '%d|' ''`, "0|", 0},
		{`printf '%.*f|' 2 3.14159`, "3.14|", 0},
	}
	for _, tt := range tests {
		sh := newTestShell(t, Limits{})
		out, errs, st := runScript(t, sh, tt.in)
		if out != tt.out || st != tt.st {
			t.Errorf("%s: %q status %d, want %q %d (stderr %q)", tt.in, out, st, tt.out, tt.st, errs)
		}
	}
}
