package native_test

import (
	"context"
	"net/http"
	"net/http/cgi"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/warren-sandbox/warren/egress"
	"github.com/warren-sandbox/warren/egress/egresstest"
	"github.com/warren-sandbox/warren/native"
)

// TestListen_GitCloneThroughProxy: git in a Debian workspace clones over
// HTTPS (the host's git http-backend on loopback under a test name)
// through the egress proxy; a denied host fails.
func TestListen_GitCloneThroughProxy(t *testing.T) {
	rt, _ := requireRuntime(t)
	backend := "/usr/lib/git-core/git-http-backend"
	if _, err := os.Stat(backend); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("git http-backend missing (apt-get install git): %v", err)
		}
		t.Skip("git http-backend not installed (apt-get install git)")
	}
	root, img := debianImage(t)
	repos := t.TempDir()
	src := filepath.Join(repos, "src")
	for _, args := range [][]string{
		{"init", "-q", "-b", "main", src},
		{"-C", src, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty", "-m", "first from the host"},
		{"clone", "-q", "--bare", src, filepath.Join(repos, "repo.git")},
	} {
		if out, err := exec.Command("git", args...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
	}
	ca := egresstest.NewCA(t)
	h := &cgi.Handler{Path: backend, Env: []string{"GIT_PROJECT_ROOT=" + repos, "GIT_HTTP_EXPORT_ALL=1"}}
	srv := ca.Serve(t, http.StripPrefix("/git", h), "git.test", "evil-git.test")
	lo := netip.MustParseAddr("127.0.0.1")
	eg := egress.New(egress.Config{
		Hosts:      map[string][]netip.Addr{"git.test": {lo}, "evil-git.test": {lo}},
		HostsOnly:  true,
		AllowCIDRs: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")},
	})
	p, _ := egress.ParsePolicy([]string{"git.test"}, nil)
	sb := eg.Sandbox("git", p)
	ws, v, _ := proxiedWorkspace(t, rt, "git", root, img, sb, map[string][]byte{"/root/ca.pem": ca.CertPEM()})
	env := append(append([]string{}, testEnv...), "https_proxy=http://127.0.0.1:3128", "GIT_SSL_CAINFO=/root/ca.pem", "GIT_TERMINAL_PROMPT=0")
	git := func(args ...string) (native.Result, string) {
		var out strings.Builder
		res, err := ws.Exec(context.Background(), native.Cmd{Path: "/usr/bin/git", Args: append([]string{"git"}, args...), Env: env, Dir: "/root", Stdout: &out, Stderr: &out})
		if err != nil {
			t.Fatal(err)
		}
		return res, out.String()
	}
	if res, out := git("clone", "-q", "https://git.test:"+srv.Port()+"/git/repo.git", "/root/clone"); res.Status != 0 {
		t.Fatalf("clone from the allowed host: %d %s", res.Status, out)
	}
	if res, out := git("-C", "/root/clone", "log", "--format=%s"); res.Status != 0 || out != "first from the host\n" {
		t.Fatalf("log of the clone: %d %q", res.Status, out)
	}
	if data, err := v.ReadFile("/root/clone/.git/HEAD"); err != nil || !strings.Contains(string(data), "main") {
		t.Fatalf("the clone is not in the sandbox's files: %q %v", data, err)
	}
	hits := srv.Hits()
	if res, out := git("clone", "-q", "https://evil-git.test:"+srv.Port()+"/git/repo.git", "/root/evil"); res.Status == 0 || !strings.Contains(out, "403") {
		t.Fatalf("clone from a denied host: %d %q", res.Status, out)
	}
	if srv.Hits() != hits {
		t.Fatal("the denied host was reached")
	}
}
