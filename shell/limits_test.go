package shell

import (
	"strings"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/vfs"
)

// Every limit: the attack ends with the documented status and a message,
// and the next Run on the same Shell works.
func TestLimits(t *testing.T) {
	tests := []struct {
		name   string
		lim    Limits
		quota  int64
		script string
		status int
		stderr string
	}{
		{"busy loop", Limits{MaxLoopIters: 100_000}, 0, `while :; do :; done`, StatusLimit, "loop iteration limit"},
		{"busy loop timeout", Limits{Timeout: 200 * time.Millisecond}, 0, `while :; do :; done`, StatusTimeout, "time limit"},
		// The classic fork bomb returns at once (its jobs outlive the Run,
		// as in bash); TestJobForkBomb sees its jobs stopped. Run in the
		// foreground it hits the job limit:
		{"fork bomb", Limits{Timeout: 10 * time.Second}, 0, `f(){ f|f; }; f`, StatusLimit, "limit exceeded"},
		{"string doubling", Limits{MaxStringBytes: 1 << 20}, 0, `x=a; while :; do x=$x$x; done`, StatusLimit, "string size limit"},
		{"quota", Limits{Timeout: 20 * time.Second}, 10 << 20, `yes | head -c 100000000 > /f`, 1, "No space left on device"},
		{"recursion", Limits{}, 0, `f() { f; }; f`, StatusLimit, "nesting"},
		{"brace bomb", Limits{}, 0, `echo {1..100000000}`, StatusLimit, "brace expansion limit"},
		{"dev zero", Limits{Timeout: 300 * time.Millisecond}, 0, `cat /dev/zero | wc -c`, StatusTimeout, "time limit"},
		{"output", Limits{MaxOutputBytes: 1 << 20, Timeout: 10 * time.Second}, 0, `yes`, StatusLimit, "output limit"},
		{"commands", Limits{MaxCommands: 1000}, 0, `for i in {1..5000}; do true; done`, StatusLimit, "command limit"},
		{"array", Limits{MaxArrayElems: 1000}, 0, `a=(); for i in {1..2000}; do a+=($i); done`, StatusLimit, "array size limit"},
		{"heredoc", Limits{MaxHeredoc: 10}, 0, "cat <<EOF\n0123456789abcdef\nEOF", StatusLimit, "here-document size limit"},
		{"jobs", Limits{MaxJobs: 4, Timeout: 10 * time.Second}, 0, `for i in 1 2 3 4 5 6; do sleep 1 & done; wait`, StatusLimit, "job limit"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sh := newTestShell(t, tt.lim)
			if tt.quota > 0 {
				sh.FS().SetQuota(tt.quota, 0)
			}
			start := time.Now()
			_, errs, st := runScript(t, sh, tt.script)
			if st != tt.status {
				t.Errorf("status %d, want %d (stderr %q)", st, tt.status, errs)
			}
			if !strings.Contains(errs, tt.stderr) {
				t.Errorf("stderr %q does not mention %q", errs, tt.stderr)
			}
			if d := time.Since(start); d > 15*time.Second {
				t.Errorf("took %v", d)
			}
			out, errs, st := runScript(t, sh, "echo ok")
			if out != "ok\n" || st != 0 {
				t.Errorf("next run: %q %q %d", out, errs, st)
			}
		})
	}
}

var _ = vfs.O_RDONLY
