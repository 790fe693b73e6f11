package shell

import (
	"strings"
	"testing"
)

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

// time's operands as bash 5.2 reads them: `!` after time (or time -p)
// negates the timed pipeline, `--` ends time's options and selects the
// POSIX format. Recorded from /usr/bin/bash with TIMEFORMAT='T' so that
// the figures do not vary; "P" marks the POSIX format's first line.
func TestTimeOperands(t *testing.T) {
	const posix = "real 0.00\nuser 0.00\nsys 0.00\n"
	tests := []struct{ in, stdout, stderr string }{
		{"time ! true; echo $?", "1\n", "T\n"},
		{"time -p ! true; echo $?", "1\n", posix},
		{"x=1; time ! [ $x = 1 ]; echo $?", "1\n", "T\n"},
		{"f(){ time ! false; }; f; echo $?", "0\n", "T\n"},
		{"time\t!\tfalse;echo $?", "0\n", "T\n"},
		{"time -- true; echo $?", "0\n", posix},
		{"time -p -- true; echo $?", "0\n", posix},
		{"time -p -- ! true; echo $?", "1\n", posix},
		{"time --; echo $?", "0\n", posix},
		{"time -- true | cat; echo $?", "0\n", posix},
		{"time -- -p true; echo $?", "127\n", "bash: line 1: -p: command not found\n" + posix},
		{`echo "time ! x"`, "time ! x\n", ""},
		{"echo a; time ! true\necho $LINENO", "a\n3\n", "T\n"}, // LINENO counts the TIMEFORMAT line
	}
	for _, tt := range tests {
		sh := newTestShell(t, Limits{})
		out, errs, _ := runScript(t, sh, "TIMEFORMAT=T\n"+tt.in)
		errs = strings.ReplaceAll(errs, "line 2:", "line 1:") // the TIMEFORMAT line
		if out != tt.stdout || errs != tt.stderr {
			t.Errorf("%q: stdout %q stderr %q, want %q %q", tt.in, out, errs, tt.stdout, tt.stderr)
		}
	}
}
