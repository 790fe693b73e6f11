package git_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"net/http/cgi"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/commands"
	"github.com/warren-sandbox/warren/commands/git"
	"github.com/warren-sandbox/warren/egress"
	"github.com/warren-sandbox/warren/egress/egresstest"
	"github.com/warren-sandbox/warren/vfs"
)

const httpBackend = "/usr/lib/git-core/git-http-backend"

// needHostGit is the host's git and its http-backend (Debian's git):
// missing in CI is a failure, elsewhere a skip with the reason.
func needHostGit(t testing.TB) {
	t.Helper()
	_, err := exec.LookPath("git")
	if err == nil {
		_, err = os.Stat(httpBackend)
	}
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("the host's git and %s are needed (Debian package git, scripts/test-packages.txt): %v", httpBackend, err)
		}
		t.Skipf("no host git / %s (install Debian's git): %v", httpBackend, err)
	}
}

// gitWorld is a loopback git hosting site: git http-backend (CGI) over TLS
// under git.test, a decoy under decoy.test, and a sandbox whose egress
// allows git.test only.
type gitWorld struct {
	root    string // GIT_PROJECT_ROOT on the host
	site    *egresstest.Server
	decoy   *egresstest.Server
	sb      *egress.Sandbox
	secret  egress.Secret
	fs      *vfs.FS
	mem     *commands.Memory
	env     []string
	timeout time.Duration // each command's deadline (default 30 s)

	mu     sync.Mutex
	auths  []string // Authorization headers the site saw
	advert []byte   // what /static/ serves
	ca     *egresstest.CA
}

const realToken = "real-token-value-9f8e"

