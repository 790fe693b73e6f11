package native

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

// TestMoveToLeaf runs v2's "no internal processes" rule on the host's real
// cgroup v2 mount: a cgroup holding a process cannot enable a controller
// for its children (the kernel refuses), and can once moveToLeaf moved the
// process into DIR/leaf. It uses whichever controller the v2 mount offers
// (hugetlb on this v1 host; memory, cpu, pids where v2 has them), since
// the rule is the same for every domain controller.
func TestMoveToLeaf(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("moving processes between cgroups needs root")
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
	ctrls, _ := os.ReadFile(filepath.Join(mount, "cgroup.controllers"))
	if len(strings.Fields(string(ctrls))) == 0 {
		t.Skipf("the cgroup v2 mount %s offers no controller to delegate", mount)
	}
	ctrl := strings.Fields(string(ctrls))[0]
	write := func(dir, file, v string) error {
		return os.WriteFile(filepath.Join(dir, file), []byte(v), 0)
	}
	// The controller must reach the test's cgroup: enable it in the root
	// (exempt from the rule) unless it is on already, and turn it off after.
	rootSub, _ := os.ReadFile(filepath.Join(mount, "cgroup.subtree_control"))
	if !bytes.Contains(rootSub, []byte(ctrl)) {
		if err := write(mount, "cgroup.subtree_control", "+"+ctrl); err != nil {
			t.Skipf("cannot enable %s in the v2 root: %v", ctrl, err)
		}
		t.Cleanup(func() { write(mount, "cgroup.subtree_control", "-"+ctrl) })
	}
	dir := filepath.Join(mount, "warren-leaftest-"+strconv.Itoa(os.Getpid()))
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	sleep := exec.Command("sleep", "60")
	if err := sleep.Start(); err != nil {
		t.Fatal(err)
	}
	pid := sleep.Process.Pid
	t.Cleanup(func() {
		sleep.Process.Kill()
		sleep.Wait()
		write(dir, "cgroup.subtree_control", "-"+ctrl)
		syscall.Rmdir(filepath.Join(dir, selfLeaf))
		syscall.Rmdir(dir)
	})
	if err := write(dir, "cgroup.procs", strconv.Itoa(pid)); err != nil {
		t.Fatal(err)
	}
	// The rule, on this kernel.
	if err := write(dir, "cgroup.subtree_control", "+"+ctrl); !errors.Is(err, syscall.EBUSY) {
		t.Fatalf("enabling %s in a cgroup that holds a process: %v; want EBUSY", ctrl, err)
	}
	// A pid that is not in dir moves nothing and makes no leaf.
	if err := moveToLeaf(dir, os.Getpid()); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, selfLeaf)); err == nil {
		t.Fatal("moveToLeaf made a leaf for a process that was not in the cgroup")
	}
	if err := moveToLeaf(dir, pid); err != nil {
		t.Fatal(err)
	}
	own, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cgroup"))
	want := "0::/" + filepath.Base(dir) + "/" + selfLeaf + "\n"
	if !strings.Contains(string(own), want) {
		t.Fatalf("process after moveToLeaf:\n%s\nwant a line %q", own, want)
	}
	if err := write(dir, "cgroup.subtree_control", "+"+ctrl); err != nil {
		t.Fatalf("enabling %s once the process is in the leaf: %v", ctrl, err)
	}
	// Idempotent: the process is in the leaf now, not in dir.
	if err := moveToLeaf(dir, pid); err != nil {
		t.Fatal(err)
	}
}
