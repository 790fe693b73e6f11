package shell

// Builtins for shell options: set and shopt, with the listings they print
// (set with no arguments lists variables and functions).

import (
	"slices"
	"sort"
	"strings"

	"github.com/warren-sandbox/warren/commands/bashfmt"
	"mvdan.cc/sh/v3/expand"
)

// biSet sets or clears option flags (-e, +x, -o NAME...); the words after
// them, or after -- or -, become the positional parameters. With no
// arguments it lists the variables and functions.
func biSet(r *runner, args []string) int {
	args = args[1:]
	if len(args) == 0 {
		r.printVars(false)
		return 0
	}
	for len(args) > 0 {
		a := args[0]
		if a == "--" {
			r.params = append([]string(nil), args[1:]...)
			return 0
		}
		if a == "+" {
			args = args[1:]
			continue
		}
		if a == "-" {
			r.opts[optXtrace], r.opts[optVerbose] = false, false
			args = args[1:]
			if len(args) > 0 {
				r.params = append([]string(nil), args...)
			}
			return 0
		}
		if len(a) < 2 || (a[0] != '-' && a[0] != '+') {
			r.params = append([]string(nil), args...)
			return 0
		}
		on := a[0] == '-'
		if a[1:] == "o" {
			if len(args) < 2 {
				r.printOpts(on)
				return 0
			}
			if !r.setOption(args[1], on) {
				r.errf("set: %s: invalid option name", args[1])
				return 1
			}
			args = args[2:]
			continue
		}
		// Each o of a cluster takes the next argument as an option name,
		// as bash does: set -euo pipefail, set -oo pipefail errexit.
		names := args[1:]
		for _, c := range a[1:] {
			if c == 'o' {
				if len(names) == 0 {
					r.printOpts(on)
					continue
				}
				if !r.setOption(names[0], on) {
					r.errf("set: %s: invalid option name", names[0])
					return 1
				}
				names = names[1:]
				continue
			}
			if !r.setFlag(byte(c), on) {
				r.errf("set: %c%c: invalid option", a[0], c)
				return 2
			}
		}
		args = names
	}
	return 0
}

// printOpts lists the set -o options by name: as a name/on-off table for
// `set -o`, or as commands that restore them for `set +o`.
func (r *runner) printOpts(minus bool) {
	names := make([]int, numOpts)
	for i := range names {
		names[i] = i
	}
	sort.Slice(names, func(a, b int) bool { return optNames[names[a]] < optNames[names[b]] })
	for _, i := range names {
		if minus {
			st := "off"
			if r.opts[i] {
				st = "on"
			}
			r.outf("%-15s\t%s\n", optNames[i], st)
		} else {
			c := "+o"
			if r.opts[i] {
				c = "-o"
			}
			r.outf("set %s %s\n", c, optNames[i])
		}
	}
}

// printVars lists the set variables of every scope (the innermost wins),
// sorted and quoted so they can be read back, as set does; then the
// functions, unless declareStyle (plain declare) leaves them out.
func (r *runner) printVars(declareStyle bool) {
	seen := map[string]*Var{}
	for s := r.vars; s != nil; s = s.parent {
		for k, v := range s.vars {
			if _, ok := seen[k]; !ok {
				seen[k] = v
			}
		}
	}
	names := make([]string, 0, len(seen))
	for k, v := range seen {
		if v.Set {
			names = append(names, k)
		}
	}
	sort.Strings(names)
	for _, n := range names {
		v := seen[n]
		switch v.Kind {
		case expand.Indexed, expand.Associative:
			r.out(n + "=" + arrayLiteral(v) + "\n")
		default:
			r.out(n + "=" + bashfmt.QuoteSet(v.Str) + "\n")
		}
	}
	if !declareStyle {
		fnames := make([]string, 0, len(r.funcs))
		for k := range r.funcs {
			fnames = append(fnames, k)
		}
		sort.Strings(fnames)
		for _, f := range fnames {
			r.out(r.funcSource(f))
		}
	}
}

// funcSource renders a function definition in bash's layout for set,
// declare -f and type (funcprint.go).
func (r *runner) funcSource(name string) string {
	p := newBashLayout()
	p.function(name, r.funcs[name], 0, false)
	p.str("\n")
	return p.b.String()
}

// biShopt sets (-s), unsets (-u), queries (-q) or lists shopt options, or
// with -o the set -o ones; -p lists them as commands. Querying an option
// that is off, or naming an unknown one, makes the status 1.
func biShopt(r *runner, args []string) int {
	args = args[1:]
	set, unset, quiet, oMode, print := false, false, false, false, false
	for len(args) > 0 && strings.HasPrefix(args[0], "-") {
		for _, c := range args[0][1:] {
			switch c {
			case 's':
				set = true
			case 'u':
				unset = true
			case 'q':
				quiet = true
			case 'o':
				oMode = true
			case 'p':
				print = true
			default:
				r.errf("shopt: -%c: invalid option", c)
				return 2
			}
		}
		args = args[1:]
	}
	_ = print
	if len(args) == 0 {
		names := shoptNames
		if oMode {
			names = optNames[:]
		}
		// bash lists set -o names sorted, shopt's in its table's order
		sorted := names
		if oMode {
			sorted = slices.Clone(names)
			sort.Strings(sorted)
		}
		for _, n := range sorted {
			on := r.shopts[n]
			if oMode {
				on = r.optByName(n)
			}
			if (set && !on) || (unset && on) {
				continue
			}
			r.shoptLine(n, on, oMode, print)
		}
		return 0
	}
	st := 0
	for _, n := range args {
		if oMode {
			valid := slices.Contains(optNames[:], n)
			if !valid {
				r.errf("shopt: %s: invalid option name", n)
				st = 1
				continue
			}
			if set || unset {
				r.setOption(n, set)
				continue
			}
			on := r.optByName(n)
			if !quiet {
				r.shoptLine(n, on, true, print)
			}
			if !on {
				st = 1
			}
			continue
		}
		if !slices.Contains(shoptNames, n) {
			r.errf("shopt: %s: invalid shell option name", n)
			st = 1
			continue
		}
		if set || unset {
			r.setShopt(n, set)
			continue
		}
		on := r.shopts[n]
		if !quiet {
			r.shoptLine(n, on, false, print)
		}
		if !on {
			st = 1
		}
	}
	return st
}

// optByName reports whether the set -o option named n is on; an unknown
// name is off.
func (r *runner) optByName(n string) bool {
	for i, o := range optNames {
		if o == n {
			return r.opts[i]
		}
	}
	return false
}

// shoptLine prints one option as shopt lists it: as the command that
// restores it with -p, else as "name<TAB>on" or "off".
func (r *runner) shoptLine(n string, on, oMode, print bool) {
	if print {
		switch {
		case oMode && on:
			r.outf("set -o %s\n", n)
		case oMode:
			r.outf("set +o %s\n", n)
		case on:
			r.outf("shopt -s %s\n", n)
		default:
			r.outf("shopt -u %s\n", n)
		}
		return
	}
	st := "off"
	if on {
		st = "on"
	}
	r.outf("%-15s\t%s\n", n, st)
}
