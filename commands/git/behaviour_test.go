package git_test

import (
	"strings"
	"testing"

	"github.com/warren-sandbox/warren/commands/std"
)

var ident = []string{"GIT_AUTHOR_NAME=T", "GIT_AUTHOR_EMAIL=t@x", "GIT_COMMITTER_NAME=T", "GIT_COMMITTER_EMAIL=t@x",
	"GIT_AUTHOR_DATE=@1700000000 +0000", "GIT_COMMITTER_DATE=@1700000000 +0000"}

func TestIdentityUnknown(t *testing.T) {
	fsys := newSandbox(t, map[string]string{"r/a": "a\n"}, nil)
	tab := std.Table()
	runIn(fsys, tab, []string{"git", "init", "-q", "r"}, "")
	runIn(fsys, tab, []string{"git", "-C", "r", "add", "a"}, "")
	_, errs, code := runIn(fsys, tab, []string{"git", "-C", "r", "commit", "-m", "x"}, "")
	if code != 128 || !strings.Contains(errs, "Author identity unknown") || !strings.Contains(errs, "got 'root@sandbox.(none)'") {
		t.Errorf("exit %d stderr %q", code, errs)
	}
}

// TestMergeConflict walks git's conflict workflow: markers in the file,
// status and commit refusing, then add + commit making the merge, and
// --abort restoring the branch.
func TestMergeConflict(t *testing.T) {
	fsys := newSandbox(t, map[string]string{"r/f": "1\n2\n3\n"}, nil)
	tab := std.Table()
	run := func(steps ...[]string) {
		t.Helper()
		for _, s := range steps {
			if s[0] == "write" {
				fsys.WriteFile(caseDir+"/"+s[1], []byte(s[2]), 0o644)
				continue
			}
			if _, errs, code := runIn(fsys, tab, s, "", ident...); code != 0 {
				t.Fatalf("%v: %d %s", s, code, errs)
			}
		}
	}
	run([]string{"git", "init", "-q", "r"}, []string{"git", "-C", "r", "add", "."}, []string{"git", "-C", "r", "commit", "-qm", "base"},
		[]string{"git", "-C", "r", "switch", "-qc", "x"}, []string{"write", "r/f", "1\nX\n3\n"}, []string{"git", "-C", "r", "commit", "-qam", "x"},
		[]string{"git", "-C", "r", "switch", "-q", "master"}, []string{"write", "r/f", "1\nY\n3\n"}, []string{"git", "-C", "r", "commit", "-qam", "y"})
	before, _, _ := runIn(fsys, tab, []string{"git", "-C", "r", "rev-parse", "HEAD"}, "")
	out, _, code := runIn(fsys, tab, []string{"git", "-C", "r", "merge", "x"}, "", ident...)
	if code != 1 || out != "Auto-merging f\nCONFLICT (content): Merge conflict in f\nAutomatic merge failed; fix conflicts and then commit the result.\n" {
		t.Fatalf("merge: %d %q", code, out)
	}
	if b, _ := fsys.ReadFile(caseDir + "/r/f"); string(b) != "1\n<<<<<<< HEAD\nY\n=======\nX\n>>>>>>> x\n3\n" {
		t.Errorf("markers: %q", b)
	}
	if out, _, _ := runIn(fsys, tab, []string{"git", "-C", "r", "status", "-s"}, ""); out != "UU f\n" {
		t.Errorf("status -s: %q", out)
	}
	if _, errs, code := runIn(fsys, tab, []string{"git", "-C", "r", "commit", "-m", "z"}, "", ident...); code != 128 || !strings.Contains(errs, "unmerged files") {
		t.Errorf("commit with conflicts: %d %q", code, errs)
	}
	// --abort puts the branch back
	if _, errs, code := runIn(fsys, tab, []string{"git", "-C", "r", "merge", "--abort"}, "", ident...); code != 0 {
		t.Fatalf("abort: %s", errs)
	}
	if b, _ := fsys.ReadFile(caseDir + "/r/f"); string(b) != "1\nY\n3\n" {
		t.Errorf("after abort: %q", b)
	}
	// resolve and conclude
	runIn(fsys, tab, []string{"git", "-C", "r", "merge", "x"}, "", ident...)
	run([]string{"write", "r/f", "1\nXY\n3\n"}, []string{"git", "-C", "r", "add", "f"})
	out, errs, code := runIn(fsys, tab, []string{"git", "-C", "r", "commit", "--no-edit"}, "", ident...)
	if code != 0 || !strings.HasSuffix(out, "] Merge branch 'x'\n") {
		t.Fatalf("commit: %d %q %q", code, out, errs)
	}
	out, _, _ = runIn(fsys, tab, []string{"git", "-C", "r", "log", "-1", "--format=%p %s"}, "")
	if !strings.HasPrefix(out, strings.TrimSpace(before)[:7]+" ") {
		t.Errorf("merge parents: %q (first parent should be %s)", out, before)
	}
	if out, _, _ := runIn(fsys, tab, []string{"git", "-C", "r", "status", "--short"}, ""); out != "" {
		t.Errorf("status after merge: %q", out)
	}
}

// TestUntrackedSurvive checks that reset --hard and branch switches leave
// untracked files alone (go-git's own reset would delete them).
func TestUntrackedSurvive(t *testing.T) {
	fsys := newSandbox(t, map[string]string{"r/a": "a\n"}, nil)
	tab := std.Table()
	for _, s := range [][]string{{"git", "init", "-q", "r"}, {"git", "-C", "r", "add", "a"}, {"git", "-C", "r", "commit", "-qm", "a"}} {
		if _, errs, code := runIn(fsys, tab, s, "", ident...); code != 0 {
			t.Fatalf("%v: %s", s, errs)
		}
	}
	fsys.WriteFile(caseDir+"/r/untracked", []byte("u"), 0o644)
	fsys.WriteFile(caseDir+"/r/a", []byte("edited\n"), 0o644)
	for _, s := range [][]string{{"git", "-C", "r", "switch", "-qc", "b"}, {"git", "-C", "r", "reset", "-q", "--hard"}, {"git", "-C", "r", "switch", "-q", "master"}} {
		if _, errs, code := runIn(fsys, tab, s, "", ident...); code != 0 {
			t.Fatalf("%v: %s", s, errs)
		}
	}
	if b, err := fsys.ReadFile(caseDir + "/r/untracked"); err != nil || string(b) != "u" {
		t.Errorf("untracked file lost: %q %v", b, err)
	}
	if b, _ := fsys.ReadFile(caseDir + "/r/a"); string(b) != "a\n" {
		t.Errorf("reset --hard kept %q", b)
	}
}

// TestNoHostConfig checks that git outside any repository and without a
// sandbox config reports what git reports, never the host's settings.
func TestNoHostConfig(t *testing.T) {
	fsys := newSandbox(t, nil, nil)
	out, errs, code := runIn(fsys, std.Table(), []string{"git", "config", "user.name"}, "")
	if code != 1 || out != "" {
		t.Errorf("git config user.name: %q %q %d", out, errs, code)
	}
	_, errs, code = runIn(fsys, std.Table(), []string{"git", "clone", "https://github.com/x/y"}, "")
	if code != 128 || !strings.Contains(errs, "network disabled") {
		t.Errorf("clone over the network: %q %d", errs, code)
	}
}
