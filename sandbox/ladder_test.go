package sandbox_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/api"
	"github.com/warren-sandbox/warren/image"
	"github.com/warren-sandbox/warren/internal/debiantest"
	"github.com/warren-sandbox/warren/sandbox"
	"github.com/warren-sandbox/warren/sandbox/node"
)

// The execution ladder with a real image: Debian bookworm with its real
// git (internal/debiantest), the real native tier. The resident git runs
// what it can; what it refuses runs on the image's git.

// debianImages serves the cached Debian EROFS file as image "debian"
// (building it through the catalog would copy ~600 MB per test run).
type debianImages struct {
	sandbox.Images
	img sandbox.Image
}

func (d debianImages) Lookup(ctx context.Context, tenant, name string) (sandbox.Image, error) {
	if name == "debian" || name == d.img.Digest {
		return d.img, nil
	}
	return d.Images.Lookup(ctx, tenant, name)
}

type ladderEnv struct {
	svc api.Service
	m   *sandbox.Manager
}

func newLadderEnv(t testing.TB) ladderEnv {
	t.Helper()
	rt := requireNative(t)
	_, imgPath := debiantest.Image(t)
	im, err := image.OpenFile(imgPath)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { im.Close() })
	fi, err := os.Stat(imgPath)
	if err != nil {
		t.Fatal(err)
	}
	// A stable stand-in digest: hashing 600 MB per run buys nothing here.
	sum := sha256.Sum256([]byte(fmt.Sprintf("%s %d %d", imgPath, fi.Size(), fi.ModTime().UnixNano())))
	p := openParts(t, t.TempDir())
	img := sandbox.Image{Name: "debian", Digest: "sha256:" + hex.EncodeToString(sum[:]), FS: im.FS(), Path: imgPath,
		Config: image.Config{Env: []string{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=/root"}}}
	m, err := sandbox.New(context.Background(), sandbox.Config{
		Blobs: p.blobs, Deltas: sandbox.VFSDeltas(p.blobs),
		Images:       debianImages{sandbox.CatalogImages(p.cat), img},
		Interpreters: sandbox.ShellInterpreters(node.Commands()),
		Meta:         p.meta, Native: rt,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		m.Close(context.Background())
		p.close()
	})
	return ladderEnv{svc: m.For("t1"), m: m}
}

func (e ladderEnv) create(t testing.TB, commands string) string {
	t.Helper()
	sb, err := e.svc.Create(context.Background(), api.CreateRequest{Image: "debian", User: "root", Commands: commands})
	if err != nil {
		t.Fatal(err)
	}
	return sb.ID
}

func (e ladderEnv) exec(t testing.TB, id string, req api.ExecRequest) (string, string, api.ExecResult) {
	t.Helper()
	var out, errb bytes.Buffer
	res, err := e.svc.Exec(context.Background(), id, req, &out, &errb)
	if err != nil {
		t.Fatalf("exec %q: %v (stderr %q)", req.Script, err, errb.String())
	}
	return out.String(), errb.String(), res
}

// repoScript makes a repository with a merge commit, with the resident git.
const repoScript = `set -e
git config --global user.name 'A U Thor'; git config --global user.email a@example.com
git config --global init.defaultBranch main
mkdir -p /work/r && cd /work/r && git init -q
printf 'one\n' > a.txt && git add a.txt && git commit -qm first
git checkout -qb side && printf 'side\n' > s.txt && git add s.txt && git commit -qm 'on side'
git checkout -q main && printf 'two\n' >> a.txt && git commit -qam second
git merge -q --no-edit side
printf 'one\ntwo\nthree\n' > a.txt && git diff > /work/p.patch && git checkout -- a.txt
`

const amPatch = `From 1111111111111111111111111111111111111111 Mon Sep 17 00:00:00 2001
From: A U Thor <a@example.com>
Date: Mon, 1 Jan 2024 00:00:00 +0000
Subject: [PATCH] add c

---
 c.txt | 1 +
 1 file changed, 1 insertion(+)
 create mode 100644 c.txt

diff --git a/c.txt b/c.txt
new file mode 100644
index 0000000..f2ad6c7
--- /dev/null
+++ b/c.txt
@@ -0,0 +1 @@
+c
-- 
2.39.5

`

func TestLadder_DebianGit(t *testing.T) {
	e := newLadderEnv(t)
	id := e.create(t, "")
	if _, errs, res := e.exec(t, id, api.ExecRequest{Script: repoScript}); res.Exit != 0 {
		t.Fatalf("repo setup: exit %d: %s", res.Exit, errs)
	}
	if err := e.svc.WriteFile(context.Background(), id, api.WriteFileRequest{Path: "/work/c.mbox", Data: strings.NewReader(amPatch)}); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name     string
		script   string
		stdout   string // exact, or a prefix when it ends in "..."
		exit     int
		rungs    map[string]int64
		fallback int64
	}{
		{"status stays resident", "cd /work/r && git status --short", "", 0, map[string]int64{"resident": 1}, 0},
		{"log --all falls back", "cd /work/r && git log --all --merges --format=%s", "Merge branch 'side'\n", 0, map[string]int64{"native": 1}, 1},
		{"apply --reject falls back", "cd /work/r && git apply --reject /work/p.patch && cat a.txt", "one\ntwo\nthree\n", 0, map[string]int64{"native": 1, "resident": 1}, 1},
		{"am -3 falls back and commits once", "cd /work/r && git checkout -q -- a.txt && git am -3 -q /work/c.mbox && git log -1 --format=%s && git rev-list --count HEAD",
			"add c\n5\n", 0, map[string]int64{"native": 1, "resident": 3}, 1},
		{"log --no-merges stays resident and agrees with git", "cd /work/r && diff <(git log --no-merges --format=%s | sort) <(/usr/bin/git log --no-merges --format=%s | sort) && echo same",
			"same\n", 0, map[string]int64{"resident": 4, "native": 1}, 0},
		{"a real failure does not fall back", "cat /work/nosuch", "", 1, map[string]int64{"resident": 1}, 0},
		{"the fallback's redirection applies once", "for i in 1 2; do ls --hyperlink=never /work/p.patch >> /work/log; done; cat /work/log",
			"/work/p.patch\n/work/p.patch\n", 0, map[string]int64{"native": 2, "resident": 1}, 2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, errs, res := e.exec(t, id, api.ExecRequest{Script: c.script})
			if res.Exit != c.exit || out != c.stdout {
				t.Fatalf("exit %d stdout %q stderr %q, want %d %q", res.Exit, out, errs, c.exit, c.stdout)
			}
			for _, r := range []string{"resident", "wasm", "native", "missing"} {
				if res.Rungs[r] != c.rungs[r] {
					t.Fatalf("rungs %v, want %v (stderr %q)", res.Rungs, c.rungs, errs)
				}
			}
			var fb int64
			for _, n := range res.Fallbacks {
				fb += n
			}
			if fb != c.fallback {
				t.Fatalf("fallbacks %v, want %d", res.Fallbacks, c.fallback)
			}
		})
	}
	st := e.m.Stats()
	if st.Fallbacks["git"] != 3 || st.Fallbacks["ls"] != 2 || st.Rungs["native"] < 6 {
		t.Fatalf("node stats rungs %v fallbacks %v", st.Rungs, st.Fallbacks)
	}
}

