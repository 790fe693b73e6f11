package git

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/warren-sandbox/warren/commands"
	"github.com/warren-sandbox/warren/vfs"
)

func TestMerge3(t *testing.T) {
	base := "1\n2\n3\n4\n5\n6\n"
	for _, c := range []struct {
		name, ours, theirs, want string
		conflicts                int
	}{
		{"disjoint", "one\n2\n3\n4\n5\n6\n", "1\n2\n3\n4\n5\nsix\n", "one\n2\n3\n4\n5\nsix\n", 0},
		{"same edit", "1\nX\n3\n4\n5\n6\n", "1\nX\n3\n4\n5\n6\n", "1\nX\n3\n4\n5\n6\n", 0},
		{"insert and delete", "0\n1\n2\n3\n4\n5\n6\n", "1\n2\n3\n4\n6\n", "0\n1\n2\n3\n4\n6\n", 0},
		{"one side only", base, "1\n2\n3\nfour\n5\n6\n", "1\n2\n3\nfour\n5\n6\n", 0},
		{"conflict", "1\nA\n3\n4\n5\n6\n", "1\nB\n3\n4\n5\n6\n",
			"1\n<<<<<<< HEAD\nA\n=======\nB\n>>>>>>> x\n3\n4\n5\n6\n", 1},
		{"adjacent edits conflict", "1\nA\n3\n4\n5\n6\n", "1\n2\nB\n4\n5\n6\n",
			"1\n<<<<<<< HEAD\nA\n3\n=======\n2\nB\n>>>>>>> x\n4\n5\n6\n", 1},
		// recorded from git 2.39 (the base is reset below): conflicts
		// three lines apart are joined
		{"joined", "1\nY\n3\n4\n5\nsix\n", "1\nX\n3\n4\nfive\n",
			"1\n<<<<<<< HEAD\nY\n3\n4\n5\nsix\n=======\nX\n3\n4\nfive\n>>>>>>> x\n", 1},
	} {
		b := base
		if c.name == "joined" {
			b = "1\n2\n3\n4\n5\n"
		}
		segs, n := merge3(b, c.ours, c.theirs)
		if got := render(segs, "HEAD", "x"); n != c.conflicts || got != c.want {
			t.Errorf("%s: got %q (%d conflicts), want %q (%d)", c.name, got, n, c.want, c.conflicts)
		}
	}
}

func TestBillyConfined(t *testing.T) {
	b := newBilly(nil, "/repo")
	for in, want := range map[string]string{
		"a/b": "/repo/a/b", "../../etc/passwd": "/repo/etc/passwd", "/abs": "/repo/abs", ".": "/repo",
	} {
		if got := b.abs(in); got != want {
			t.Errorf("abs(%q) = %q, want %q", in, got, want)
		}
	}
	c, _ := b.Chroot("../x")
	if got := c.Root(); got != "/repo/x" {
		t.Errorf("Chroot escaped: %s", got)
	}
}

// TestWorktreePath refuses tree paths that would leave the worktree, enter
// .git or cross a symlink.
func TestWorktreePath(t *testing.T) {
	fsys := vfs.New(vfs.Options{})
	fsys.MkdirAll("/r/dir", 0o755)
	fsys.Symlink("/etc", "/r/link")
	s := &session{inv: &commands.Invocation{FS: fsys}, root: "/r"}
	for name, ok := range map[string]bool{
		"a.txt": true, "dir/b": true, "../x": false, "a/../../x": false, "/abs": false,
		".git/config": false, "sub/.GIT/hooks/x": false, "link/passwd": false, "link": true,
	} {
		_, err := s.worktreePath(name)
		if (err == nil) != ok {
			t.Errorf("worktreePath(%q): err %v, want ok=%v", name, err, ok)
		}
	}
}

// TestCloneHostileTree clones a repository whose tree holds "../evil" and
// a file behind a symlink: the clone stops with git's error and writes
// nothing outside the new worktree.
func TestCloneHostileTree(t *testing.T) {
	for name, tree := range map[string]snapshot{
		"dotdot":  {"../evil": blob("x")},
		"dotgit":  {".git/hooks/post-checkout": blob("x")},
		"symlink": {"l": {name: "l", mode: filemode.Symlink, hash: plumbing.ComputeHash(plumbing.BlobObject, []byte("/")), load: func() ([]byte, error) { return []byte("/"), nil }}, "l/evil": blob("x")},
	} {
		t.Run(name, func(t *testing.T) {
			fsys := vfs.New(vfs.Options{})
			fsys.MkdirAll("/w", 0o755)
			var out, errb bytes.Buffer
			inv := &commands.Invocation{Args: []string{"git", "init", "-q", "src"}, Stdout: &out, Stderr: &errb, Dir: "/w", FS: fsys,
				Env: []string{"GIT_AUTHOR_NAME=a", "GIT_AUTHOR_EMAIL=a@x", "GIT_COMMITTER_NAME=a", "GIT_COMMITTER_EMAIL=a@x"}}
			if code := gitCmd(context.Background(), inv); code != 0 {
				t.Fatalf("init: %s", errb.String())
			}
			s := &session{ctx: context.Background(), inv: inv, dir: "/w/src", out: &out, loc: time.UTC, extra: map[string]string{}}
			if err := s.open(); err != nil {
				t.Fatal(err)
			}
			for _, sd := range tree {
				if err := s.storeBlob(sd); err != nil {
					t.Fatal(err)
				}
			}
			th, err := s.writeTree(tree)
			if err != nil {
				t.Fatal(err)
			}
			sig := &object.Signature{Name: "a", Email: "a@x", When: time.Unix(1700000000, 0)}
			ch, err := s.storeCommit(th, "evil\n", sig)
			if err != nil {
				t.Fatal(err)
			}
			s.repo.Storer.SetReference(plumbing.NewHashReference("refs/heads/master", ch))
			inv.Args = []string{"git", "clone", "src", "dst"}
			errb.Reset()
			code := gitCmd(context.Background(), inv)
			if e := errb.String(); code == 0 || !strings.Contains(e, "invalid path") && !strings.Contains(e, "beyond a symbolic link") {
				t.Errorf("clone of a hostile tree: exit %d, stderr %q", code, errb.String())
			}
			for _, p := range []string{"/w/evil", "/evil", "/w/dst/.git/hooks/post-checkout"} {
				if _, err := fsys.Lstat(p); err == nil {
					t.Errorf("%s was written", p)
				}
			}
		})
	}
}

func blob(s string) *side {
	data := []byte(s)
	return &side{mode: filemode.Regular, hash: plumbing.ComputeHash(plumbing.BlobObject, data), load: func() ([]byte, error) { return data, nil }}
}
