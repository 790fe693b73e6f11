// Package sysinfo holds the commands that describe the sandbox (env
// printenv date sleep timeout id whoami hostname uname nproc uptime ps kill
// which true false test [). Every value comes from the Invocation's System,
// never from the host.
package sysinfo

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/warren-sandbox/warren/commands"
)

// Register adds the system commands to t.
func Register(t commands.Table) {
	t.Register("env", env)
	t.Register("printenv", printenv)
	t.Register("date", date)
	t.Register("sleep", sleep)
	t.Register("timeout", timeout)
	t.Register("id", id)
	t.Register("whoami", whoami)
	t.Register("hostname", hostname)
	t.Register("uname", uname)
	t.Register("arch", arch)
	t.Register("nproc", nproc)
	t.Register("uptime", uptime)
	t.Register("ps", ps)
	t.Register("kill", kill)
	t.Register("which", which)
	t.Register("true", func(context.Context, *commands.Invocation) int { return 0 })
	t.Register("false", func(context.Context, *commands.Invocation) int { return 1 })
	t.Register("test", test)
	t.Register("[", test)
}

func badUsage(inv *commands.Invocation, err error, status int) int {
	// an unknown option is a refusal: the ladder may run a fuller version
	return inv.BadUsage(err, fmt.Sprintf("%s: %s\nTry '%s --help' for more information.\n", inv.Args[0], err, inv.Args[0]), status)
}

func relabel(err error, name string) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return &fs.PathError{Op: pe.Op, Path: name, Err: pe.Err}
	}
	return err
}

func readAllLimited(r io.Reader, limit int64) ([]byte, error) {
	return io.ReadAll(io.LimitReader(r, limit))
}

func sys(inv *commands.Invocation) *commands.System {
	if inv.Sys != nil {
		return inv.Sys
	}
	return &commands.System{}
}

func userName(inv *commands.Invocation) string {
	s := sys(inv)
	if s.User != "" {
		return s.User
	}
	if s.Uid == 0 {
		return "root"
	}
	return lookupName(inv, "/etc/passwd", s.Uid)
}

// lookupName maps an id to its name in the sandbox's passwd/group file.
func lookupName(inv *commands.Invocation, file string, id int) string {
	if inv.FS != nil {
		if data, err := inv.FS.ReadFile(file); err == nil {
			for _, line := range strings.Split(string(data), "\n") {
				f := strings.Split(line, ":")
				if len(f) >= 3 && f[2] == strconv.Itoa(id) {
					return f[0]
				}
			}
		}
	}
	if id == 0 {
		return "root"
	}
	return ""
}

var envOpts = newOpts("iu:0C:S:v", "ignore-environment:i", "unset=:u", "null:0", "chdir=:C", "split-string=:S", "debug:v")

func env(ctx context.Context, inv *commands.Invocation) int {
	// options stop at the first NAME=VALUE or command word
	args := inv.Args[1:]
	var optArgs []string
	for len(args) > 0 && strings.HasPrefix(args[0], "-") && args[0] != "-" {
		optArgs = append(optArgs, args[0])
		if args[0] == "--" {
			args = args[1:]
			break
		}
		if (args[0] == "-u" || args[0] == "-C" || args[0] == "--unset" || args[0] == "--chdir") && len(args) > 1 {
			optArgs = append(optArgs, args[1])
			args = args[1:]
		}
		args = args[1:]
	}
	opts, _, err := envOpts.Parse(optArgs)
	if err != nil {
		return badUsage(inv, err, 125)
	}
	environ := append([]string(nil), inv.Env...)
	nul := false
	dir := inv.Dir
	if len(args) > 0 && args[0] == "-" {
		environ = nil
		args = args[1:]
	}
	for _, o := range opts {
		switch o.Key {
		case "i":
			environ = nil
		case "u":
			environ = unsetEnv(environ, o.Val)
		case "0":
			nul = true
		case "C":
			dir = o.Val
		case "S":
			args = append(strings.Fields(o.Val), args...)
		}
	}
	for len(args) > 0 && strings.Contains(args[0], "=") && !strings.HasPrefix(args[0], "=") {
		k, _, _ := strings.Cut(args[0], "=")
		environ = append(unsetEnv(environ, k), args[0])
		args = args[1:]
	}
	if len(args) == 0 {
		end := "\n"
		if nul {
			end = "\x00"
		}
		var b strings.Builder
		for _, kv := range environ {
			b.WriteString(kv + end)
		}
		io.WriteString(inv.Stdout, b.String())
		return 0
	}
	if inv.Exec == nil {
		inv.Errorf("%s: cannot run commands in this context", quoteArg(args[0]))
		return 126
	}
	if dir != inv.Dir {
		abs := inv.Abs(dir)
		fi, err := inv.FS.Stat(abs)
		if err != nil || !fi.IsDir() {
			inv.Errorf("cannot change directory to %s: No such file or directory", quoteArg(dir))
			return 125
		}
		environ = append(unsetEnv(environ, "PWD"), "PWD="+abs)
	}
	return inv.Exec(ctx, args, inv.Stdin, inv.Stdout, inv.Stderr, environ)
}

