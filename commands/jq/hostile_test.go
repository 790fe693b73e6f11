package jq_test

import (
	"strings"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/commands"
	"github.com/warren-sandbox/warren/commands/coreutils/cmdtest"
	"github.com/warren-sandbox/warren/commands/jq"
)

func TestHostile(t *testing.T) {
	tab := commands.Table{}
	jq.Register(tab)
	const oom = "warren: memory limit exceeded (32 MiB)"
	const small = "warren: memory limit exceeded (4 MiB)"
	deepInput := strings.Repeat("[", 5000000) + strings.Repeat("]", 5000000)
	cmdtest.RunHostile(t, tab, []cmdtest.Hostile{
		// The reported bombs ("jq bombs reached 3 GB").
		{Name: "range collect", Args: []string{"jq", "-n", "[range(1e9)]"}, Budget: 4 << 20, Status: 125, Msg: small},
		{Name: "string repeat", Args: []string{"jq", "-n", `"x" * 1e9`}, Status: 125, Msg: oom, MaxHeap: 128 << 20},
		{Name: "string doubling", Args: []string{"jq", "-n", `"x" | until(false; . + .)`}, Status: 125, Msg: oom},
		{Name: "limit repeat", Args: []string{"jq", "-n", "[limit(1e8; repeat(1))]"}, Budget: 4 << 20, Status: 125, Msg: small},
		{Name: "object growth", Args: []string{"jq", "-n", "[range(1e9) | {(tostring): .}] | add"}, Budget: 4 << 20, Status: 125, Msg: small},
		// tojson grows its output in Go's doubling steps between meter
		// checks: up to ~140 MiB of heap seen under -race on 2 loaded
		// cores before the 4 MiB budget stops it (a runaway reaches GBs).
		{Name: "shared doubling", Args: []string{"jq", "-n", "reduce range(200) as $i ([1]; [., .]) | tojson | length"}, Budget: 4 << 20, Status: 125, Msg: small, MaxHeap: 256 << 20},
		{Name: "big number squaring", Args: []string{"jq", "-n", "reduce range(40) as $i (3; . * .)"}, Budget: 4 << 20, Status: 125, Msg: small},
		{Name: "non-tail recursion", Args: []string{"jq", "-n", "def f: [f]; f"}, Budget: 4 << 20, Status: 125, Msg: small},
		// Depth: a value built deeper than gojq's Go recursion can take.
		{Name: "deep value", Args: []string{"jq", "-n", "reduce range(1e7) as $i (null; [.]) | tojson | length"}, Budget: 4 << 30, Status: 125, Msg: "warren: nesting too deep (limit 20000)"},
		{Name: "one huge input string", Args: []string{"jq", "length"}, Stdin: strings.NewReader(`"` + strings.Repeat("s", 12<<20) + `"`), Budget: 4 << 20, Status: 125, Msg: small, MaxHeap: 1 << 30},
		{Name: "deep input", Args: []string{"jq", "."}, Stdin: strings.NewReader(deepInput), Budget: 1 << 30, Status: 2, Msg: "Exceeds depth limit for parsing"},
		{Name: "deep filter", Args: []string{"jq", "-n", strings.Repeat("[", 1000000) + strings.Repeat("]", 1000000)}, Status: 125, Msg: "warren: nesting too deep (limit 1000)"},
		{Name: "long filter", Args: []string{"jq", "-n", strings.Repeat("1+", 1000000) + "1"}, Status: 125, Msg: "warren: nesting too deep (limit 50000)"},
		// Cancellation stops a busy filter within a second.
		{Name: "cancel busy", Args: []string{"jq", "-n", "def f: f; f"}, Cancel: 50 * time.Millisecond, Status: 130, Within: time.Second},
		// gojq copies an object per update: quadratic, so it is the
		// deadline that ends it, promptly.
		{Name: "cancel object updates", Args: []string{"jq", "-n", "reduce range(1e9) as $i ({}; .[$i|tostring] = $i)"}, Cancel: 300 * time.Millisecond, Status: 130, Within: 1300 * time.Millisecond},
		// A value shared 2^100 times prints forever from a few bytes.
		{Name: "cancel shared print", Args: []string{"jq", "-c", "-n", "reduce range(100) as $i ([1]; [., .])"}, Cancel: 100 * time.Millisecond, Status: 130, Within: time.Second, MaxHeap: 1 << 30},
		{Name: "cancel range", Args: []string{"jq", "-n", "last(range(1e12))"}, Cancel: 50 * time.Millisecond, Status: 130, Within: time.Second},
	})
}

// The rewritten a * b behaves as gojq's own.
func TestMul(t *testing.T) {
	tab := commands.Table{}
	jq.Register(tab)
	for _, tc := range []struct{ filter, want string }{
		{"[(1,2) * (3,4)]", "[3,6,4,8]"},
		{`"ab" * 3`, `"ababab"`},
		{`3 * "ab"`, `"ababab"`},
		{`"x" * -1`, "null"},
		{`{"a":{"b":1}} * {"a":{"c":2}}`, `{"a":{"b":1,"c":2}}`},
		{"[2*3, 2.5*2, 4611686018427387904*4, -1*5, 0*7, 3*0.5]", "[6,5,18446744073709551616,-5,0,1.5]"},
		{"[.[] * 2]", "[2,4,6]"},
		{`try ({} * 1) catch "err"`, `"err"`},
	} {
		r := cmdtest.Run(tab["jq"], []string{"jq", "-c", tc.filter}, "[1,2,3]", nil)
		if r.Code != 0 || strings.TrimSpace(r.Stdout) != tc.want {
			t.Errorf("%s: status %d out %q err %q, want %s", tc.filter, r.Code, r.Stdout, r.Stderr, tc.want)
		}
	}
}
