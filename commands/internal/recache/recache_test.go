package recache

import (
	"fmt"
	"strings"
	"sync"
	"testing"
)

func TestEvictsLeastRecentlyUsed(t *testing.T) {
	c := New[int](2, 1<<20)
	c.Add("a", 1, 0)
	c.Add("b", 2, 0)
	if v, ok := c.Get([]byte("a")); !ok || v != 1 { // a is now the most recent
		t.Fatalf("Get(a) = %d, %v", v, ok)
	}
	c.Add("c", 3, 0) // evicts b
	for _, tc := range []struct {
		key  string
		want int
		ok   bool
	}{{"a", 1, true}, {"b", 0, false}, {"c", 3, true}} {
		if v, ok := c.GetString(tc.key); ok != tc.ok || v != tc.want {
			t.Errorf("Get(%s) = %d, %v; want %d, %v", tc.key, v, ok, tc.want, tc.ok)
		}
	}
	if n, _ := c.Len(); n != 2 {
		t.Errorf("%d entries, want 2", n)
	}
}

// Untrusted scripts choose the patterns: neither many distinct ones nor
// large ones may grow the cache past its bounds.
func TestBounds(t *testing.T) {
	const maxEntries, maxBytes = 16, 64 << 10
	for _, tc := range []struct {
		name string
		key  func(i int) string
		cost int
	}{
		{"many small", func(i int) string { return fmt.Sprintf("p%d", i) }, 10},
		{"many costly", func(i int) string { return fmt.Sprintf("p%d", i) }, 7 << 10},
		{"long keys", func(i int) string { return fmt.Sprintf("%d%s", i, strings.Repeat("x", 5000)) }, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := New[int](maxEntries, maxBytes)
			for i := 0; i < 1000; i++ {
				c.Add(tc.key(i), i, tc.cost)
				n, b := c.Len()
				if n > maxEntries || b > maxBytes {
					t.Fatalf("after %d adds: %d entries, %d bytes (bounds %d, %d)", i+1, n, b, maxEntries, maxBytes)
				}
			}
			if _, ok := c.GetString(tc.key(999)); !ok {
				t.Errorf("the latest entry was not kept")
			}
		})
	}
}

func TestTooLargeIsNotKept(t *testing.T) {
	c := New[int](16, 64<<10)
	c.Add("small", 1, 10)
	c.Add("huge", 2, 64<<10/8) // over an eighth of the budget with its overhead
	if _, ok := c.GetString("huge"); ok {
		t.Errorf("an entry over an eighth of the budget was kept")
	}
	if _, ok := c.GetString("small"); !ok {
		t.Errorf("a huge entry flushed a small one")
	}
}

// A short pattern can compile to a large program: Cost must see that.
func TestCostFollowsProgramSize(t *testing.T) {
	small, big := Cost("root"), Cost(`\pL{1000}`)
	if small <= 0 || small > 4<<10 {
		t.Errorf("Cost(root) = %d", small)
	}
	if big < 1<<20 {
		t.Errorf(`Cost(\pL{1000}) = %d, want > 1 MiB`, big)
	}
	re, err := CompileLongest(`\pL{1000}`)
	if err != nil || !re.MatchString(strings.Repeat("é", 1000)) {
		t.Fatalf("CompileLongest: %v", err)
	}
	if _, ok := regexps.GetString(`\pL{1000}`); ok {
		t.Errorf("a multi-megabyte program was cached")
	}
}

func TestCompileLongest(t *testing.T) {
	re, err := CompileLongest("a|ab")
	if err != nil {
		t.Fatal(err)
	}
	if got := re.FindString("ab"); got != "ab" {
		t.Errorf("leftmost-longest: got %q, want ab", got)
	}
	again, _ := CompileLongest("a|ab")
	if again != re {
		t.Errorf("second compile was not served from the cache")
	}
	if _, err := CompileLongest("a("); err == nil {
		t.Errorf("bad expression compiled")
	}
}

// Concurrent pipelines share the cache (run with -race).
func TestConcurrent(t *testing.T) {
	c := New[int](8, 1<<20)
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 2000; i++ {
				k := fmt.Sprintf("k%d", (i*7+g)%20)
				if v, ok := c.GetString(k); ok && v != len(k) {
					t.Errorf("Get(%s) = %d", k, v)
					return
				}
				c.Add(k, len(k), 1)
			}
		}(g)
	}
	wg.Wait()
	if n, _ := c.Len(); n > 8 {
		t.Errorf("%d entries, bound 8", n)
	}
}
