package shell

// The execution ladder (DESIGN.md "The execution ladder"): a bare command
// name that has a resident implementation runs resident unless the policy
// says otherwise; a resident command that refuses the invocation
// (commands.Invocation.Refuse, before any effect) is run again, with the
// same argv, env, cwd and descriptors, on the next rung that has the
// command: a WASM module or an ELF binary on PATH in the sandbox's image.

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"

	"github.com/warren-sandbox/warren/commands"
)

// Mode is where a command runs first.
type Mode uint8

const (
	modeUnset     Mode = iota
	ResidentFirst      // resident, falling back to wasm/native on a refusal (the default)
	NativeFirst        // a WASM module or native binary on PATH wins; resident when there is none
	ResidentOnly       // never another rung: a refusal is reported
)

var modeNames = map[Mode]string{ResidentFirst: "resident-first", NativeFirst: "native-first", ResidentOnly: "resident-only"}

func (m Mode) String() string {
	if m == modeUnset {
		return "resident-first"
	}
	return modeNames[m]
}

// Policy is a sandbox's (or an exec's) choice of rungs: a default mode and
// per-command overrides. The zero Policy is resident-first everywhere.
type Policy struct {
	Default  Mode
	Commands map[string]Mode
}

// Bounds of a policy (it comes from API requests and is stored with the
// sandbox).
const (
	maxPolicyCommands = 256
	maxPolicyName     = 64
)

// ParsePolicy reads "MODE[,NAME=WHERE...]" or "NAME=WHERE,...": MODE is
// resident-first, native-first or resident-only; WHERE is native,
// resident or resident-only (or a MODE). "" is the zero Policy.
func ParsePolicy(s string) (Policy, error) {
	var p Policy
	full := clip(s)
	for _, item := range strings.Split(s, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		name, where, per := strings.Cut(item, "=")
		if !per {
			m, ok := parseMode(item)
			if !ok {
				return Policy{}, fmt.Errorf("commands policy %q: unknown mode %q (want resident-first, native-first or resident-only)", full, clip(item))
			}
			if p.Default != modeUnset && p.Default != m {
				return Policy{}, fmt.Errorf("commands policy %q: two default modes", full)
			}
			p.Default = m
			continue
		}
		name = strings.TrimSpace(name)
		if name == "" || len(name) > maxPolicyName || strings.ContainsAny(name, "/ \t\n\"\\") {
			return Policy{}, fmt.Errorf("commands policy %q: bad command name %q", full, clip(name))
		}
		if len(p.Commands) >= maxPolicyCommands {
			return Policy{}, fmt.Errorf("commands policy: more than %d per-command overrides", maxPolicyCommands)
		}
		m, ok := parseMode(strings.TrimSpace(where))
		if !ok {
			return Policy{}, fmt.Errorf("commands policy %q: %s=%s: want native, resident or resident-only", full, name, clip(where))
		}
		if p.Commands == nil {
			p.Commands = map[string]Mode{}
		}
		p.Commands[name] = m
	}
	return p, nil
}

// clip shortens what an error quotes of a request.
func clip(s string) string {
	if len(s) > 80 {
		return s[:77] + "..."
	}
	return s
}

func parseMode(s string) (Mode, bool) {
	switch s {
	case "resident-first", "resident":
		return ResidentFirst, true
	case "native-first", "native":
		return NativeFirst, true
	case "resident-only":
		return ResidentOnly, true
	}
	return modeUnset, false
}

// String is the canonical form ParsePolicy reads back.
func (p Policy) String() string {
	parts := []string{p.Default.String()}
	names := make([]string, 0, len(p.Commands))
	for n := range p.Commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		w := p.Commands[n].String()
		switch p.Commands[n] {
		case NativeFirst:
			w = "native"
		case ResidentFirst:
			w = "resident"
		}
		parts = append(parts, n+"="+w)
	}
	return strings.Join(parts, ",")
}

// For is the mode of command name.
func (p Policy) For(name string) Mode {
	if m, ok := p.Commands[name]; ok {
		return m
	}
	if p.Default == modeUnset {
		return ResidentFirst
	}
	return p.Default
}

// Over is p applied over base (an exec's policy over its sandbox's): a p
// that names a mode replaces base whole (an exec's resident-only must not
// be undone by the sandbox's git=native); overrides alone add to base's.
func (p Policy) Over(base Policy) Policy {
	if p.Default != modeUnset {
		return p
	}
	out := Policy{Default: base.Default}
	if len(base.Commands)+len(p.Commands) > 0 {
		out.Commands = make(map[string]Mode, len(base.Commands)+len(p.Commands))
		for n, m := range base.Commands {
			out.Commands[n] = m
		}
		for n, m := range p.Commands {
			out.Commands[n] = m
		}
	}
	return out
}

