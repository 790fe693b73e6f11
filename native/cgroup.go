package native

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Layout, below warren's parent cgroup in every hierarchy used:
//
//	wN/        one workspace: no limits; Close kills and removes the tree
//	wN/init    its namespace init, outside the sandbox's limits: charged
//	           none of its memory or pids, so never its OOM victim
//	wN/sb/     the sandbox: the workspace's memory, CPU and pids limits
//	wN/sb/s    where an exec's processes live in hierarchies where the
//	           exec has no cgroup of its own
//	wN/sb/eM   one exec: always for CPU accounting (and kills), in the
//	           memory/cpu/pids hierarchies only when it sets its own limit
//
// On cgroup v2 (one hierarchy) processes sit only in leaves (init, s, eM)
// and wN and sb delegate memory, cpu and pids to their children.
//
// cgroups places warren's processes in cgroups on whatever the host offers:
// each controller comes from cgroup v2 when the unified hierarchy has it,
// else from its v1 hierarchy. This machine has memory/cpu/pids on v1 only
// (v2 carries hugetlb), most current distributions have everything on v2.
type cgroups struct {
	hier []*hierarchy // hierarchies warren uses, each with its parent dir
	mem  *hierarchy   // memory limit + OOM counter
	cpu  *hierarchy   // CPU quota
	acct *hierarchy   // CPU time used
	pids *hierarchy   // pids limit
	frz  *hierarchy   // v1 freezer, used to stop a fork loop while killing
}

type hierarchy struct {
	v2     bool
	mount  string   // where the hierarchy is mounted
	ctrls  []string // v1 controllers of this mount
	parent string   // absolute dir of warren's parent cgroup
}

func (h *hierarchy) String() string {
	if h.v2 {
		return "v2:" + h.mount
	}
	return "v1(" + strings.Join(h.ctrls, ",") + "):" + h.mount
}

// detectCgroups finds the controllers and creates warren's parent cgroup,
// named name, under this process's own cgroup in every hierarchy used, so
// whatever limits warren itself runs under still bound the sandboxes.
func detectCgroups(name string) (*cgroups, error) {
	mi, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return nil, fmt.Errorf("cannot read mount table: %w", err)
	}
	self, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return nil, fmt.Errorf("cannot read own cgroup: %w", err)
	}
	cg, err := parseCgroups(mi, self, name, func(mount string) []string {
		b, _ := os.ReadFile(filepath.Join(mount, "cgroup.controllers"))
		return strings.Fields(string(b))
	})
	if err != nil {
		return nil, err
	}
	for _, h := range cg.hier {
		if err := os.MkdirAll(h.parent, 0o755); err != nil {
			return nil, fmt.Errorf("cannot create cgroup %s: %w", h.parent, err)
		}
		if h.v2 {
			// v2's "no internal processes" rule: a cgroup that holds a
			// process cannot enable controllers for its children, and
			// this process sits in the cgroup warren's parent is made
			// under (a worker in its memory group): move it into a leaf
			// of its own first (the root cgroup is exempt).
			if own := filepath.Dir(h.parent); filepath.Clean(own) != filepath.Clean(h.mount) {
				if err := moveToLeaf(own, os.Getpid()); err != nil {
					return nil, err
				}
			}
			if err := enableV2(h, filepath.Dir(h.parent), cg); err != nil {
				return nil, err
			}
			if err := enableV2(h, h.parent, cg); err != nil {
				return nil, err
			}
		}
	}
	return cg, nil
}

