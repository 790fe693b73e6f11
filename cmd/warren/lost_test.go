package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/api"
	"github.com/warren-sandbox/warren/client"
)

// TestE2E_ConnectionLost kills `warren serve` (SIGKILL) during an exec:
// `warren sandbox exec` says the connection was lost and that the exec's
// effects may persist, and exits 255, both when output had started
// streaming and when the exec was silent (no response yet).
func TestE2E_ConnectionLost(t *testing.T) {
	for _, tc := range []struct{ name, script, ready string }{
		{"streaming", "echo started; sleep 30", "started"},
		{"silent", "sleep 30", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := startServe(t, t.TempDir(), "--no-native")
			key := p.adminKey(t)
			c, err := client.New(p.url, key)
			if err != nil {
				t.Fatal(err)
			}
			sb, err := c.Create(context.Background(), api.CreateRequest{})
			if err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(warrenBinary(t), "sandbox", "exec", sb.ID, "-c", tc.script)
			cmd.Env = append(os.Environ(), "WARREN_SERVER="+p.url, "WARREN_API_KEY="+key)
			var errb bytes.Buffer
			cmd.Stderr = &errb
			out, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			if tc.ready != "" {
				line, err := bufio.NewReader(out).ReadString('\n')
				if err != nil || strings.TrimSpace(line) != tc.ready {
					t.Fatalf("first line %q, %v", line, err)
				}
			} else {
				// The exec is running when the sandbox lists it busy.
				deadline := time.Now().Add(10 * time.Second)
				for {
					s, err := c.Get(context.Background(), sb.ID)
					if err == nil && len(s.Sessions) > 0 {
						break
					}
					if time.Now().After(deadline) {
						t.Fatal("the exec did not start in 10s")
					}
					time.Sleep(20 * time.Millisecond)
				}
				time.Sleep(100 * time.Millisecond)
			}
			p.cmd.Process.Kill()
			<-p.done
			err = cmd.Wait()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != exitConnLost {
				t.Fatalf("exec after the server died: %v, want exit %d; stderr %q", err, exitConnLost, errb.String())
			}
			if !strings.Contains(errb.String(), "connection lost during exec; its effects up to the loss may persist") {
				t.Fatalf("stderr %q does not say the connection was lost", errb.String())
			}
		})
	}
	// A server that was never there is not a lost exec: nothing ran.
	cmd := exec.Command(warrenBinary(t), "sandbox", "exec", "sb-x", "-c", "true")
	cmd.Env = append(os.Environ(), "WARREN_SERVER=http://127.0.0.1:1", "WARREN_API_KEY=k")
	var errb bytes.Buffer
	cmd.Stderr = &errb
	err := cmd.Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != exitUnavailable || !strings.Contains(errb.String(), "start it with `warren serve`") || strings.Contains(errb.String(), "connection lost") {
		t.Fatalf("exec with no server: %v stderr %q, want exit %d (unavailable) and what to do", err, errb.String(), exitUnavailable)
	}
}
