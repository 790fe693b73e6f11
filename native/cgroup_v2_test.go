package native

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// This machine has memory, cpu and pids on cgroup v1 only, so the v2 code
// paths are tested here against a directory laid out as cgroup2 would be:
// hierarchy selection from a mount table, the files written for limits,
// delegation, and the files read back (OOM kills, CPU time, fork refusals).
// What only a real cgroup2 mount can show (the kernel accepting the writes,
// cgroup.kill) is not covered on this host.

func TestParseCgroups(t *testing.T) {
	const v2only = `25 1 0:22 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw,nsdelegate
`
	const hybrid = `31 23 0:28 / /sys/fs/cgroup rw - tmpfs tmpfs rw
32 31 0:29 / /sys/fs/cgroup/cpu,cpuacct rw - cgroup cgroup rw,cpu,cpuacct
34 31 0:31 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory
35 31 0:32 / /sys/fs/cgroup/pids rw - cgroup cgroup rw,pids
36 31 0:33 / /sys/fs/cgroup/freezer rw - cgroup cgroup rw,freezer
40 31 0:37 / /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw
`
	tests := []struct {
		name, mi, self string
		v2ctrls        []string
		want           string // cg.String()
		parent         string // the memory hierarchy's parent
		err            string
	}{
		{"v2 only", v2only, "0::/system.slice/warren.service\n", []string{"cpuset", "cpu", "io", "memory", "pids"},
			"v2:/sys/fs/cgroup", "/sys/fs/cgroup/system.slice/warren.service/warren", ""},
		{"hybrid, controllers on v1", hybrid, "4:pids:/p\n3:memory:/m\n2:cpu,cpuacct:/c\n1:freezer:/f\n0::/u\n", []string{"hugetlb"},
			"v1(memory):/sys/fs/cgroup/memory v1(cpu,cpuacct):/sys/fs/cgroup/cpu,cpuacct v1(pids):/sys/fs/cgroup/pids v1(freezer):/sys/fs/cgroup/freezer",
			"/sys/fs/cgroup/memory/m/warren", ""},
		{"v2 without pids", v2only, "0::/\n", []string{"cpu", "memory"}, "", "", "pids"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cg, err := parseCgroups([]byte(tc.mi), []byte(tc.self), "warren", func(string) []string { return tc.v2ctrls })
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err %v, want one naming %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := cg.String(); got != tc.want {
				t.Errorf("hierarchies %q, want %q", got, tc.want)
			}
			if cg.mem.parent != tc.parent {
				t.Errorf("memory parent %s, want %s", cg.mem.parent, tc.parent)
			}
			if tc.name == "v2 only" && (cg.mem != cg.pids || cg.mem != cg.cpu || cg.acct != cg.mem || cg.frz != nil) {
				t.Errorf("v2: want one hierarchy for everything and no v1 freezer")
			}
		})
	}
}

