package jq_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/commands"
	"github.com/warren-sandbox/warren/commands/coreutils/cmdtest"
	"github.com/warren-sandbox/warren/commands/jq"
)

type goldenCase = cmdtest.Golden

// known lists recorded cases that differ from GNU on purpose (see cmdtest.RunGolden).
var known = map[string]string{
	"floats":        "differs: jq 1.6 prints %.17g (1e+20); gojq prints 100000000000000000000 and 1e-7",
	"runtime_error": "stderr: gojq words runtime errors differently",
	"compile_error": "stderr: gojq words syntax errors differently",
	"bad_json":      "differs: jq 1.6 exits 4 with \"parse error: ...\"; we exit 2 like jq 1.7",
}

func TestGolden(t *testing.T) {
	tab := commands.Table{}
	jq.Register(tab)
	cmdtest.RunGolden(t, tab, golden, known)
}

// $ENV and env see the sandbox environment only, never the host's.
func TestEnvIsSandboxed(t *testing.T) {
	files := cmdtest.NewFiles(nil)
	var out, errb strings.Builder
	inv := files.Invocation([]string{"jq", "-c", "-n", "[env.HOME, ($ENV | keys)]"}, strings.NewReader(""), &out, &errb)
	inv.Env = []string{"HOME=/home/agent", "ONLY=1"}
	if code := jq.Jq(context.Background(), inv); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	if got, want := out.String(), "[\"/home/agent\",[\"HOME\",\"ONLY\"]]\n"; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}

// Modules would read files outside the vfs; they are not loadable.
func TestNoModules(t *testing.T) {
	res := cmdtest.Run(jq.Jq, []string{"jq", "-n", `import "x" as x; 1`}, "", nil)
	if res.Code == 0 {
		t.Fatalf("import succeeded: %q", res.Stdout)
	}
}

// A value larger than the sandbox memory limit fails cleanly, with 125.
func TestMemoryLimit(t *testing.T) {
	big := "[" + strings.Repeat(`{"a":"xxxxxxxxxxxxxxxx"},`, 10000) + "1]"
	for _, args := range [][]string{{"jq", "length"}, {"jq", "-s", "length"}} {
		files := cmdtest.NewFiles(nil)
		var out, errb strings.Builder
		inv := files.Invocation(args, strings.NewReader(big), &out, &errb)
		inv.Sys = &commands.System{MaxMemoryBytes: 64 << 10}
		code := jq.Jq(context.Background(), inv)
		if code != commands.StatusLimit || !strings.Contains(errb.String(), "warren: memory limit exceeded") {
			t.Errorf("%v: exit %d stderr %q", args, code, errb.String())
		}
	}
	// Many small values stream through the same limit.
	stream := strings.Repeat("{\"a\":1}\n", 20000)
	files := cmdtest.NewFiles(nil)
	var out, errb strings.Builder
	inv := files.Invocation([]string{"jq", "-c", ".a"}, strings.NewReader(stream), &out, &errb)
	inv.Sys = &commands.System{MaxMemoryBytes: 64 << 10}
	if code := jq.Jq(context.Background(), inv); code != 0 || strings.Count(out.String(), "\n") != 20000 {
		t.Fatalf("stream: exit %d stderr %q", code, errb.String())
	}
}

// Filters that never finish stop when the context ends.
func TestEndlessFilterCancelled(t *testing.T) {
	for _, filter := range []string{"last(repeat(1))", "def f: f; f", "[range(1e18)] | length", "until(false; .)"} {
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		files := cmdtest.NewFiles(nil)
		var out, errb strings.Builder
		done := make(chan int, 1)
		go func() {
			done <- jq.Jq(ctx, files.Invocation([]string{"jq", "-n", filter}, strings.NewReader(""), &out, &errb))
		}()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatalf("jq %q did not stop after cancellation", filter)
		}
		cancel()
	}
}