// Rung names where a command ran.
type Rung string

const (
	RungResident Rung = "resident"
	RungWASM     Rung = "wasm"
	RungNative   Rung = "native"
	RungMissing  Rung = "missing" // command not found, or refused with no other rung
)

// Stats counts, for the Runs whose context carries it (WithStats), the
// commands run per rung and the fallbacks per command name. Builtins and
// functions are not counted: they are the interpreter itself.
type Stats struct {
	mu        sync.Mutex
	rungs     map[Rung]int64
	fallbacks map[string]int64
}

func (s *Stats) add(r Rung, fellBack string) {
	if s == nil {
		return
	}
	s.mu.Lock()
	if s.rungs == nil {
		s.rungs = map[Rung]int64{}
	}
	if r != "" {
		s.rungs[r]++
	}
	if fellBack != "" {
		if s.fallbacks == nil {
			s.fallbacks = map[string]int64{}
		}
		s.fallbacks[fellBack]++
	}
	s.mu.Unlock()
}

// Rungs returns a copy of the counts by rung.
func (s *Stats) Rungs() map[Rung]int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[Rung]int64, len(s.rungs))
	for k, v := range s.rungs {
		out[k] = v
	}
	return out
}

// Fallbacks returns a copy of the fallbacks by command name.
func (s *Stats) Fallbacks() map[string]int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]int64, len(s.fallbacks))
	for k, v := range s.fallbacks {
		out[k] = v
	}
	return out
}

type policyKey struct{}
type statsKey struct{}

// WithPolicy makes the Runs under ctx use p over the Config's policy (an
// exec's own policy).
func WithPolicy(ctx context.Context, p Policy) context.Context {
	return context.WithValue(ctx, policyKey{}, p)
}

// WithStats makes the Runs under ctx count their rungs into s.
func WithStats(ctx context.Context, s *Stats) context.Context {
	return context.WithValue(ctx, statsKey{}, s)
}

// ladder is a Run's view of the ladder, read from its context once.
type ladder struct {
	policy Policy
	stats  *Stats
}

func newLadder(ctx context.Context, cfg *Config) ladder {
	l := ladder{policy: cfg.Policy}
	if p, ok := ctx.Value(policyKey{}).(Policy); ok {
		l.policy = p.Over(cfg.Policy)
	}
	l.stats, _ = ctx.Value(statsKey{}).(*Stats)
	return l
}

func (r *runner) count(rung Rung, fellBack string) {
	if r.rs != nil {
		r.rs.ladder.stats.add(rung, fellBack)
	}
}

func (r *runner) modeOf(name string) Mode {
	if r.rs == nil {
		return r.sh.cfg.Policy.For(name)
	}
	return r.rs.ladder.policy.For(name)
}

// rungHit is an executable file on PATH that another rung can run.
type rungHit struct {
	path string
	rung Rung
	// off says why its tier cannot run it here ("" when it can).
	off string
}

// fileRungs lists, in PATH order, the files named name that are WASM
// modules or ELF binaries (not scripts, not empty placeholders of
// resident commands).
func (r *runner) fileRungs(name string) []rungHit {
	var hits []rungHit
	pathv := ""
	if v := r.lookup("PATH"); v != nil {
		pathv = v.str()
	}
	var head [4]byte
	for _, dir := range strings.Split(pathv, ":") {
		if dir == "" {
			dir = "."
		}
		p := strings.TrimSuffix(dir, "/") + "/" + name
		fi, err := r.sh.cfg.FS.Stat(r.abs(p))
		if err != nil || fi.IsDir() || fi.Mode()&0o111 == 0 || fi.Size() < 4 {
			continue
		}
		f, err := r.sh.cfg.FS.Open(r.abs(p))
		if err != nil {
			continue
		}
		n, _ := io.ReadFull(f, head[:])
		f.Close()
		switch {
		case n == 4 && bytes.Equal(head[:], []byte("\x7fELF")):
			h := rungHit{path: p, rung: RungNative}
			if r.sh.cfg.Native == nil {
				h.off = "the native tier is off"
			}
			hits = append(hits, h)
		case n == 4 && bytes.Equal(head[:], []byte("\x00asm")):
			h := rungHit{path: p, rung: RungWASM}
			if r.sh.cfg.WASM == nil {
				h.off = "the wasm tier is off"
			}
			hits = append(hits, h)
		}
	}
	return hits
}

// nextRung is the first rung after the resident one that can run name, or
// why there is none.
func (r *runner) nextRung(name string) (rungHit, string) {
	hits := r.fileRungs(name)
	for _, h := range hits {
		if h.off == "" {
			return h, ""
		}
	}
	if len(hits) > 0 {
		return rungHit{}, fmt.Sprintf("%s %s: %s", hits[0].rung, hits[0].path, hits[0].off)
	}
	return rungHit{}, "no native " + name + " in this image"
}

