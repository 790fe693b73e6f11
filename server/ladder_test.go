package server_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/warren-sandbox/warren/api"
	"github.com/warren-sandbox/warren/sandbox/node"
)

// TestLadderOverHTTP: the commands policy round-trips through the API, an
// exec's rungs reach the client (over the streamed form) and /metrics.
func TestLadderOverHTTP(t *testing.T) {
	tn := startNode(t, node.Options{})
	c, _ := tn.tenant(t)
	ctx := context.Background()
	sb, err := c.Create(ctx, api.CreateRequest{Commands: "git=resident,native-first"})
	if err != nil {
		t.Fatal(err)
	}
	if sb.Commands != "native-first,git=resident" {
		t.Fatalf("sandbox commands %q", sb.Commands)
	}
	if _, err := c.Create(ctx, api.CreateRequest{Commands: "fastest"}); err == nil || !strings.Contains(err.Error(), "fastest") {
		t.Fatalf("bad policy: %v", err)
	}
	// The default image has no native ls or git: refusals are missing (an
	// unknown option keeps GNU's text, a lacking subcommand says so).
	var errb bytes.Buffer
	res, err := c.Exec(ctx, sb.ID, api.ExecRequest{Script: "ls / >/dev/null; ls --hyperlink /; git apply --3way x.patch; nosuch; true", Commands: "resident-only"}, io.Discard, &errb)
	if err != nil {
		t.Fatal(err)
	}
	want := "ls: unrecognized option '--hyperlink'\nTry 'ls --help' for more information.\nwarren: git apply --3way: not supported here (commands policy resident-only)\n"
	if res.Rungs["resident"] != 1 || res.Rungs["missing"] != 3 || !strings.HasPrefix(errb.String(), want) {
		t.Fatalf("rungs %v stderr %q", res.Rungs, errb.String())
	}
	resp, err := http.Get(tn.srv.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	data, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{`warren_commands_total{rung="resident"} 1`, `warren_commands_total{rung="missing"} 3`, `warren_commands_total{rung="native"} 0`} {
		if !strings.Contains(string(data), want) {
			t.Errorf("metrics lack %q", want)
		}
	}
}
