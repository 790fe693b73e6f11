package shell

import (
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestReadTimeout: read -t reads through one helper goroutine per call
// (it used to start one per byte). Expected outputs are bash 5.2.15's.
func TestReadTimeout(t *testing.T) {
	tests := []struct{ in, want string }{
		{`read -t 1 x <<< "hello world"; echo "$x $?"`, "hello world 0\n"},
		{`sleep 1 | { read -t 0.05 x; echo $?; }`, "142\n"},
		{`{ printf ab; sleep 0.2; echo cd; } | { read -t 5 a; echo "$a $?"; }`, "abcd 0\n"},
		{`printf 'x\\\ny\n' | { read -t 1 a; echo "$a"; }`, "xy\n"},
		{`printf 'a b c' | { read -t 1 -a arr; echo "${#arr[@]} $?"; }`, "3 1\n"},
	}
	for _, tc := range tests {
		sh := newTestShell(t, Limits{})
		out, errs, _ := runScript(t, sh, tc.in)
		if out != tc.want {
			t.Errorf("%s\nstdout %q, want %q (stderr %q)", tc.in, out, tc.want, errs)
		}
	}
	// A long line must not leave a goroutine per byte behind.
	sh := newTestShell(t, Limits{})
	before := runtime.NumGoroutine()
	line := strings.Repeat("x", 5000)
	out, _, _ := runScript(t, sh, `read -t 2 v <<< "`+line+`"; echo ${#v}`)
	if out != "5000\n" {
		t.Fatalf("got %q", out)
	}
	deadline := time.Now().Add(2 * time.Second)
	for runtime.NumGoroutine() > before+2 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before+2 {
		t.Errorf("%d goroutines after read -t, %d before", n, before)
	}
}

// TestWorkersExitWhenIdle: pooled stage goroutines do not outlive a quiet
// period (sandbox.TestManager_NoGoroutineLeak counts goroutines).
func TestWorkersExitWhenIdle(t *testing.T) {
	before := runtime.NumGoroutine()
	sh := newTestShell(t, Limits{})
	out, _, _ := runScript(t, sh, `echo a | cat | cat | wc -l; cat <(echo b)`)
	if out != "1\nb\n" {
		t.Fatalf("got %q", out)
	}
	deadline := time.Now().Add(workerIdle + 3*time.Second)
	for runtime.NumGoroutine() > before {
		if time.Now().After(deadline) {
			t.Fatalf("%d goroutines %v after the Run, %d before", runtime.NumGoroutine(), workerIdle+3*time.Second, before)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