// lookupPaths is commands.Invocation.Lookup: PATH as command -v and type
// -a see it (resident commands appear in /bin), so which agrees with them.
func (r *runner) lookupPaths(name string, all bool) []string {
	if name == "" {
		return nil
	}
	if all {
		return r.pathAll(name)
	}
	if p, ok := r.pathLookup(name); ok {
		return []string{p}
	}
	return nil
}

// readGuard notes whether a resident command read its stdin: a refusal
// after a read cannot be run again (the input is gone).
type readGuard struct {
	r    io.Reader
	read bool
}

func (g *readGuard) Read(p []byte) (int, error) {
	g.read = true
	return g.r.Read(p)
}

func (g *readGuard) WriteTo(w io.Writer) (int64, error) {
	g.read = true
	return io.Copy(w, g.r)
}

// attempt is what the shell keeps of one resident attempt.
type attempt struct {
	inv      commands.Invocation
	guard    readGuard
	refusals commands.Refusals
}

// runResident runs a resident command and climbs the ladder when it
// refuses the invocation.
func (r *runner) runResident(fn commands.Func, args, extraEnv []string) int {
	name := args[0][strings.LastIndexByte(args[0], '/')+1:]
	// one allocation for the three: this runs for every resident command
	at := new(attempt)
	inv := &at.inv
	r.fillInvocation(inv, args, extraEnv)
	at.guard = readGuard{r: inv.Stdin}
	inv.FallBack, inv.Stdin = &at.refusals, &at.guard
	guard := &at.guard
	trips := fileTrips(inv.Stdout, inv.Stderr)
	if r.fileSizeLimit() >= 0 {
		// a process killed by SIGXFSZ says nothing of its failed write
		inv.Stderr = &quietAfterTrip{w: inv.Stderr, out: inv.Stdout, trips: trips}
	}
	st := fn(r.context(), inv)
	if p, ok := inv.Stdout.(*pipe); ok && st != 0 && p.broken() {
		st = 141 // killed by SIGPIPE, as a process would be
	}
	if q, ok := inv.Stderr.(*quietAfterTrip); ok {
		if fileTrips(inv.Stdout, q.w) != trips {
			st = xfszStatus // killed by SIGXFSZ, as a process would be
			r.sizeNotice()
		}
	}
	if r.cancelled() {
		r.exiting = true
	}
	ref := inv.Refusal()
	if ref == nil || r.exiting {
		r.count(RungResident, "")
		return st
	}
	why := ""
	var next rungHit
	switch {
	case guard.read:
		// A contract violation of the command: say so rather than run it
		// twice over half its input.
		why = "it read its input before refusing"
	case r.modeOf(name) == ResidentOnly:
		why = "commands policy resident-only"
	default:
		next, why = r.nextRung(name)
	}
	if next.path == "" {
		r.count(RungMissing, "")
		return ref.Report(inv.Stderr, why)
	}
	r.count("", name) // the rung that runs it counts itself
	r.runFile(r.abs(next.path), args, extraEnv)
	return r.status
}

// nativeFirst runs name on its first WASM or native rung when the policy
// prefers those; false when there is none (the resident command runs).
func (r *runner) nativeFirst(name string, args, extraEnv []string) bool {
	if r.modeOf(name) != NativeFirst {
		return false
	}
	for _, h := range r.fileRungs(name) {
		if h.off == "" {
			r.runFile(r.abs(h.path), args, extraEnv)
			return true
		}
	}
	return false
}

// ladderLines describes every rung that has name, in the order the policy
// tries them, for type -a and command -V; nil when name has a single rung
// (the output is then bash's).
func (r *runner) ladderLines(name string) []string {
	if _, ok := r.sh.cfg.Commands[name]; !ok {
		return nil
	}
	hits := r.fileRungs(name)
	if len(hits) == 0 {
		return nil
	}
	mode := r.modeOf(name)
	res := fmt.Sprintf("%s is warren's resident %s", name, name)
	var files []string
	for _, h := range hits {
		note := string(h.rung)
		switch {
		case h.off != "":
			note += ", not used: " + h.off
		case mode == ResidentOnly:
			note += ", not used: commands policy resident-only"
		case mode == ResidentFirst:
			note += ", when the resident " + name + " refuses"
		}
		files = append(files, fmt.Sprintf("%s is %s (%s)", name, h.path, note))
	}
	if mode == NativeFirst {
		return append(files, res+" (when no other rung runs)")
	}
	return append([]string{res + " (runs first)"}, files...)
}
