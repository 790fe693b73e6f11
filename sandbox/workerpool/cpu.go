package workerpool

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// CPU weights: each worker in a cpu cgroup of its own, so a worker whose
// sandboxes spin on every scheduler thread it has (and fork native
// children) weighs as one entity against the front and the other workers,
// however many threads it runs. Weights only matter under
// contention; an idle front or worker costs nothing.
//
// The shares are v1's (1024 = one ordinary task); v2's cpu.weight is the
// same ratio on its scale (100 = one task).
const (
	// workerShares: each worker weighs as one ordinary task, so a busy
	// worker takes no more from the host than one busy process would,
	// and a waking worker gets a sleeper's credit against a busy one.
	workerShares = 1024
	// frontShares (v2, where the front must sit in a leaf of its own):
	// the front outranks any busy worker 4:1.
	frontShares = 4 * workerShares
)

// cpuGroup is one process's cpu cgroup.
type cpuGroup struct {
	v2  bool
	dir string
}

// cpuGroups are the workers' cpu cgroups and, on v2, the front's.
type cpuGroups struct {
	front   *cpuGroup // v2 only
	workers []*cpuGroup
	made    []string
}

// cpuHierarchy finds the cpu controller and this process's cgroup in it:
// cgroup v2 when its root lists cpu, else the v1 hierarchy mounted with the
// cpu option (cpuacct and cpuset are other controllers).
func cpuHierarchy() (v2 bool, mount, own string, err error) {
	mi, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return false, "", "", fmt.Errorf("cannot read mount table: %w", err)
	}
	self, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return false, "", "", fmt.Errorf("cannot read own cgroup: %w", err)
	}
	return parseHierarchy("cpu", string(mi), string(self), func(mount string) string {
		b, _ := os.ReadFile(filepath.Join(mount, "cgroup.controllers"))
		return string(b)
	})
}

// newCPUGroups puts the workers (and on v2 the front) in cpu groups with
// their weights. On v1 the workers' groups are siblings directly under
// this process's own cgroup (NAME-wN): a common parent would stay runnable
// while one worker spins, and a waking worker would then wait for the
// parent's turn behind every other task on the host. The front stays
// where it is on v1: each of its runnable threads already weighs as much
// as a whole worker, and a group of its own bought no measurable
// isolation while it cost ~35 % more CPU per exec through the workers
// (cross-group wake-ups on every hop; DESIGN.md). On v2 the memory groups
// fix the tree (NAME-front beside NAME/wN, the front moved in by
// newMemGroups or here); NAME then weighs as the n workers would as
// siblings, and the front 4× one worker.
func newCPUGroups(name string, n int) (*cpuGroups, error) {
	v2, mount, own, err := cpuHierarchy()
	if err != nil {
		return nil, err
	}
	base := filepath.Join(mount, own)
	cg := &cpuGroups{}
	mk := func(dir string) error {
		if err := os.Mkdir(dir, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
			return fmt.Errorf("cannot create cgroup %s: %w", dir, err)
		}
		cg.made = append(cg.made, dir)
		return nil
	}
	if v2 {
		parent := filepath.Join(base, name)
		cg.front = &cpuGroup{v2: true, dir: filepath.Join(base, name+"-front")}
		for _, d := range []string{cg.front.dir, parent} {
			if err := mk(d); err != nil {
				return nil, err
			}
		}
		if err := cg.front.add(os.Getpid()); err != nil {
			return nil, err
		}
		for _, d := range []string{base, parent} {
			if err := os.WriteFile(filepath.Join(d, "cgroup.subtree_control"), []byte("+cpu"), 0); err != nil {
				return nil, fmt.Errorf("cannot enable the cpu controller in %s: %w", d, err)
			}
		}
		if err := (&cpuGroup{v2: true, dir: parent}).setShares(min(n*workerShares, 262144)); err != nil {
			return nil, err
		}
		for i := range n {
			cg.workers = append(cg.workers, &cpuGroup{v2: true, dir: filepath.Join(parent, "w"+strconv.Itoa(i))})
		}
	} else {
		sweepStale(base)
		for i := range n {
			cg.workers = append(cg.workers, &cpuGroup{dir: filepath.Join(base, name+"-w"+strconv.Itoa(i))})
		}
	}
	for _, g := range cg.workers {
		if err := mk(g.dir); err != nil {
			return nil, err
		}
		if err := g.setShares(workerShares); err != nil {
			return nil, err
		}
	}
	if v2 {
		if err := cg.front.setShares(frontShares); err != nil {
			return nil, err
		}
	}
	return cg, nil
}