func unsetEnv(environ []string, k string) []string {
	out := environ[:0:0]
	for _, kv := range environ {
		if !strings.HasPrefix(kv, k+"=") {
			out = append(out, kv)
		}
	}
	return out
}

func printenv(ctx context.Context, inv *commands.Invocation) int {
	opts, args, err := newOpts("0", "null:0").Parse(inv.Args[1:])
	if err != nil {
		return badUsage(inv, err, 2)
	}
	end := "\n"
	if len(opts) > 0 {
		end = "\x00"
	}
	if len(args) == 0 {
		for _, kv := range inv.Env {
			io.WriteString(inv.Stdout, kv+end)
		}
		return 0
	}
	status := 0
	for _, k := range args {
		if v, ok := inv.LookupEnv(k); ok && !strings.Contains(k, "=") {
			io.WriteString(inv.Stdout, v+end)
		} else {
			status = 1
		}
	}
	return status
}

// parseDuration reads sleep/timeout's NUMBER[smhd] (fractions allowed).
func parseDuration(s string) (time.Duration, bool) {
	mult := time.Second
	if s == "" {
		return 0, false
	}
	switch s[len(s)-1] {
	case 's':
		s = s[:len(s)-1]
	case 'm':
		mult, s = time.Minute, s[:len(s)-1]
	case 'h':
		mult, s = time.Hour, s[:len(s)-1]
	case 'd':
		mult, s = 24*time.Hour, s[:len(s)-1]
	}
	if s == "inf" || s == "infinity" {
		return 1<<63 - 1, true
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f < 0 || strings.ContainsAny(s, "xXpP") {
		return 0, false
	}
	d := f * float64(mult)
	if d > float64(1<<62) {
		return 1<<63 - 1, true
	}
	return time.Duration(d), true
}

func sleep(ctx context.Context, inv *commands.Invocation) int {
	args := inv.Args[1:]
	if len(args) > 0 && args[0] == "--" {
		args = args[1:]
	}
	if len(args) == 0 {
		inv.Errorf("missing operand")
		fmt.Fprintf(inv.Stderr, "Try '%s --help' for more information.\n", inv.Args[0])
		return 1
	}
	var total time.Duration
	for _, a := range args {
		d, ok := parseDuration(a)
		if !ok {
			inv.Errorf("invalid time interval %s", quoteArg(a))
			fmt.Fprintf(inv.Stderr, "Try '%s --help' for more information.\n", inv.Args[0])
			return 1
		}
		total += d
		if total < 0 {
			total = 1<<63 - 1
		}
	}
	t := time.NewTimer(total)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return 130
	case <-t.C:
		return 0
	}
}

var timeoutOpts = newOpts("s:k:v", "signal=:s", "kill-after=:k", "preserve-status", "foreground", "verbose:v")