func TestLadder_Policies(t *testing.T) {
	e := newLadderEnv(t)
	t.Run("native-first runs the image's git for everything", func(t *testing.T) {
		id := e.create(t, "native-first")
		sb, err := e.svc.Get(context.Background(), id)
		if err != nil || sb.Commands != "native-first" {
			t.Fatalf("sandbox commands %q %v", sb.Commands, err)
		}
		out, errs, res := e.exec(t, id, api.ExecRequest{Script: "git --version; type -a git | head -1"})
		// head too: every command with a binary in the image runs it
		if out != "git version 2.39.5\ngit is /usr/bin/git (native)\n" || res.Rungs["native"] != 2 || res.Rungs["resident"] != 0 {
			t.Fatalf("stdout %q stderr %q rungs %v", out, errs, res.Rungs)
		}
	})
	t.Run("resident-only refuses with the resident message", func(t *testing.T) {
		id := e.create(t, "resident-only")
		_, errs, res := e.exec(t, id, api.ExecRequest{Script: "git apply --3way /nosuch.patch"})
		if res.Exit != 2 || errs != "warren: git apply --3way: not supported here (commands policy resident-only)\n" || res.Rungs["native"] != 0 {
			t.Fatalf("exit %d stderr %q rungs %v", res.Exit, errs, res.Rungs)
		}
	})
	t.Run("per-exec policy over the sandbox's", func(t *testing.T) {
		id := e.create(t, "")
		out, _, res := e.exec(t, id, api.ExecRequest{Script: "git --version", Commands: "git=native"})
		if out != "git version 2.39.5\n" || res.Rungs["native"] != 1 {
			t.Fatalf("stdout %q rungs %v", out, res.Rungs)
		}
		out, _, res = e.exec(t, id, api.ExecRequest{Script: "git --version"})
		if out != "git version 2.39.5 (warren go-git)\n" || res.Rungs["resident"] != 1 {
			t.Fatalf("without the exec's policy: stdout %q rungs %v", out, res.Rungs)
		}
		out, _, _ = e.exec(t, id, api.ExecRequest{Script: "type -a git; which -a git"})
		if !strings.HasPrefix(out, "git is warren's resident git (runs first)\ngit is /usr/bin/git (native, when the resident git refuses)\n") {
			t.Fatalf("type -a: %q", out)
		}
	})
	t.Run("a bad policy is refused naming it", func(t *testing.T) {
		_, err := e.svc.Create(context.Background(), api.CreateRequest{Image: "debian", Commands: "fastest"})
		if err == nil || !strings.Contains(err.Error(), `unknown mode "fastest"`) {
			t.Fatalf("create: %v", err)
		}
		id := e.create(t, "")
		_, err = e.svc.Exec(context.Background(), id, api.ExecRequest{Script: "true", Commands: "git=fast"}, nil, nil)
		if err == nil || !strings.Contains(err.Error(), "git=fast") {
			t.Fatalf("exec: %v", err)
		}
	})
}

