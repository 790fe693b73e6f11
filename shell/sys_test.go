package shell

import (
	"bytes"
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/commands"
	"github.com/warren-sandbox/warren/commands/std"
	"github.com/warren-sandbox/warren/vfs"
)

// probeShell is a shell whose "probe" command reports what commands see
// of the sandbox (Invocation.Sys, Umask, ExecDir).
func probeShell(t *testing.T, sys *commands.System) *Shell {
	t.Helper()
	fsys := vfs.New(vfs.Options{})
	for _, d := range []string{"/tmp/sub", "/home/user"} {
		if err := fsys.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	tbl := std.Table()
	tbl.Register("probe", func(ctx context.Context, inv *commands.Invocation) int {
		switch inv.Args[1] {
		case "sys":
			s := inv.Sys
			fmt.Fprintf(inv.Stdout, "%s %d %d %s %d\n", s.Hostname, s.Uid, s.MaxMemoryBytes, s.User, s.NumCPU)
		case "umask":
			fmt.Fprintf(inv.Stdout, "%04o\n", inv.Umask)
		case "ps":
			for _, p := range inv.Sys.Procs() {
				fmt.Fprintf(inv.Stdout, "%d %d %s\n", p.Pid, p.PPid, p.Cmd)
			}
		case "kill":
			pid, _ := strconv.Atoi(inv.Args[2])
			if err := inv.Sys.Kill(pid, inv.Args[3]); err != nil {
				fmt.Fprintf(inv.Stdout, "kill: %v\n", err)
				return 1
			}
		case "execdir":
			return inv.ExecDir(ctx, inv.Args[2], inv.Args[3:], inv.Stdin, inv.Stdout, inv.Stderr, inv.Env)
		}
		return 0
	})
	sh, err := New(Config{FS: fsys, Commands: tbl, Dir: "/home/user", Uid: 1000, User: "user", Sys: sys})
	if err != nil {
		t.Fatal(err)
	}
	return sh
}

func TestInvocationSys(t *testing.T) {
	tests := []struct {
		name string
		sys  *commands.System
		in   string
		want string
	}{
		{"from config fields", nil, "probe sys", "sandbox 1000 268435456 user 1\n"},
		{"from Config.Sys", &commands.System{Hostname: "h1", Uid: 7, MaxMemoryBytes: 123, NumCPU: 4}, "probe sys", "h1 7 123 user 4\n"},
		{"umask", nil, "probe umask; umask 027; probe umask; (umask 077; probe umask)", "0022\n0027\n0077\n"},
		{"execdir absolute", nil, "probe execdir /tmp pwd; pwd", "/tmp\n/home/user\n"},
		{"execdir relative", nil, "cd /tmp; probe execdir sub bash -c 'pwd; echo $PWD'", "/tmp/sub\n/tmp/sub\n"},
		{"execdir empty is cwd", nil, "probe execdir '' pwd", "/home/user\n"},
		{"ps lists shell, job, caller", nil, `sleep 5 & probe ps | while read a b c; do echo "$c"; done; kill %1`, "bash\nsleep 5\nbash\nprobe ps\n"},
		{"kill a job", nil, "sleep 5 & probe kill $! TERM; wait $!; echo $?", "143\n"},
		{"kill probes and refuses", nil, "probe kill $$ TERM; probe kill 9999 TERM; sleep 5 & probe kill $! 0 && echo alive; kill %1", "kill: operation not permitted\nkill: no such process\nalive\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sh := probeShell(t, tc.sys)
			var out, errb bytes.Buffer
			start := time.Now()
			sh.Run(context.Background(), tc.in, strings.NewReader(""), &out, &errb)
			if out.String() != tc.want {
				t.Errorf("%s\nstdout %q, want %q (stderr %q)", tc.in, out.String(), tc.want, errb.String())
			}
			if d := time.Since(start); d > 4*time.Second {
				t.Errorf("took %v: the job was not killed", d)
			}
		})
	}
}
