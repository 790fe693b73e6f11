package shell

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/warren-sandbox/warren/commands"
	"github.com/warren-sandbox/warren/commands/sysinfo"
	"github.com/warren-sandbox/warren/vfs"
)

// The ladder's rules over a stand-in for the native tier (a NativeFunc
// that records what it was given); the real tier is exercised by
// sandbox/ladder_test.go with a Debian image and its real git.

// tool is a resident command: "tool fancy ..." is refused, "tool append
// F" appends a line to F, "tool cat" copies stdin, "tool missing" fails
// for a real reason, "tool late" refuses after reading stdin (a contract
// violation the shell must not paper over).
func tool(ctx context.Context, inv *commands.Invocation) int {
	arg := ""
	if len(inv.Args) > 1 {
		arg = inv.Args[1]
	}
	switch arg {
	case "fancy":
		return inv.Refuse(inv.Unsupported("fancy"))
	case "--weird":
		_, _, err := (&badOpt{}).parse()
		return inv.BadUsage(err, "tool: unrecognized option '--weird'\n", 1)
	case "append":
		f, err := inv.OpenFile(inv.Args[2], vfs.O_WRONLY|vfs.O_CREATE|vfs.O_APPEND, 0o644)
		if err != nil {
			inv.Errorf("%s", commands.Describe(err))
			return 1
		}
		defer f.Close()
		fmt.Fprintln(f, "resident")
		return 0
	case "cat":
		io.Copy(inv.Stdout, inv.Stdin)
		return 0
	case "missing":
		inv.Errorf("nosuch: No such file or directory")
		return 1
	case "late":
		io.ReadAll(inv.Stdin)
		return inv.Refuse(inv.Unsupported("late"))
	}
	fmt.Fprintln(inv.Stdout, "resident tool")
	return 0
}

type badOpt struct{}

func (badOpt) parse() (int, int, error) { return 0, 0, unknownOptErr("--weird") }

type unknownOptErr string

func (e unknownOptErr) Error() string         { return "unrecognized option '" + string(e) + "'" }
func (e unknownOptErr) UnknownOption() string { return string(e) }

type nativeCall struct {
	argv  []string
	dir   string
	env   []string
	path  string
	stdin string
}