func timeout(ctx context.Context, inv *commands.Invocation) int {
	// options end at the duration operand
	args := inv.Args[1:]
	var optArgs []string
	for len(args) > 0 && strings.HasPrefix(args[0], "-") && len(args[0]) > 1 {
		if args[0] == "--" {
			args = args[1:]
			break
		}
		optArgs = append(optArgs, args[0])
		if (args[0] == "-s" || args[0] == "-k" || args[0] == "--signal" || args[0] == "--kill-after") && len(args) > 1 {
			optArgs = append(optArgs, args[1])
			args = args[1:]
		}
		args = args[1:]
	}
	opts, _, err := timeoutOpts.Parse(optArgs)
	if err != nil {
		return badUsage(inv, err, 125)
	}
	preserve, verbose := false, false
	sig := "TERM"
	for _, o := range opts {
		switch o.Key {
		case "preserve-status":
			preserve = true
		case "v":
			verbose = true
		case "s":
			sig = strings.TrimPrefix(strings.ToUpper(o.Val), "SIG")
		}
	}
	if len(args) < 2 {
		if len(args) == 1 {
			inv.Errorf("missing operand after %s", quoteArg(args[0]))
		}
		fmt.Fprintf(inv.Stderr, "Try '%s --help' for more information.\n", inv.Args[0])
		return 125
	}
	d, ok := parseDuration(args[0])
	if !ok {
		inv.Errorf("invalid time interval %s", quoteArg(args[0]))
		fmt.Fprintf(inv.Stderr, "Try '%s --help' for more information.\n", inv.Args[0])
		return 125
	}
	if inv.Exec == nil {
		inv.Errorf("failed to run command %s: Function not implemented", quoteArg(args[1]))
		return 126
	}
	cctx := ctx
	var cancel context.CancelFunc = func() {}
	if d > 0 {
		cctx, cancel = context.WithTimeout(ctx, d)
	}
	defer cancel()
	st := inv.Exec(cctx, args[1:], inv.Stdin, inv.Stdout, inv.Stderr, inv.Env)
	if ctx.Err() != nil {
		return 130
	}
	if cctx.Err() == context.DeadlineExceeded {
		if verbose {
			inv.Errorf("sending signal %s to command %s", sig, quoteArg(args[1]))
		}
		if preserve {
			return 128 + signalNumber(sig)
		}
		if sig == "KILL" || sig == "9" {
			return 137
		}
		return 124
	}
	return st
}

var signals = []string{"", "HUP", "INT", "QUIT", "ILL", "TRAP", "ABRT", "BUS", "FPE", "KILL", "USR1",
	"SEGV", "USR2", "PIPE", "ALRM", "TERM", "STKFLT", "CHLD", "CONT", "STOP", "TSTP", "TTIN",
	"TTOU", "URG", "XCPU", "XFSZ", "VTALRM", "PROF", "WINCH", "POLL", "PWR", "SYS"}

func signalNumber(s string) int {
	if n, err := strconv.Atoi(s); err == nil {
		return n
	}
	s = strings.TrimPrefix(strings.ToUpper(s), "SIG")
	if s == "IO" {
		return 29
	}
	for i, n := range signals {
		if n == s && i > 0 {
			return i
		}
	}
	return -1
}

func id(ctx context.Context, inv *commands.Invocation) int {
	opts, args, err := newOpts("ugGnr", "user:u", "group:g", "groups:G", "name:n", "real:r").Parse(inv.Args[1:])
	if err != nil {
		return badUsage(inv, err, 1)
	}
	s := sys(inv)
	uid, gid := s.Uid, s.Gid
	uname := userName(inv)
	if len(args) > 0 {
		who := args[0]
		found := false
		if data, err := inv.FS.ReadFile("/etc/passwd"); err == nil {
			for _, line := range strings.Split(string(data), "\n") {
				f := strings.Split(line, ":")
				if len(f) >= 4 && (f[0] == who || f[2] == who) {
					uid, _ = strconv.Atoi(f[2])
					gid, _ = strconv.Atoi(f[3])
					uname, found = f[0], true
					break
				}
			}
		}
		if !found && !(who == uname) {
			inv.Errorf("%s: no such user", quoteArg(who))
			return 1
		}
	}
	gname := lookupName(inv, "/etc/group", gid)
	var which byte
	name := false
	for _, o := range opts {
		switch o.Key {
		case "u", "g", "G":
			which = o.Key[0]
		case "n":
			name = true
		}
	}
	pick := func(num int, nm string) string {
		if name && nm != "" {
			return nm
		}
		return strconv.Itoa(num)
	}
	switch which {
	case 'u':
		fmt.Fprintln(inv.Stdout, pick(uid, uname))
	case 'g', 'G':
		fmt.Fprintln(inv.Stdout, pick(gid, gname))
	default:
		paren := func(n string) string {
			if n == "" {
				return ""
			}
			return "(" + n + ")"
		}
		fmt.Fprintf(inv.Stdout, "uid=%d%s gid=%d%s groups=%d%s\n", uid, paren(uname), gid, paren(gname), gid, paren(gname))
	}
	return 0
}

