package workerpool

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// memGroup is one worker's memory cgroup. The native tier keeps its cgroup
// code unexported (native/cgroup.go), so this is the small part a worker
// needs: create, limit, enter, count OOM kills, kill what is left, remove.
// Memory comes from cgroup v2 when the unified hierarchy offers the memory
// controller, else from the v1 memory hierarchy (this machine).
type memGroup struct {
	v2  bool
	dir string // absolute cgroupfs directory
}

// memHierarchy finds the memory controller and this process's cgroup in it.
func memHierarchy() (v2 bool, mount, own string, err error) {
	mi, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return false, "", "", fmt.Errorf("cannot read mount table: %w", err)
	}
	self, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return false, "", "", fmt.Errorf("cannot read own cgroup: %w", err)
	}
	return parseMemHierarchy(string(mi), string(self), func(mount string) string {
		b, _ := os.ReadFile(filepath.Join(mount, "cgroup.controllers"))
		return string(b)
	})
}

// parseMemHierarchy picks the memory controller from a mount table and a
// /proc/self/cgroup: cgroup v2 when its root lists memory among its
// controllers, else the v1 hierarchy mounted with the memory option.
func parseMemHierarchy(mountinfo, self string, controllers func(mount string) string) (v2 bool, mount, own string, err error) {
	return parseHierarchy("memory", mountinfo, self, controllers)
}

// newMemGroups creates the parent cgroup name under this process's own
// memory cgroup (so any limit the server runs under still bounds its
// workers) and one child per worker, each limited to limit bytes with no
// swap. A previous run's groups of the same name are emptied and reused.
//
// On v2 a cgroup that holds processes cannot enable controllers for its
// children ("no internal processes"), so the serving process first moves
// itself into a leaf NAME-front beside the parent, as systemd delegation
// expects. v1 has no such rule.
func newMemGroups(name string, n int, limit int64) ([]*memGroup, error) {
	v2, mount, own, err := memHierarchy()
	if err != nil {
		return nil, err
	}
	base := filepath.Join(mount, own)
	parent := filepath.Join(base, name)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return nil, fmt.Errorf("cannot create cgroup %s: %w", parent, err)
	}
	if v2 {
		front := filepath.Join(base, name+"-front")
		if err := os.MkdirAll(front, 0o755); err != nil {
			return nil, fmt.Errorf("cannot create cgroup %s: %w", front, err)
		}
		if err := os.WriteFile(filepath.Join(front, "cgroup.procs"), []byte(strconv.Itoa(os.Getpid())), 0); err != nil {
			return nil, fmt.Errorf("cannot move the server into %s: %w", front, err)
		}
		for _, d := range []string{base, parent} {
			if err := os.WriteFile(filepath.Join(d, "cgroup.subtree_control"), []byte("+memory"), 0); err != nil {
				return nil, fmt.Errorf("cannot enable the memory controller in %s: %w", d, err)
			}
		}
	}
	gs := make([]*memGroup, n)
	for i := range gs {
		g := &memGroup{v2: v2, dir: filepath.Join(parent, "w"+strconv.Itoa(i))}
		if err := os.Mkdir(g.dir, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
			return nil, fmt.Errorf("cannot create cgroup %s: %w", g.dir, err)
		}
		g.killAll()
		if err := g.setLimit(limit); err != nil {
			return nil, err
		}
		gs[i] = g
	}
	return gs, nil
}

func (g *memGroup) write(file, val string) error {
	p := filepath.Join(g.dir, file)
	if err := os.WriteFile(p, []byte(val), 0); err != nil {
		return fmt.Errorf("cannot set %s=%s: %w", p, val, err)
	}
	return nil
}

func (g *memGroup) exists(file string) bool {
	_, err := os.Stat(filepath.Join(g.dir, file))
	return err == nil
}

// setLimit bounds the group's memory (RSS + page cache + kernel memory)
// and forbids swap, so a runaway worker is killed rather than swapped.
func (g *memGroup) setLimit(limit int64) error {
	v := strconv.FormatInt(limit, 10)
	if g.v2 {
		if err := g.write("memory.max", v); err != nil {
			return err
		}
		if g.exists("memory.swap.max") {
			if err := g.write("memory.swap.max", "0"); err != nil {
				return err
			}
		}
		// One OOM kills the whole worker (and its native children) at once
		// rather than leaving a half-dead process tree.
		if g.exists("memory.oom.group") {
			return g.write("memory.oom.group", "1")
		}
		return nil
	}
	if g.exists("memory.move_charge_at_immigrate") {
		g.write("memory.move_charge_at_immigrate", "3") // best effort: deprecated on new kernels
	}
	// memsw must stay >= limit_in_bytes: lower it after, raise it before.
	if g.exists("memory.memsw.limit_in_bytes") {
		cur := readInt(filepath.Join(g.dir, "memory.limit_in_bytes"))
		if limit > cur {
			if err := g.write("memory.memsw.limit_in_bytes", v); err != nil {
				return err
			}
			return g.write("memory.limit_in_bytes", v)
		}
		if err := g.write("memory.limit_in_bytes", v); err != nil {
			return err
		}
		return g.write("memory.memsw.limit_in_bytes", v)
	}
	return g.write("memory.limit_in_bytes", v)
}

