package shell

// Builtins for signals and jobs: trap, kill, wait, jobs.

import (
	"io"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/warren-sandbox/warren/commands/bashfmt"
	"mvdan.cc/sh/v3/syntax"
)

// otherSigs are signals accepted by trap and kill beyond the numbered ones;
// their default action in a sandbox is to do nothing.
var otherSigs = []string{"STKFLT", "CHLD", "CONT", "STOP", "TSTP", "TTIN", "TTOU", "URG", "XCPU", "XFSZ", "VTALRM", "PROF", "WINCH", "IO", "PWR", "SYS"}

var sigNames = []string{"EXIT", "HUP", "INT", "QUIT", "ILL", "TRAP", "ABRT", "BUS", "FPE", "KILL", "USR1", "SEGV", "USR2", "PIPE", "ALRM", "TERM"}

// normSig turns a signal spec (a name with or without SIG, in any case, or
// a number) into the name traps are keyed by; ERR, DEBUG, RETURN and EXIT
// are the shell's pseudo-signals.
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

// biTrap sets a signal's action or resets it (action -, or a signal or
// number in the action's place), and with no arguments or -p lists the
// traps; -l lists the signals. A subshell lists its parent's traps until
// it sets one of its own, as bash does.
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
			r.outf("trap -- %s %s\n", bashfmt.QuoteAlias(traps[n]), sig)
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
			if n == "ERR" {
				r.errInherited = false // set here: it runs here
			}
		}
	}
	return st
}

// currentJob is %+ (the newest running job, else the newest).
func (r *runner) currentJob() *Job {
	for i := len(r.jobs) - 1; i >= 0; i-- {
		if r.jobs[i].Running() {
			return r.jobs[i]
		}
	}
	for i := len(r.jobs) - 1; i >= 0; i-- {
		if !r.jobs[i].cleaned.Load() {
			return r.jobs[i]
		}
	}
	return nil
}

// findJob resolves a jobspec (%N, %%, %+, %-, %string, %?string) among
// this shell's jobs, or a pid among them and then the session's jobs.
// Newer jobs win: an ended job's number may have been given again.
func (r *runner) findJob(spec string) *Job {
	if s, ok := strings.CutPrefix(spec, "%"); ok {
		switch {
		case s == "" || s == "%" || s == "+":
			return r.currentJob()
		case s == "-":
			cur := r.currentJob()
			for i := len(r.jobs) - 1; i >= 0; i-- {
				if j := r.jobs[i]; j != cur && j.Running() {
					return j
				}
			}
			return nil
		}
		n, err := strconv.Atoi(s)
		for i := len(r.jobs) - 1; i >= 0; i-- {
			j := r.jobs[i]
			if j.cleaned.Load() {
				continue
			}
			switch {
			case err == nil && j.id == n,
				err != nil && strings.HasPrefix(s, "?") && strings.Contains(j.cmd, s[1:]),
				err != nil && !strings.HasPrefix(s, "?") && strings.HasPrefix(j.cmd, s):
				return j
			}
		}
		return nil
	}
	n, err := strconv.Atoi(spec)
	if err != nil {
		return nil
	}
	for i := len(r.jobs) - 1; i >= 0; i-- {
		if r.jobs[i].pid == n {
			return r.jobs[i]
		}
	}
	return r.sh.jobs.byPid(n)
}

// forget drops j from this shell's table (after wait collected it).
func (r *runner) forget(j *Job) {
	r.jobs = slices.DeleteFunc(r.jobs, func(x *Job) bool { return x == j })
}

// biWait waits for the named jobs or pids (the last one's status, 127 for
// one that is no child), for every job with no arguments (status 0), or
// with -n for any one job to end (its status). A cancelled run makes it
// return 1.
func biWait(r *runner, args []string) int {
	args = args[1:]
	waitN := false
	for len(args) > 0 && strings.HasPrefix(args[0], "-") && len(args[0]) > 1 {
		if args[0] == "--" {
			args = args[1:]
			break
		}
		if args[0] == "-n" {
			waitN = true
		}
		args = args[1:]
	}
	if waitN {
		var live []*Job
		for _, j := range r.jobs {
			if !j.cleaned.Load() {
				live = append(live, j)
			}
		}
		if len(live) == 0 {
			return 127
		}
		for {
			for _, j := range live {
				if !j.Running() {
					r.forget(j)
					return j.status
				}
			}
			select {
			case <-r.context().Done():
				return 1
			case <-time.After(time.Millisecond):
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
			if strings.HasPrefix(a, "%") {
				r.errf("wait: %s: no such job", a)
			} else {
				r.errf("wait: pid %s is not a child of this shell", a)
			}
			st = 127
			continue
		}
		select {
		case <-j.done:
		case <-r.context().Done():
			return 1
		}
		j.cleaned.Store(true)
		st = j.status
	}
	return st
}

// biKill sends a signal (TERM by default; -SIG, -s SIG, -n N) to jobs and
// pids; the shell's own pid goes to selfSignal. -l lists the signals.
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
		if (sig == "s" || sig == "n") && len(args) > 1 {
			sig = args[1]
			args = args[1:]
		}
		args = args[1:]
	}
	if len(args) > 0 && args[0] == "--" {
		args = args[1:]
	}
	if len(args) == 0 {
		r.usage("kill: usage: kill [-s sigspec | -n signum | -sigspec] pid | jobspec ... or kill -l [sigspec]")
		return 2
	}
	if _, ok := normSig(sig); !ok {
		r.errf("kill: %s: invalid signal specification", sig)
		return 1
	}
	st := 0
	for _, a := range args {
		j := r.findJob(a)
		if j == nil {
			if n, err := strconv.Atoi(a); err == nil && n == r.pid && r.bashpid != r.pid {
				// $$ from a subshell is the top shell, not this one
				r.signalTop(sig)
				continue
			}
			if n, err := strconv.Atoi(a); err == nil && (n == r.pid || n == r.bashpid) {
				r.selfSignal(sig)
				if r.exiting || r.returning {
					// The shell ends here: with 128+N, or the status its
					// trap's exit gave, not kill's own 0 (return: the
					// function ends with the trap's status).
					return r.status
				}
				continue
			}
			if strings.HasPrefix(a, "%") {
				r.errf("kill: %s: no such job", a)
			} else if _, err := strconv.Atoi(a); err != nil {
				r.errf("kill: %s: arguments must be process or job IDs", a)
			} else {
				r.errf("kill: (%s) - No such process", a)
			}
			st = 1
			continue
		}
		if err := j.Signal(sig); err != nil {
			r.errf("kill: (%d) - No such process", j.pid)
			st = 1
		}
	}
	return st
}