func whoami(ctx context.Context, inv *commands.Invocation) int {
	if len(inv.Args) > 1 {
		inv.Errorf("extra operand %s", quoteArg(inv.Args[1]))
		fmt.Fprintf(inv.Stderr, "Try '%s --help' for more information.\n", inv.Args[0])
		return 1
	}
	n := userName(inv)
	if n == "" {
		inv.Errorf("cannot find name for user ID %d", sys(inv).Uid)
		return 1
	}
	fmt.Fprintln(inv.Stdout, n)
	return 0
}

func hostName(inv *commands.Invocation) string {
	if h := sys(inv).Hostname; h != "" {
		return h
	}
	return "sandbox"
}

func hostname(ctx context.Context, inv *commands.Invocation) int {
	opts, args, err := newOpts("sfidIA", "short:s", "fqdn:f", "long:f", "ip-address:i", "domain:d", "all-ip-addresses:I").Parse(inv.Args[1:])
	if err != nil {
		return badUsage(inv, err, 1)
	}
	if len(args) > 0 {
		fmt.Fprintln(inv.Stderr, "hostname: you must be root to change the host name")
		return 1
	}
	h := hostName(inv)
	for _, o := range opts {
		switch o.Key {
		case "s":
			h, _, _ = strings.Cut(h, ".")
		case "d":
			_, h, _ = strings.Cut(h, ".")
		case "i", "I":
			h = "127.0.0.1"
		}
	}
	fmt.Fprintln(inv.Stdout, h)
	return 0
}

// Sandbox kernel identity: fixed values so scripts see a stable Linux,
// never the host's release string.
const (
	kernelName    = "Linux"
	kernelRelease = "6.1.0-warren"
	kernelVersion = "#1 SMP PREEMPT_DYNAMIC warren"
	osName        = "GNU/Linux"
)

func machine() string {
	switch runtime.GOARCH {
	case "amd64":
		return "x86_64"
	case "arm64":
		return "aarch64"
	case "386":
		return "i686"
	}
	return runtime.GOARCH
}

func uname(ctx context.Context, inv *commands.Invocation) int {
	opts, args, err := newOpts("asnrvmpio", "all:a", "kernel-name:s", "nodename:n", "kernel-release:r",
		"kernel-version:v", "machine:m", "processor:p", "hardware-platform:i", "operating-system:o").Parse(inv.Args[1:])
	if err != nil {
		return badUsage(inv, err, 1)
	}
	if len(args) > 0 {
		inv.Errorf("extra operand %s", quoteArg(args[0]))
		fmt.Fprintf(inv.Stderr, "Try '%s --help' for more information.\n", inv.Args[0])
		return 1
	}
	want := map[string]bool{}
	for _, o := range opts {
		if o.Key == "a" {
			for _, k := range []string{"s", "n", "r", "v", "m", "o"} {
				want[k] = true
			}
			continue
		}
		want[o.Key] = true
	}
	if len(want) == 0 {
		want["s"] = true
	}
	var out []string
	for _, f := range []struct{ k, v string }{
		{"s", kernelName}, {"n", hostName(inv)}, {"r", kernelRelease}, {"v", kernelVersion},
		{"m", machine()}, {"p", machine()}, {"i", machine()}, {"o", osName},
	} {
		if want[f.k] {
			if (f.k == "p" || f.k == "i") && want["a"] {
				continue
			}
			out = append(out, f.v)
		}
	}
	fmt.Fprintln(inv.Stdout, strings.Join(out, " "))
	return 0
}

func arch(ctx context.Context, inv *commands.Invocation) int {
	fmt.Fprintln(inv.Stdout, machine())
	return 0
}

func nproc(ctx context.Context, inv *commands.Invocation) int {
	opts, _, err := newOpts("", "all", "ignore=").Parse(inv.Args[1:])
	if err != nil {
		return badUsage(inv, err, 1)
	}
	n := sys(inv).NumCPU
	if n <= 0 {
		n = 1
	}
	for _, o := range opts {
		if o.Key == "ignore" {
			k, err := strconv.Atoi(o.Val)
			if err != nil || k < 0 {
				inv.Errorf("invalid number: %s", quoteArg(o.Val))
				return 1
			}
			n = max(1, n-k)
		}
	}
	fmt.Fprintln(inv.Stdout, n)
	return 0
}

