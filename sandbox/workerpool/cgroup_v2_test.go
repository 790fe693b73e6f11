package workerpool

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// TestResetV2 on the host's real cgroup v2 mount: a worker group the last
// worker's native tier left delegating a controller (with its leaf and a
// child) refuses a new process (the kernel's no-internal-processes rule:
// a restarted worker could not be born there); after resetV2 its
// children are gone, it delegates nothing and takes the process. It uses
// whichever controller the v2 mount offers (hugetlb on this v1 host).
func TestResetV2(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("cgroups need root")
	}
	mi, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	mount := ""
	for _, l := range strings.Split(string(mi), "\n") {
		if f := strings.Fields(l); len(f) > 8 && strings.Contains(l, " - cgroup2 ") {
			mount = f[4]
			break
		}
	}
	if mount == "" {
		t.Skip("no cgroup v2 mount on this host")
	}
	ctrls := strings.Fields(readFile(filepath.Join(mount, "cgroup.controllers")))
	if len(ctrls) == 0 {
		t.Skipf("the cgroup v2 mount %s offers no controller to delegate", mount)
	}
	ctrl := ctrls[0]
	write := func(dir, file, v string) error {
		return os.WriteFile(filepath.Join(dir, file), []byte(v), 0)
	}
	if !bytes.Contains([]byte(readFile(filepath.Join(mount, "cgroup.subtree_control"))), []byte(ctrl)) {
		if err := write(mount, "cgroup.subtree_control", "+"+ctrl); err != nil {
			t.Skipf("cannot enable %s in the v2 root: %v", ctrl, err)
		}
		t.Cleanup(func() { write(mount, "cgroup.subtree_control", "-"+ctrl) })
	}
	parent := filepath.Join(mount, "warren-resettest-"+strconv.Itoa(os.Getpid()))
	g := &memGroup{v2: true, dir: filepath.Join(parent, "w0")}
	for _, d := range []string{parent, g.dir, filepath.Join(g.dir, "leaf"), filepath.Join(g.dir, "warren-x", "w1")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	sleep := exec.Command("sleep", "60")
	if err := sleep.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		sleep.Process.Kill()
		sleep.Wait()
		for _, d := range []string{filepath.Join(g.dir, "warren-x", "w1"), filepath.Join(g.dir, "warren-x"), filepath.Join(g.dir, "leaf"), g.dir, parent} {
			syscall.Rmdir(d)
		}
	})
	for _, d := range []string{parent, g.dir} {
		if err := write(d, "cgroup.subtree_control", "+"+ctrl); err != nil {
			t.Fatal(err)
		}
	}
	pid := strconv.Itoa(sleep.Process.Pid)
	if err := g.add(sleep.Process.Pid); !errors.Is(err, syscall.EBUSY) {
		t.Fatalf("a process into a group that delegates %s: %v; want EBUSY", ctrl, err)
	}
	if err := g.resetV2(); err != nil {
		t.Fatal(err)
	}
	if ents, _ := os.ReadDir(g.dir); anyDir(ents) {
		t.Fatalf("children left in %s after resetV2", g.dir)
	}
	if s := strings.TrimSpace(readFile(filepath.Join(g.dir, "cgroup.subtree_control"))); s != "" {
		t.Fatalf("%s still delegates %q", g.dir, s)
	}
	if err := g.add(sleep.Process.Pid); err != nil {
		t.Fatalf("a process into the reset group: %v", err)
	}
	if procs := readFile(filepath.Join(g.dir, "cgroup.procs")); !strings.Contains(procs, pid) {
		t.Fatalf("cgroup.procs %q; want %s", procs, pid)
	}
	// Leave the group empty for the cleanup's rmdir.
	sleep.Process.Kill()
	sleep.Wait()
}

func readFile(p string) string {
	b, _ := os.ReadFile(p)
	return string(b)
}

func anyDir(ents []os.DirEntry) bool {
	for _, e := range ents {
		if e.IsDir() {
			return true
		}
	}
	return false
}
