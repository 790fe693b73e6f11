package main

import (
	"context"
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// mcpCall calls a tool and returns its structured result as JSON.
func mcpCall(t *testing.T, cs *sdk.ClientSession, name string, args map[string]any) (map[string]any, *sdk.CallToolResult) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	var out map[string]any
	if data, err := json.Marshal(res.StructuredContent); err == nil {
		json.Unmarshal(data, &out)
	}
	return out, res
}

func mcpConnect(t *testing.T, args ...string) *sdk.ClientSession {
	t.Helper()
	cmd := exec.Command(warrenBinary(t), append([]string{"mcp"}, args...)...)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, nil).Connect(ctx, &sdk.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("warren mcp %v: %v", args, err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// TestMCPStdio drives a real `warren mcp` process over stdio, in process
// (--local) and against a real `warren serve`, and checks that state
// written by one stdio session is there for the next (--local persists in
// DATA; the server keeps its sandboxes).
func TestMCPStdio(t *testing.T) {
	t.Run("local", func(t *testing.T) {
		dir := t.TempDir()
		cs := mcpConnect(t, "--local", "--data", dir)
		sb, res := mcpCall(t, cs, "sandbox_create", map[string]any{})
		id, _ := sb["sandbox_id"].(string)
		if res.IsError || id == "" {
			t.Fatalf("sandbox_create: %+v", res)
		}
		out, res := mcpCall(t, cs, "exec", map[string]any{"sandbox_id": id, "script": "echo hello > /h; cat /h; exit 4"})
		if res.IsError || out["stdout"] != "hello\n" || out["exit_code"] != float64(4) {
			t.Fatalf("exec: %v %+v", out, res)
		}
		cs.Close()

		// A second process over the same data dir, pinned to the sandbox.
		cs2 := mcpConnect(t, "--local", "--data", dir, "--sandbox", id)
		out, res = mcpCall(t, cs2, "exec", map[string]any{"script": "cat /h"})
		if res.IsError || out["stdout"] != "hello\n" {
			t.Fatalf("pinned exec in a new process: %v %+v", out, res)
		}
	})
	t.Run("server", func(t *testing.T) {
		p := startServe(t, t.TempDir(), "--no-native")
		key := strings.TrimSpace(p.adminKey(t))
		cs := mcpConnect(t, "--server", p.url, "--api-key", key)
		sb, res := mcpCall(t, cs, "sandbox_create", map[string]any{})
		id, _ := sb["sandbox_id"].(string)
		if res.IsError || id == "" {
			t.Fatalf("sandbox_create: %+v", res)
		}
		out, res := mcpCall(t, cs, "exec", map[string]any{"sandbox_id": id, "script": "printf 'x\\n' > /f; wc -c < /f"})
		if res.IsError || strings.TrimSpace(out["stdout"].(string)) != "2" {
			t.Fatalf("exec via server: %v %+v", out, res)
		}
		_, res = mcpCall(t, cs, "exec", map[string]any{"sandbox_id": "sb-missing", "script": "true"})
		if !res.IsError {
			t.Fatal("exec on a missing sandbox was not a tool error")
		}
	})
}
