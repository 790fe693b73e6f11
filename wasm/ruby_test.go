//go:build !race

package wasm_test

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/commands"
	"github.com/warren-sandbox/warren/vfs"
	"github.com/warren-sandbox/warren/wasm"
)

// RubyWASMEnv names ruby+stdlib.wasm for the tests; scripts/test.sh
// installs the npm package @ruby/3.4-wasm-wasi into RubyWASMCache.
const (
	RubyWASMEnv   = "WARREN_RUBY_WASM"
	RubyWASMCache = "/var/cache/warren-test/ruby-wasm"
)

// rubyWASM returns the ruby+stdlib.wasm bytes and a compile cache
// directory next to them (the module is 30 MB: its first compile takes
// tens of seconds, later test runs load it from the cache).
func rubyWASM(t *testing.T) ([]byte, string) {
	t.Helper()
	p := os.Getenv(RubyWASMEnv)
	if p == "" {
		p = filepath.Join(RubyWASMCache, "node_modules/@ruby/3.4-wasm-wasi/dist/ruby+stdlib.wasm")
	}
	bin, err := os.ReadFile(p)
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("ruby+stdlib.wasm is missing (%v): scripts/test.sh installs @ruby/3.4-wasm-wasi with npm", err)
		}
		t.Skipf("ruby+stdlib.wasm not found (%v): npm install --prefix %s @ruby/3.4-wasm-wasi, or set %s", err, RubyWASMCache, RubyWASMEnv)
	}
	cache := filepath.Join(filepath.Dir(p), "..", "..", "..", "..", "wazero-cache")
	if err := os.MkdirAll(cache, 0o755); err != nil {
		cache = t.TempDir()
	}
	return bin, cache
}

// TestRuby runs ruby.wasm's reactor through the wasm tier's glue: -e with
// the standard library, ARGV, exit statuses, uncaught exceptions, scripts
// from files and stdin, and files written into the vfs.
func TestRuby(t *testing.T) {
	bin, cache := rubyWASM(t)
	rt := wasm.New(wasm.Config{CacheDir: cache})
	defer rt.Close(context.Background())
	fsys := vfs.New(vfs.Options{})
	for _, d := range []string{"/usr/local/bin", "/home/user", "/tmp"} {
		if err := fsys.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := fsys.WriteFile("/usr/local/bin/ruby", bin, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := fsys.WriteFile("/home/user/hello.rb", []byte("require_relative 'lib'\nputs greet(ARGV.first)\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := fsys.WriteFile("/home/user/lib.rb", []byte("def greet(n) = \"hello, #{n}\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		args   []string
		stdin  string
		status int
		stdout string
		stderr string // a substring
	}{
		{"json", []string{"-e", `require "json"; puts JSON.generate([1,2])`}, "", 0, "[1,2]\n", ""},
		{"argv and stdin", []string{"-e", "p ARGV; puts $stdin.read.upcase", "a", "-b"}, "piped\n", 0, "[\"a\", \"-b\"]\nPIPED\n", ""},
		{"exit status", []string{"-e", "puts 1; exit 3"}, "", 3, "1\n", ""},
		{"exception", []string{"-e", "raise ArgumentError, 'bad'"}, "", 1, "", "bad (ArgumentError)"},
		{"script file", []string{"/home/user/hello.rb", "warren"}, "", 0, "hello, warren\n", ""},
		{"stdin script", nil, "puts [1,2,3].sum\n", 0, "6\n", ""},
		{"writes land in the vfs", []string{"-e", `File.write("/tmp/r.txt", "from ruby\n"); puts File.read("/tmp/r.txt")`}, "", 0, "from ruby\n", ""},
		{"stdlib", []string{"-rset", "-e", `require "digest"; puts Set[1,1,2].size, Digest::SHA256.hexdigest("")[0,8]`}, "", 0, "2\ne3b0c442\n", ""},
		{"bad option", []string{"--jit"}, "", 1, "", "invalid option --jit"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			inv := &commands.Invocation{Args: append([]string{"ruby"}, tt.args...), Stdin: strings.NewReader(tt.stdin),
				Stdout: &out, Stderr: &errb, Dir: "/home/user", Env: []string{"PWD=/home/user", "HOME=/home/user"}, FS: fsys,
				Sys: &commands.System{Memory: commands.NewMemory(512 << 20)}}
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			t0 := time.Now()
			st := rt.Exec(ctx, inv, "/usr/local/bin/ruby")
			t.Logf("%v", time.Since(t0).Round(time.Millisecond))
			if st != tt.status || out.String() != tt.stdout || !strings.Contains(errb.String(), tt.stderr) {
				t.Fatalf("status %d stdout %q stderr %q; want %d %q %q", st, out.String(), errb.String(), tt.status, tt.stdout, tt.stderr)
			}
			if strings.Contains(tt.name, "vfs") {
				if data, err := fsys.ReadFile("/tmp/r.txt"); err != nil || string(data) != "from ruby\n" {
					t.Fatalf("ruby's write as the vfs has it: %q %v", data, err)
				}
			}
		})
	}
	// The exec's deadline ends a Ruby loop (124), and Ruby's heap is
	// bounded by the sandbox's limit (137).
	for _, tc := range []struct {
		name   string
		code   string
		sys    *commands.System
		limit  time.Duration
		status int
	}{
		{"deadline", "loop {}", nil, 4 * time.Second, wasm.StatusTimeout},
		{"memory", `a = []; loop { a << "x" * (1 << 20) }`, &commands.System{MaxMemoryBytes: 128 << 20, Memory: commands.NewMemory(256 << 20)}, time.Minute, wasm.StatusMemory},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var errb bytes.Buffer
			inv := &commands.Invocation{Args: []string{"ruby", "-e", tc.code}, Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: &errb,
				Dir: "/home/user", FS: fsys, Sys: tc.sys}
			ctx, cancel := context.WithTimeout(context.Background(), tc.limit)
			defer cancel()
			t0 := time.Now()
			if st := rt.Exec(ctx, inv, "/usr/local/bin/ruby"); st != tc.status {
				t.Fatalf("status %d after %v (stderr %q), want %d", st, time.Since(t0), errb.String(), tc.status)
			}
			if tc.sys != nil && tc.sys.Memory.Used() != 0 {
				t.Fatalf("%d bytes still charged", tc.sys.Memory.Used())
			}
		})
	}
}
