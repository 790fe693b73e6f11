package git_test

import (
	"os"
	"path/filepath"
	"testing"
)

// TestHTTP_Quiet: clone, fetch, pull (fast-forward and merge) and push
// with -q print nothing, as git's do.
func TestHTTP_Quiet(t *testing.T) {
	w := newGitWorld(t)
	url := w.url("repo.git")
	if got := w.must(t, "", "clone", "-q", url, "repo"); got != "" {
		t.Errorf("clone -q said %q", got)
	}
	w.must(t, "repo", "config", "user.name", "T")
	w.must(t, "repo", "config", "user.email", "t@x")
	w.must(t, "repo", "config", "pull.rebase", "false")
	host := func(file, msg string) {
		os.WriteFile(filepath.Join(w.root, "other", file), []byte(msg+"\n"), 0o644)
		w.hostGit(t, "other", "add", file)
		w.hostGit(t, "other", "commit", "-qm", msg)
		w.hostGit(t, "other", "push", "-q", "origin", "main")
	}
	w.hostGit(t, "", "clone", "-q", filepath.Join(w.root, "repo.git"), "other")
	host("c.txt", "one")
	if got := w.must(t, "repo", "fetch", "-q"); got != "" {
		t.Errorf("fetch -q said %q", got)
	}
	if got := w.must(t, "repo", "pull", "-q"); got != "" {
		t.Errorf("pull -q (fast-forward) said %q", got)
	}
	host("d.txt", "two")
	w.fs.WriteFile("/work/repo/e.txt", []byte("mine\n"), 0o644)
	w.must(t, "repo", "add", "e.txt")
	w.must(t, "repo", "commit", "-qm", "mine")
	if got := w.must(t, "repo", "pull", "--quiet", "--no-edit"); got != "" {
		t.Errorf("pull --quiet (merge) said %q", got)
	}
	if got := w.must(t, "repo", "push", "-q"); got != "" {
		t.Errorf("push -q said %q", got)
	}
	if got := w.hostGit(t, "other", "pull", "-q", "origin", "main"); got != "" {
		t.Errorf("host pull: %q", got)
	}
	if _, err := os.Stat(filepath.Join(w.root, "other", "e.txt")); err != nil {
		t.Errorf("the pushed merge did not arrive: %v", err)
	}
}
