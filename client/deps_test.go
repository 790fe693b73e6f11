package client

import (
	"os/exec"
	"strings"
	"testing"
)

// TestDeps: the SDK must stay light and never reach the server side:
// importing it must not pull in the server, the sandbox manager or the
// interpreter.
func TestDeps(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	banned := map[string]string{
		"github.com/warren-sandbox/warren/server":  "the client talks HTTP; it must not embed the server",
		"github.com/warren-sandbox/warren/sandbox": "the manager runs sandboxes; clients only call it",
		"github.com/warren-sandbox/warren/shell":   "no interpreter in the SDK",
		"github.com/warren-sandbox/warren/vfs":     "no filesystem in the SDK",
	}
	for _, dep := range strings.Fields(string(out)) {
		if why, ok := banned[dep]; ok {
			t.Errorf("client imports %s: %s", dep, why)
		}
	}
}