func uptime(ctx context.Context, inv *commands.Invocation) int {
	opts, _, err := newOpts("ps", "pretty:p", "since:s").Parse(inv.Args[1:])
	if err != nil {
		return badUsage(inv, err, 1)
	}
	now := inv.Now().In(Location(inv))
	started := sys(inv).Started
	if started.IsZero() {
		started = now
	}
	up := now.Sub(started)
	if up < 0 {
		up = 0
	}
	for _, o := range opts {
		switch o.Key {
		case "s":
			fmt.Fprintln(inv.Stdout, started.In(now.Location()).Format("2006-01-02 15:04:05"))
			return 0
		case "p":
			fmt.Fprintln(inv.Stdout, "up "+prettyUp(up))
			return 0
		}
	}
	mins := int(up / time.Minute)
	var upStr string
	switch {
	case mins < 60:
		upStr = fmt.Sprintf("%d min", mins)
	default:
		days := mins / 1440
		hm := fmt.Sprintf("%2d:%02d", mins/60%24, mins%60)
		if days > 0 {
			unit := "days"
			if days == 1 {
				unit = "day"
			}
			upStr = fmt.Sprintf("%d %s, %s", days, unit, hm)
		} else {
			upStr = hm
		}
	}
	fmt.Fprintf(inv.Stdout, " %s up %s,  1 user,  load average: 0.00, 0.00, 0.00\n", now.Format("15:04:05"), upStr)
	return 0
}

func prettyUp(d time.Duration) string {
	mins := int(d / time.Minute)
	var parts []string
	add := func(n int, unit string) {
		if n > 0 {
			if n != 1 {
				unit += "s"
			}
			parts = append(parts, fmt.Sprintf("%d %s", n, unit))
		}
	}
	add(mins/10080, "week")
	add(mins/1440%7, "day")
	add(mins/60%24, "hour")
	add(mins%60, "minute")
	if len(parts) == 0 {
		return "0 minutes"
	}
	return strings.Join(parts, ", ")
}

func procs(inv *commands.Invocation) []commands.Proc {
	s := sys(inv)
	if s.Procs != nil {
		return s.Procs()
	}
	return []commands.Proc{{Pid: 1, PPid: 0, Cmd: "ps", Started: s.Started}}
}

func ps(ctx context.Context, inv *commands.Invocation) int {
	// BSD style (aux) and UNIX style (-ef) are both accepted; the sandbox
	// has no ttys, so every row shows "?" or pts/0-free values.
	full, user := false, false
	for _, a := range inv.Args[1:] {
		switch {
		case strings.HasPrefix(a, "-") && strings.ContainsAny(a, "f"):
			full = true
		case !strings.HasPrefix(a, "-") && strings.Contains(a, "u"):
			user = true
		}
	}
	list := procs(inv)
	sort.Slice(list, func(i, j int) bool { return list[i].Pid < list[j].Pid })
	uname := userName(inv)
	if uname == "" {
		uname = strconv.Itoa(sys(inv).Uid)
	}
	now := inv.Now()
	var b strings.Builder
	switch {
	case user:
		b.WriteString("USER         PID %CPU %MEM    VSZ   RSS TTY      STAT START   TIME COMMAND\n")
		for _, p := range list {
			fmt.Fprintf(&b, "%-8s %7d  0.0  0.0      0     0 ?        S    %s   0:00 %s\n", uname, p.Pid, startStr(p.Started, now), p.Cmd)
		}
	case full:
		b.WriteString("UID          PID    PPID  C STIME TTY          TIME CMD\n")
		for _, p := range list {
			fmt.Fprintf(&b, "%-8s %7d %7d  0 %s ?        00:00:00 %s\n", uname, p.Pid, p.PPid, startStr(p.Started, now), p.Cmd)
		}
	default:
		b.WriteString("    PID TTY          TIME CMD\n")
		for _, p := range list {
			cmd, _, _ := strings.Cut(p.Cmd, " ")
			fmt.Fprintf(&b, "%7d ?        00:00:00 %s\n", p.Pid, path.Base(cmd))
		}
	}
	io.WriteString(inv.Stdout, b.String())
	return 0
}

func startStr(t, now time.Time) string {
	if t.IsZero() {
		t = now
	}
	if now.Sub(t) < 24*time.Hour {
		return t.Format("15:04")
	}
	return t.Format("Jan02")
}

