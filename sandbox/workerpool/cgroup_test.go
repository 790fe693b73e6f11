package workerpool

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestParseMemHierarchy: the memory controller is found on a v1-only
// host (this CI machine), a v2-only host and a hybrid whose v2 lacks
// memory; a host without it is an error that says so.
func TestParseMemHierarchy(t *testing.T) {
	const v1 = `32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu
35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
`
	const v2 = `30 23 0:27 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:9 - cgroup2 cgroup2 rw,nsdelegate
`
	cases := []struct {
		name, mounts, self, v2ctrls string
		v2                          bool
		mount, own                  string
		fail                        bool
	}{
		{"v1 memory, v2 hugetlb only", v1, "4:memory:/process_api/abc\n1:cpu:/\n0::/\n", "hugetlb", false, "/sys/fs/cgroup/memory", "/process_api/abc", false},
		{"v2 with memory", v2, "0::/user.slice/warren.service\n", "cpuset cpu io memory pids", true, "/sys/fs/cgroup", "/user.slice/warren.service", false},
		{"v2 without memory, no v1", v2, "0::/x\n", "cpu pids", false, "", "", true},
		{"no cgroups", "", "", "", false, "", "", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v2, mount, own, err := parseMemHierarchy(c.mounts, c.self, func(string) string { return c.v2ctrls })
			if c.fail {
				if err == nil {
					t.Fatalf("found %v %s %s; want an error", v2, mount, own)
				}
				return
			}
			if err != nil || v2 != c.v2 || mount != c.mount || own != c.own {
				t.Fatalf("got v2=%v mount=%s own=%s err=%v; want v2=%v mount=%s own=%s", v2, mount, own, err, c.v2, c.mount, c.own)
			}
		})
	}
}

// TestMemGroupFiles: the limit and OOM counter files of both cgroup
// versions, over a directory laid out like cgroupfs (the v2 path cannot
// run on this v1 host, so its file protocol is checked here).
func TestMemGroupFiles(t *testing.T) {
	cases := []struct {
		name  string
		v2    bool
		files map[string]string // initial content
		limit int64
		want  map[string]string
		oom   string // content of the OOM counter file
	}{
		{"v2", true, map[string]string{"memory.max": "max", "memory.swap.max": "max", "memory.oom.group": "0"}, 256 << 20,
			map[string]string{"memory.max": "268435456", "memory.swap.max": "0", "memory.oom.group": "1"},
			"low 0\nhigh 0\nmax 12\noom 3\noom_kill 2\n"},
		{"v1 with swap accounting", false, map[string]string{"memory.limit_in_bytes": "9223372036854771712", "memory.memsw.limit_in_bytes": "9223372036854771712", "memory.move_charge_at_immigrate": "0"}, 256 << 20,
			map[string]string{"memory.limit_in_bytes": "268435456", "memory.memsw.limit_in_bytes": "268435456", "memory.move_charge_at_immigrate": "3"},
			"oom_kill_disable 0\nunder_oom 0\noom_kill 2\n"},
		{"v1 raising the limit", false, map[string]string{"memory.limit_in_bytes": "1048576", "memory.memsw.limit_in_bytes": "1048576"}, 256 << 20,
			map[string]string{"memory.limit_in_bytes": "268435456", "memory.memsw.limit_in_bytes": "268435456"},
			"oom_kill 2\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			for f, v := range c.files {
				if err := os.WriteFile(filepath.Join(dir, f), []byte(v), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			g := &memGroup{v2: c.v2, dir: dir}
			if err := g.setLimit(c.limit); err != nil {
				t.Fatal(err)
			}
			for f, want := range c.want {
				b, _ := os.ReadFile(filepath.Join(dir, f))
				if string(b) != want {
					t.Errorf("%s = %q; want %q", f, b, want)
				}
			}
			oomFile := "memory.oom_control"
			if c.v2 {
				oomFile = "memory.events"
			}
			os.WriteFile(filepath.Join(dir, oomFile), []byte(c.oom), 0o644)
			if n := g.oomKills(); n != 2 {
				t.Errorf("oomKills = %d; want 2", n)
			}
		})
	}
}