// parseCgroups picks the hierarchies from a mount table and this process's
// /proc/self/cgroup; v2ctrls lists the controllers a v2 mount offers.
func parseCgroups(mi, self []byte, name string, v2ctrls func(mount string) []string) (*cgroups, error) {
	selfPath := map[string]string{} // controller list ("" for v2) -> path
	for _, line := range strings.Split(strings.TrimSpace(string(self)), "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) == 3 {
			selfPath[parts[1]] = parts[2]
		}
	}
	var v2 *hierarchy
	v1 := map[string]*hierarchy{} // controller -> hierarchy
	for _, line := range strings.Split(string(mi), "\n") {
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
		fstype, opts, mp := f[sep+1], f[sep+3], unescape(f[4])
		switch fstype {
		case "cgroup2":
			if v2 == nil {
				v2 = &hierarchy{v2: true, mount: mp}
			}
		case "cgroup":
			h := &hierarchy{mount: mp}
			for _, o := range strings.Split(opts, ",") {
				switch o {
				case "memory", "cpu", "cpuacct", "pids", "freezer":
					h.ctrls = append(h.ctrls, o)
				}
			}
			for _, c := range h.ctrls {
				if v1[c] == nil {
					v1[c] = h
				}
			}
		}
	}
	var ctrls2 []string
	if v2 != nil {
		ctrls2 = v2ctrls(v2.mount)
	}
	has := func(c string) bool {
		for _, x := range ctrls2 {
			if x == c {
				return true
			}
		}
		return false
	}
	cg := &cgroups{}
	pick := func(ctrl string) *hierarchy {
		if v2 != nil && has(ctrl) {
			return v2
		}
		return v1[ctrl]
	}
	cg.mem, cg.cpu, cg.pids = pick("memory"), pick("cpu"), pick("pids")
	var missing []string
	for c, h := range map[string]*hierarchy{"memory": cg.mem, "cpu": cg.cpu, "pids": cg.pids} {
		if h == nil {
			missing = append(missing, c)
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("cgroup controllers %s are in neither cgroup v2 nor a v1 hierarchy", strings.Join(missing, ","))
	}
	// CPU time: v2's cpu.stat exists in every v2 cgroup; on v1 it needs cpuacct.
	switch {
	case cg.cpu.v2:
		cg.acct = v2
	case v1["cpuacct"] != nil:
		cg.acct = v1["cpuacct"]
	case v2 != nil:
		cg.acct = v2
	default:
		return nil, errors.New("no cgroup reports CPU time (neither cpuacct on v1 nor cgroup v2)")
	}
	if !cg.mem.v2 {
		cg.frz = v1["freezer"]
	}
	for _, h := range []*hierarchy{cg.mem, cg.cpu, cg.acct, cg.pids, cg.frz} {
		if h == nil {
			continue
		}
		dup := false
		for _, x := range cg.hier {
			if x == h {
				dup = true
			}
		}
		if dup {
			continue
		}
		var own string
		if h.v2 {
			own = selfPath[""]
		} else {
			for k, p := range selfPath {
				for _, c := range strings.Split(k, ",") {
					if c == h.ctrls[0] {
						own = p
					}
				}
			}
		}
		h.parent = filepath.Join(h.mount, own, name)
		cg.hier = append(cg.hier, h)
	}
	return cg, nil
}

// selfLeaf is the v2 leaf moveToLeaf puts the process in.
const selfLeaf = "leaf"

// moveToLeaf moves process pid (all its threads) from v2 cgroup dir into
// dir/leaf when dir holds it, so dir can delegate controllers. Other
// processes in dir are not ours to move: enableV2 then names the problem.
func moveToLeaf(dir string, pid int) error {
	b, err := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
	if err != nil {
		return fmt.Errorf("cannot read the processes of cgroup %s: %w", dir, err)
	}
	if !slices.Contains(strings.Fields(string(b)), strconv.Itoa(pid)) {
		return nil
	}
	leaf := filepath.Join(dir, selfLeaf)
	if err := os.MkdirAll(leaf, 0o755); err != nil {
		return fmt.Errorf("cannot create cgroup %s: %w", leaf, err)
	}
	if err := os.WriteFile(filepath.Join(leaf, "cgroup.procs"), []byte(strconv.Itoa(pid)), 0); err != nil {
		return fmt.Errorf("cannot move process %d into cgroup %s (v2 lets a cgroup that holds processes delegate no controller): %w", pid, leaf, err)
	}
	return nil
}

