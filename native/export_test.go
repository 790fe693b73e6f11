package native

import "path/filepath"

// HostState exposes, for leak tests, what a workspace holds on the host:
// its init's host pid, its cgroup directories and its run directory.
func (w *Workspace) HostState() (initPid int, cgroupDirs []string, dir string) {
	if w.ip != nil {
		initPid = w.ip.cmd.Process.Pid
	}
	for _, h := range w.r.cg.hier {
		cgroupDirs = append(cgroupDirs, filepath.Join(h.parent, w.cgRel))
	}
	return initPid, cgroupDirs, w.dir
}

// CgroupParents lists warren's parent cgroup directories.
func (r *Runtime) CgroupParents() []string {
	var out []string
	for _, h := range r.cg.hier {
		out = append(out, h.parent)
	}
	return out
}

// SyncIn runs the pre-exec sync alone (for benchmarks).
func (w *Workspace) SyncIn() error { return w.sy.syncIn(w) }
