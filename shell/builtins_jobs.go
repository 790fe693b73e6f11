package shell

// Builtins for signals and jobs: trap, kill, wait, jobs.

import (
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
)

// otherSigs are signals accepted by trap and kill beyond the numbered ones;
// their default action in a sandbox is to do nothing.
var otherSigs = []string{"STKFLT", "CHLD", "CONT", "STOP", "TSTP", "TTIN", "TTOU", "URG", "XCPU", "XFSZ", "VTALRM", "PROF", "WINCH", "IO", "PWR", "SYS"}

var sigNames = []string{"EXIT", "HUP", "INT", "QUIT", "ILL", "TRAP", "ABRT", "BUS", "FPE", "KILL", "USR1", "SEGV", "USR2", "PIPE", "ALRM", "TERM"}

func normSig(s string) (string, bool) {
	u := strings.ToUpper(strings.TrimPrefix(strings.ToUpper(s), "SIG"))
	switch u {
	case "ERR", "DEBUG", "RETURN", "EXIT":
		return u, true
	}
	if n, err := strconv.Atoi(s); err == nil {
		if n >= 0 && n < len(sigNames) {
			return sigNames[n], true
		}
		return "", false
	}
	if slices.Contains(sigNames, u) || slices.Contains(otherSigs, u) {
		return u, true
	}
	return "", false
}

func biTrap(r *runner, args []string) int {
	args = args[1:]
	if len(args) > 0 && args[0] == "--" {
		args = args[1:]
	}
	if len(args) == 0 || args[0] == "-p" {
		traps := r.traps
		if r.parentTraps != nil {
			traps = r.parentTraps
		}
		names := make([]string, 0, len(traps))
		for k := range traps {
			names = append(names, k)
		}
		sort.Strings(names)
		if len(args) > 1 {
			names = nil
			for _, s := range args[1:] {
				if n, ok := normSig(s); ok {
					if _, set := traps[n]; set {
						names = append(names, n)
					}
				}
			}
		}
		for _, n := range names {
			sig := n
			if n != "EXIT" && n != "ERR" && n != "DEBUG" && n != "RETURN" {
				sig = "SIG" + n
			}
			r.outf("trap -- %s %s\n", "'"+strings.ReplaceAll(traps[n], "'", `'\''`)+"'", sig)
		}
		return 0
	}
	if args[0] == "-l" {
		for i, s := range sigNames[1:] {
			r.outf("%2d) SIG%s\n", i+1, s)
		}
		return 0
	}
	action := args[0]
	sigs := args[1:]
	reset := false
	if len(args) == 1 {
		reset = true
		sigs = args
	} else if action == "-" {
		reset = true
	} else if _, err := strconv.Atoi(action); err == nil {
		reset = true
		sigs = args
	}
	st := 0
	r.own()
	r.parentTraps = nil
	for _, s := range sigs {
		n, ok := normSig(s)
		if !ok {
			r.errf("trap: %s: invalid signal specification", s)
			st = 1
			continue
		}
		if reset {
			delete(r.traps, n)
		} else {
			if r.traps == nil {
				r.traps = map[string]string{}
			}
			r.traps[n] = action
			if n == "RETURN" {
				r.returnTrapSets++
			}
		}
	}
	return st
}

func (r *runner) findJob(spec string) *job {
	if strings.HasPrefix(spec, "%") {
		s := spec[1:]
		if s == "" || s == "%" || s == "+" {
			if len(r.jobs) > 0 {
				return r.jobs[len(r.jobs)-1]
			}
			return nil
		}
		if s == "-" {
			if len(r.jobs) > 1 {
				return r.jobs[len(r.jobs)-2]
			}
			return nil
		}
		n, _ := strconv.Atoi(s)
		for _, j := range r.jobs {
			if j.id == n {
				return j
			}
		}
		return nil
	}
	n, _ := strconv.Atoi(spec)
	for _, j := range r.jobs {
		if j.pid == n {
			return j
		}
	}
	return nil
}

