package coreutils_test

import (
	"bytes"
	"context"
	"io"
	"runtime"
	"strings"
	"testing"

	"github.com/warren-sandbox/warren/commands"
	"github.com/warren-sandbox/warren/commands/coreutils"
	"github.com/warren-sandbox/warren/commands/coreutils/cmdtest"
	"github.com/warren-sandbox/warren/commands/grep"
	"github.com/warren-sandbox/warren/commands/sed"
)

// A resident command on a small input (the `cat /etc/passwd | grep root |
// wc -l` of every agent) must allocate next to nothing: per-call buffers
// come from pools and compiled patterns from the cache. Each budget is a
// few times the measured figure; the costs it guards against were 32-64 KiB
// per call (wc, tr, sort scratch buffers, sed's reader) and a regexp
// compile (grep, sed).
func TestSmallInputAllocations(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation budgets are meaningless under -race (sync.Pool drops items)")
	}
	files := map[string]string{"passwd": passwd}
	for _, tc := range []struct {
		fn     commands.Func
		args   []string
		stdin  string
		allocs float64
		bytes  uint64
	}{
		{coreutils.Cat, []string{"cat"}, passwd, 3, 1 << 10},
		{coreutils.Cat, []string{"cat", "passwd"}, "", 8, 2 << 10},
		{coreutils.Wc, []string{"wc", "-l"}, passwd, 6, 1 << 10},
		{coreutils.Wc, []string{"wc"}, passwd, 6, 1 << 10},
		{grep.Grep, []string{"grep", "root"}, passwd, 5, 1 << 10},
		{grep.Grep, []string{"grep", "-c", "^ro*t:"}, passwd, 5, 1 << 10},
		{coreutils.Tr, []string{"tr", "a-z", "A-Z"}, passwd, 16, 2 << 10},
		{coreutils.Sort, []string{"sort"}, passwd, 24, 12 << 10},
		{coreutils.Head, []string{"head", "-1"}, passwd, 8, 1 << 10},
		{sed.Sed, []string{"sed", "s/ro*t/X/g"}, passwd, 48, 4 << 10},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			in := strings.NewReader(tc.stdin)
			var out bytes.Buffer
			out.Grow(4 << 10)
			inv := cmdtest.NewFiles(files).Invocation(tc.args, in, &out, io.Discard)
			once := func() {
				in.Reset(tc.stdin)
				out.Reset()
				if code := tc.fn(context.Background(), inv); code != 0 {
					t.Fatalf("exit %d", code)
				}
			}
			once() // warm the pools and the pattern cache
			allocs := testing.AllocsPerRun(50, once)
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			const runs = 50
			for i := 0; i < runs; i++ {
				once()
			}
			runtime.ReadMemStats(&after)
			perRun := (after.TotalAlloc - before.TotalAlloc) / runs
			t.Logf("%v: %.0f allocs, %d bytes per call", tc.args, allocs, perRun)
			if allocs > tc.allocs || perRun > tc.bytes {
				t.Errorf("%v: %.0f allocs and %d bytes per call on a %d-byte input; budget %.0f allocs, %d bytes",
					tc.args, allocs, perRun, len(tc.stdin), tc.allocs, tc.bytes)
			}
		})
	}
}
