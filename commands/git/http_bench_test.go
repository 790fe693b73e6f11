package git_test

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
)

// BenchmarkLsRemote is one resident `git ls-remote` against the loopback
// site, whole command (egress policy check, TLS on a kept-alive connection,
// the advertisement decoded and printed): against a canned advertisement
// (warren's own cost), against git http-backend (a CGI process per
// request), and the host's real git against the same backend (a process,
// a TLS handshake and a CGI per run) as the baseline.
func BenchmarkLsRemote(b *testing.B) {
	w := newGitWorld(b)
	resp, err := w.site.Client().Get(w.site.URL + "/git/repo.git/info/refs?service=git-upload-pack")
	if err != nil {
		b.Fatal(err)
	}
	w.advert, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	want := w.hostGit(b, "", "ls-remote", filepath.Join(w.root, "repo.git"))
	caFile := filepath.Join(w.root, "ca.pem")
	os.WriteFile(caFile, w.ca.CertPEM(), 0o644)
	for _, c := range []struct {
		name string
		run  func() (string, error)
	}{
		{"resident/static", func() (string, error) {
			out, errs, code := w.git(b, "", "ls-remote", "https://git.test:"+w.site.Port()+"/static/repo.git")
			return out, exitErr(code, errs)
		}},
		{"resident/http-backend", func() (string, error) {
			out, errs, code := w.git(b, "", "ls-remote", w.url("repo.git"))
			return out, exitErr(code, errs)
		}},
		{"host-git/http-backend", func() (string, error) {
			cmd := exec.Command("git", "ls-remote", "https://127.0.0.1:"+w.site.Port()+"/git/repo.git")
			cmd.Env = append(os.Environ(), "GIT_SSL_CAINFO="+caFile, "GIT_CONFIG_NOSYSTEM=1", "HOME="+w.root)
			out, err := cmd.Output()
			return string(out), err
		}},
	} {
		b.Run(c.name, func(b *testing.B) {
			lat := make([]time.Duration, 0, b.N)
			for b.Loop() {
				start := time.Now()
				out, err := c.run()
				lat = append(lat, time.Since(start))
				if err != nil || out != want {
					b.Fatalf("ls-remote: %v\n%s\nwant\n%s", err, out, want)
				}
			}
			sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
			at := func(q float64) float64 { return float64(lat[int(q*float64(len(lat)-1))].Microseconds()) }
			b.ReportMetric(at(0.50), "p50-µs")
			b.ReportMetric(at(0.95), "p95-µs")
			b.ReportMetric(at(0.99), "p99-µs")
			b.ReportMetric(float64(len(lat)), "n")
		})
	}
}

func exitErr(code int, stderr string) error {
	if code == 0 {
		return nil
	}
	return fmt.Errorf("status %d: %s", code, strings.TrimSpace(stderr))
}
