package shell

// Builtins that remove, define or list names: unset, alias, unalias,
// compgen and help.

import (
	"slices"
	"sort"
	"strings"

	"github.com/warren-sandbox/warren/commands/bashfmt"
	"mvdan.cc/sh/v3/syntax"
)

// biUnset removes variables or array elements, functions with -f, or with
// -n the name itself (not a nameref's target). Without a flag, a name that
// is no variable but a function removes the function, as in bash.
func biUnset(r *runner, args []string) int {
	args = args[1:]
	mode := ""
	for len(args) > 0 && strings.HasPrefix(args[0], "-") && len(args[0]) > 1 {
		switch args[0] {
		case "-v", "-f", "-n":
			mode = args[0]
		default:
			r.errf("unset: %s: invalid option", args[0])
			return 2
		}
		args = args[1:]
	}
	st := 0
	for _, name := range args {
		if mode == "-f" {
			if !r.unsetFunc(name) {
				st = 1
			}
			continue
		}
		base := name
		if i := strings.IndexByte(name, '['); i > 0 {
			base = name[:i]
		}
		if !syntax.ValidName(base) {
			r.errf("unset: `%s': not a valid identifier", name)
			st = 1
			continue
		}
		if mode == "-n" {
			r.own()
			for s := r.vars; s != nil; s = s.parent {
				if _, ok := s.vars[name]; ok {
					delete(s.vars, name)
					break
				}
			}
			continue
		}
		if mode == "" && r.lookup(base) == nil {
			if _, ok := r.funcs[name]; ok {
				if !r.unsetFunc(name) {
					st = 1
				}
				continue
			}
		}
		if !r.unsetVar(name) {
			st = 1
		}
	}
	return st
}

// biAlias defines NAME=VALUE aliases and prints the ones named without a
// value, or all of them, sorted, as alias commands that recreate them.
func biAlias(r *runner, args []string) int {
	args = args[1:]
	if len(args) > 0 && args[0] == "-p" {
		args = args[1:]
	}
	if len(args) == 0 {
		names := make([]string, 0, len(r.aliases))
		for k := range r.aliases {
			names = append(names, k)
		}
		sort.Strings(names)
		for _, n := range names {
			r.outf("alias %s=%s\n", n, bashfmt.QuoteAlias(r.aliases[n]))
		}
		return 0
	}
	st := 0
	for _, a := range args {
		name, val, ok := strings.Cut(a, "=")
		if !ok {
			if v, ok := r.aliases[name]; ok {
				r.outf("alias %s=%s\n", name, bashfmt.QuoteAlias(v))
			} else {
				r.errf("alias: %s: not found", name)
				st = 1
			}
			continue
		}
		r.own()
		if r.aliases == nil {
			r.aliases = map[string]string{}
		}
		r.aliases[name] = val
	}
	return st
}

// biUnalias removes the named aliases, or all with -a; an unknown name is
// reported and makes the status 1, the other names are still removed.
func biUnalias(r *runner, args []string) int {
	st := 0
	for _, a := range args[1:] {
		if a == "-a" {
			r.own()
			r.aliases = map[string]string{}
			continue
		}
		if _, ok := r.aliases[a]; !ok {
			r.errf("unalias: %s: not found", a)
			st = 1
			continue
		}
		r.own()
		delete(r.aliases, a)
	}
	return st
}

// biCompgen prints the candidates that start with the prefix argument,
// from -W words and from the name sets -a, -b, -c, -e, -k, -v and -A KIND
// (files are not listed); its status is 1 when nothing matches.
func biCompgen(r *runner, args []string) int {
	args = args[1:]
	var cands []string
	prefix := ""
	for i := 0; i < len(args); i++ {
		switch args[i] {
		case "-W":
			if i+1 < len(args) {
				i++
				fs, _ := r.fieldsFromString(args[i])
				cands = append(cands, fs...)
			}
		case "-A", "-a", "-b", "-c", "-f", "-v", "-k", "-e":
			kind := args[i][1:]
			if args[i] == "-A" && i+1 < len(args) {
				i++
				kind = args[i]
			}
			switch kind {
			case "v", "variable":
				for s := r.vars; s != nil; s = s.parent {
					for k := range s.vars {
						cands = append(cands, k)
					}
				}
			case "function":
				for k := range r.funcs {
					cands = append(cands, k)
				}
			case "b", "builtin":
				for k := range builtins {
					cands = append(cands, k)
				}
			case "k", "keyword":
				cands = append(cands, keywords...)
			case "a", "alias":
				for k := range r.aliases {
					cands = append(cands, k)
				}
			case "c", "command":
				for k := range builtins {
					cands = append(cands, k)
				}
				for k := range r.funcs {
					cands = append(cands, k)
				}
				for k := range r.sh.cfg.Commands {
					cands = append(cands, k)
				}
			case "e", "export":
				for _, kv := range r.environ() {
					k, _, _ := strings.Cut(kv, "=")
					cands = append(cands, k)
				}
			}
		default:
			prefix = args[i]
		}
	}
	sort.Strings(cands)
	cands = slices.Compact(cands)
	st := 1
	for _, c := range cands {
		if strings.HasPrefix(c, prefix) {
			r.out(c + "\n")
			st = 0
		}
	}
	return st
}

// fieldsFromString expands and splits s as an unquoted word list, for
// compgen -W; text that does not parse is split at blanks instead.
func (r *runner) fieldsFromString(s string) ([]string, bool) {
	ws, err := parseWords(s)
	if err != nil {
		return strings.Fields(s), true
	}
	return r.fields(ws...)
}

// biHelp lists the builtins. There are no help texts, so `help NAME` only
// says whether NAME is a builtin.
func biHelp(r *runner, args []string) int {
	if len(args) > 1 && args[1] == "--" {
		args = append([]string{args[0]}, args[2:]...)
	}
	names := make([]string, 0, len(builtins))
	for k := range builtins {
		names = append(names, k)
	}
	sort.Strings(names)
	if len(args) > 1 {
		if _, ok := builtins[args[1]]; ok {
			r.outf("%s: %s [args]\n    The %s shell builtin (warren).\n", args[1], args[1], args[1])
			return 0
		}
		r.errf("help: no help topics match `%s'.  Try `help help' or `man -k %s' or `info %s'.", args[1], args[1], args[1])
		return 1
	}
	r.out("warren bash-compatible shell. Builtins:\n")
	r.out(strings.Join(names, " ") + "\n")
	return 0
}
