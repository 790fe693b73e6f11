package main

import (
	"fmt"
	"time"

	"github.com/containerd/errdefs"
	"github.com/spf13/pflag"
	"github.com/warren-sandbox/warren/api"
)

// limitFlags are the limit flags `warren run` and `warren sandbox create`
// share: the same names, the same defaults (api.DefaultLimits, listed in
// docs/limits.md), so a limit means one thing wherever it is set.
type limitFlags struct {
	timeout              time.Duration
	output, memory, disk string
	inodes, jobs, pids   int64
	cpus                 float64
	noNative             bool
}

// register adds the flags to fs.
func (l *limitFlags) register(fs *pflag.FlagSet) {
	d := api.DefaultLimits
	fs.DurationVar(&l.timeout, "timeout", 0, fmt.Sprintf("wall-time limit of one exec (default %s)", d.Timeout.Std()))
	fs.StringVar(&l.output, "max-output", "", fmt.Sprintf("stdout+stderr limit of one exec, e.g. 16M (default %s)", sizeString(d.MaxOutputBytes)))
	fs.StringVar(&l.memory, "memory", "", fmt.Sprintf("memory budget of the sandbox: its shells, resident commands and native processes (killed over it), e.g. 512M (default %s)", sizeString(d.MaxMemoryBytes)))
	fs.StringVar(&l.disk, "disk", "", fmt.Sprintf("disk quota of the sandbox's writes, e.g. 2G (default %s)", sizeString(d.DiskBytes)))
	fs.Int64Var(&l.inodes, "disk-inodes", 0, fmt.Sprintf("most files and directories the sandbox may create (default %d)", d.DiskInodes))
	fs.Int64Var(&l.jobs, "jobs", 0, fmt.Sprintf("most background jobs and pipeline stages of one session at once (default %d)", d.Jobs))
	fs.Float64Var(&l.cpus, "cpus", 0, fmt.Sprintf("CPU quota of native processes in cores, e.g. 0.5 (default %g)", d.CPUs))
	fs.Int64Var(&l.pids, "pids", 0, fmt.Sprintf("most processes and threads of native processes (default %d)", d.Pids))
	fs.BoolVar(&l.noNative, "no-native", false, "refuse to run ELF files (no native tier)")
}

// limits returns the limits the flags ask for; zero fields are left for
// the defaults to fill.
func (l *limitFlags) limits() (api.Limits, error) {
	var out api.Limits
	if l.timeout < 0 || l.inodes < 0 || l.jobs < 0 || l.pids < 0 || l.cpus < 0 {
		return out, api.Errorf(errdefs.ErrInvalidArgument, "--timeout, --disk-inodes, --jobs, --pids and --cpus must not be negative")
	}
	out.Timeout = api.Duration(l.timeout)
	out.DiskInodes, out.Jobs, out.Pids, out.CPUs = l.inodes, l.jobs, l.pids, l.cpus
	for _, f := range []struct {
		name string
		v    string
		dst  *int64
	}{{"--max-output", l.output, &out.MaxOutputBytes}, {"--memory", l.memory, &out.MaxMemoryBytes}, {"--disk", l.disk, &out.DiskBytes}} {
		if f.v == "" {
			continue
		}
		n, err := parseSize(f.v)
		if err != nil {
			return out, api.Errorf(errdefs.ErrInvalidArgument, "%s: %v", f.name, err)
		}
		*f.dst = n
	}
	if l.noNative {
		off := false
		out.Native = &off
	}
	return out, nil
}

// sizeString prints a byte count the way parseSize reads it.
func sizeString(n int64) string {
	for _, u := range []struct {
		s string
		v int64
	}{{"T", 1 << 40}, {"G", 1 << 30}, {"M", 1 << 20}, {"K", 1 << 10}} {
		if n >= u.v && n%u.v == 0 {
			return fmt.Sprintf("%d%s", n/u.v, u.s)
		}
	}
	return fmt.Sprint(n)
}
