package shell

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestPipelineAhead: a pipeline's stages run one after the other in the
// caller until one fills its pipe or blocks past aheadGrace; what bash
// prints must not change either way, and stages that need each other run
// concurrently.
func TestPipelineAhead(t *testing.T) {
	for _, tt := range []struct {
		name, script, out string
		release           bool          // the stages had to be started concurrently
		maxDur            time.Duration // 0: no bound
	}{
		{"short output stays ahead", "printf 'a\\nb\\n' > f; cat f | wc -l", "2\n", false, 0},
		{"three stages", "seq 10 | grep 1 | wc -l", "2\n", false, 0},
		{"full pipe starts the reader", "yes | head -2", "y\ny\n", true, 0},
		{"big output through", "seq 100000 | wc -l", "100000\n", true, 0},
		{"sleeps overlap", "sleep 0.4 | sleep 0.4; echo done", "done\n", true, 700 * time.Millisecond},
		{"fifo writer needs its reader", "mkfifo ff; (echo via > ff) | cat ff", "via\n", true, 0},
		{"statuses", "(exit 3) | (exit 4) | true; echo ${PIPESTATUS[@]}", "3 4 0\n", false, 0},
		{"statuses released", "(sleep 0.01; exit 3) | (exit 4); echo ${PIPESTATUS[@]}", "3 4\n", true, 0},
		{"lastpipe released", "shopt -s lastpipe; (sleep 0.01; echo x) | read v; echo v=$v", "v=x\n", true, 0},
		{"lastpipe ahead", "shopt -s lastpipe; echo y | read v; echo v=$v", "v=y\n", false, 0},
		{"nested", "f() { if [ $1 -gt 0 ]; then f $(($1 - 1)) | cat; else echo bottom; fi; }; f 40", "bottom\n", false, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			sh := newTestShell(t, Limits{})
			r0 := aheadReleases.Load()
			start := time.Now()
			out, errs, st := runScript(t, sh, tt.script)
			d := time.Since(start)
			if out != tt.out || st != 0 {
				t.Fatalf("got %q (status %d, stderr %q), want %q", out, st, errs, tt.out)
			}
			// other tests may release concurrently: only "none" is exact
			if got := aheadReleases.Load() > r0; tt.release && !got {
				t.Errorf("no release, want the stages started concurrently")
			}
			if tt.maxDur > 0 && d > tt.maxDur {
				t.Errorf("took %v, want under %v (stages did not overlap)", d, tt.maxDur)
			}
		})
	}
}

// TestPipelineAheadStreams: a first stage that writes a little and then
// blocks does not hold its output back from the next stage past the grace:
// a streaming exec sees the first line at once.
// (cat too: GNU cat writes each block it reads; and grep, whose output
// leaves before it waits for more input).
func TestPipelineAheadStreams(t *testing.T) {
	for _, tt := range []struct{ reader, want string }{
		{`while read -r l; do echo "$l"; done`, "first\nsecond\n"},
		{"cat", "first\nsecond\n"},
		{"cat -", "first\nsecond\n"},
		{"cat -n", "     1\tfirst\n     2\tsecond\n"},
		{"grep .", "first\nsecond\n"},
		{"grep --line-buffered .", "first\nsecond\n"},
		{"sed -u s/i/I/", "fIrst\nsecond\n"},
	} {
		t.Run(tt.reader, func(t *testing.T) {
			sh := newTestShell(t, Limits{})
			w := &firstWrite{}
			start := time.Now()
			st, err := sh.Run(context.Background(), "(echo first; sleep 0.5; echo second) | "+tt.reader, strings.NewReader(""), w, &bytes.Buffer{})
			if err != nil || st != 0 {
				t.Fatalf("Run: %v, status %d", err, st)
			}
			w.mu.Lock()
			defer w.mu.Unlock()
			if w.buf.String() != tt.want {
				t.Fatalf("output %q", w.buf.String())
			}
			if first := w.at.Sub(start); first > 250*time.Millisecond {
				t.Errorf("first line after %v: the reader waited for the writer to end", first)
			}
		})
	}
}

type firstWrite struct {
	mu  sync.Mutex
	buf bytes.Buffer
	at  time.Time
}

func (w *firstWrite) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.at.IsZero() {
		w.at = time.Now()
	}
	return w.buf.Write(p)
}