func newGitWorld(t testing.TB) *gitWorld {
	needHostGit(t)
	w := &gitWorld{root: t.TempDir(), fs: vfs.New(vfs.Options{})}
	w.hostGit(t, "", "init", "-q", "--bare", "-b", "main", "repo.git")
	w.hostGit(t, "repo.git", "config", "http.receivepack", "true")
	seed := filepath.Join(w.root, "seed")
	w.hostGit(t, "", "init", "-q", "-b", "main", "seed")
	os.WriteFile(filepath.Join(seed, "README"), []byte("hello\n"), 0o644)
	w.hostGit(t, "seed", "add", "README")
	w.hostGit(t, "seed", "commit", "-qm", "first")
	w.hostGit(t, "seed", "tag", "-a", "-m", "v1", "v1")
	w.hostGit(t, "seed", "push", "-q", "--tags", filepath.Join(w.root, "repo.git"), "main")
	w.hostGit(t, "", "clone", "-q", "--bare", filepath.Join(w.root, "repo.git"), "private.git")
	w.hostGit(t, "private.git", "config", "http.receivepack", "true")

	backend := &cgi.Handler{Path: httpBackend, Root: "/git", Stderr: io.Discard,
		Env: []string{"GIT_PROJECT_ROOT=" + w.root, "GIT_HTTP_EXPORT_ALL=1"}}
	ca := egresstest.NewCA(t)
	w.ca = ca
	w.decoy = ca.Serve(t, backend, "decoy.test")
	mux := http.NewServeMux()
	mux.HandleFunc("/git/", func(rw http.ResponseWriter, r *http.Request) {
		w.mu.Lock()
		w.auths = append(w.auths, r.Header.Get("Authorization"))
		w.mu.Unlock()
		if strings.HasPrefix(r.URL.Path, "/git/private.git/") && r.Header.Get("Authorization") != "Bearer "+realToken && r.Header.Get("Authorization") != "Basic "+base64.StdEncoding.EncodeToString([]byte("x:"+realToken)) {
			rw.Header().Set("WWW-Authenticate", `Basic realm="git"`)
			http.Error(rw, "auth required", http.StatusUnauthorized)
			return
		}
		backend.ServeHTTP(rw, r)
	})
	mux.HandleFunc("/moved/", func(rw http.ResponseWriter, r *http.Request) {
		http.Redirect(rw, r, "https://decoy.test:"+w.decoy.Port()+"/git/repo.git/info/refs?"+r.URL.RawQuery, http.StatusFound)
	})
	mux.HandleFunc("/renamed/", func(rw http.ResponseWriter, r *http.Request) {
		// the repository moved on the same host: git follows and moves its base
		http.Redirect(rw, r, strings.Replace(r.URL.RequestURI(), "/renamed/old.git/", "/git/repo.git/", 1), http.StatusMovedPermanently)
	})
	mux.HandleFunc("/static/", func(rw http.ResponseWriter, r *http.Request) {
		rw.Header().Set("Content-Type", "application/x-git-upload-pack-advertisement")
		w.mu.Lock()
		rw.Write(w.advert)
		w.mu.Unlock()
	})
	mux.HandleFunc("/stall/", func(rw http.ResponseWriter, r *http.Request) {
		<-r.Context().Done()
	})
	mux.HandleFunc("/endlesspack/", func(rw http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/info/refs") {
			rw.Header().Set("Content-Type", "application/x-git-upload-pack-advertisement")
			io.WriteString(rw, "001e# service=git-upload-pack\n0000")
			ref := strings.Repeat("b", 40) + " HEAD\x00ofs-delta\n"
			io.WriteString(rw, fmt.Sprintf("%04x%s", len(ref)+4, ref))
			ref = strings.Repeat("b", 40) + " refs/heads/main\n"
			io.WriteString(rw, fmt.Sprintf("%04x%s0000", len(ref)+4, ref))
			return
		}
		rw.Header().Set("Content-Type", "application/x-git-upload-pack-result")
		if strings.Contains(r.URL.Path, "/count/") {
			// two billion objects declared
			io.WriteString(rw, "0008NAK\nPACK\x00\x00\x00\x02\x7f\xff\xff\xff")
			return
		}
		// one blob declared 32 GiB, its zlib stream stored blocks forever
		io.WriteString(rw, "0008NAK\nPACK\x00\x00\x00\x02\x00\x00\x00\x01\xb0\x80\x80\x80\x40\x78\x01")
		block := append([]byte{0x00, 0x00, 0x80, 0xff, 0x7f}, make([]byte, 32<<10)...)
		for r.Context().Err() == nil {
			if _, err := rw.Write(block); err != nil {
				return
			}
		}
	})
	mux.HandleFunc("/endless/", func(rw http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/info/refs") {
			rw.Header().Set("Content-Type", "application/x-git-upload-pack-advertisement")
			// a ref advertisement that never ends
			io.WriteString(rw, "001e# service=git-upload-pack\n0000")
			line := []byte("003f" + strings.Repeat("a", 40) + " refs/heads/b" + strings.Repeat("x", 10) + "\n")
			for r.Context().Err() == nil {
				if _, err := rw.Write(bytes.Repeat(line, 1000)); err != nil {
					return
				}
			}
		}
	})
	w.site = ca.Serve(t, mux, "git.test", "mirror.test")
	lo := netip.MustParseAddr("127.0.0.1")
	e := egress.New(egress.Config{
		Hosts:      map[string][]netip.Addr{"git.test": {lo}, "mirror.test": {lo}, "decoy.test": {lo}},
		HostsOnly:  true,
		AllowCIDRs: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")},
		RootCAs:    ca.Pool,
	})
	p, err := egress.ParsePolicy([]string{"git.test", "mirror.test"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	w.sb = e.Sandbox("sb-git", p)
	if w.secret, err = egress.NewSecret("GIT_TOKEN", realToken, []string{"git.test"}, false); err != nil {
		t.Fatal(err)
	}
	w.sb.SetSecrets([]egress.Secret{w.secret})
	w.fs.MkdirAll("/work", 0o755)
	w.env = []string{"HOME=/root", "GIT_AUTHOR_NAME=A", "GIT_AUTHOR_EMAIL=a@x", "GIT_COMMITTER_NAME=A", "GIT_COMMITTER_EMAIL=a@x", "TOKEN=" + w.secret.Placeholder}
	return w
}

func (w *gitWorld) url(repo string) string {
	return "https://git.test:" + w.site.Port() + "/git/" + repo
}

// hostGit runs the host's real git in the site's project root.
func (w *gitWorld) hostGit(t testing.TB, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = filepath.Join(w.root, dir)
	cmd.Env = append(os.Environ(), "HOME="+w.root, "GIT_CONFIG_NOSYSTEM=1", "GIT_AUTHOR_NAME=H", "GIT_AUTHOR_EMAIL=h@x",
		"GIT_COMMITTER_NAME=H", "GIT_COMMITTER_EMAIL=h@x")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("host git %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// git runs the resident git in the sandbox at /work/dir.
func (w *gitWorld) git(t testing.TB, dir string, args ...string) (string, string, int) {
	t.Helper()
	tab := commands.Table{}
	git.Register(tab)
	var out, errb bytes.Buffer
	inv := &commands.Invocation{Args: append([]string{"git"}, args...), Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb,
		Dir: "/work/" + dir, Env: w.env, FS: w.fs, Umask: 0o022,
		Sys: &commands.System{Hostname: "sandbox", Net: w.sb.Client(), Memory: w.mem}}
	d := w.timeout
	if d == 0 {
		d = 30 * time.Second
	}
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	code := tab["git"](ctx, inv)
	return out.String(), errb.String(), code
}

func (w *gitWorld) must(t testing.TB, dir string, args ...string) string {
	t.Helper()
	out, errs, code := w.git(t, dir, args...)
	if code != 0 {
		t.Fatalf("git %v: status %d\nstdout %s\nstderr %s", args, code, out, errs)
	}
	return out + errs
}

// TestHTTP_Workflow is the everyday round trip against a real git
// http-backend: clone, commit, push, the host's git sees it; a change
// pushed by the host's git arrives by fetch and pull; ls-remote lists the
// refs as the host's git does.
func TestHTTP_Workflow(t *testing.T) {
	w := newGitWorld(t)
	url := w.url("repo.git")
	out := w.must(t, "", "clone", url)
	if !strings.Contains(out, "Cloning into 'repo'...") {
		t.Errorf("clone said %q", out)
	}
	if b, err := w.fs.ReadFile("/work/repo/README"); err != nil || string(b) != "hello\n" {
		t.Fatalf("checked out README: %q %v", b, err)
	}
	if got := w.must(t, "repo", "status", "-sb"); got != "## main...origin/main\n" {
		t.Errorf("status after clone: %q", got)
	}
	if got := w.must(t, "repo", "tag"); got != "v1\n" {
		t.Errorf("tags after clone: %q", got)
	}

	// commit and push
	w.fs.WriteFile("/work/repo/a.txt", []byte("from the sandbox\n"), 0o644)
	w.must(t, "repo", "add", "a.txt")
	w.must(t, "repo", "commit", "-qm", "sandbox change")
	head := strings.TrimSpace(w.must(t, "repo", "rev-parse", "HEAD"))
	out = w.must(t, "repo", "push")
	if want := "To " + url + "\n   "; !strings.HasPrefix(out, want) || !strings.Contains(out, ".."+head[:7]+"  main -> main\n") {
		t.Errorf("push said %q", out)
	}
	if got := strings.TrimSpace(w.hostGit(t, "repo.git", "rev-parse", "main")); got != head {
		t.Fatalf("the server's main is %s, want %s", got, head)
	}
	w.hostGit(t, "repo.git", "fsck", "--strict")

	// a new branch with -u
	w.must(t, "repo", "switch", "-qc", "feature")
	w.fs.WriteFile("/work/repo/b.txt", []byte("feature\n"), 0o644)
	w.must(t, "repo", "add", "b.txt")
	w.must(t, "repo", "commit", "-qm", "feature")
	out = w.must(t, "repo", "push", "-u", "origin", "feature")
	if !strings.Contains(out, " * [new branch]      feature -> feature\n") || !strings.Contains(out, "branch 'feature' set up to track 'origin/feature'.") {
		t.Errorf("push -u said %q", out)
	}
	if got := w.must(t, "repo", "status", "-sb"); got != "## feature...origin/feature\n" {
		t.Errorf("status after push -u: %q", got)
	}
	w.must(t, "repo", "switch", "-q", "main")

	// the host's git pushes a change; fetch and pull bring it
	w.hostGit(t, "", "clone", "-q", filepath.Join(w.root, "repo.git"), "other")
	os.WriteFile(filepath.Join(w.root, "other", "c.txt"), []byte("from the host\n"), 0o644)
	w.hostGit(t, "other", "add", "c.txt")
	w.hostGit(t, "other", "commit", "-qm", "host change")
	w.hostGit(t, "other", "push", "-q", "origin", "main")
	hostHead := strings.TrimSpace(w.hostGit(t, "other", "rev-parse", "HEAD"))
	out = w.must(t, "repo", "fetch")
	if want := "From " + url + "\n   " + head[:7] + ".." + hostHead[:7] + "  main       -> origin/main\n"; out != want {
		t.Errorf("fetch said %q, want %q", out, want)
	}
	if got := w.must(t, "repo", "status", "-sb"); got != "## main...origin/main [behind 1]\n" {
		t.Errorf("status after fetch: %q", got)
	}
	out = w.must(t, "repo", "pull")
	if !strings.Contains(out, "Fast-forward") {
		t.Errorf("pull said %q", out)
	}
	if b, err := w.fs.ReadFile("/work/repo/c.txt"); err != nil || string(b) != "from the host\n" {
		t.Errorf("pulled c.txt: %q %v", b, err)
	}
	if got := strings.TrimSpace(w.must(t, "repo", "rev-parse", "HEAD")); got != hostHead {
		t.Errorf("HEAD after pull %s, want %s", got, hostHead)
	}
	if got := w.must(t, "repo", "fetch"); got != "" {
		t.Errorf("fetch with nothing new said %q", got)
	}

	// ls-remote prints what the host's git prints
	got, _, code := w.git(t, "repo", "ls-remote", url)
	want := w.hostGit(t, "", "ls-remote", filepath.Join(w.root, "repo.git"))
	if code != 0 || got != want {
		t.Errorf("ls-remote:\n%s\nwant (host git):\n%s", got, want)
	}
	if got := w.must(t, "repo", "ls-remote", "--heads", "origin"); !strings.Contains(got, "\trefs/heads/feature\n") || strings.Contains(got, "tags") {
		t.Errorf("ls-remote --heads origin: %q", got)
	}

	// a rejected non-fast-forward, as git says it
	w.hostGit(t, "other", "pull", "-q", "origin", "main")
	os.WriteFile(filepath.Join(w.root, "other", "d.txt"), []byte("again\n"), 0o644)
	w.hostGit(t, "other", "add", "d.txt")
	w.hostGit(t, "other", "commit", "-qm", "host again")
	w.hostGit(t, "other", "push", "-q", "origin", "main")
	w.fs.WriteFile("/work/repo/e.txt", []byte("diverge\n"), 0o644)
	w.must(t, "repo", "add", "e.txt")
	w.must(t, "repo", "commit", "-qm", "diverging")
	_, errs, code := w.git(t, "repo", "push")
	if code != 1 || !strings.Contains(errs, " ! [rejected]        main -> main (fetch first)\nerror: failed to push some refs to '"+url+"'\nhint: Updates were rejected because the remote contains work that you do\n") {
		t.Errorf("rejected push: %d %q", code, errs)
	}
	w.must(t, "repo", "fetch")
	_, errs, code = w.git(t, "repo", "push")
	if code != 1 || !strings.Contains(errs, " ! [rejected]        main -> main (non-fast-forward)\n") || !strings.Contains(errs, "hint: Updates were rejected because the tip of your current branch is behind\n") {
		t.Errorf("non-fast-forward push: %d %q", code, errs)
	}
	if _, errs, code := w.git(t, "repo", "pull"); code != 128 || !strings.Contains(errs, "fatal: Need to specify how to reconcile divergent branches.") {
		t.Errorf("divergent pull: %d %q", code, errs)
	}
	w.must(t, "repo", "pull", "--no-rebase")
	w.must(t, "repo", "push", "-q")
	w.hostGit(t, "repo.git", "fsck", "--strict")
	if got, want := strings.TrimSpace(w.hostGit(t, "repo.git", "rev-parse", "main")), strings.TrimSpace(w.must(t, "repo", "rev-parse", "HEAD")); got != want {
		t.Errorf("after merge and push the server has %s, the sandbox %s", got, want)
	}
	if n := w.decoy.Hits(); n != 0 {
		t.Errorf("the decoy was reached %d times", n)
	}
}

// TestHTTP_Policy: a denied host fails before any byte leaves (exit 128
// naming the policy, no hit on the decoy), a redirect to it too; the
// secret placeholder in an extraHeader reaches the allowed host as the
// real value and never lands in the vfs.
func TestHTTP_Policy(t *testing.T) {
	w := newGitWorld(t)
	decoy := "https://decoy.test:" + w.decoy.Port() + "/git/repo.git"
	for _, c := range []struct {
		name string
		args []string
		err  string
	}{
		{"denied host", []string{"clone", decoy, "d1"}, "fatal: unable to access '" + decoy + "/': Failed to connect to decoy.test port " + w.decoy.Port() + " after 0 ms: blocked by the egress policy of sandbox sb-git: decoy.test:" + w.decoy.Port() + " is not in the sandbox's allow list"},
		{"denied ls-remote", []string{"ls-remote", decoy}, "blocked by the egress policy of sandbox sb-git"},
		{"redirect to a denied host", []string{"clone", "https://git.test:" + w.site.Port() + "/moved/repo.git", "d2"}, "blocked by the egress policy of sandbox sb-git: decoy.test"},
		{"not found", []string{"clone", w.url("nope.git"), "d3"}, "fatal: repository '" + w.url("nope.git") + "/' not found"},
		{"no credentials", []string{"clone", w.url("private.git"), "d4"}, "fatal: could not read Username for 'https://git.test:" + w.site.Port() + "': terminal prompts disabled"},
		{"wrong credentials", []string{"clone", strings.Replace(w.url("private.git"), "https://", "https://me:wrong@", 1), "d5"}, "fatal: Authentication failed for '" + w.url("private.git") + "/'"},
		{"ssh refused", []string{"clone", "git@github.com:x/y.git"}, "protocol 'ssh' is not supported here"},
		{"raw private address", []string{"ls-remote", "https://10.1.2.3/r.git"}, "10.1.2.3 is in 10.0.0.0/8, always denied"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, errs, code := w.git(t, "", c.args...)
			if code != 128 || !strings.Contains(errs, c.err) {
				t.Fatalf("status %d stderr %q, want 128 and %q", code, errs, c.err)
			}
		})
	}
	for _, d := range []string{"/work/d1", "/work/d2", "/work/d3", "/work/d4", "/work/d5"} {
		if _, err := w.fs.Stat(d); err == nil {
			t.Errorf("a failed clone left %s", d)
		}
	}
	if n := w.decoy.Hits(); n != 0 {
		t.Fatalf("the decoy server was reached %d times", n)
	}

	// the secret, as an extraHeader
	w.mu.Lock()
	w.auths = nil
	w.mu.Unlock()
	out := w.must(t, "", "-c", "http.extraHeader=Authorization: Bearer "+w.secret.Placeholder, "clone", w.url("private.git"), "priv")
	if !strings.Contains(out, "Cloning into 'priv'") {
		t.Errorf("clone said %q", out)
	}
	w.must(t, "priv", "config", "http.extraHeader", "Authorization: Bearer "+w.secret.Placeholder)
	w.fs.WriteFile("/work/priv/s.txt", []byte("x\n"), 0o644)
	w.must(t, "priv", "add", "s.txt")
	w.must(t, "priv", "commit", "-qm", "with a secret")
	w.must(t, "priv", "push")
	w.must(t, "priv", "fetch")
	w.mu.Lock()
	auths := append([]string(nil), w.auths...)
	w.mu.Unlock()
	if len(auths) < 4 {
		t.Fatalf("the site saw %d requests", len(auths))
	}
	for _, a := range auths {
		if a != "Bearer "+realToken {
			t.Errorf("the site saw Authorization %q, want the real token", a)
		}
	}
	// as URL credentials (git sends them as Basic; egress swaps inside it)
	w.mu.Lock()
	w.auths = nil
	w.mu.Unlock()
	withCreds := strings.Replace(w.url("private.git"), "https://", "https://x:"+w.secret.Placeholder+"@", 1)
	w.must(t, "", "clone", "-q", withCreds, "priv2")
	w.must(t, "priv2", "ls-remote", "origin")
	w.mu.Lock()
	for _, a := range w.auths {
		if a != "Basic "+base64.StdEncoding.EncodeToString([]byte("x:"+realToken)) {
			t.Errorf("the site saw Authorization %q for URL credentials", a)
		}
	}
	w.mu.Unlock()
	// another allowed host, not the secret's, gets the placeholder as it is
	w.mu.Lock()
	w.auths = nil
	w.mu.Unlock()
	mirror := "https://mirror.test:" + w.site.Port() + "/git/repo.git"
	w.must(t, "", "-c", "http.extraHeader=Authorization: Bearer "+w.secret.Placeholder, "ls-remote", mirror)
	w.mu.Lock()
	if len(w.auths) != 1 || w.auths[0] != "Bearer "+w.secret.Placeholder {
		t.Errorf("the mirror saw %q, want the placeholder", w.auths)
	}
	w.mu.Unlock()
	var leaks []string
	walkFiles(t, w.fs, "/", func(p string, data []byte) {
		if bytes.Contains(data, []byte(realToken)) {
			leaks = append(leaks, p)
		}
	})
	if len(leaks) > 0 {
		t.Errorf("the secret's value is in the vfs: %v", leaks)
	}
}

// TestHTTP_Hostile: an endless ref advertisement ends on the sandbox's
// memory budget (status 125, nothing left charged), a ctx deadline ends a
// stalled transfer.
func TestHTTP_Hostile(t *testing.T) {
	w := newGitWorld(t)
	w.mem = commands.NewMemory(8 << 20)
	_, errs, code := w.git(t, "", "ls-remote", "https://git.test:"+w.site.Port()+"/endless/r.git")
	if code != commands.StatusLimit || !strings.Contains(errs, "memory limit exceeded (8 MiB)") {
		t.Fatalf("endless advertisement: %d %q", code, errs)
	}
	if u := w.mem.Used(); u != 0 {
		t.Errorf("%d bytes still charged", u)
	}
	// a pack declaring two billion objects (go-git's indexer would
	// allocate a slice of that many at once), and one that never ends
	_, errs, code = w.git(t, "", "clone", "https://git.test:"+w.site.Port()+"/endlesspack/count/r.git", "endless")
	if code != 128 || !strings.Contains(errs, "declares 2147483647 objects, over warren's limit") {
		t.Fatalf("two billion objects: %d %q", code, errs)
	}
	_, errs, code = w.git(t, "", "clone", "https://git.test:"+w.site.Port()+"/endlesspack/data/r.git", "endless")
	if code != commands.StatusLimit || !strings.Contains(errs, "memory limit exceeded (8 MiB)") {
		t.Fatalf("endless pack: %d %q", code, errs)
	}
	if u := w.mem.Used(); u != 0 {
		t.Errorf("%d bytes still charged", u)
	}
	// a clone larger than the budget
	big := make([]byte, 3<<19)
	rand.Read(big)
	os.WriteFile(filepath.Join(w.root, "seed", "big.bin"), big, 0o644)
	w.hostGit(t, "seed", "add", "big.bin")
	w.hostGit(t, "seed", "commit", "-qm", "big")
	w.hostGit(t, "seed", "push", "-q", filepath.Join(w.root, "repo.git"), "main")
	w.mem = commands.NewMemory(1 << 20)
	_, errs, code = w.git(t, "", "clone", w.url("repo.git"), "small")
	if code != commands.StatusLimit || !strings.Contains(errs, "memory limit exceeded") {
		t.Fatalf("clone over budget: %d %q", code, errs)
	}
	if _, err := w.fs.Stat("/work/small"); err == nil {
		t.Errorf("a failed clone left /work/small")
	}
}

func walkFiles(t testing.TB, fsys *vfs.FS, dir string, fn func(string, []byte)) {
	ents, err := fsys.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		p := filepath.Join(dir, e.Name())
		switch {
		case e.IsDir():
			walkFiles(t, fsys, p, fn)
		case e.Type().IsRegular():
			data, err := fsys.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			fn(p, data)
		}
	}
}

// TestHTTP_Shallow: clone --depth 1 gets one commit (git's shallow file),
// log stops there, and a later pull brings the new commit on top.
func TestHTTP_Shallow(t *testing.T) {
	w := newGitWorld(t)
	for _, n := range []string{"2", "3"} {
		os.WriteFile(filepath.Join(w.root, "seed", "n.txt"), []byte(n+"\n"), 0o644)
		w.hostGit(t, "seed", "add", "n.txt")
		w.hostGit(t, "seed", "commit", "-qm", "commit "+n)
	}
	w.hostGit(t, "seed", "push", "-q", filepath.Join(w.root, "repo.git"), "main")
	w.must(t, "", "clone", "-q", "--depth", "1", w.url("repo.git"), "sh")
	if got := w.must(t, "sh", "log", "--format=%s"); got != "commit 3\n" {
		t.Errorf("log of a depth-1 clone: %q", got)
	}
	host := strings.TrimSpace(w.hostGit(t, "seed", "rev-parse", "HEAD"))
	if b, err := w.fs.ReadFile("/work/sh/.git/shallow"); err != nil || strings.TrimSpace(string(b)) != host {
		t.Errorf(".git/shallow: %q %v, want %s", b, err, host)
	}
	os.WriteFile(filepath.Join(w.root, "seed", "n.txt"), []byte("4\n"), 0o644)
	w.hostGit(t, "seed", "commit", "-qam", "commit 4")
	w.hostGit(t, "seed", "push", "-q", filepath.Join(w.root, "repo.git"), "main")
	w.must(t, "sh", "pull", "-q")
	if got := w.must(t, "sh", "log", "--format=%s"); got != "commit 4\ncommit 3\n" {
		t.Errorf("log after pull: %q", got)
	}
	if b, _ := w.fs.ReadFile("/work/sh/n.txt"); string(b) != "4\n" {
		t.Errorf("n.txt after pull: %q", b)
	}
}

// TestHTTP_Failures: a certificate from an unknown CA and a stalled
// server end as git reports them (128), within the command's deadline.
func TestHTTP_Failures(t *testing.T) {
	w := newGitWorld(t)
	other := egresstest.NewCA(t)
	stall := make(chan struct{})
	t.Cleanup(func() { close(stall) })
	bad := other.Serve(t, http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		select {
		case <-stall:
		case <-r.Context().Done():
		}
	}), "git.test")
	// the same name on a server whose certificate the sandbox does not trust
	badURL := "https://git.test:" + bad.Port() + "/git/repo.git"
	_, errs, code := w.git(t, "", "ls-remote", badURL)
	if code != 128 || !strings.Contains(errs, "fatal: unable to access '"+badURL+"/': SSL certificate problem: unable to get local issuer certificate") {
		t.Errorf("untrusted certificate: %d %q", code, errs)
	}
	// a server that never answers, under a 300 ms deadline
	start := time.Now()
	w.timeout = 300 * time.Millisecond
	_, errs, code = w.git(t, "", "ls-remote", "https://git.test:"+w.site.Port()+"/stall/r.git")
	if code != 128 || !strings.Contains(errs, "Operation timed out") {
		t.Errorf("stalled server: %d %q", code, errs)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("the deadline took %v to end the command", d)
	}
}