// resetV2 readies a v2 group for a new worker: the last one's native
// tier moved it into wN/leaf and enabled controllers in wN (native
// moveToLeaf), and a v2 cgroup that delegates controllers can hold no
// process, so the new worker could not be born in wN. Its processes are
// gone (killAll), so its descendants go and its controllers are disabled.
func (g *memGroup) resetV2() error {
	var dirs []string
	filepath.WalkDir(g.dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.IsDir() && p != g.dir {
			dirs = append(dirs, p)
		}
		return nil
	})
	var errs []error
	for i := len(dirs) - 1; i >= 0; i-- {
		if err := syscall.Rmdir(dirs[i]); err != nil && !errors.Is(err, syscall.ENOENT) {
			errs = append(errs, fmt.Errorf("cannot remove cgroup %s: %w", dirs[i], err))
		}
	}
	b, _ := os.ReadFile(filepath.Join(g.dir, "cgroup.subtree_control"))
	if on := strings.Fields(string(b)); len(on) > 0 {
		for i := range on {
			on[i] = "-" + on[i]
		}
		errs = append(errs, g.write("cgroup.subtree_control", strings.Join(on, " ")))
	}
	return errors.Join(errs...)
}

// add moves pid into the group.
func (g *memGroup) add(pid int) error {
	return g.write("cgroup.procs", strconv.Itoa(pid))
}

// oomKills counts the processes the kernel killed over the group's limit.
func (g *memGroup) oomKills() int64 {
	file := "memory.oom_control"
	if g.v2 {
		file = "memory.events"
	}
	return statField(filepath.Join(g.dir, file), "oom_kill")
}

// usage is the group's current memory charge in bytes.
func (g *memGroup) usage() int64 {
	if g.v2 {
		return readInt(filepath.Join(g.dir, "memory.current"))
	}
	return readInt(filepath.Join(g.dir, "memory.usage_in_bytes"))
}

// killAll SIGKILLs every process left in the group and its descendants (a
// dead worker's native inits), so a restarted worker starts from nothing.
func (g *memGroup) killAll() {
	if g.v2 && g.exists("cgroup.kill") {
		g.write("cgroup.kill", "1")
	}
	for range 50 {
		pids := g.pids()
		if len(pids) == 0 {
			return
		}
		for _, p := range pids {
			syscall.Kill(p, syscall.SIGKILL)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func (g *memGroup) pids() []int {
	var out []int
	filepath.WalkDir(g.dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return nil
		}
		b, err := os.ReadFile(filepath.Join(p, "cgroup.procs"))
		if err != nil {
			return nil
		}
		for _, f := range strings.Fields(string(b)) {
			if n, err := strconv.Atoi(f); err == nil {
				out = append(out, n)
			}
		}
		return nil
	})
	return out
}

// remove empties and removes the group (children first).
func (g *memGroup) remove() error {
	g.killAll()
	var dirs []string
	filepath.WalkDir(g.dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			dirs = append(dirs, p)
		}
		return nil
	})
	var errs []error
	for i := len(dirs) - 1; i >= 0; i-- {
		if err := syscall.Rmdir(dirs[i]); err != nil && !errors.Is(err, syscall.ENOENT) {
			errs = append(errs, fmt.Errorf("cannot remove cgroup %s: %w", dirs[i], err))
		}
	}
	return errors.Join(errs...)
}

func readInt(path string) int64 {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	n, _ := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	return n
}

func statField(path, key string) int64 {
	f, err := os.Open(path)
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), " ")
		if ok && k == key {
			n, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			return n
		}
	}
	return 0
}

// nodeMemory is the memory the server may use: the machine's, or its own
// cgroup's limit when that is lower.
func nodeMemory() int64 {
	var total int64
	if f, err := os.ReadFile("/proc/meminfo"); err == nil {
		for _, line := range strings.Split(string(f), "\n") {
			if rest, ok := strings.CutPrefix(line, "MemTotal:"); ok {
				kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
				total = kb << 10
			}
		}
	}
	if v2, mount, own, err := memHierarchy(); err == nil {
		file := "memory.limit_in_bytes"
		if v2 {
			file = "memory.max" // "max" reads as 0: no limit
		}
		if lim := readInt(filepath.Join(mount, own, file)); lim > 0 && lim < total {
			total = lim
		}
	}
	return total
}
