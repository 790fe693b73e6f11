package shell

import "testing"

// time honours TIMEFORMAT and -p as bash 5.2 does.
func TestTimeFormat(t *testing.T) {
	tests := []struct{ in, stderr string }{
		{"TIMEFORMAT='%2U|%1S|%%|%0R|x'; time { :; }", "0.00|0.0|%|0|x\n"},
		{"time -p { :; }", "real 0.00\nuser 0.00\nsys 0.00\n"},
		{"TIMEFORMAT=; time :", ""},
		{"TIMEFORMAT='%Z'; time :", "bash: line 1: TIMEFORMAT: `Z': invalid format character\n"},
	}
	for _, tt := range tests {
		sh := newTestShell(t, Limits{})
		if _, errs, _ := runScript(t, sh, tt.in); errs != tt.stderr {
			t.Errorf("%q: stderr %q, want %q", tt.in, errs, tt.stderr)
		}
	}
}
