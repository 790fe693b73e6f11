//go:build !race

package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// rubyWASMForTest is ruby+stdlib.wasm as scripts/test.sh installs it.
func rubyWASMForTest(t *testing.T) string {
	t.Helper()
	p := os.Getenv("WARREN_RUBY_WASM")
	if p == "" {
		p = "/var/cache/warren-test/ruby-wasm/" + rubyWASMPath
	}
	if _, err := os.Stat(p); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("ruby+stdlib.wasm is missing (%v): scripts/test.sh installs @ruby/3.4-wasm-wasi with npm", err)
		}
		t.Skipf("ruby+stdlib.wasm not found (%v): npm install --prefix /var/cache/warren-test/ruby-wasm @ruby/3.4-wasm-wasi", err)
	}
	return p
}

// TestImageAddRuby: add-ruby makes an image whose sandboxes run ruby from
// PATH in the WASM tier, with the standard library. (Left out of -race
// builds: wazero's compile of the 30 MB module takes minutes there.)
func TestImageAddRuby(t *testing.T) {
	from := rubyWASMForTest(t)
	data := t.TempDir()
	// The compile (tens of seconds) is shared with the wasm package's
	// test through wazero's cache of compiled code.
	shared := filepath.Join(filepath.Dir(from), "..", "..", "..", "..", "wazero-cache")
	if err := os.MkdirAll(shared, 0o755); err == nil {
		os.MkdirAll(filepath.Join(data, "cache"), 0o755)
		os.Symlink(shared, filepath.Join(data, "cache", "wasm"))
	}
	image := func(args ...string) (string, string, error) {
		c := newImageCmd()
		var out, errb bytes.Buffer
		c.SetOut(&out)
		c.SetErr(&errb)
		c.SetArgs(args)
		err := c.Execute()
		return out.String(), errb.String(), err
	}
	// A bad --from is refused, naming what to do.
	notWasm := filepath.Join(t.TempDir(), "ruby")
	os.WriteFile(notWasm, []byte("#!/bin/sh\n"), 0o755)
	for from, want := range map[string]string{"/nonexistent/ruby.wasm": "npm install @ruby/3.4-wasm-wasi", notWasm: "not a WebAssembly module"} {
		if _, err := rubyWASMSource(from); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("--from %s: %v, want %q", from, err, want)
		}
		if _, _, err := image("add-ruby", "--data", data, "--from", from, "default", "-t", "rb"); err == nil {
			t.Errorf("add-ruby --from %s succeeded", from)
		}
	}
	if _, _, err := image("add-ruby", "--data", data, "--from", from, "default"); err == nil {
		t.Error("add-ruby without -t succeeded")
	}
	if out, errs, err := image("add-ruby", "--data", data, "--from", from, "default", "-t", "rb"); err != nil || !digestRE.MatchString(out) {
		t.Fatalf("add-ruby: %v %q %q", err, out, errs)
	}
	out, errs, err := runVerb(t, "", "run", "--data", data, "--image", "rb", "-c",
		`ruby -e 'require "json"; puts JSON.generate([1,2])' | tr 2 3; command -v ruby; echo 'puts ARGV.inspect' > /tmp/a.rb; ruby /tmp/a.rb x; ruby -e 'exit 5'; echo status=$?`)
	if err != nil || out != "[1,3]\n/usr/local/bin/ruby\n[\"x\"]\nstatus=5\n" {
		t.Fatalf("ruby in a sandbox of the image: out %q stderr %q err %v", out, errs, err)
	}
}