// TestHTTP_EmptyRepository: an agent's first push to a new, empty
// repository: clone warns, commit, push -u creates the branch.
func TestHTTP_EmptyRepository(t *testing.T) {
	w := newGitWorld(t)
	w.hostGit(t, "", "init", "-q", "--bare", "-b", "main", "empty.git")
	w.hostGit(t, "empty.git", "config", "http.receivepack", "true")
	out := w.must(t, "", "clone", w.url("empty.git"))
	if !strings.Contains(out, "warning: You appear to have cloned an empty repository.") {
		t.Errorf("clone said %q", out)
	}
	if got, _, _ := w.git(t, "", "ls-remote", w.url("empty.git")); got != "" {
		t.Errorf("ls-remote of an empty repository: %q", got)
	}
	w.fs.WriteFile("/work/empty/f", []byte("f\n"), 0o644)
	w.must(t, "empty", "add", "f")
	w.must(t, "empty", "commit", "-qm", "first")
	w.must(t, "empty", "branch", "-M", "main")
	out = w.must(t, "empty", "push", "-u", "origin", "main")
	if !strings.Contains(out, " * [new branch]      main -> main\n") {
		t.Errorf("push said %q", out)
	}
	if got, want := strings.TrimSpace(w.hostGit(t, "empty.git", "rev-parse", "main")), strings.TrimSpace(w.must(t, "empty", "rev-parse", "HEAD")); got != want {
		t.Errorf("server main %s, sandbox HEAD %s", got, want)
	}
	if got := w.must(t, "empty", "status", "-sb"); got != "## main...origin/main\n" {
		t.Errorf("status: %q", got)
	}
	// a remote added by hand, pushed with a refspec
	w.must(t, "empty", "remote", "add", "second", w.url("repo.git"))
	if got := w.must(t, "empty", "remote", "-v"); !strings.Contains(got, "second\t"+w.url("repo.git")+" (push)\n") {
		t.Errorf("remote -v: %q", got)
	}
	w.must(t, "empty", "push", "second", "HEAD:refs/heads/from-empty")
	if got := w.hostGit(t, "repo.git", "branch", "--list", "from-empty"); !strings.Contains(got, "from-empty") {
		t.Errorf("branch not on the server: %q", got)
	}
	w.must(t, "empty", "push", "second", "--delete", "from-empty")
	if got := w.hostGit(t, "repo.git", "branch", "--list", "from-empty"); got != "" {
		t.Errorf("branch still on the server: %q", got)
	}
}

