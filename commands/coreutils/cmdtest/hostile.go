package cmdtest

import (
	"bytes"
	"context"
	"io"
	"runtime/metrics"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/commands"
)

// Hostile is a script input meant to exhaust the node: the command must
// end with Status and Stderr containing Msg, within Within, with the
// process heap staying under MaxHeap.
type Hostile struct {
	Name   string
	Args   []string
	Stdin  io.Reader // nil: empty
	Files  map[string]string
	Budget int64         // the sandbox's memory budget (0: 32 MiB)
	Quota  int64         // > 0: the vfs disk quota in bytes
	Dir    string        // "": Cwd
	Cancel time.Duration // > 0: cancel the context after this long
	Status int
	Msg    string
	Within time.Duration // 0: 10 s
	// MaxHeap bounds the heap growth seen while the command ran (0: 16 x
	// the budget plus 64 MiB). Heap is process-wide, so it is a loose
	// bound that only an unbounded allocation breaks.
	MaxHeap uint64
}

// RunHostile runs each case through table and checks its bounds, that it
// gave the whole budget back, and how long it took.
func RunHostile(t *testing.T, table commands.Table, cases []Hostile) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.Name, func(t *testing.T) {
			budget := tc.Budget
			if budget == 0 {
				budget = 32 << 20
			}
			within := tc.Within
			if within == 0 {
				within = 10 * time.Second
			}
			maxHeap := tc.MaxHeap
			if maxHeap == 0 {
				maxHeap = uint64(16*budget) + 64<<20
			}
			mem := commands.NewMemory(budget)
			var out, errb bytes.Buffer
			stdin := tc.Stdin
			if stdin == nil {
				stdin = strings.NewReader("")
			}
			files := NewFiles(tc.Files)
			if tc.Quota > 0 {
				files.FS.SetQuota(tc.Quota, 0)
			}
			inv := files.Invocation(tc.Args, stdin, &out, &errb)
			if tc.Dir != "" {
				inv.Dir = tc.Dir
			}
			inv.Sys = &commands.System{Memory: mem}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if tc.Cancel > 0 {
				time.AfterFunc(tc.Cancel, cancel)
			}
			base, peak := heapBytes(), uint64(0)
			stop := make(chan struct{})
			var wg sync.WaitGroup
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					peak = max(peak, heapBytes())
					select {
					case <-stop:
						return
					case <-time.After(2 * time.Millisecond):
					}
				}
			}()
			fn := table[tc.Args[0]]
			if fn == nil {
				t.Fatalf("no command %q", tc.Args[0])
			}
			start := time.Now()
			code := fn(ctx, inv)
			took := time.Since(start)
			close(stop)
			wg.Wait()
			grew := uint64(0)
			if peak > base {
				grew = peak - base
			}
			t.Logf("%s: status %d in %v, heap grew %d MiB, stderr %q", tc.Name, code, took.Round(time.Millisecond), grew>>20, firstLine(errb.String()))
			if code != tc.Status || !strings.Contains(errb.String(), tc.Msg) {
				t.Fatalf("status %d stderr %q, want status %d and %q", code, errb.String(), tc.Status, tc.Msg)
			}
			if took > within {
				t.Fatalf("took %v, want at most %v", took, within)
			}
			if grew > maxHeap {
				t.Fatalf("heap grew by %d MiB at a %d MiB budget (bound %d MiB)", grew>>20, budget>>20, maxHeap>>20)
			}
			if used := mem.Used(); used != 0 {
				t.Fatalf("%d bytes of the budget still charged after the command returned", used)
			}
		})
	}
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}

var heapSample = []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
var heapMu sync.Mutex

func heapBytes() uint64 {
	heapMu.Lock()
	defer heapMu.Unlock()
	metrics.Read(heapSample)
	return heapSample[0].Value.Uint64()
}