// BenchmarkLadder is the cost of a fallback (the resident git's refusal,
// then the image's git in the native tier) next to running the image's
// git directly and to the resident git, per exec, on a warm workspace.
func BenchmarkLadder(b *testing.B) {
	e := newLadderEnv(b)
	id := e.create(b, "")
	if _, errs, res := e.exec(b, id, api.ExecRequest{Script: repoScript}); res.Exit != 0 {
		b.Fatalf("repo setup: %s", errs)
	}
	for _, c := range []struct {
		name, script, rung, policy string
		exit                       int
	}{
		{"fallback", "cd /work/r && git log --all --merges -1 --format=%s", "native", "", 0},
		{"native-direct", "cd /work/r && /usr/bin/git log --all --merges -1 --format=%s", "native", "", 0},
		// the resident attempt alone: its refusal, reported
		{"refusal-only", "cd /work/r && git log --all --merges -1 --format=%s", "missing", "resident-only", 2},
		{"resident", "cd /work/r && git log -1 --format=%s", "resident", "", 0},
	} {
		b.Run(c.name, func(b *testing.B) {
			req := api.ExecRequest{Script: c.script, Commands: c.policy}
			e.exec(b, id, req) // the workspace exists from here on
			ds := make([]time.Duration, 0, b.N)
			for b.Loop() {
				t0 := time.Now()
				_, errs, res := e.exec(b, id, req)
				ds = append(ds, time.Since(t0))
				if res.Exit != c.exit || res.Rungs[c.rung] != 1 {
					b.Fatalf("exit %d rungs %v: %s", res.Exit, res.Rungs, errs)
				}
			}
			percentiles(b, ds)
		})
	}
}
