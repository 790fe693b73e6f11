package main

import (
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
)

type gcOut struct {
	DryRun     bool  `json:"dry_run"`
	Candidates int   `json:"candidates"`
	Swept      int   `json:"swept"`
	SweptBytes int64 `json:"swept_bytes"`
}

func runGC(t *testing.T, dir string, args ...string) (gcOut, string, error) {
	t.Helper()
	cmd := exec.Command(warrenBinary(t), append([]string{"gc", "--data", dir}, args...)...)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var o gcOut
	if err == nil {
		if jerr := json.Unmarshal([]byte(stdout.String()), &o); jerr != nil {
			t.Fatalf("gc output %q: %v", stdout.String(), jerr)
		}
	}
	return o, stderr.String(), err
}

// TestE2E_GC: `warren gc` refuses a data directory a serve holds; on a
// stopped one it notes, then (a grace later) deletes what only forgotten
// generations and deleted sandboxes needed; --dry-run deletes nothing;
// what is kept reads back in the next serve.
func TestE2E_GC(t *testing.T) {
	dir := t.TempDir()
	p := startServe(t, dir, "--no-native", "--workers", "0", "--gc-interval", "0")
	key := p.adminKey(t)
	out, errs, code := p.cli(t, key, "", "sandbox", "create", "--keep-last", "1", "--keep-for", "-1s")
	if code != 0 {
		t.Fatalf("create: %s", errs)
	}
	id := strings.TrimSpace(out)
	for _, s := range []string{"head -c 300000 /dev/urandom > /a", "head -c 300000 /dev/urandom > /a", "echo kept > /k"} {
		if _, errs, code := p.cli(t, key, "", "sandbox", "exec", id, "--durability", "committed", "-c", s); code != 0 {
			t.Fatalf("%s: %s", s, errs)
		}
	}
	if _, errs, err := runGC(t, dir, "--grace", "1ns"); err == nil || !strings.Contains(errs, "is warren serve running") {
		t.Fatalf("gc on a served data dir: %v %s", err, errs)
	}
	p.stop(t)
	first, errs, err := runGC(t, dir, "--grace", "1ns")
	if err != nil || first.Swept != 0 || first.Candidates == 0 {
		t.Fatalf("first gc: %+v %v %s", first, err, errs)
	}
	dry, errs, err := runGC(t, dir, "--grace", "1ns", "--dry-run")
	if err != nil || !dry.DryRun || dry.Swept == 0 {
		t.Fatalf("dry run: %+v %v %s", dry, err, errs)
	}
	second, errs, err := runGC(t, dir, "--grace", "1ns")
	if err != nil || second.Swept != dry.Swept || second.SweptBytes < 300000 {
		t.Fatalf("second gc: %+v (dry run said %d) %v %s", second, dry.Swept, err, errs)
	}
	p = startServe(t, dir, "--no-native", "--workers", "0", "--gc-interval", "0")
	if out, errs, code := p.cli(t, key, "", "sandbox", "exec", id, "-c", "cat /k; wc -c < /a"); code != 0 || out != "kept\n300000\n" {
		t.Fatalf("after gc: %q %s", out, errs)
	}
}