func newLadderShell(t *testing.T, policy string, withELF bool) (*Shell, *[]nativeCall) {
	t.Helper()
	fsys := vfs.New(vfs.Options{})
	for _, d := range []string{"/tmp", "/work", "/bin", "/usr/bin"} {
		if err := fsys.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if withELF {
		if err := fsys.WriteFile("/usr/bin/tool", []byte("\x7fELF\x02\x01\x01 not really"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	var calls []nativeCall
	native := func(ctx context.Context, inv *commands.Invocation, path string) int {
		in, _ := io.ReadAll(inv.Stdin)
		calls = append(calls, nativeCall{argv: inv.Args, dir: inv.Dir, env: inv.Env, path: path, stdin: string(in)})
		fmt.Fprintf(inv.Stdout, "native %s\n", strings.Join(inv.Args[1:], " "))
		return 7
	}
	p, err := ParsePolicy(policy)
	if err != nil {
		t.Fatal(err)
	}
	sh, err := New(Config{FS: fsys, Commands: commands.Table{"tool": tool}, Dir: "/work",
		Env: []string{"PATH=/usr/bin:/bin"}, Native: native, Policy: p})
	if err != nil {
		t.Fatal(err)
	}
	return sh, &calls
}

func TestLadderFallback(t *testing.T) {
	cases := []struct {
		name     string
		policy   string
		elf      bool
		script   string
		stdin    string
		stdout   string
		stderr   string
		status   int
		natives  int
		rungs    map[Rung]int64
		fallback int64
	}{
		{name: "resident runs", elf: true, script: "tool", stdout: "resident tool\n", rungs: map[Rung]int64{RungResident: 1}},
		{name: "refusal falls back with the same argv, cwd, env and stdin", elf: true,
			script: "cd /tmp && X=1 tool fancy a 'b c'", stdin: "input\n", stdout: "native fancy a b c\n", status: 7, natives: 1,
			rungs: map[Rung]int64{RungNative: 1}, fallback: 1},
		{name: "an unknown option falls back", elf: true, script: "tool --weird", stdout: "native --weird\n", status: 7, natives: 1,
			rungs: map[Rung]int64{RungNative: 1}, fallback: 1},
		{name: "no other rung: the resident message", script: "tool fancy",
			stderr: "warren: tool fancy: not supported here (no native tool in this image)\n", status: 2, rungs: map[Rung]int64{RungMissing: 1}},
		{name: "no other rung: an unknown option gets the command's own text", script: "tool --weird",
			stderr: "tool: unrecognized option '--weird'\n", status: 1, rungs: map[Rung]int64{RungMissing: 1}},
		{name: "resident-only refuses", policy: "resident-only", elf: true, script: "tool fancy",
			stderr: "warren: tool fancy: not supported here (commands policy resident-only)\n", status: 2, rungs: map[Rung]int64{RungMissing: 1}},
		{name: "native-first runs the binary", policy: "native-first", elf: true, script: "tool", stdout: "native \n", status: 7, natives: 1,
			rungs: map[Rung]int64{RungNative: 1}},
		{name: "per-command native", policy: "tool=native", elf: true, script: "tool", stdout: "native \n", status: 7, natives: 1,
			rungs: map[Rung]int64{RungNative: 1}},
		{name: "native-first without a binary stays resident", policy: "native-first", script: "tool", stdout: "resident tool\n",
			rungs: map[Rung]int64{RungResident: 1}},
		{name: "a real failure does not fall back", elf: true, script: "tool missing",
			stderr: "tool: nosuch: No such file or directory\n", status: 1, rungs: map[Rung]int64{RungResident: 1}},
		{name: "a refusal after reading stdin does not run again", elf: true, script: "tool late", stdin: "x",
			stderr: "warren: tool late: not supported here (it read its input before refusing)\n", status: 2, rungs: map[Rung]int64{RungMissing: 1}},
		{name: "fallback inside a pipeline reads the pipe", elf: true, script: "echo piped | tool fancy", stdout: "native fancy\n", status: 7, natives: 1,
			rungs: map[Rung]int64{RungNative: 1}, fallback: 1},
		{name: "in a command substitution", elf: true, script: `x=$(tool fancy); echo "got $x"`, stdout: "got native fancy\n", natives: 1,
			rungs: map[Rung]int64{RungNative: 1}, fallback: 1},
		{name: "in a background job", elf: true, script: "tool fancy & wait $!", stdout: "native fancy\n", status: 7, natives: 1,
			rungs: map[Rung]int64{RungNative: 1}, fallback: 1},
		{name: "through xargs (Invocation.Exec)", elf: true, script: "echo fancy | xargs tool", stdout: "native fancy\n", status: 7, natives: 1,
			rungs: map[Rung]int64{RungNative: 1, RungResident: 1}, fallback: 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			sh, calls := newLadderShell(t, c.policy, c.elf)
			if strings.Contains(c.script, "xargs") {
				sh.cfg.Commands["xargs"] = func(ctx context.Context, inv *commands.Invocation) int {
					b, _ := io.ReadAll(inv.Stdin)
					return inv.Exec(ctx, append(inv.Args[1:], strings.Fields(string(b))...), strings.NewReader(""), inv.Stdout, inv.Stderr, nil)
				}
			}
			st := &Stats{}
			var out, errb bytes.Buffer
			status, err := sh.Run(WithStats(context.Background(), st), c.script, strings.NewReader(c.stdin), &out, &errb)
			if err != nil {
				t.Fatal(err)
			}
			if out.String() != c.stdout || errb.String() != c.stderr || status != c.status {
				t.Fatalf("got %d %q %q, want %d %q %q", status, out.String(), errb.String(), c.status, c.stdout, c.stderr)
			}
			if len(*calls) != c.natives {
				t.Fatalf("%d native runs, want %d", len(*calls), c.natives)
			}
			got := st.Rungs()
			for _, r := range []Rung{RungResident, RungNative, RungWASM, RungMissing} {
				if got[r] != c.rungs[r] {
					t.Fatalf("rungs %v, want %v", got, c.rungs)
				}
			}
			if fb := st.Fallbacks()["tool"]; fb != c.fallback {
				t.Fatalf("fallbacks %d, want %d", fb, c.fallback)
			}
			if c.natives == 1 && c.fallback == 1 && strings.HasPrefix(c.script, "cd /tmp") {
				call := (*calls)[0]
				if strings.Join(call.argv, "|") != "tool|fancy|a|b c" || call.dir != "/tmp" || call.path != "/usr/bin/tool" || call.stdin != "input\n" {
					t.Fatalf("native got %+v", call)
				}
				if !contains(call.env, "X=1") {
					t.Fatalf("native env %q lacks X=1", call.env)
				}
			}
		})
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// TestLadderSideEffectsOnce: the redirection of a refused command is
// applied once and the native run writes once; a resident command that
// worked is never run again.
func TestLadderSideEffectsOnce(t *testing.T) {
	sh, calls := newLadderShell(t, "", true)
	out, errs, st := runScript(t, sh, `tool fancy >> /work/log; tool fancy >> /work/log; tool append /work/log2; tool append /work/log2; cat /work/log /work/log2 2>&1; echo`)
	_ = st
	if errs != "" {
		t.Fatalf("stderr %q", errs)
	}
	// cat is not in this table: read the files directly.
	_ = out
	log, _ := sh.FS().ReadFile("/work/log")
	log2, _ := sh.FS().ReadFile("/work/log2")
	if string(log) != "native fancy\nnative fancy\n" || string(log2) != "resident\nresident\n" || len(*calls) != 2 {
		t.Fatalf("log %q log2 %q, %d native runs", log, log2, len(*calls))
	}
}

func TestParsePolicy(t *testing.T) {
	cases := []struct {
		in, canon, err string
	}{
		{"", "resident-first", ""},
		{"native-first", "native-first", ""},
		{"resident-only,git=native", "resident-only,git=native", ""},
		{"git=native,python=native", "resident-first,git=native,python=native", ""},
		{"git=resident-only", "resident-first,git=resident-only", ""},
		{"fastest", "", `unknown mode "fastest"`},
		{"git=fast", "", "git=fast: want native, resident or resident-only"},
		{"native-first,resident-only", "", "two default modes"},
		{"a/b=native", "", `bad command name "a/b"`},
		{strings.Repeat("x", 65) + "=native", "", "bad command name"},
		{strings.Repeat("a=native,", 200) + "b=native", "resident-first,a=native,b=native", ""},
		{overrides(257), "", "more than 256 per-command overrides"},
	}
	for _, c := range cases {
		p, err := ParsePolicy(c.in)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%q: err %v, want %q", c.in, err, c.err)
			}
			continue
		}
		if err != nil || p.String() != c.canon {
			t.Errorf("%q: %q %v, want %q", c.in, p.String(), err, c.canon)
		}
	}
	base, _ := ParsePolicy("native-first,git=resident")
	ex, _ := ParsePolicy("sed=native")
	if got := ex.Over(base).String(); got != "native-first,git=resident,sed=native" {
		t.Errorf("Over: %q", got)
	}
	only, _ := ParsePolicy("resident-only")
	if got := only.Over(base).String(); got != "resident-only" {
		t.Errorf("Over with a mode: %q", got)
	}
}

func TestLadderTypeA(t *testing.T) {
	cases := []struct{ policy, script, want string }{
		{"", "type -a tool", "tool is warren's resident tool (runs first)\ntool is /usr/bin/tool (native, when the resident tool refuses)\n"},
		{"native-first", "command -V tool", "tool is /usr/bin/tool (native)\ntool is warren's resident tool (when no other rung runs)\n"},
		{"resident-only", "type -a tool", "tool is warren's resident tool (runs first)\ntool is /usr/bin/tool (native, not used: commands policy resident-only)\n"},
		{"", "type tool; command -v tool; type -ap tool", "tool is /usr/bin/tool\n/usr/bin/tool\n/usr/bin/tool\n/bin/tool\n"},
	}
	for _, c := range cases {
		sh, _ := newLadderShell(t, c.policy, true)
		out, errs, _ := runScript(t, sh, c.script)
		if out != c.want || errs != "" {
			t.Errorf("%s %q: %q %q, want %q", c.policy, c.script, out, errs, c.want)
		}
	}
}

func TestClassifyScript(t *testing.T) {
	cases := []struct {
		policy string
		elf    bool
		want   string
	}{
		{"", true, "1 tool resident|1 tool fancy native|2 nosuch missing|3 : resident|3 f resident|4 … dynamic|4 tool late missing"},
		{"", false, "1 tool resident|1 tool fancy missing|2 nosuch missing|3 : resident|3 f resident|4 … dynamic|4 tool late missing"},
		{"resident-only", true, "1 tool resident|1 tool fancy missing|2 nosuch missing|3 : resident|3 f resident|4 … dynamic|4 tool late missing"},
		{"native-first", true, "1 tool native|1 tool fancy native|2 nosuch missing|3 : resident|3 f resident|4 … dynamic|4 tool late native"},
	}
	for _, c := range cases {
		sh, calls := newLadderShell(t, c.policy, c.elf)
		got, err := sh.ClassifyScript("tool && tool fancy\nnosuch\nf() { :; }; f\n$X | tool late\n")
		if err != nil {
			t.Fatal(err)
		}
		var parts []string
		for _, g := range got {
			parts = append(parts, fmt.Sprintf("%d %s %s", g.Line, strings.Join(g.Argv, " "), g.Rung))
		}
		if s := strings.Join(parts, "|"); s != c.want {
			t.Errorf("%s elf=%v: %s\nwant %s", c.policy, c.elf, s, c.want)
		}
		if len(*calls) != 0 {
			t.Errorf("classify ran %d native commands", len(*calls))
		}
	}
}

// TestWhichAgrees: which resolves names as command -v does, resident
// commands included (issue 21).
func TestWhichAgrees(t *testing.T) {
	sh, _ := newLadderShell(t, "", false)
	sysinfo.Register(sh.cfg.Commands)
	out, errs, st := runScript(t, sh, `for n in tool which nosuch; do a=$(command -v $n); b=$(which $n); echo "$n:$a:$b"; done; which -a tool`)
	want := "tool:/usr/bin/tool:/usr/bin/tool\nwhich:/usr/bin/which:/usr/bin/which\nnosuch::\n/usr/bin/tool\n/bin/tool\n"
	if out != want || errs != "" || st != 0 {
		t.Fatalf("%q %q %d, want %q", out, errs, st, want)
	}
}

func overrides(n int) string {
	var parts []string
	for i := 0; i < n; i++ {
		parts = append(parts, fmt.Sprintf("c%d=native", i))
	}
	return strings.Join(parts, ",")
}

// The verdict on PATH (standard directories only, or one where a script
// may shadow a resident command) is kept for the last PATH seen: sessions
// taking turns with different PATHs each get their own verdict.
func TestCustomPathVerdict(t *testing.T) {
	plain := newTestShell(t, Limits{})
	custom := newTestShell(t, Limits{})
	if err := custom.FS().MkdirAll("/opt/bin", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := custom.FS().WriteFile("/opt/bin/whoami", []byte("#!/bin/bash\necho script\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if out, errs, st := runScript(t, custom, `PATH=/opt/bin:$PATH; hash -r`); st != 0 {
		t.Fatalf("setup: %q %q %d", out, errs, st)
	}
	for i := range 4 {
		if out, errs, _ := runScript(t, plain, `whoami`); out != "user\n" {
			t.Errorf("turn %d, standard PATH: %q (stderr %q), want the resident whoami", i, out, errs)
		}
		if out, errs, _ := runScript(t, custom, `whoami`); out != "script\n" {
			t.Errorf("turn %d, /opt/bin first: %q (stderr %q), want the script", i, out, errs)
		}
	}
}
