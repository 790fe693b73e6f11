package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestE2E_ServeGOGC: the in-process serve runs GOGC 400 under its
// GOMEMLIMIT and Go's default without one; each worker process gets a
// GOMEMLIMIT of 70% of its cgroup limit and GOGC 400 (read from the
// workers' own environment in /proc).
func TestE2E_ServeGOGC(t *testing.T) {
	if os.Getenv("GOGC") != "" {
		t.Skip("GOGC is set in the environment, and it wins over serve's default")
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--workers", "0", "--memory-limit", "1GiB"}, "msg=gogc gogc=400"},
		{[]string{"--workers", "0", "--memory-limit", "off"}, `msg=gogc gogc=100 why="no memory limit"`},
	} {
		p := startServe(t, t.TempDir(), append([]string{"--no-native", "--gc-interval", "0"}, c.args...)...)
		if !strings.Contains(p.logs(), c.want) {
			t.Fatalf("serve %v: no %q in its log:\n%s", c.args, c.want, p.logs())
		}
		p.stop(t)
	}
	if os.Geteuid() != 0 {
		if os.Getenv("CI") != "" {
			t.Fatal("worker cgroups need root and CI runs as root")
		}
		t.Skip("worker cgroups need root")
	}
	p := startServe(t, t.TempDir(), "--no-native", "--gc-interval", "0", "--workers", "2", "--worker-memory", "200MiB")
	defer p.stop(t)
	kids := childPIDs(t, p.cmd.Process.Pid)
	if len(kids) != 2 {
		t.Fatalf("serve has %d children %v; want its 2 workers", len(kids), kids)
	}
	want := []string{"GOMEMLIMIT=" + strconv.Itoa(200<<20*7/10), "GOGC=400"}
	for _, pid := range kids {
		env, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "environ"))
		if err != nil {
			t.Fatal(err)
		}
		vars := strings.Split(string(env), "\x00")
		for _, w := range want {
			// The last assignment is the one the runtime reads.
			got := ""
			name, _, _ := strings.Cut(w, "=")
			for _, v := range vars {
				if strings.HasPrefix(v, name+"=") {
					got = v
				}
			}
			if got != w {
				t.Errorf("worker %d: %q; want %q", pid, got, w)
			}
		}
	}
}

// childPIDs lists pid's children (every thread's).
func childPIDs(t *testing.T, pid int) []int {
	t.Helper()
	tasks, err := filepath.Glob(filepath.Join("/proc", strconv.Itoa(pid), "task", "*", "children"))
	if err != nil {
		t.Fatal(err)
	}
	var out []int
	for _, f := range tasks {
		b, _ := os.ReadFile(f)
		for _, s := range strings.Fields(string(b)) {
			n, err := strconv.Atoi(s)
			if err == nil {
				out = append(out, n)
			}
		}
	}
	return out
}
