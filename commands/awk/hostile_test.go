package awk_test

import (
	"strings"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/commands"
	"github.com/warren-sandbox/warren/commands/awk"
	"github.com/warren-sandbox/warren/commands/coreutils/cmdtest"
)

// endless yields lines forever.
type endless struct{ n int }

func (e *endless) Read(p []byte) (int, error) {
	for i := range p {
		e.n++
		p[i] = 'a' + byte(e.n%26)
		if e.n%100 == 0 {
			p[i] = '\n'
		}
	}
	return len(p), nil
}

func TestHostile(t *testing.T) {
	tab := commands.Table{}
	awk.Register(tab)
	const oom = "warren: memory limit exceeded (32 MiB)"
	// A million levels overflow the Go stack in GoAWK's parser (fatal, for every
	// tenant) without the bound.
	deep := strings.Repeat("(", 1000000) + "1" + strings.Repeat(")", 1000000)
	cmdtest.RunHostile(t, tab, []cmdtest.Hostile{
		// The report: an array growing without end took the server to 6.3 GB.
		{Name: "array growth", Args: []string{"awk", "BEGIN{for(i=0;;i++) a[i]=i}"}, Status: 125, Msg: oom},
		{Name: "array of long keys", Args: []string{"awk", `BEGIN{k="k"; for(i=0;i<12;i++) k=k k; for(i=0;;i++) a[i k]=1}`}, Status: 125, Msg: oom},
		{Name: "string doubling", Args: []string{"awk", `BEGIN{s="x"; while(1) s = s s}`}, Status: 125, Msg: oom},
		{Name: "string quadrupling", Args: []string{"awk", `BEGIN{s="x"; while(1) s = s s s s}`}, Status: 125, Msg: oom},
		{Name: "local doubling", Args: []string{"awk", `function f(s){while(1) s = s s} BEGIN{f("x")}`}, Status: 125, Msg: oom},
		{Name: "element doubling", Args: []string{"awk", `BEGIN{a[1]="x"; while(1) a[1] = a[1] a[1]}`}, Status: 125, Msg: oom},
		{Name: "input kept", Args: []string{"awk", `{a[NR]=$0}`}, Stdin: &endless{}, Status: 125, Msg: oom},
		{Name: "record doubling", Args: []string{"awk", `{while(1) $0 = $0 $0}`}, Stdin: strings.NewReader("x\n"), Status: 125, Msg: oom},
		// Recursion: GoAWK's own call-depth bound, a clear error.
		{Name: "unbounded recursion", Args: []string{"awk", `function f(n){return f(n+1)} BEGIN{f(0)}`}, Status: 2, Msg: "exceeded maximum call depth of 1000"},
		// Nesting the parser would recurse over, refused before parsing.
		{Name: "deep parentheses", Args: []string{"awk", "BEGIN{print " + deep + "}"}, Status: 125, Msg: "warren: nesting too deep (limit 1000)"},
		{Name: "long chain", Args: []string{"awk", "BEGIN{x=" + strings.Repeat("1+", 1000000) + "1}"}, Status: 125, Msg: "warren: nesting too deep (limit 10000)"},
		{Name: "long concatenation", Args: []string{"awk", "BEGIN{x=" + strings.Repeat("a ", 1000000) + "}"}, Status: 125, Msg: "warren: nesting too deep (limit 10000)"},
		// Cancellation ends a busy loop promptly.
		{Name: "cancel busy loop", Args: []string{"awk", `BEGIN{while(1) a[i++%10]=i}`}, Cancel: 50 * time.Millisecond, Status: 130, Within: time.Second},
	})
}

// Metering must not change what a program prints.
func TestMeteredSameOutput(t *testing.T) {
	tab := commands.Table{}
	awk.Register(tab)
	for _, tc := range []struct{ prog, in, want string }{
		{`{n[$1]++} END{for(k in n) c++; print c, NR}`, "a\nb\na\n", "2 3\n"},
		{`BEGIN{s="ab"; for(i=0;i<10;i++) s = s s; print length(s)}`, "", "2048\n"},
		{`function f(n){return n<2?n:f(n-1)+f(n-2)} BEGIN{print f(15)}`, "", "610\n"},
		{`{print NR": "$2}`, "x y\nz w\n", "1: y\n2: w\n"},
	} {
		files := cmdtest.NewFiles(nil)
		var out, errb strings.Builder
		inv := files.Invocation([]string{"awk", tc.prog}, strings.NewReader(tc.in), &out, &errb)
		mem := commands.NewMemory(64 << 20)
		inv.Sys = &commands.System{Memory: mem}
		if code := tab["awk"](t.Context(), inv); code != 0 || out.String() != tc.want {
			t.Errorf("%s: status %d out %q err %q, want %q", tc.prog, code, out.String(), errb.String(), tc.want)
		}
		if mem.Used() != 0 {
			t.Errorf("%s: %d bytes still charged", tc.prog, mem.Used())
		}
	}
}

// A GoAWK upgrade that moves the fields the meter reads must fail here,
// not run unmetered.
func TestMeterLayout(t *testing.T) {
	if !awk.MeterLayoutOK() {
		t.Fatal("GoAWK's interpreter layout is not the one the awk meter reads: update commands/awk/meter.go")
	}
}
