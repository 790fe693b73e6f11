package shell

import (
	"io"
	"slices"
	"strings"

	"github.com/warren-sandbox/warren/commands/bashfmt"
)

// complete and compopt keep programmable-completion specs as bash does, so
// scripts that register completions (a sourced .bashrc, a tool's setup
// script) run unchanged. Nothing completes from them: a sandbox has no
// readline. The specs live in the session (not in saved state: a resumed
// sandbox starts without them), listed in the order they were defined
// (bash lists its hash table's order).

// compSpec is one name's completion specification.
type compSpec struct {
	opts    []string // -o options, in bash's print order
	actions []string // -f, -d, ..., -A NAME as printed
	glob, words, prefix, suffix, filter,
	command, function string
	set map[byte]bool // which of G W P S X C F were given
}

// compTable holds the specs; names keeps definition order. Copied on
// write by runner.own like the session's other maps.
type compTable struct {
	specs map[string]*compSpec
	names []string
}

func (t *compTable) clone() *compTable {
	if t == nil {
		return nil
	}
	c := &compTable{specs: make(map[string]*compSpec, len(t.specs)), names: append([]string(nil), t.names...)}
	for k, v := range t.specs {
		c.specs[k] = v
	}
	return c
}

func (t *compTable) put(name string, s *compSpec) {
	if _, ok := t.specs[name]; !ok {
		t.names = append(t.names, name)
	}
	t.specs[name] = s
}

func (t *compTable) remove(name string) bool {
	if t == nil || t.specs[name] == nil {
		return false
	}
	delete(t.specs, name)
	for i, n := range t.names {
		if n == name {
			t.names = append(t.names[:i:i], t.names[i+1:]...)
			break
		}
	}
	return true
}

// compOptions are compopt/complete -o names, in the order bash prints them.
var compOptions = []string{"bashdefault", "default", "dirnames", "filenames", "noquote", "nosort", "nospace", "plusdirs"}

// compActions maps -A names to the short flag bash prints for them ("" =
// printed as -A NAME), in bash's print order within each kind.
var compActions = []struct{ name, flag string }{
	{"alias", "-a"}, {"arrayvar", ""}, {"binding", ""}, {"builtin", "-b"}, {"command", "-c"},
	{"directory", "-d"}, {"disabled", ""}, {"enabled", ""}, {"export", "-e"}, {"file", "-f"},
	{"function", ""}, {"group", "-g"}, {"helptopic", ""}, {"hostname", ""}, {"job", "-j"},
	{"keyword", "-k"}, {"running", ""}, {"service", "-s"}, {"setopt", ""}, {"shopt", ""},
	{"signal", ""}, {"stopped", ""}, {"user", "-u"}, {"variable", "-v"},
}

const completeUsage = "complete: usage: complete [-abcdefgjksuv] [-pr] [-DEI] [-o option] [-A action] [-G globpat] [-W wordlist] [-F function] [-C command] [-X filterpat] [-P prefix] [-S suffix] [name ...]"

