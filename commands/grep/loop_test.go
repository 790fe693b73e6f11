package grep_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/commands/coreutils/cmdtest"
	"github.com/warren-sandbox/warren/commands/grep"
)

// grep -R must not follow a symlink loop forever.
func TestSymlinkLoop(t *testing.T) {
	files := cmdtest.NewFiles(map[string]string{"d/a.txt": "needle\n"})
	if files.FS == nil {
		t.Skip("vfs implementation not available: symlinks need it")
	}
	if err := files.FS.Symlink("..", cmdtest.Cwd+"/d/up"); err != nil {
		t.Fatalf("symlink: %v", err)
	}
	var out, errb strings.Builder
	done := make(chan int, 1)
	go func() {
		done <- grep.Grep(context.Background(), files.Invocation([]string{"grep", "-R", "needle", "d"}, strings.NewReader(""), &out, &errb))
	}()
	select {
	case code := <-done:
		if code != 0 || !strings.Contains(out.String(), "d/a.txt:needle") {
			t.Fatalf("exit %d out %q err %q", code, out.String(), errb.String())
		}
		if !strings.Contains(errb.String(), "recursive directory loop") {
			t.Fatalf("no loop warning: %q", errb.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("grep -R did not finish on a symlink loop")
	}
	// Without -R, grep -r does not follow the link at all.
	out.Reset()
	errb.Reset()
	code := grep.Grep(context.Background(), files.Invocation([]string{"grep", "-r", "needle", "d"}, strings.NewReader(""), &out, &errb))
	if code != 0 || out.String() != "d/a.txt:needle\n" || errb.Len() != 0 {
		t.Fatalf("grep -r: exit %d out %q err %q", code, out.String(), errb.String())
	}
}
