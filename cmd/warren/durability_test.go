package main

import (
	"context"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"github.com/warren-sandbox/warren/api"
	"github.com/warren-sandbox/warren/client"
)

// TestE2E_DurabilityLevels: the CLI and the HTTP API carry the ack level
// both ways; the server default applies when a request says nothing.
func TestE2E_DurabilityLevels(t *testing.T) {
	p := startServe(t, t.TempDir(), "--no-native", "--durability", "memory")
	key := p.adminKey(t)
	out, errs, code := p.cli(t, key, "", "sandbox", "create", "--durability", "local")
	if code != 0 {
		t.Fatalf("create: %d %s", code, errs)
	}
	id := strings.TrimSpace(out)
	for _, tc := range []struct {
		args []string
		want *regexp.Regexp
		code int
	}{
		{nil, regexp.MustCompile(`^warren: durability local\n$`), 0}, // the sandbox's default
		{[]string{"--durability", "memory"}, regexp.MustCompile(`^warren: durability memory\n$`), 0},
		{[]string{"--durability", "committed"}, regexp.MustCompile(`^warren: durability committed \(generation [1-9][0-9]*\)\n$`), 0},
		{[]string{"--durability", "soon"}, regexp.MustCompile(`bad durability "soon"`), exitUsage},
	} {
		args := append([]string{"sandbox", "exec", id, "--print-durability"}, tc.args...)
		args = append(args, "-c", "echo x >> /f")
		_, errs, code := p.cli(t, key, "", args...)
		if code != tc.code || !tc.want.MatchString(errs) {
			t.Fatalf("exec %v: exit %d, stderr %q; want %d and %v", tc.args, code, errs, tc.code, tc.want)
		}
	}
	cl, err := client.New(p.url, key)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	var ack api.Ack
	if err := cl.WriteFile(ctx, id, api.WriteFileRequest{Path: "/g", Data: strings.NewReader("g"), Durability: api.DurabilityCommitted, Ack: &ack}); err != nil || ack.Durability != api.DurabilityCommitted || ack.Generation == 0 {
		t.Fatalf("committed file write: %+v, %v", ack, err)
	}
	// A sandbox without its own default gets the server's (memory here).
	sb, err := cl.Create(ctx, api.CreateRequest{})
	if err != nil {
		t.Fatal(err)
	}
	res, err := cl.Exec(ctx, sb.ID, api.ExecRequest{Script: "echo y > /y"}, nil, nil)
	if err != nil || res.Durability != api.DurabilityMemory {
		t.Fatalf("exec with the server default: %+v, %v", res, err)
	}
	if err := cl.WriteFile(ctx, sb.ID, api.WriteFileRequest{Path: "/z", Data: strings.NewReader("z"), Durability: "never"}); err == nil || !strings.Contains(err.Error(), "never") {
		t.Fatalf("a bad file-write level: %v", err)
	}
}

// TestServe_BadDurability: a bad server default is refused by name at
// start, before serving.
func TestServe_BadDurability(t *testing.T) {
	cmd := exec.Command(warrenBinary(t), "serve", "--no-native", "--addr", "127.0.0.1:0", "--data", t.TempDir(), "--durability", "eventually")
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), `bad durability "eventually"`) {
		t.Fatalf("serve --durability eventually: %v\n%s", err, out)
	}
}