func biComplete(r *runner, args []string) int {
	spec := &compSpec{set: map[byte]bool{}}
	opts := map[string]bool{}
	acts := map[string]bool{}
	print, remove := false, false
	var special []string // -D -E -I
	i := 1
	for ; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			i++
			break
		}
		if len(a) < 2 || a[0] != '-' {
			break
		}
		for j := 1; j < len(a); j++ {
			c := a[j]
			switch c {
			case 'p':
				print = true
			case 'r':
				remove = true
			case 'D', 'E', 'I':
				special = append(special, "-"+string(c))
			case 'a', 'b', 'c', 'd', 'e', 'f', 'g', 'j', 'k', 's', 'u', 'v':
				for _, ca := range compActions {
					if ca.flag == "-"+string(c) {
						acts[ca.name] = true
					}
				}
			case 'o', 'A', 'G', 'W', 'F', 'C', 'X', 'P', 'S':
				val := a[j+1:]
				if val == "" {
					if i+1 >= len(args) {
						r.errf("complete: -%c: option requires an argument", c)
						io.WriteString(r.stderr(), completeUsage+"\n") // bash prints usage lines bare
						return 2
					}
					i++
					val = args[i]
				}
				j = len(a)
				switch c {
				case 'o':
					if !slices.Contains(compOptions, val) {
						r.errf("complete: %s: invalid option name", val)
						return 2
					}
					opts[val] = true
				case 'A':
					known := false
					for _, ca := range compActions {
						if ca.name == val {
							known = true
						}
					}
					if !known {
						r.errf("complete: %s: invalid action name", val)
						return 2
					}
					acts[val] = true
				case 'G':
					spec.glob = val
				case 'W':
					spec.words = val
				case 'F':
					spec.function = val
				case 'C':
					spec.command = val
				case 'X':
					spec.filter = val
				case 'P':
					spec.prefix = val
				case 'S':
					spec.suffix = val
				}
				spec.set[c] = true
			default:
				r.errf("complete: -%c: invalid option", c)
				io.WriteString(r.stderr(), completeUsage+"\n") // bash prints usage lines bare
				return 2
			}
		}
	}
	names := append(special, args[i:]...)
	t := r.compSpecs
	if remove {
		if len(names) == 0 {
			r.compSpecs = nil
			return 0
		}
		st := 0
		r.ownComp()
		for _, n := range names {
			if !r.compSpecs.remove(n) {
				r.errf("complete: %s: no completion specification", n)
				st = 1
			}
		}
		return st
	}
	if print || len(names) == 0 && len(args) == 1 {
		if len(names) == 0 {
			if t != nil {
				for _, n := range t.names {
					r.out(t.specs[n].line(n))
				}
			}
			return 0
		}
		st := 0
		for _, n := range names {
			if t == nil || t.specs[n] == nil {
				r.errf("complete: %s: no completion specification", n)
				st = 1
				continue
			}
			r.out(t.specs[n].line(n))
		}
		return st
	}
	if len(names) == 0 {
		return 0 // options without names: bash accepts and does nothing
	}
	for _, o := range compOptions {
		if opts[o] {
			spec.opts = append(spec.opts, o)
		}
	}
	// bash prints the actions with a letter first, then the -A ones
	for _, ca := range compActions {
		if acts[ca.name] && ca.flag != "" {
			spec.actions = append(spec.actions, ca.flag)
		}
	}
	for _, ca := range compActions {
		if acts[ca.name] && ca.flag == "" {
			spec.actions = append(spec.actions, "-A "+ca.name)
		}
	}
	r.ownComp()
	for _, n := range names {
		r.compSpecs.put(n, spec)
	}
	return 0
}

// ownComp gives the runner its own copy of the specs before a write.
func (r *runner) ownComp() {
	if r.compSpecs == nil {
		r.compSpecs = &compTable{specs: map[string]*compSpec{}}
		return
	}
	r.compSpecs = r.compSpecs.clone()
}

// line is the spec as `complete -p` prints it, reusable as input.
func (s *compSpec) line(name string) string {
	var b strings.Builder
	b.WriteString("complete")
	for _, o := range s.opts {
		b.WriteString(" -o " + o)
	}
	for _, a := range s.actions {
		b.WriteString(" " + a)
	}
	for _, f := range []struct {
		c byte
		v string
	}{{'G', s.glob}, {'W', s.words}, {'P', s.prefix}, {'S', s.suffix}, {'X', s.filter}} {
		if s.set[f.c] {
			b.WriteString(" -" + string(f.c) + " " + bashfmt.QuoteAlias(f.v))
		}
	}
	if s.set['C'] {
		b.WriteString(" -C " + bashfmt.QuoteAlias(s.command))
	}
	if s.set['F'] {
		b.WriteString(" -F " + s.function)
	}
	b.WriteString(" " + name + "\n")
	return b.String()
}

// compopt changes a spec's -o options; with no names it would change the
// completion in progress, and there never is one here.
func biCompopt(r *runner, args []string) int {
	on, off := map[string]bool{}, map[string]bool{}
	i := 1
	special := []string{}
	for ; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			i++
			break
		}
		if len(a) < 2 || (a[0] != '-' && a[0] != '+') {
			break
		}
		switch a[1:] {
		case "o":
			if i+1 >= len(args) {
				r.errf("compopt: %s: option requires an argument", a)
				return 2
			}
			i++
			if !slices.Contains(compOptions, args[i]) {
				r.errf("compopt: %s: invalid option name", args[i])
				return 2
			}
			if a[0] == '-' {
				on[args[i]] = true
			} else {
				off[args[i]] = true
			}
		case "D", "E", "I":
			special = append(special, a)
		default:
			r.errf("compopt: %s: invalid option", a)
			io.WriteString(r.stderr(), "compopt: usage: compopt [-o|+o option] [-DEI] [name ...]\n")
			return 2
		}
	}
	names := append(special, args[i:]...)
	if len(names) == 0 {
		r.errf("compopt: not currently executing completion function")
		return 1
	}
	st := 0
	for _, n := range names {
		if r.compSpecs == nil || r.compSpecs.specs[n] == nil {
			r.errf("compopt: %s: no completion specification", n)
			st = 1
			continue
		}
		r.ownComp()
		old := r.compSpecs.specs[n]
		ns := *old
		ns.opts = nil
		for _, o := range compOptions {
			if (slices.Contains(old.opts, o) || on[o]) && !off[o] {
				ns.opts = append(ns.opts, o)
			}
		}
		r.compSpecs.specs[n] = &ns
	}
	return st
}
