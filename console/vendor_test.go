package console_test

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestVendor: the vendored xterm.js is what console/vendor.sh pins (the
// versions in SHA256SUMS are the script's) and every file is the one
// SHA256SUMS names, so a hand edit or a stale vendor run fails here.
func TestVendor(t *testing.T) {
	script, err := os.ReadFile("vendor.sh")
	if err != nil {
		t.Fatal(err)
	}
	pin := func(name string) string {
		m := regexp.MustCompile(`(?m)^` + name + `=(\S+)$`).FindSubmatch(script)
		if m == nil {
			t.Fatalf("vendor.sh has no %s=", name)
		}
		return string(m[1])
	}
	sums, err := os.ReadFile("static/vendor/SHA256SUMS")
	if err != nil {
		t.Fatalf("%v (run console/vendor.sh)", err)
	}
	lines := strings.Split(strings.TrimSpace(string(sums)), "\n")
	want := "# @xterm/xterm " + pin("XTERM_VERSION") + " @xterm/addon-fit " + pin("FIT_VERSION") + " (console/vendor.sh)"
	if lines[0] != want {
		t.Fatalf("SHA256SUMS says %q, vendor.sh pins %q: run console/vendor.sh", lines[0], want)
	}
	files := map[string]bool{}
	for _, l := range lines[1:] {
		sum, name, ok := strings.Cut(l, "  ")
		if !ok {
			t.Fatalf("bad SHA256SUMS line %q", l)
		}
		data, err := os.ReadFile("static/vendor/" + name)
		if err != nil {
			t.Fatal(err)
		}
		if h := sha256.Sum256(data); hex.EncodeToString(h[:]) != sum {
			t.Errorf("static/vendor/%s does not match SHA256SUMS: run console/vendor.sh", name)
		}
		files[name] = true
	}
	ents, err := os.ReadDir("static/vendor")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if e.Name() != "SHA256SUMS" && !files[e.Name()] {
			t.Errorf("static/vendor/%s is not in SHA256SUMS", e.Name())
		}
	}
	for _, f := range []string{"xterm.mjs", "xterm.css", "addon-fit.mjs"} {
		if !files[f] {
			t.Errorf("SHA256SUMS lacks %s", f)
		}
	}
}
