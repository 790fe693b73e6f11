package main

import (
	"strings"
	"testing"
)

// TestServe_WorkerFlags: bad worker flags fail before anything starts,
// naming the flag.
func TestServe_WorkerFlags(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"--workers", "-1"}, "--workers -1: want 0"},
		{[]string{"--workers", "2", "--worker-memory", "lots"}, "--worker-memory: bad size"},
		{[]string{"--workers", "2", "--worker-memory", "1M"}, "under 64 MiB"},
	}
	for _, c := range cases {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			root := newRoot()
			root.SetArgs(append([]string{"serve", "--data", t.TempDir(), "--addr", "127.0.0.1:0", "--no-native"}, c.args...))
			var out strings.Builder
			root.SetOut(&out)
			root.SetErr(&out)
			err := root.Execute()
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("serve %v: %v; want an error saying %q", c.args, err, c.want)
			}
		})
	}
}

// TestServeWorker_NeedsItsFlags: the hidden verb run by hand says what it is.
func TestServeWorker_NeedsItsFlags(t *testing.T) {
	root := newRoot()
	root.SetArgs([]string{"serve-worker"})
	root.SetIn(strings.NewReader(""))
	var out strings.Builder
	root.SetOut(&out)
	root.SetErr(&out)
	if err := root.Execute(); err == nil || !strings.Contains(err.Error(), "started by warren serve --workers") {
		t.Fatalf("serve-worker without flags: %v", err)
	}
}
