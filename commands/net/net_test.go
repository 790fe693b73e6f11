package net_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/warren-sandbox/warren/commands"
	"github.com/warren-sandbox/warren/commands/net"
	"github.com/warren-sandbox/warren/vfs"
)

func run(t *testing.T, fsys *vfs.FS, argv ...string) (string, string, int) {
	t.Helper()
	tab := commands.Table{}
	net.Register(tab)
	var out, errb bytes.Buffer
	inv := &commands.Invocation{Args: argv, Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, Dir: "/", FS: fsys}
	code := tab[argv[0]](context.Background(), inv)
	return out.String(), errb.String(), code
}

func TestNoNetwork(t *testing.T) {
	fsys := vfs.New(vfs.Options{})
	fsys.WriteFile("/data.txt", []byte("local\n"), 0o644)
	for _, c := range []struct {
		argv     []string
		out, err string
		code     int
	}{
		// statuses are what curl and wget return without a network
		{[]string{"curl", "https://example.com/x"}, "", "curl: (6) Could not resolve host: example.com (network disabled for this sandbox)\n", 6},
		{[]string{"curl", "-s", "https://example.com/x"}, "", "", 6},
		{[]string{"curl", "-sS", "http://10.0.0.1:8080/"}, "", "curl: (7) Failed to connect to 10.0.0.1 port 8080 after 0 ms: Couldn't connect to server (network disabled for this sandbox)\n", 7},
		{[]string{"curl"}, "", "curl: no URL specified!\ncurl: try 'curl --help' or 'curl --manual' for more information\n", 2},
		{[]string{"curl", "-H", "X: y", "file:///data.txt"}, "local\n", "", 0},
		{[]string{"curl", "gopher://x"}, "", "curl: (1) Protocol \"gopher\" not supported\n", 1},
		{[]string{"wget", "-q", "https://example.com/"}, "", "wget: unable to resolve host address 'example.com'\n", 4},
		{[]string{"wget"}, "", "wget: missing URL\nUsage: wget [OPTION]... [URL]...\n\nTry `wget --help' for more options.\n", 1},
		// --version answers before any other option acts (curl -x fails on its own)
		{[]string{"curl", "-x", "http://p:3128", "--version"}, "curl 8.5.0 (x86_64-pc-linux-gnu) warren-sandbox\nProtocols: file http https\nFeatures: egress-policy\n", "", 0},
		{[]string{"wget", "--version"}, "GNU Wget 1.21.3 (warren sandbox: through the egress policy)\n", "", 0},
		{[]string{"wget", "-o", "log", "-V"}, "GNU Wget 1.21.3 (warren sandbox: through the egress policy)\n", "", 0},
	} {
		out, errs, code := run(t, fsys, c.argv...)
		if out != c.out || errs != c.err || code != c.code {
			t.Errorf("%q: got %q %q %d, want %q %q %d", c.argv, out, errs, code, c.out, c.err, c.code)
		}
	}
}