// sweepStale removes the empty cpu groups that fronts killed with SIGKILL
// left beside the server (v1: nothing else removes them). A group that
// holds a process or a child cgroup cannot be removed and stays; a live
// pool's worker group emptied by a restart is made again by ensure.
func sweepStale(base string) {
	ents, _ := os.ReadDir(base)
	for _, e := range ents {
		if e.IsDir() && strings.HasPrefix(e.Name(), "warren-workers-") {
			syscall.Rmdir(filepath.Join(base, e.Name()))
		}
	}
}

// ensure (re)makes the group with its weight: another node's sweep may
// have removed it while its worker was down.
func (g *cpuGroup) ensure(shares int) error {
	if err := os.Mkdir(g.dir, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
		return fmt.Errorf("cannot create cgroup %s: %w", g.dir, err)
	}
	return g.setShares(shares)
}

// setShares writes a v1 share, or its v2 weight (1024 shares = weight 100).
func (g *cpuGroup) setShares(shares int) error {
	file, v := "cpu.shares", shares
	if g.v2 {
		file, v = "cpu.weight", max(1, min(10000, shares*100/1024))
	}
	p := filepath.Join(g.dir, file)
	if err := os.WriteFile(p, []byte(strconv.Itoa(v)), 0); err != nil {
		return fmt.Errorf("cannot set %s=%d: %w", p, v, err)
	}
	return nil
}

// add moves pid (all its threads) into the group.
func (g *cpuGroup) add(pid int) error {
	p := filepath.Join(g.dir, "cgroup.procs")
	if err := os.WriteFile(p, []byte(strconv.Itoa(pid)), 0); err != nil {
		return fmt.Errorf("cannot move process %d into %s: %w", pid, g.dir, err)
	}
	return nil
}

// close moves the front back where it came from (v1) and removes the
// groups this pool made that are empty; a worker's native children are
// gone by then (the memory group's killAll).
func (cg *cpuGroups) close() error {
	var errs []error
	for i := len(cg.made) - 1; i >= 0; i-- {
		d := cg.made[i]
		if cg.front != nil && d == cg.front.dir {
			continue // v2: the front stays in its leaf (it cannot be in NAME's parent)
		}
		if err := rmdirChildren(d); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// rmdirChildren removes dir and any empty cgroups below it (a native
// runtime's parent left behind by a killed worker).
func rmdirChildren(dir string) error {
	var dirs []string
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			dirs = append(dirs, p)
		}
		return nil
	})
	for i := len(dirs) - 1; i >= 0; i-- {
		if err := syscall.Rmdir(dirs[i]); err != nil && !errors.Is(err, syscall.ENOENT) {
			return fmt.Errorf("cannot remove cgroup %s: %w", dirs[i], err)
		}
	}
	return nil
}

// parseHierarchy picks controller ctrl from a mount table and a
// /proc/self/cgroup: cgroup v2 when its root lists ctrl among its
// controllers, else the v1 hierarchy mounted with the ctrl option.
func parseHierarchy(ctrl, mountinfo, self string, controllers func(mount string) string) (v2 bool, mount, own string, err error) {
	var v2mount, v1mount string
	for _, line := range strings.Split(mountinfo, "\n") {
		f := strings.Fields(line)
		sep := -1
		for i, s := range f {
			if s == "-" {
				sep = i
				break
			}
		}
		if sep < 0 || len(f) < sep+4 {
			continue
		}
		fstype, opts, mp := f[sep+1], f[sep+3], strings.ReplaceAll(f[4], `\040`, " ")
		switch {
		case fstype == "cgroup2" && v2mount == "":
			for _, c := range strings.Fields(controllers(mp)) {
				if c == ctrl {
					v2mount = mp
				}
			}
		case fstype == "cgroup" && v1mount == "":
			for _, o := range strings.Split(opts, ",") {
				if o == ctrl {
					v1mount = mp
				}
			}
		}
	}
	for _, line := range strings.Split(strings.TrimSpace(self), "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 {
			continue
		}
		if v2mount != "" && parts[1] == "" {
			return true, v2mount, parts[2], nil
		}
		if v2mount == "" && v1mount != "" {
			for _, c := range strings.Split(parts[1], ",") {
				if c == ctrl {
					return false, v1mount, parts[2], nil
				}
			}
		}
	}
	return false, "", "", fmt.Errorf("no %s cgroup controller (neither cgroup v2 with %s nor a v1 %s hierarchy)", ctrl, ctrl, ctrl)
}
