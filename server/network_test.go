package server_test

import (
	"bytes"
	"context"
	"io"
	"io/fs"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/warren-sandbox/warren/api"
	"github.com/warren-sandbox/warren/egress"
	"github.com/warren-sandbox/warren/egress/egresstest"
	"github.com/warren-sandbox/warren/sandbox/node"
)

// secretValue is what must never be found in the sandbox or the data dir.
const secretValue = "tok-9f3a61c2e8b74d05-VALUE"

// TestNetwork_EndToEnd: a sandbox over HTTP with an egress policy and a
// secret, against HTTPS servers on loopback named through the hosts
// override. Loopback is always denied unless the operator allows it, so
// the node is built as `warren serve --egress-allow-cidr 127.0.0.0/8`.
func TestNetwork_EndToEnd(t *testing.T) {
	ca := egresstest.NewCA(t)
	var gotAuth atomic.Value
	api1 := ca.Serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotAuth.Store(r.Header.Get("Authorization"))
		io.WriteString(w, "api says hi\n")
	}), "api.test", "other.test")
	decoy := ca.Serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "decoy\n") }), "decoy.test")
	lo := netip.MustParseAddr("127.0.0.1")
	eg := egress.New(egress.Config{
		Hosts:      map[string][]netip.Addr{"api.test": {lo}, "other.test": {lo}, "decoy.test": {lo}},
		HostsOnly:  true,
		AllowCIDRs: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")},
		RootCAs:    ca.Pool,
	})
	dir := t.TempDir()
	tn := startNode(t, node.Options{Dir: dir, Egress: eg})
	c, _ := tn.tenant(t)
	ctx := context.Background()
	sb, err := c.Create(ctx, api.CreateRequest{
		Network: &api.NetworkPolicy{Allow: []string{"api.test", "other.test"}},
		Secrets: []api.SecretSpec{{Name: "TOKEN", Value: secretValue, Hosts: []string{"api.test"}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if sb.Network == nil || strings.Join(sb.Network.Allow, ",") != "api.test,other.test" {
		t.Fatalf("sandbox network %+v", sb.Network)
	}
	ph := sb.Env["TOKEN"]
	if !strings.HasPrefix(ph, "warren-secret-TOKEN-") {
		t.Fatalf("env TOKEN = %q, want a placeholder", ph)
	}
	runIn := func(id, script string) api.ExecResult {
		t.Helper()
		var out, errb bytes.Buffer
		res, err := c.Exec(ctx, id, api.ExecRequest{Script: script}, &out, &errb)
		if err != nil {
			t.Fatal(err)
		}
		res.Stdout, res.Stderr = out.String(), errb.String()
		if strings.Contains(res.Stdout+res.Stderr, secretValue) {
			t.Fatalf("the secret's value reached the sandbox: %q", res.Stdout+res.Stderr)
		}
		return res
	}
	run := func(script string) api.ExecResult { t.Helper(); return runIn(sb.ID, script) }
	apiURL := "https://api.test:" + api1.Port() + "/"
	for _, c := range []struct {
		name, script string
		status       int
		out, err     string
		auth         string // what api.test saw
	}{
		{"printenv shows the placeholder", "printenv TOKEN", 0, ph + "\n", "", ""},
		{"allowed host", "curl -sSf " + apiURL, 0, "api says hi\n", "", ""},
		{"upstream gets the value", `curl -sSf -H "Authorization: Bearer $TOKEN" ` + apiURL, 0, "api says hi\n", "", "Bearer " + secretValue},
		{"another host gets the placeholder", `curl -sSf -H "Authorization: Bearer $TOKEN" https://other.test:` + api1.Port() + "/", 0, "api says hi\n", "", "Bearer " + ph},
		{"denied host names the policy", "curl -sS https://decoy.test:" + decoy.Port() + "/", 7, "", "blocked by the egress policy of sandbox " + sb.ID, ""},
		{"status code to a variable", `code=$(curl -s -o /tmp/body -w '%{http_code}' ` + apiURL + `); echo $code; cat /tmp/body`, 0, "200\napi says hi\n", "", ""},
		{"wget", "wget -q -O - " + apiURL, 0, "api says hi\n", "", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			gotAuth.Store("")
			res := run(c.script)
			if res.Exit != c.status || !strings.Contains(res.Stdout, c.out) || !strings.Contains(res.Stderr, c.err) {
				t.Fatalf("got %d %q %q, want %d %q %q", res.Exit, res.Stdout, res.Stderr, c.status, c.out, c.err)
			}
			if got := gotAuth.Load().(string); got != c.auth && c.auth != "" {
				t.Fatalf("upstream saw Authorization %q, want %q", got, c.auth)
			}
		})
	}
	if decoy.Hits() != 0 {
		t.Fatalf("decoy reached %d times", decoy.Hits())
	}
	// The audit list and the counters.
	st, err := c.GetNetwork(ctx, sb.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Secrets) != 1 || st.Secrets[0].Placeholder != ph || st.Decisions < 6 {
		t.Fatalf("network status %+v", st)
	}
	denied := 0
	for _, d := range st.Audit {
		if !d.Allowed && d.Host == "decoy.test" {
			denied++
		}
	}
	if denied != 1 {
		t.Fatalf("audit has %d denials of decoy.test, want 1: %+v", denied, st.Audit)
	}
	resp, err := http.Get(tn.srv.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	metrics, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(metrics), `warren_egress_decisions_total{verdict="deny"} 1`) {
		t.Fatalf("metrics lack the denial:\n%s", metrics)
	}
	// A fork keeps the policy and the secrets (in memory, like its parent).
	kids, err := c.Fork(ctx, sb.ID, 1)
	if err != nil {
		t.Fatal(err)
	}
	gotAuth.Store("")
	if res := runIn(kids[0].ID, `curl -sSf -H "Authorization: Bearer $TOKEN" `+apiURL); res.Exit != 0 || gotAuth.Load() != "Bearer "+secretValue {
		t.Fatalf("fork: exit %d %q, upstream saw %q", res.Exit, res.Stderr, gotAuth.Load())
	}
	if res := runIn(kids[0].ID, "curl -sS https://decoy.test:"+decoy.Port()+"/"); res.Exit != 7 || !strings.Contains(res.Stderr, kids[0].ID) {
		t.Fatalf("fork, denied host: %d %q", res.Exit, res.Stderr)
	}
	// A policy update applies to the next request.
	if _, err := c.SetNetwork(ctx, sb.ID, api.NetworkUpdate{Allow: []string{"other.test"}}); err != nil {
		t.Fatal(err)
	}
	if res := run("curl -sS " + apiURL); res.Exit != 7 || !strings.Contains(res.Stderr, "api.test:"+api1.Port()+" is not in the sandbox's allow list") {
		t.Fatalf("after the update: %d %q", res.Exit, res.Stderr)
	}
	if _, err := c.SetNetwork(ctx, sb.ID, api.NetworkUpdate{Allow: []string{"bad host!"}}); !strings.Contains(errString(err), "bad host name") {
		t.Fatalf("bad rule: %v", err)
	}
	// Hibernate, snapshot and fork: the value is in none of what is stored.
	if _, err := c.Hibernate(ctx, sb.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CreateSnapshot(ctx, sb.ID, "snap"); err != nil {
		t.Fatal(err)
	}
	got, err := c.Get(ctx, sb.ID)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(got.Network.Allow, ",") != "other.test" {
		t.Fatalf("the updated policy was not kept: %+v", got.Network)
	}
	tn.n.Close(ctx) // flush meta and the write log
	found := ""
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		data, err := os.ReadFile(p)
		if err == nil && bytes.Contains(data, []byte(secretValue)) {
			found += p + " "
		}
		return nil
	})
	if found != "" {
		t.Fatalf("the secret's value is stored in %s", found)
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// TestNetwork_SnapshotKeepsPlaceholders: a sandbox made from a snapshot with
// the secret given again keeps the placeholder its restored shell holds.
func TestNetwork_SnapshotKeepsPlaceholders(t *testing.T) {
	eg := egress.New(egress.Config{HostsOnly: true})
	tn := startNode(t, node.Options{Egress: eg})
	c, _ := tn.tenant(t)
	ctx := context.Background()
	spec := []api.SecretSpec{{Name: "TOKEN", Value: "v1", Hosts: []string{"api.test"}}}
	sb, err := c.Create(ctx, api.CreateRequest{Network: &api.NetworkPolicy{Allow: []string{"api.test"}}, Secrets: spec})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.CreateSnapshot(ctx, sb.ID, "with-secret"); err != nil {
		t.Fatal(err)
	}
	kid, err := c.Create(ctx, api.CreateRequest{Snapshot: "with-secret", Secrets: spec})
	if err != nil {
		t.Fatal(err)
	}
	st, err := c.GetNetwork(ctx, kid.ID)
	if err != nil {
		t.Fatal(err)
	}
	if kid.Env["TOKEN"] != sb.Env["TOKEN"] || len(st.Secrets) != 1 || st.Secrets[0].Placeholder != sb.Env["TOKEN"] {
		t.Fatalf("placeholder %q / %+v, want the snapshot's %q", kid.Env["TOKEN"], st.Secrets, sb.Env["TOKEN"])
	}
	if strings.Join(kid.Network.Allow, ",") != "api.test" {
		t.Fatalf("policy from the snapshot: %+v", kid.Network)
	}
	// Bad secrets are refused naming the problem.
	for _, bad := range []api.SecretSpec{
		{Name: "1X", Value: "v", Hosts: []string{"a.test"}},
		{Name: "X", Value: "", Hosts: []string{"a.test"}},
		{Name: "X", Value: "v"},
		{Name: "X", Value: "v", Hosts: []string{"10.0.0.0/8"}},
	} {
		if _, err := c.Create(ctx, api.CreateRequest{Secrets: []api.SecretSpec{bad}}); err == nil || !strings.Contains(err.Error(), "secret") {
			t.Errorf("secret %+v: %v, want a refusal naming the secret", bad, err)
		}
	}
}