func kill(ctx context.Context, inv *commands.Invocation) int {
	args := inv.Args[1:]
	sig := "TERM"
	if len(args) > 0 && (args[0] == "-l" || args[0] == "-L" || args[0] == "--list") {
		if len(args) > 1 {
			for _, a := range args[1:] {
				if n, err := strconv.Atoi(a); err == nil {
					if n > 128 {
						n -= 128
					}
					if n > 0 && n < len(signals) {
						fmt.Fprintln(inv.Stdout, signals[n])
						continue
					}
				} else if k := signalNumber(a); k > 0 {
					fmt.Fprintln(inv.Stdout, k)
					continue
				}
				inv.Errorf("unknown signal: %s", a)
				return 1
			}
			return 0
		}
		var parts []string
		for i := 1; i < len(signals); i++ {
			parts = append(parts, signals[i])
		}
		fmt.Fprintln(inv.Stdout, strings.Join(parts, " "))
		return 0
	}
	if len(args) > 0 {
		switch {
		case args[0] == "-s" && len(args) > 1:
			sig, args = args[1], args[2:]
		case strings.HasPrefix(args[0], "-") && len(args[0]) > 1 && args[0] != "--":
			sig, args = args[0][1:], args[1:]
		}
	}
	if len(args) > 0 && args[0] == "--" {
		args = args[1:]
	}
	if signalNumber(sig) < 0 && sig != "0" {
		inv.Errorf("%s: invalid signal specification", sig)
		return 1
	}
	if len(args) == 0 {
		io.WriteString(inv.Stderr, killUsage)
		return 1
	}
	status := 0
	for _, a := range args {
		pid, err := strconv.Atoi(a)
		if err != nil {
			inv.Errorf("%s: arguments must be process or job IDs", a)
			status = 1
			continue
		}
		if s := sys(inv); s.Kill != nil {
			if err := s.Kill(pid, sig); err != nil {
				inv.Errorf("(%d) - %s", pid, commands.Strerror(err))
				status = 1
			}
			continue
		}
		found := false
		for _, p := range procs(inv) {
			if p.Pid == pid {
				found = true
			}
		}
		if !found {
			inv.Errorf("(%d) - No such process", pid)
			status = 1
		}
	}
	return status
}

func which(ctx context.Context, inv *commands.Invocation) int {
	all := false
	args := inv.Args[1:]
	for len(args) > 0 && strings.HasPrefix(args[0], "-") {
		if args[0] == "-a" {
			all = true
		} else if args[0] != "--" && args[0] != "-s" {
			inv.Errorf("invalid option -- %s", args[0])
			return 2
		}
		args = args[1:]
	}
	pathVar := inv.Getenv("PATH")
	status := 0
	for _, name := range args {
		found := false
		if strings.Contains(name, "/") {
			if isExec(inv, inv.Abs(name)) {
				fmt.Fprintln(inv.Stdout, name)
				found = true
			}
		} else if inv.Lookup != nil {
			// the shell's PATH search, so which agrees with command -v
			for _, p := range inv.Lookup(name, all) {
				fmt.Fprintln(inv.Stdout, p)
				found = true
			}
		} else {
			for _, dir := range strings.Split(pathVar, ":") {
				if dir == "" {
					dir = "."
				}
				p := path.Join(dir, name)
				if isExec(inv, inv.Abs(p)) {
					fmt.Fprintln(inv.Stdout, p)
					found = true
					if !all {
						break
					}
				}
			}
		}
		if !found {
			status = 1
		}
	}
	return status
}

func isExec(inv *commands.Invocation, abs string) bool {
	fi, err := inv.FS.Stat(abs)
	return err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0
}

func quoteArg(s string) string { return "'" + s + "'" }

// killUsage is procps kill's usage text.
const killUsage = `
Usage:
 kill [options] <pid> [...]

Options:
 <pid> [...]            send signal to every <pid> listed
 -<signal>, -s, --signal <signal>
                        specify the <signal> to be sent
 -q, --queue <value>    integer value to be sent with the signal
 -l, --list=[<signal>]  list all signal names, or convert one to a name
 -L, --table            list all signal names in a nice table

 -h, --help     display this help and exit
 -V, --version  output version information and exit

For more details see kill(1).
`