// TestHTTP_Remotes: a redirect on the allowed host moves the remote's base
// (git's warning), and a remote that is a sandbox path is refused, so the
// image's git can take the command.
func TestHTTP_Remotes(t *testing.T) {
	w := newGitWorld(t)
	moved := "https://git.test:" + w.site.Port() + "/renamed/old.git"
	out := w.must(t, "", "clone", moved, "mv")
	if !strings.Contains(out, "warning: redirecting to "+w.url("repo.git")+"/\n") {
		t.Errorf("clone through a redirect said %q", out)
	}
	if b, _ := w.fs.ReadFile("/work/mv/README"); string(b) != "hello\n" {
		t.Errorf("README through the redirect: %q", b)
	}
	w.must(t, "", "clone", "-q", "/work/mv", "local")
	for _, args := range [][]string{{"fetch"}, {"pull"}, {"push"}, {"ls-remote"}} {
		_, errs, code := w.git(t, "local", args...)
		if code != 2 || !strings.Contains(errs, "not supported here") {
			t.Errorf("git %s on a path remote: %d %q, want the refusal", args[0], code, errs)
		}
	}
	if _, errs, code := w.git(t, "local", "fetch", "nowhere"); code != 128 || !strings.Contains(errs, "fatal: 'nowhere' does not appear to be a git repository") {
		t.Errorf("fetch from an unknown remote: %d %q", code, errs)
	}
	if _, errs, code := w.git(t, "mv", "--no-pager", "fetch", "--unshallow"); code != 2 || !strings.Contains(errs, "fetch --unshallow") {
		t.Errorf("an unknown fetch option: %d %q", code, errs)
	}
}
