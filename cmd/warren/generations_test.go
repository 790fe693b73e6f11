package main

import (
	"regexp"
	"strings"
	"testing"
)

// TestE2E_Generations: `warren sandbox generations ID` lists what the
// sandbox committed and `create --from-generation ID:N` starts from one,
// through the worker processes (each holds its sandboxes' generations).
func TestE2E_Generations(t *testing.T) {
	p := startServe(t, t.TempDir(), "--no-native")
	key := p.adminKey(t)
	out, errs, code := p.cli(t, key, "", "sandbox", "create", "--keep-last", "3")
	if code != 0 {
		t.Fatalf("create: %d %s", code, errs)
	}
	id := strings.TrimSpace(out)
	for _, v := range []string{"1", "2", "3", "4"} {
		if _, errs, code := p.cli(t, key, "", "sandbox", "exec", id, "--durability", "committed", "-c", "echo "+v+" > /v"); code != 0 {
			t.Fatalf("exec %s: %d %s", v, code, errs)
		}
	}
	out, errs, code = p.cli(t, key, "", "sandbox", "generations", id)
	if code != 0 || !regexp.MustCompile(`(?m)^GENERATION +CREATED +EPOCH +HEAD +PINNED BY\n(.*\n)*4 +\S+ +1 +head`).MatchString(out) {
		t.Fatalf("generations: %d %q %s", code, out, errs)
	}
	out, errs, code = p.cli(t, key, "", "sandbox", "create", "--from-generation", id+":3")
	if code != 0 {
		t.Fatalf("create --from-generation: %d %s", code, errs)
	}
	child := strings.TrimSpace(out)
	if out, errs, code := p.cli(t, key, "", "sandbox", "exec", child, "-c", "cat /v"); code != 0 || out != "3\n" {
		t.Fatalf("the sandbox from generation 3 reads %q (%d %s)", out, code, errs)
	}
	if _, errs, code := p.cli(t, key, "", "sandbox", "create", "--from-generation", id+":x"); code == 0 || !strings.Contains(errs, "SANDBOX:N") {
		t.Fatalf("a bad --from-generation: %d %s", code, errs)
	}
}
