package net_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/commands"
	"github.com/warren-sandbox/warren/commands/net"
	"github.com/warren-sandbox/warren/egress"
	"github.com/warren-sandbox/warren/egress/egresstest"
	"github.com/warren-sandbox/warren/vfs"
)

// world is a loopback internet: HTTPS servers under test names, reached
// through the hosts override, with the operator's loopback allow explicit
// (127.0.0.0/8 is otherwise always denied).
type world struct {
	api, decoy, plain *egresstest.Server
	sb                *egress.Sandbox
	secret            egress.Secret
	fs                *vfs.FS
	got               atomic.Value // what api saw last: method, auth, body
	flaky             atomic.Int32
}

func newWorld(t *testing.T) *world {
	w := &world{fs: vfs.New(vfs.Options{})}
	ca := egresstest.NewCA(t)
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(rw http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		w.got.Store(fmt.Sprintf("%s %s auth=%s ctype=%s body=%s", r.Method, r.URL.RequestURI(), r.Header.Get("Authorization"), strings.Split(r.Header.Get("Content-Type"), ";")[0], body))
		io.WriteString(rw, "hello from api\n")
	})
	mux.HandleFunc("/missing", func(rw http.ResponseWriter, r *http.Request) { http.Error(rw, "nope", 404) })
	mux.HandleFunc("/slow", func(rw http.ResponseWriter, r *http.Request) {
		select {
		case <-time.After(3 * time.Second):
		case <-r.Context().Done():
		}
	})
	mux.HandleFunc("/flaky", func(rw http.ResponseWriter, r *http.Request) {
		if w.flaky.Add(1) < 3 {
			http.Error(rw, "later", 503)
			return
		}
		io.WriteString(rw, "finally\n")
	})
	w.decoy = ca.Serve(t, http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) { io.WriteString(rw, "decoy\n") }), "decoy.test")
	mux.HandleFunc("/to-decoy", func(rw http.ResponseWriter, r *http.Request) {
		http.Redirect(rw, r, "https://decoy.test:"+w.decoy.Port()+"/", http.StatusFound)
	})
	mux.HandleFunc("/to-self", func(rw http.ResponseWriter, r *http.Request) { http.Redirect(rw, r, "/", http.StatusFound) })
	w.api = ca.Serve(t, mux, "api.test")
	w.plain = ca.Serve(t, mux)
	lo := netip.MustParseAddr("127.0.0.1")
	e := egress.New(egress.Config{
		Hosts:      map[string][]netip.Addr{"api.test": {lo}, "decoy.test": {lo}, "plain.test": {lo}},
		HostsOnly:  true,
		AllowCIDRs: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")},
		RootCAs:    ca.Pool,
	})
	p, err := egress.ParsePolicy([]string{"api.test", "plain.test", "nx.test"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	w.sb = e.Sandbox("sb-test", p)
	if w.secret, err = egress.NewSecret("TOKEN", "real-token-value", []string{"api.test"}, true); err != nil {
		t.Fatal(err)
	}
	w.sb.SetSecrets([]egress.Secret{w.secret})
	w.fs.WriteFile("/payload.json", []byte("{\"a\":1}\n"), 0o644)
	return w
}

func (w *world) run(t *testing.T, argv ...string) (string, string, int) {
	t.Helper()
	tab := commands.Table{}
	net.Register(tab)
	var out, errb bytes.Buffer
	inv := &commands.Invocation{Args: argv, Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, Dir: "/", FS: w.fs,
		Sys: &commands.System{Net: w.sb.Client()}}
	code := tab[argv[0]](context.Background(), inv)
	return out.String(), errb.String(), code
}

func TestCurl_Egress(t *testing.T) {
	w := newWorld(t)
	api := "https://api.test:" + w.api.Port()
	decoy := "https://decoy.test:" + w.decoy.Port()
	ph := w.secret.Placeholder
	for _, c := range []struct {
		name string
		argv []string
		out  string // stdout must contain
		err  string // stderr must contain
		code int
		got  string // what the api server saw (contains)
	}{
		{"allowed host", []string{"curl", "-sSfL", api + "/"}, "hello from api\n", "", 0, "GET / "},
		{"status code", []string{"curl", "-s", "-o", "/null", "-w", "%{http_code}\\n", api + "/"}, "200\n", "", 0, ""},
		{"denied host names the policy", []string{"curl", "-sS", decoy + "/"}, "", "curl: (7) Failed to connect to decoy.test port " + w.decoy.Port(), 7, ""},
		{"denied message", []string{"curl", "-sS", decoy + "/"}, "", "blocked by the egress policy of sandbox sb-test: decoy.test:" + w.decoy.Port() + " is not in the sandbox's allow list", 7, ""},
		{"redirect to a denied host", []string{"curl", "-sSL", api + "/to-decoy"}, "", "(7) Failed to connect to decoy.test", 7, ""},
		{"redirect not followed without -L", []string{"curl", "-s", "-w", "%{http_code} %{redirect_url}", api + "/to-decoy"}, "302 " + decoy + "/", "", 0, ""},
		{"redirect followed", []string{"curl", "-sL", "-w", "%{num_redirects}", api + "/to-self"}, "hello from api\n1", "", 0, ""},
		{"raw address in a denied range", []string{"curl", "-sS", "http://10.1.2.3/"}, "", "10.1.2.3 is in 10.0.0.0/8, always denied", 7, ""},
		{"metadata address", []string{"curl", "-sS", "http://169.254.169.254/latest/meta-data/"}, "", "169.254.0.0/16", 7, ""},
		{"cannot resolve", []string{"curl", "-sS", "https://nx.test/"}, "", "curl: (6) Could not resolve host: nx.test", 6, ""},
		{"fail on 404", []string{"curl", "-sSf", api + "/missing"}, "", "curl: (22) The requested URL returned error: 404", 22, ""},
		{"no fail on 404", []string{"curl", "-s", api + "/missing"}, "nope", "", 0, ""},
		{"timeout", []string{"curl", "-sS", "--max-time", "0.2", api + "/slow"}, "", "curl: (28) Operation timed out", 28, ""},
		{"-k refused", []string{"curl", "-sSk", api + "/"}, "", "not allowed on this server", 4, ""},
		{"post data from a file", []string{"curl", "-sS", "-d", "@/payload.json", "-H", "Content-Type: application/json", api + "/"}, "hello", "", 0, `POST / auth= ctype=application/json body={"a":1}`},
		{"data-binary keeps newlines", []string{"curl", "-sS", "--data-binary", "@/payload.json", api + "/"}, "hello", "", 0, "body={\"a\":1}\n"},
		{"method and data", []string{"curl", "-sS", "-X", "PUT", "-d", "a=1", "-d", "b=2", api + "/"}, "hello", "", 0, "PUT / auth= ctype=application/x-www-form-urlencoded body=a=1&b=2"},
		{"form upload", []string{"curl", "-sS", "-F", "f=@/payload.json", "-F", "x=y", api + "/"}, "hello", "", 0, "ctype=multipart/form-data"},
		{"basic auth", []string{"curl", "-sS", "-u", "me:pw", api + "/"}, "hello", "", 0, "auth=Basic bWU6cHc="},
		{"head", []string{"curl", "-sSI", api + "/"}, "HTTP/1.1 200 OK\r\n", "", 0, "HEAD / "},
		{"retry transient errors", []string{"curl", "-sS", "--retry", "3", "--retry-delay", "0", api + "/flaky"}, "finally\n", "", 0, ""},
		{"secret swapped for its host", []string{"curl", "-sS", "-H", "Authorization: Bearer " + ph, "-d", "t=" + ph, api + "/?q=" + ph}, "hello", "", 0, "POST /?q=real-token-value auth=Bearer real-token-value ctype=application/x-www-form-urlencoded body=t=real-token-value"},
		{"secret in basic auth", []string{"curl", "-sS", "-u", "x:" + ph, api + "/"}, "hello", "", 0, "auth=Basic eDpyZWFsLXRva2VuLXZhbHVl"},
		{"no secret over plain http", []string{"curl", "-sS", "-H", "Authorization: Bearer " + ph, "http://plain.test:" + w.plain.Port() + "/"}, "hello", "", 0, "auth=Bearer " + ph},
		{"wget -q -O -", []string{"wget", "-q", "-O", "-", api + "/"}, "hello from api\n", "", 0, "GET / "},
		{"wget denied", []string{"wget", "-q", decoy + "/"}, "", "blocked by the egress policy of sandbox sb-test", 4, ""},
		{"wget 404", []string{"wget", "-q", api + "/missing"}, "", "ERROR 404", 8, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			w.got.Store("")
			out, errs, code := w.run(t, c.argv...)
			if code != c.code || !strings.Contains(out, c.out) || !strings.Contains(errs, c.err) {
				t.Fatalf("got %d %q %q, want %d, stdout with %q, stderr with %q", code, out, errs, c.code, c.out, c.err)
			}
			if got := w.got.Load().(string); !strings.Contains(got, c.got) {
				t.Fatalf("server saw %q, want %q", got, c.got)
			}
			if strings.Contains(out+errs, "real-token-value") {
				t.Fatalf("the secret's value reached the sandbox: %q %q", out, errs)
			}
		})
	}
	if n := w.decoy.Hits(); n != 0 {
		t.Fatalf("the decoy server was reached %d times", n)
	}
}