// enableV2 turns on, in dir's children, the controllers warren takes from v2.
func enableV2(h *hierarchy, dir string, cg *cgroups) error {
	var want []string
	if cg.mem == h {
		want = append(want, "+memory")
	}
	if cg.cpu == h {
		want = append(want, "+cpu")
	}
	if cg.pids == h {
		want = append(want, "+pids")
	}
	if len(want) == 0 {
		return nil
	}
	if err := os.WriteFile(filepath.Join(dir, "cgroup.subtree_control"), []byte(strings.Join(want, " ")), 0); err != nil {
		return fmt.Errorf("cannot enable %s in %s (a v2 cgroup that holds processes cannot delegate controllers; run warren in a leaf of its own): %w", strings.Join(want, " "), dir, err)
	}
	return nil
}

func unescape(s string) string { return strings.ReplaceAll(s, `\040`, " ") }

func (cg *cgroups) String() string {
	var parts []string
	for _, h := range cg.hier {
		parts = append(parts, h.String())
	}
	return strings.Join(parts, " ")
}

// create makes the cgroup rel (relative to warren's parent) in every
// hierarchy; v2 groups that will have children get their controllers enabled.
func (cg *cgroups) create(rel string, parentOfOthers bool) error {
	return cg.createIn(rel, cg.hier, parentOfOthers)
}

// execHierarchies is where an exec's own cgroup is made: CPU accounting
// always (it also lists the exec's processes for a kill), plus the
// hierarchies of the limits the exec sets for itself. Everything else it
// shares with its workspace, which saves ~0.4 ms of cgroupfs work per exec
// on v1 (BenchmarkCgroupCycle: 0.5 ms for all five hierarchies).
func (cg *cgroups) execHierarchies(own Limits) []*hierarchy {
	hs := []*hierarchy{cg.acct}
	add := func(h *hierarchy) {
		for _, x := range hs {
			if x == h {
				return
			}
		}
		hs = append(hs, h)
	}
	if own.Memory > 0 {
		add(cg.mem)
	}
	if own.CPUs > 0 {
		add(cg.cpu)
	}
	if own.Pids > 0 {
		add(cg.pids)
	}
	return hs
}

// execProcsFiles opens, for every hierarchy in cg.hier order, cgroup.procs
// of rel where the exec has a cgroup of its own (hs) and of shared
// elsewhere: the init enters them all before it forks the command.
func (cg *cgroups) execProcsFiles(rel, shared string, hs []*hierarchy) ([]*os.File, error) {
	var fs []*os.File
	for _, h := range cg.hier {
		target := shared
		for _, x := range hs {
			if x == h {
				target = rel
			}
		}
		f, err := os.OpenFile(filepath.Join(h.parent, target, "cgroup.procs"), os.O_WRONLY, 0)
		if err != nil {
			closeAll(fs)
			return nil, fmt.Errorf("cannot open cgroup.procs of %s: %w", target, err)
		}
		fs = append(fs, f)
	}
	return fs, nil
}

func (cg *cgroups) createIn(rel string, hs []*hierarchy, parentOfOthers bool) error {
	for _, h := range hs {
		dir := filepath.Join(h.parent, rel)
		if err := os.Mkdir(dir, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
			return fmt.Errorf("cannot create cgroup %s: %w", dir, err)
		}
		if h.v2 && parentOfOthers {
			if err := enableV2(h, dir, cg); err != nil {
				return err
			}
		}
	}
	return nil
}