// TestParseCPUHierarchy: the cpu controller is told from cpuacct and
// cpuset (v1 mounts whose names start alike), found combined with cpuacct,
// and on v2.
func TestParseCPUHierarchy(t *testing.T) {
	const split = `30 31 0:28 / /sys/fs/cgroup/cpuacct rw,relatime - cgroup cgroup rw,cpuacct
31 31 0:29 / /sys/fs/cgroup/cpuset rw,relatime - cgroup cgroup rw,cpuset
32 31 0:30 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu
`
	const combined = `32 31 0:30 / /sys/fs/cgroup/cpu,cpuacct rw,relatime - cgroup cgroup rw,cpu,cpuacct
`
	const v2 = `30 23 0:27 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw,nsdelegate
`
	cases := []struct {
		name, mounts, self, v2ctrls string
		v2                          bool
		mount, own                  string
		fail                        bool
	}{
		{"v1 split", split, "3:cpuset:/\n2:cpuacct:/a\n1:cpu:/b\n", "", false, "/sys/fs/cgroup/cpu", "/b", false},
		{"v1 combined", combined, "1:cpu,cpuacct:/c\n", "", false, "/sys/fs/cgroup/cpu,cpuacct", "/c", false},
		{"v2", v2, "0::/warren.service\n", "memory cpu", true, "/sys/fs/cgroup", "/warren.service", false},
		{"only cpuacct", "30 31 0:28 / /x rw - cgroup cgroup rw,cpuacct\n", "2:cpuacct:/\n", "", false, "", "", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v2, mount, own, err := parseHierarchy("cpu", c.mounts, c.self, func(string) string { return c.v2ctrls })
			if c.fail {
				if err == nil {
					t.Fatalf("found %v %s %s; want an error", v2, mount, own)
				}
				return
			}
			if err != nil || v2 != c.v2 || mount != c.mount || own != c.own {
				t.Fatalf("got v2=%v mount=%s own=%s err=%v; want v2=%v mount=%s own=%s", v2, mount, own, err, c.v2, c.mount, c.own)
			}
		})
	}
}

// TestCPUGroups: with a real pool each worker sits in a cpu cgroup of its
// own with the documented weight (v2: the front too, 4× a worker; v1: the
// front stays where it was), a restarted worker goes back into its group,
// Close removes the groups, and a killed front's empty groups are swept.
func TestCPUGroups(t *testing.T) {
	needRoot(t)
	v2, mount, own, err := cpuHierarchy()
	if err != nil {
		t.Skipf("no cpu controller on this host: %v", err)
	}
	// A killed front's empty groups are swept at the next Open; one that
	// holds a child cgroup stays.
	stale := filepath.Join(mount, own, "warren-workers-stale0-w0")
	busy := filepath.Join(mount, own, "warren-workers-stale1-w0")
	if !v2 {
		for _, d := range []string{stale, filepath.Join(busy, "child")} {
			if err := os.MkdirAll(d, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		t.Cleanup(func() { syscall.Rmdir(filepath.Join(busy, "child")); syscall.Rmdir(busy); syscall.Rmdir(stale) })
	}
	p := openPool(t, testOptions(t, 2))
	if !v2 {
		if _, err := os.Stat(stale); err == nil {
			t.Errorf("stale empty group %s not swept", stale)
		}
		if _, err := os.Stat(busy); err != nil {
			t.Errorf("group %s with a child was swept: %v", busy, err)
		}
	}
	if p.cpu == nil {
		t.Fatal("no cpu groups on a host with a cpu controller (see the log's warning)")
	}
	cgOf := func(pid int) string {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", pid))
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range strings.Split(string(b), "\n") {
			parts := strings.SplitN(l, ":", 3)
			if len(parts) != 3 {
				continue
			}
			if v2 && parts[1] == "" || !v2 && slices.Contains(strings.Split(parts[1], ","), "cpu") {
				return filepath.Join(mount, parts[2])
			}
		}
		return ""
	}
	shares := func(dir string) int {
		file := "cpu.shares"
		if v2 {
			file = "cpu.weight"
		}
		return int(readInt(filepath.Join(dir, file)))
	}
	want := func(s int) int {
		if v2 {
			return s * 100 / 1024
		}
		return s
	}
	if v2 {
		if got := cgOf(os.Getpid()); got != p.cpu.front.dir || shares(got) != want(frontShares) {
			t.Fatalf("front in %s weight %d; want %s weight %d", got, shares(got), p.cpu.front.dir, want(frontShares))
		}
	} else if got := cgOf(os.Getpid()); got != filepath.Join(mount, own) {
		t.Fatalf("front moved to %s; v1 keeps it in %s", got, filepath.Join(mount, own))
	}
	for _, s := range p.Status() {
		g := p.cpu.workers[s.Index]
		if got := cgOf(s.PID); got != g.dir || shares(got) != want(workerShares) {
			t.Fatalf("worker %d (pid %d) in %s weight %d; want %s weight %d", s.Index, s.PID, got, shares(got), g.dir, want(workerShares))
		}
	}
	// A restarted worker is weighed as before.
	old := p.Status()[1].PID
	syscall.Kill(old, syscall.SIGKILL)
	deadline := time.Now().Add(30 * time.Second)
	for {
		s := p.Status()[1]
		if s.Up && s.PID != old {
			if got := cgOf(s.PID); got != p.cpu.workers[1].dir {
				t.Fatalf("restarted worker in %s; want %s", got, p.cpu.workers[1].dir)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("worker 1 not back: %+v", s)
		}
		time.Sleep(50 * time.Millisecond)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	dirs := []string{p.cpu.workers[0].dir, p.cpu.workers[1].dir}
	if err := p.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if !v2 {
		if got := cgOf(os.Getpid()); got != filepath.Join(mount, own) {
			t.Fatalf("front left in %s after Close; want %s", got, filepath.Join(mount, own))
		}
		for _, d := range dirs {
			if _, err := os.Stat(d); err == nil {
				t.Errorf("cgroup %s left after Close", d)
			}
		}
	}
}