func TestCurl_OutputFiles(t *testing.T) {
	w := newWorld(t)
	api := "https://api.test:" + w.api.Port()
	for _, c := range []struct {
		argv []string
		file string
	}{
		{[]string{"curl", "-sS", "-o", "/out.txt", api + "/"}, "/out.txt"},
		{[]string{"curl", "-sSO", api + "/flaky"}, "/flaky"},
		{[]string{"wget", "-q", "-O", "/w.txt", api + "/"}, "/w.txt"},
		{[]string{"wget", "-q", api + "/"}, "/index.html"},
	} {
		w.flaky.Store(10)
		if _, errs, code := w.run(t, c.argv...); code != 0 {
			t.Fatalf("%q: %d %s", c.argv, code, errs)
		}
		data, err := w.fs.ReadFile(c.file)
		if err != nil || len(data) == 0 {
			t.Fatalf("%q: %s: %q %v", c.argv, c.file, data, err)
		}
	}
}

func TestCurl_PolicyUpdateAppliesNext(t *testing.T) {
	w := newWorld(t)
	api := "https://api.test:" + w.api.Port() + "/"
	if _, _, code := w.run(t, "curl", "-sSf", api); code != 0 {
		t.Fatalf("first request: %d", code)
	}
	p, _ := egress.ParsePolicy([]string{"plain.test"}, nil)
	w.sb.SetPolicy(p)
	if _, errs, code := w.run(t, "curl", "-sSf", api); code != 7 || !strings.Contains(errs, "not in the sandbox's allow list") {
		t.Fatalf("after the update: %d %q", code, errs)
	}
	audit, _ := w.sb.Audit()
	last := audit[len(audit)-1]
	if last.Allowed || last.Host != "api.test" || audit[0].Allowed != true {
		t.Fatalf("audit %+v", audit)
	}
}

func TestCurl_BodyChargedToMemory(t *testing.T) {
	w := newWorld(t)
	w.fs.WriteFile("/big", bytes.Repeat([]byte("x"), 3<<20), 0o644)
	api := "https://api.test:" + w.api.Port() + "/"
	for _, argv := range [][]string{
		{"curl", "-sS", "--data-binary", "@/big", api},
		{"curl", "-sS", "-F", "f=@/big", api},
		{"wget", "-q", "--post-file", "/big", api},
	} {
		tab := commands.Table{}
		net.Register(tab)
		var out, errb bytes.Buffer
		inv := &commands.Invocation{Args: argv, Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, Dir: "/", FS: w.fs,
			Sys: &commands.System{Net: w.sb.Client(), Memory: commands.NewMemory(1 << 20)}}
		code := tab[argv[0]](context.Background(), inv)
		if code != commands.StatusLimit || !strings.Contains(errb.String(), "memory limit") {
			t.Fatalf("%q: status %d stderr %q, want %d and the memory limit named", argv, code, errb.String(), commands.StatusLimit)
		}
		if inv.Sys.Memory.Used() != 0 {
			t.Fatalf("%q: %d bytes still charged after the command", argv, inv.Sys.Memory.Used())
		}
	}
}
