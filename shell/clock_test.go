package shell

import (
	"context"
	"strings"
	"testing"
	"time"
)

// The session's one deadline timer is re-armed per Run: a Run that ends
// right at its deadline must not leave a firing that cancels the next one,
// and every Run still ends at its own deadline, its pipes with it.
func TestRunClockRearm(t *testing.T) {
	sh := newTestShell(t, Limits{Timeout: 30 * time.Millisecond})
	for i := range 40 {
		// Ends about at the deadline: either status is right here.
		if _, _, st := runScript(t, sh, "sleep 0.029"); st != 0 && st != StatusTimeout {
			t.Fatalf("round %d: near-deadline run: status %d", i, st)
		}
		if out, errs, st := runScript(t, sh, "echo ok"); st != 0 || out != "ok\n" {
			t.Fatalf("round %d: the run after a near-deadline one: status %d, out %q, err %q", i, st, out, errs)
		}
	}
	cases := []struct {
		name, script string
	}{
		{"sleep", "sleep 5"},
		{"pipe reader blocked", "sleep 5 | cat"},
		{"pipe writer blocked", "yes | sleep 5"},
		{"loop", "while :; do :; done"},
		// yes fills a pipe the shell holds open (fd 3) and never reads,
		// and the Run's end waits for it.
		{"process substitution writer blocked", "exec 3< <(yes); sleep 5"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t0 := time.Now()
			_, errs, st := runScript(t, sh, c.script)
			if st != StatusTimeout || !strings.Contains(errs, "time limit exceeded (30ms)") {
				t.Errorf("status %d, stderr %q: want %d and the time limit", st, errs, StatusTimeout)
			}
			if d := time.Since(t0); d > time.Second {
				t.Errorf("ended %v after its start: want within 1 s of its 30 ms deadline", d)
			}
		})
	}
}

// A caller's context that ends stops the Run (and its pipes) as the
// deadline does, with the caller's error rather than the time limit.
func TestRunCallerCancel(t *testing.T) {
	sh := newTestShell(t, Limits{Timeout: time.Minute})
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	var out, errb strings.Builder
	t0 := time.Now()
	st, err := sh.Run(ctx, "yes | sleep 30", nil, &out, &errb)
	if err != nil || st != StatusTimeout {
		t.Fatalf("status %d, err %v: want %d", st, err, StatusTimeout)
	}
	if d := time.Since(t0); d > time.Second {
		t.Errorf("ended %v after its start: want soon after the caller's 50 ms", d)
	}
	if o, e, st := runScript(t, sh, "echo next"); st != 0 || o != "next\n" {
		t.Errorf("next run: status %d, out %q, err %q", st, o, e)
	}
}
