package server

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// NodeMemory returns the memory this process may use: the smallest of the
// machine's RAM (/proc/meminfo MemTotal) and the memory limit of its own
// cgroup (v2 memory.max or v1 memory.limit_in_bytes), and which one it is.
func NodeMemory() (int64, string, error) {
	total, err := memTotal("/proc/meminfo")
	if err != nil {
		return 0, "", err
	}
	src := "MemTotal"
	cg, err := os.ReadFile("/proc/self/cgroup")
	if err == nil {
		if lim, where := cgroupLimit("/sys/fs/cgroup", string(cg)); lim > 0 && lim < total {
			return lim, where, nil
		}
	}
	return total, src, nil
}

// memTotal reads MemTotal (kB) from a meminfo file.
func memTotal(path string) (int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, fmt.Errorf("cannot read the machine's memory: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "MemTotal:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			if err != nil {
				return 0, fmt.Errorf("bad MemTotal line %q in %s", sc.Text(), path)
			}
			return kb << 10, nil
		}
	}
	return 0, fmt.Errorf("no MemTotal in %s", path)
}

// cgroupLimit finds the memory limit of the cgroup named in a
// /proc/self/cgroup text under root (v2: "0::/path" and memory.max; v1:
// a "memory" controller line and memory.limit_in_bytes). It walks up to
// the root, since a parent's limit bounds the child. 0: no limit found.
func cgroupLimit(root, procCgroup string) (int64, string) {
	best, where := int64(0), ""
	consider := func(file string) {
		data, err := os.ReadFile(file)
		if err != nil {
			return
		}
		s := strings.TrimSpace(string(data))
		if s == "max" {
			return
		}
		n, err := strconv.ParseInt(s, 10, 64)
		// v1 reports "no limit" as a huge page-rounded number.
		if err != nil || n <= 0 || n >= 1<<62 {
			return
		}
		if best == 0 || n < best {
			best, where = n, file
		}
	}
	walk := func(dir, file string) {
		for d := dir; ; d = filepath.Dir(d) {
			consider(filepath.Join(d, file))
			if d == "/" || d == "." || d == root || !strings.HasPrefix(d, root) {
				return
			}
		}
	}
	for _, line := range strings.Split(procCgroup, "\n") {
		parts := strings.SplitN(strings.TrimSpace(line), ":", 3)
		if len(parts) != 3 {
			continue
		}
		switch {
		case parts[0] == "0" && parts[1] == "":
			walk(filepath.Join(root, parts[2]), "memory.max")
		case hasController(parts[1], "memory"):
			walk(filepath.Join(root, "memory", parts[2]), "memory.limit_in_bytes")
		}
	}
	return best, where
}

func hasController(list, name string) bool {
	for _, c := range strings.Split(list, ",") {
		if c == name {
			return true
		}
	}
	return false
}