func TestCgroupsV2Files(t *testing.T) {
	root := t.TempDir()
	h := &hierarchy{v2: true, mount: root, parent: filepath.Join(root, "warren")}
	cg := &cgroups{hier: []*hierarchy{h}, mem: h, cpu: h, acct: h, pids: h}
	if err := os.MkdirAll(h.parent, 0o755); err != nil {
		t.Fatal(err)
	}
	read := func(rel string) string {
		t.Helper()
		b, err := os.ReadFile(filepath.Join(h.parent, rel))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	write := func(rel, s string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(h.parent, rel), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// The workspace layout: wN and wN/sb delegate, the leaves do not.
	for _, c := range []struct {
		rel    string
		parent bool
	}{{"w1", true}, {"w1/sb", true}, {"w1/sb/s", false}, {"w1/init", false}} {
		if err := cg.create(c.rel, c.parent); err != nil {
			t.Fatal(err)
		}
		_, err := os.Stat(filepath.Join(h.parent, c.rel, "cgroup.subtree_control"))
		if c.parent != (err == nil) {
			t.Errorf("%s: subtree_control written %v, want %v", c.rel, err == nil, c.parent)
		}
	}
	if got := read("w1/sb/cgroup.subtree_control"); got != "+memory +cpu +pids" {
		t.Errorf("subtree_control %q", got)
	}
	write("w1/sb/memory.swap.max", "max") // the kernel has it where swap accounting is on
	if err := cg.setLimits("w1/sb", Limits{Memory: 64 << 20, CPUs: 0.5, Pids: 100}); err != nil {
		t.Fatal(err)
	}
	for file, want := range map[string]string{
		"memory.max": "67108864", "memory.swap.max": "0", "cpu.max": "50000 100000", "pids.max": "100",
	} {
		if got := read("w1/sb/" + file); got != want {
			t.Errorf("%s = %q, want %q", file, got, want)
		}
	}
	// An exec with no limits of its own: its cgroup in the (only) hierarchy.
	hs := cg.execHierarchies(Limits{})
	if len(hs) != 1 || hs[0] != h {
		t.Fatalf("exec hierarchies %v", hs)
	}
	if err := cg.createIn("w1/sb/e1", hs, false); err != nil {
		t.Fatal(err)
	}
	for _, rel := range []string{"w1/sb/s", "w1/sb/e1", "w1/init"} {
		write(rel+"/cgroup.procs", "")
	}
	fs, err := cg.execProcsFiles("w1/sb/e1", "w1/sb/s", hs)
	if err != nil {
		t.Fatal(err)
	}
	if len(fs) != 1 || !strings.HasSuffix(fs[0].Name(), "w1/sb/e1/cgroup.procs") {
		t.Errorf("exec procs files %v", fs)
	}
	closeAll(fs)
	// Read-backs.
	write("w1/sb/memory.events", "low 0\nhigh 0\nmax 9\noom 2\noom_kill 2\n")
	if n := cg.oomKills("w1/sb"); n != 2 {
		t.Errorf("oom kills %d, want 2", n)
	}
	write("w1/sb/e1/cpu.stat", "usage_usec 1500\nuser_usec 1000\nsystem_usec 500\n")
	if d := cg.cpuTime("w1/sb/e1"); d != 1500*time.Microsecond {
		t.Errorf("cpu time %v", d)
	}
	// Since 6.12 pids.events is hierarchical and .local is per cgroup: the
	// local counts of the subtree are summed, never the hierarchical ones.
	write("w1/sb/pids.events", "max 7\n")
	write("w1/sb/pids.events.local", "max 0\n")
	write("w1/sb/s/pids.events.local", "max 3\n")
	write("w1/sb/e1/pids.events.local", "max 4\n")
	if n := cg.pidsRefused("w1/sb"); n != 7 {
		t.Errorf("refused forks %d, want 7", n)
	}
	// kill: cgroup.kill, then wait until cgroup.procs is empty.
	if err := cg.kill("w1"); err != nil {
		t.Fatal(err)
	}
	if got := read("w1/cgroup.kill"); got != "1" {
		t.Errorf("cgroup.kill = %q", got)
	}
	write("w1/sb/s/cgroup.procs", "4242\n")
	if err := cg.waitEmpty("w1", 20*time.Millisecond); err == nil {
		t.Error("waitEmpty returned with a process left")
	}
}

// ramp is the pids.events count after n ticks of step refusals each.
func ramp(step int64, n int) []int64 {
	c := make([]int64, n)
	for i := range c {
		c[i] = step * int64(i+1)
	}
	return c
}

// gaps: step refusals every every-th tick, for n ticks.
func gaps(step int64, every, n int) []int64 {
	c := make([]int64, n)
	var v int64
	for i := range c {
		if i%every == 0 {
			v += step
		}
		c[i] = v
	}
	return c
}

func TestForkStorm(t *testing.T) {
	tests := []struct {
		name   string
		counts []int64 // pids.events "max" at successive ticks
		bomb   bool
	}{
		{"quiet", []int64{0, 0, 0, 0, 0, 0, 0}, false},
		{"met the limit once", []int64{5, 5, 5, 5, 5, 5, 5}, false},
		{"short burst", []int64{100, 200, 300, 300, 400, 500, 500}, false},
		{"sustained", []int64{30, 60, 90, 120, 150}, true},
		{"slow trickle", []int64{10, 20, 30, 40, 50, 60, 70, 80}, false},
		{"slow bomb", ramp(10, 15), true},
		{"slow bomb, too short", ramp(10, 14), false},
		{"one retry a tick", ramp(1, 60), false},
		{"bursts with gaps", gaps(40, 2, 30), true},
		{"sparse retries", gaps(40, 3, 60), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := forkStorm{}
			bomb := false
			for _, c := range tc.counts {
				if s.observe(c) {
					bomb = true
				}
			}
			if bomb != tc.bomb || s.total != tc.counts[len(tc.counts)-1] {
				t.Errorf("bomb %v total %d, want %v %d", bomb, s.total, tc.bomb, tc.counts[len(tc.counts)-1])
			}
		})
	}
}