// setLimits writes lim into cgroup rel; zero fields stay unlimited.
func (cg *cgroups) setLimits(rel string, lim Limits) error {
	w := func(h *hierarchy, file, val string) error {
		p := filepath.Join(h.parent, rel, file)
		if err := os.WriteFile(p, []byte(val), 0); err != nil {
			return fmt.Errorf("cannot set %s=%s: %w", p, val, err)
		}
		return nil
	}
	if lim.Memory > 0 {
		v := strconv.FormatInt(lim.Memory, 10)
		if cg.mem.v2 {
			if err := w(cg.mem, "memory.max", v); err != nil {
				return err
			}
			// No swap: the limit is on memory the sandbox can touch at all.
			if _, err := os.Stat(filepath.Join(cg.mem.parent, rel, "memory.swap.max")); err == nil {
				if err := w(cg.mem, "memory.swap.max", "0"); err != nil {
					return err
				}
			}
		} else {
			if err := w(cg.mem, "memory.limit_in_bytes", v); err != nil {
				return err
			}
			if _, err := os.Stat(filepath.Join(cg.mem.parent, rel, "memory.memsw.limit_in_bytes")); err == nil {
				if err := w(cg.mem, "memory.memsw.limit_in_bytes", v); err != nil {
					return err
				}
			}
		}
	}
	if lim.CPUs > 0 {
		const period = 100000
		quota := int64(lim.CPUs * period)
		if quota < 1000 {
			quota = 1000
		}
		if cg.cpu.v2 {
			if err := w(cg.cpu, "cpu.max", fmt.Sprintf("%d %d", quota, period)); err != nil {
				return err
			}
		} else {
			if err := w(cg.cpu, "cpu.cfs_period_us", strconv.Itoa(period)); err != nil {
				return err
			}
			if err := w(cg.cpu, "cpu.cfs_quota_us", strconv.FormatInt(quota, 10)); err != nil {
				return err
			}
		}
	}
	if lim.Pids > 0 {
		if err := w(cg.pids, "pids.max", strconv.FormatInt(lim.Pids, 10)); err != nil {
			return err
		}
	}
	return nil
}

// procsFiles opens cgroup.procs of rel in every hierarchy, for writing: the
// init writes a new child's pid to them to place it (the kernel checks the
// opener's credentials, so the fds work inside the user namespace).
func (cg *cgroups) procsFiles(rel string) ([]*os.File, error) {
	return cg.procsFilesIn(rel, cg.hier)
}

func (cg *cgroups) procsFilesIn(rel string, hs []*hierarchy) ([]*os.File, error) {
	var fs []*os.File
	for _, h := range hs {
		f, err := os.OpenFile(filepath.Join(h.parent, rel, "cgroup.procs"), os.O_WRONLY, 0)
		if err != nil {
			closeAll(fs)
			return nil, fmt.Errorf("cannot open cgroup.procs of %s: %w", rel, err)
		}
		fs = append(fs, f)
	}
	return fs, nil
}

func closeAll(fs []*os.File) {
	for _, f := range fs {
		f.Close()
	}
}

// addPid moves host pid into rel in every hierarchy.
func (cg *cgroups) addPid(rel string, pid int) error {
	for _, h := range cg.hier {
		p := filepath.Join(h.parent, rel, "cgroup.procs")
		if err := os.WriteFile(p, []byte(strconv.Itoa(pid)), 0); err != nil {
			return fmt.Errorf("cannot move pid %d into %s: %w", pid, p, err)
		}
	}
	return nil
}

// pidsOf lists the processes in rel and its descendants, from the CPU
// accounting hierarchy, which holds every cgroup warren makes.
func (cg *cgroups) pidsOf(rel string) []int {
	var out []int
	root := filepath.Join(cg.acct.parent, rel)
	filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return nil
		}
		b, err := os.ReadFile(filepath.Join(p, "cgroup.procs"))
		if err != nil {
			return nil
		}
		for _, f := range bytes.Fields(b) {
			if n, err := strconv.Atoi(string(f)); err == nil {
				out = append(out, n)
			}
		}
		return nil
	})
	return out
}

// kill SIGKILLs every process in rel and below and waits until they are gone.
func (cg *cgroups) kill(rel string) error {
	if cg.mem.v2 {
		p := filepath.Join(cg.mem.parent, rel, "cgroup.kill")
		if err := os.WriteFile(p, []byte("1"), 0); err == nil {
			return cg.waitEmpty(rel, 5*time.Second)
		}
	}
	// v1: freeze so a fork loop cannot outrun the kills, kill, thaw so the
	// kills are delivered.
	var frz string
	if cg.frz != nil {
		frz = filepath.Join(cg.frz.parent, rel, "freezer.state")
		if os.WriteFile(frz, []byte("FROZEN"), 0) != nil {
			frz = ""
		}
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		pids := cg.pidsOf(rel)
		if len(pids) == 0 {
			break
		}
		for _, p := range pids {
			syscall.Kill(p, syscall.SIGKILL)
		}
		if frz != "" {
			os.WriteFile(frz, []byte("THAWED"), 0)
			frz = ""
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("processes %v survive SIGKILL in cgroup %s", pids, rel)
		}
		time.Sleep(time.Millisecond)
	}
	if frz != "" {
		os.WriteFile(frz, []byte("THAWED"), 0)
	}
	return nil
}