// biJobs lists the running jobs, + marking the current and - the previous
// one; -l adds pids, -p prints only pids. No job is ever stopped, so -s
// lists none.
func biJobs(r *runner, args []string) int {
	long, pids, running, stopped := false, false, false, false
	args = args[1:]
	for len(args) > 0 && strings.HasPrefix(args[0], "-") && len(args[0]) > 1 {
		if args[0] == "--" {
			args = args[1:]
			break
		}
		for _, c := range args[0][1:] {
			switch c {
			case 'l':
				long = true
			case 'p':
				pids = true
			case 'r':
				running = true
			case 's':
				stopped = true
			case 'n', 'x':
			default:
				r.errf("jobs: -%c: invalid option\njobs: usage: jobs [-lnprs] [jobspec ...] or jobs -x command [args]", c)
				return 2
			}
		}
		args = args[1:]
	}
	_ = running
	if stopped {
		return 0 // no job is ever stopped
	}
	// A non-interactive bash reaps ended jobs silently: jobs lists the
	// running ones, and forgets the others (wait PID still finds them).
	list := make([]*Job, 0, len(r.jobs))
	for _, j := range r.jobs {
		if j.Running() {
			list = append(list, j)
		}
	}
	st := 0
	if len(args) > 0 {
		list = list[:0]
		for _, a := range args {
			j := r.findJob(a)
			if j == nil || !j.Running() {
				r.errf("jobs: %s: no such job", a)
				st = 1
				continue
			}
			list = append(list, j)
		}
	}
	cur := r.currentJob()
	var prev *Job
	if p := r.findJob("%-"); p != nil {
		prev = p
	}
	for _, j := range list {
		if pids {
			r.outf("%d\n", j.pid)
			continue
		}
		mark := ' '
		switch j {
		case cur:
			mark = '+'
		case prev:
			mark = '-'
		}
		text := j.cmd
		if j.Running() {
			text += " &"
		}
		if long {
			r.outf("[%d]%c %d %-24s%s\n", j.id, mark, j.pid, jobState(j), text)
		} else {
			r.outf("[%d]%c  %-24s%s\n", j.id, mark, jobState(j), text)
		}
	}
	return st
}

// signalTop sends sig to the top shell ($$) from a subshell or job: as in
// bash, where the parent receives it while it waits for the child, the
// child goes on and the top shell takes it when the child is done (at its
// next command: a trap runs, or it ends with 128+N).
func (r *runner) signalTop(sig string) {
	if n, ok := sigNumber(sig); ok && n > 0 {
		r.sh.topSig.Store(int32(n))
	}
}

// takeTopSignal delivers a signal a subshell sent to $$, in the top shell.
func (r *runner) takeTopSignal() {
	if r.bashpid != r.pid || r.sh.topSig.Load() == 0 {
		return
	}
	if n := r.sh.topSig.Swap(0); n > 0 && int(n) < len(sigNames) {
		r.selfSignal(sigNames[n])
	}
}

// sigNumber is the number of a signal given as kill takes it (TERM,
// SIGTERM, 15).
func sigNumber(sig string) (int, bool) {
	name := strings.ToUpper(strings.TrimPrefix(strings.ToUpper(sig), "SIG"))
	if n, err := strconv.Atoi(name); err == nil {
		return n, n >= 0 && n < len(sigNames)
	}
	for i, s := range sigNames {
		if s == name {
			return i, true
		}
	}
	return 0, false
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
			r.runTrap(t)
			r.inTrap = was
			if !r.exiting && !r.returning {
				r.status = 0 // (a return in the trap leaves the function with its status)
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
			r.killedBy = i
			return
		}
	}
}

// sigText is glibc's strsignal text for the signals sigNames lists.
var sigText = [...]string{"", "Hangup", "Interrupt", "Quit", "Illegal instruction", "Trace/breakpoint trap",
	"Aborted", "Bus error", "Floating point exception", "Killed", "User defined signal 1",
	"Segmentation fault", "User defined signal 2", "Broken pipe", "Alarm clock", "Terminated"}

// reportKilled says what a non-interactive bash says when a foreground
// child it waited for died of signal sig: the signal's text alone for
// TERM or a signal this shell traps, else the line, the child's pid, the
// text and the command; nothing for INT and PIPE.
func (r *runner) reportKilled(sig, pid int, cmd syntax.Command) {
	switch {
	case sig <= 0 || sig >= len(sigText) || sigNames[sig] == "INT" || sigNames[sig] == "PIPE":
	case sigNames[sig] == "TERM" || r.traps[sigNames[sig]] != "":
		io.WriteString(r.stderr(), sigText[sig]+"\n")
	default:
		p := newBashLayout()
		p.outsideFunc = true
		p.command(cmd, 0)
		p.flushDocs()
		r.errf("%5d %-24s%s", pid, sigText[sig], p.b.String())
	}
}
