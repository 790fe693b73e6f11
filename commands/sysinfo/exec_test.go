package sysinfo_test

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/commands"

	"github.com/warren-sandbox/warren/commands/std"
)

// TestTimeout runs sleep under timeout through the execution ladder.
func TestTimeout(t *testing.T) {
	fsys := newSandbox(t, nil, nil)
	tab := std.Table()
	start := time.Now()
	_, _, code := runIn(fsys, tab, []string{"timeout", "0.05", "sleep", "10"}, "")
	if code != 124 {
		t.Errorf("timeout exit %d, want 124", code)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("timeout took %v", d)
	}
	if _, _, code := runIn(fsys, tab, []string{"timeout", "5", "false"}, ""); code != 1 {
		t.Errorf("timeout false: exit %d, want 1", code)
	}
	if _, _, code := runIn(fsys, tab, []string{"timeout", "-s", "KILL", "0.01", "sleep", "1"}, ""); code != 137 {
		t.Errorf("timeout -s KILL: exit %d, want 137", code)
	}
}

// TestEnvRuns checks env NAME=V CMD passes the environment to CMD.
func TestEnvRuns(t *testing.T) {
	fsys := newSandbox(t, nil, nil)
	out, _, code := runIn(fsys, std.Table(), []string{"env", "-i", "A=1", "B=2", "printenv", "B"}, "")
	if out != "2\n" || code != 0 {
		t.Errorf("got %q %d", out, code)
	}
}

// TestSandboxValues checks the system view comes from commands.System.
func TestSandboxValues(t *testing.T) {
	fsys := newSandbox(t, nil, nil)
	tab := std.Table()
	for argv, want := range map[string]string{
		"hostname": "sandbox\n", "nproc": "2\n", "uname -n": "sandbox\n", "uname -r": "6.1.0-warren\n",
		"date +%s": "1795953600\n", "ps": "    PID TTY          TIME CMD\n      1 ?        00:00:00 ps\n",
	} {
		out, errs, code := runIn(fsys, tab, strings.Fields(argv), "")
		if out != want || code != 0 {
			t.Errorf("%s: got %q %q %d, want %q", argv, out, errs, code, want)
		}
	}
}

// TestPsKill lists the sandbox's processes and signals them through
// commands.System, never the host.
func TestPsKill(t *testing.T) {
	fsys := newSandbox(t, nil, nil)
	var killed []string
	sys := &commands.System{Hostname: "box", Uid: 1000, User: "agent",
		Procs: func() []commands.Proc {
			return []commands.Proc{{Pid: 7, PPid: 1, Cmd: "sleep 100"}, {Pid: 1, Cmd: "bash"}}
		},
		Kill: func(pid int, sig string) error {
			if pid != 7 {
				return syscall.ESRCH
			}
			killed = append(killed, fmt.Sprintf("%d:%s", pid, sig))
			return nil
		},
		Now: func() time.Time { return time.Unix(1700000000, 0) },
	}
	run := func(argv ...string) (string, string, int) {
		var out, errb bytes.Buffer
		inv := &commands.Invocation{Args: argv, Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, Dir: "/", FS: fsys, Sys: sys}
		code := std.Table()[argv[0]](context.Background(), inv)
		return out.String(), errb.String(), code
	}
	if out, _, _ := run("ps"); out != "    PID TTY          TIME CMD\n      1 ?        00:00:00 bash\n      7 ?        00:00:00 sleep\n" {
		t.Errorf("ps: %q", out)
	}
	if out, _, _ := run("whoami"); out != "agent\n" {
		t.Errorf("whoami: %q", out)
	}
	if out, _, _ := run("id", "-u"); out != "1000\n" {
		t.Errorf("id -u: %q", out)
	}
	if _, _, code := run("kill", "-9", "7"); code != 0 || len(killed) != 1 || killed[0] != "7:9" {
		t.Errorf("kill -9 7: %d %v", code, killed)
	}
	if _, errs, code := run("kill", "99"); code != 1 || errs != "kill: (99) - No such process\n" {
		t.Errorf("kill 99: %d %q", code, errs)
	}
}