func (cg *cgroups) waitEmpty(rel string, d time.Duration) error {
	deadline := time.Now().Add(d)
	for len(cg.pidsOf(rel)) > 0 {
		if time.Now().After(deadline) {
			return fmt.Errorf("cgroup %s still has processes after %v", rel, d)
		}
		time.Sleep(time.Millisecond)
	}
	return nil
}

// remove deletes rel and its descendants from every hierarchy (they must be
// empty of processes).
func (cg *cgroups) remove(rel string) error {
	var errs []error
	for _, h := range cg.hier {
		if err := rmdirTree(filepath.Join(h.parent, rel)); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// rmdirTree removes a cgroup directory bottom-up (cgroupfs only allows rmdir).
func rmdirTree(dir string) error {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("cannot list cgroup %s: %w", dir, err)
	}
	for _, e := range ents {
		if e.IsDir() {
			if err := rmdirTree(filepath.Join(dir, e.Name())); err != nil {
				return err
			}
		}
	}
	var err2 error
	for i := 0; i < 100; i++ {
		// A just-killed cgroup can report EBUSY for a moment.
		if err2 = syscall.Rmdir(dir); err2 == nil || errors.Is(err2, syscall.ENOENT) {
			return nil
		}
		if !errors.Is(err2, syscall.EBUSY) {
			break
		}
		time.Sleep(time.Millisecond)
	}
	return fmt.Errorf("cannot remove cgroup %s: %w", dir, err2)
}

// children lists the cgroups directly under warren's parent.
func (cg *cgroups) children() []string {
	seen := map[string]bool{}
	var out []string
	for _, h := range cg.hier {
		ents, _ := os.ReadDir(h.parent)
		for _, e := range ents {
			if e.IsDir() && !seen[e.Name()] {
				seen[e.Name()] = true
				out = append(out, e.Name())
			}
		}
	}
	return out
}

// cpuTime reports the CPU time used by rel and its descendants.
func (cg *cgroups) cpuTime(rel string) time.Duration {
	dir := filepath.Join(cg.acct.parent, rel)
	if cg.acct.v2 {
		return time.Duration(statField(filepath.Join(dir, "cpu.stat"), "usage_usec")) * time.Microsecond
	}
	b, err := os.ReadFile(filepath.Join(dir, "cpuacct.usage"))
	if err != nil {
		return 0
	}
	n, _ := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	return time.Duration(n)
}

// oomKills reports how many processes the kernel OOM-killed in rel and
// below (v1 counts a kill only in the victim's own cgroup, so sum the tree;
// v2's memory.events is hierarchical already).
func (cg *cgroups) oomKills(rel string) int64 {
	dir := filepath.Join(cg.mem.parent, rel)
	if cg.mem.v2 {
		return statField(filepath.Join(dir, "memory.events"), "oom_kill")
	}
	var n int64
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			n += statField(filepath.Join(p, "memory.oom_control"), "oom_kill")
		}
		return nil
	})
	return n
}

// pidsRefused reports how many forks in rel and below a pids limit
// refused. The kernel counts a refusal (the "max" line) in the cgroup of
// the process that forked, not where the limit is: v1 and v2 before 6.12
// in pids.events, v2 since in pids.events.local (pids.events became
// hierarchical there), so the subtree's local counts are summed.
func (cg *cgroups) pidsRefused(rel string) int64 {
	root := filepath.Join(cg.pids.parent, rel)
	file := "pids.events"
	if cg.pids.v2 {
		if _, err := os.Stat(filepath.Join(root, "pids.events.local")); err == nil {
			file = "pids.events.local"
		}
	}
	var n int64
	filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			n += statField(filepath.Join(p, file), "max")
		}
		return nil
	})
	return n
}

// statField reads "key value" lines and returns key's value (0 if absent).
func statField(file, key string) int64 {
	f, err := os.Open(file)
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