func biWait(r *runner, args []string) int {
	args = args[1:]
	waitN := false
	for len(args) > 0 && strings.HasPrefix(args[0], "-") {
		if args[0] == "-n" {
			waitN = true
		}
		args = args[1:]
	}
	if waitN {
		if len(r.jobs) == 0 {
			return 127
		}
		cases := make([]chan struct{}, len(r.jobs))
		for i, j := range r.jobs {
			cases[i] = j.done
		}
		for {
			for i, j := range r.jobs {
				select {
				case <-j.done:
					r.jobs = slices.Delete(r.jobs, i, i+1)
					return j.status
				default:
				}
			}
			select {
			case <-r.context().Done():
				return 1
			case <-time.After(50 * time.Microsecond):
			}
		}
	}
	if len(args) == 0 {
		for _, j := range r.jobs {
			select {
			case <-j.done:
			case <-r.context().Done():
				return 1
			}
		}
		r.jobs = nil
		return 0
	}
	st := 0
	for _, a := range args {
		j := r.findJob(a)
		if j == nil {
			r.errf("wait: pid %s is not a child of this shell", a)
			st = 127
			continue
		}
		select {
		case <-j.done:
		case <-r.context().Done():
			return 1
		}
		st = j.status
	}
	return st
}

func biKill(r *runner, args []string) int {
	args = args[1:]
	sig := "TERM"
	if len(args) > 0 && args[0] == "-l" {
		for i, s := range sigNames[1:] {
			r.outf("%2d) SIG%s\n", i+1, s)
		}
		return 0
	}
	if len(args) > 0 && strings.HasPrefix(args[0], "-") {
		sig = args[0][1:]
		if sig == "s" && len(args) > 1 {
			sig = args[1]
			args = args[1:]
		}
		args = args[1:]
	}
	if len(args) == 0 {
		r.errf("kill: usage: kill [-s sigspec | -n signum | -sigspec] pid | jobspec ...")
		return 2
	}
	st := 0
	for _, a := range args {
		j := r.findJob(a)
		if j == nil {
			if n, err := strconv.Atoi(a); err == nil && (n == r.pid || n == r.bashpid) {
				r.selfSignal(sig)
				continue
			}
			r.errf("kill: (%s) - No such process", a)
			st = 1
			continue
		}
		if n, ok := normSig(sig); ok && slices.Contains(otherSigs, n) {
			continue // ignored by default (a trap in the job is not modelled)
		}
		j.cancel()
	}
	return st
}

func biJobs(r *runner, args []string) int {
	for _, j := range r.jobs {
		state := "Running"
		select {
		case <-j.done:
			state = "Done"
		default:
		}
		r.outf("[%d]+  %s                 %s\n", j.id, state, j.cmd)
	}
	return 0
}

// selfSignal delivers a signal to the shell itself (kill -SIG $$): a trap
// runs; without one, TERM/INT/HUP/KILL/USR1/USR2 end the shell as 128+N.
func (r *runner) selfSignal(sig string) {
	name := strings.ToUpper(strings.TrimPrefix(strings.ToUpper(sig), "SIG"))
	if n, err := strconv.Atoi(name); err == nil && n >= 0 && n < len(sigNames) {
		name = sigNames[n]
	}
	if t, ok := r.traps[name]; ok {
		if t == "" {
			return // ignored
		}
		// A signal that arrives while its own trap runs is pending until
		// the trap returns, then the trap runs again (a loop, counted as
		// loop iterations): a trap that re-raises its signal must not
		// recurse on the Go stack.
		if r.trapRunning[name] {
			r.trapPending[name] = true
			return
		}
		if r.trapRunning == nil {
			r.trapRunning, r.trapPending = map[string]bool{}, map[string]bool{}
		}
		if r.callDepth >= r.rs.lim.MaxCallDepth {
			r.rs.fail(limitf("trap nesting limit exceeded (%d)", r.rs.lim.MaxCallDepth))
			r.exiting = true
			return
		}
		r.trapRunning[name] = true
		r.callDepth++
		defer func() { delete(r.trapRunning, name); r.callDepth-- }()
		for {
			// The trap runs after kill completed: $? is kill's status (0).
			r.status = 0
			was := r.inTrap
			r.inTrap = true
			r.runScript(t, "")
			r.inTrap = was
			if !r.exiting {
				r.status = 0
			}
			if !r.trapPending[name] || r.exiting || r.cancelled() || !r.loopTick() {
				delete(r.trapPending, name)
				return
			}
			delete(r.trapPending, name)
			if t = r.traps[name]; t == "" {
				return
			}
		}
	}
	switch name {
	case "CHLD", "WINCH", "URG", "CONT", "0", "EXIT":
		return
	}
	for i, n := range sigNames {
		if n == name {
			r.status = 128 + i
			r.exiting = true
			return
		}
	}
}
