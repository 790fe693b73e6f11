package shell

import (
	"io/fs"
	"strings"
	"testing"
	"time"
)

// Fifos behave as on Linux inside one Run: a reader waits for a writer
// (bounded by the deadline), data flows between them, EOF after the last
// writer.
func TestFifo(t *testing.T) {
	tests := []struct {
		name    string
		lim     Limits
		script  string
		out     string
		status  int
		stderr  string
		maxTime time.Duration
	}{
		{"reader without writer waits for the deadline", Limits{Timeout: 500 * time.Millisecond}, `cat /tmp/f; echo unreachable`, "", StatusTimeout, "time limit exceeded", 1500 * time.Millisecond},
		{"read builtin without writer", Limits{Timeout: 500 * time.Millisecond}, `read -r x < /tmp/f; echo unreachable`, "", StatusTimeout, "time limit exceeded", 1500 * time.Millisecond},
		{"writer without reader", Limits{Timeout: 500 * time.Millisecond}, `echo hi > /tmp/f; echo unreachable`, "", StatusTimeout, "time limit exceeded", 1500 * time.Millisecond},
		{"background writer", Limits{}, `echo hi > /tmp/f & cat /tmp/f`, "hi\n", 0, "", 5 * time.Second},
		{"background reader", Limits{}, `cat /tmp/f > /tmp/out & printf 'a\nb\n' > /tmp/f; wait; cat /tmp/out`, "a\nb\n", 0, "", 5 * time.Second},
		{"read loop", Limits{}, `{ echo a; echo b; } > /tmp/f & while read -r l; do echo "got $l"; done < /tmp/f`, "got a\ngot b\n", 0, "", 5 * time.Second},
		{"twice", Limits{}, `for i in 1 2; do echo $i > /tmp/f & cat /tmp/f; wait; done`, "1\n2\n", 0, "", 5 * time.Second},
		{"read-write does not wait", Limits{}, `exec 3<>/tmp/f; echo x >&3; read -r y <&3; echo $y`, "x\n", 0, "", 5 * time.Second},
		{"test -p", Limits{}, `[[ -p /tmp/f ]] && echo fifo`, "fifo\n", 0, "", 5 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sh := newTestShell(t, tt.lim)
			if err := sh.FS().Mknod("/tmp/f", fs.ModeNamedPipe|0o644, 0); err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			out, errs, st := runScript(t, sh, tt.script)
			if d := time.Since(start); d > tt.maxTime {
				t.Errorf("took %v, bound %v", d, tt.maxTime)
			}
			if out != tt.out || st != tt.status || !strings.Contains(errs, tt.stderr) {
				t.Errorf("got %q %q %d, want %q %q %d", out, errs, st, tt.out, tt.stderr, tt.status)
			}
		})
	}
}
