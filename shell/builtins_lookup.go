package shell

// Builtins that say what a name is and run it as such: type, command, builtin.

import (
	"slices"
	"strings"

	"github.com/warren-sandbox/warren/commands/bashfmt"
)

// pathLookupAny finds name in PATH as source does: any file that is not a
// directory, executable or not.
func (r *runner) pathLookupAny(name string) (string, bool) {
	pathv := r.pathValue()
	for _, dir := range strings.Split(pathv, ":") {
		p := r.abs(dir + "/" + name)
		if fi, err := r.sh.cfg.FS.Stat(p); err == nil && !fi.IsDir() {
			return p, true
		}
	}
	return "", false
}

// classify says what running name would run, in bash's order: an alias
// (when aliases expand), keyword, function, builtin, then a file: a path
// with a slash, a PATH hit, or a resident command (shown as /bin/NAME).
func (r *runner) classify(name string) (kind, detail string) {
	if a, ok := r.aliases[name]; ok && r.shopts["expand_aliases"] {
		return "alias", a
	}
	if slices.Contains(keywords, name) {
		return "keyword", ""
	}
	if _, ok := r.funcs[name]; ok {
		return "function", ""
	}
	if _, ok := builtins[name]; ok {
		return "builtin", ""
	}
	if strings.Contains(name, "/") {
		if fi, err := r.sh.cfg.FS.Stat(r.abs(name)); err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
			return "file", name
		}
		return "", ""
	}
	if p, ok := r.pathLookup(name); ok {
		return "file", p
	}
	if r.resident(name) {
		return "file", "/bin/" + name
	}
	return "", ""
}

// biType says what each name is, as bash's type does: -t prints the kind
// only, -p and -P the file's path, -a every match (with every ladder rung
// that has the command), -f leaves functions out. Status 1 if a name is
// not found.
func biType(r *runner, args []string) int {
	args = args[1:]
	tflag, pflag, aflag, Pflag, fflag := false, false, false, false, false
	for len(args) > 0 && strings.HasPrefix(args[0], "-") && len(args[0]) > 1 {
		for _, c := range args[0][1:] {
			switch c {
			// the last of -t, -p and -P decides (type -tP prints a path)
			case 't':
				tflag, pflag, Pflag = true, false, false
			case 'p':
				tflag, pflag, Pflag = false, true, false
			case 'a':
				aflag = true
			case 'P':
				tflag, pflag, Pflag = false, false, true
			case 'f':
				fflag = true
			default:
				r.errf("type: -%c: invalid option", c)
				r.usage("type: usage: type [-afptP] name [name ...]")
				return 2
			}
		}
		args = args[1:]
	}
	st := 0
	for _, name := range args {
		var kinds [][2]string
		if aflag {
			if a, ok := r.aliases[name]; ok {
				kinds = append(kinds, [2]string{"alias", a})
			}
			if slices.Contains(keywords, name) {
				kinds = append(kinds, [2]string{"keyword", ""})
			}
			if _, ok := r.funcs[name]; ok && !fflag {
				kinds = append(kinds, [2]string{"function", ""})
			}
			if _, ok := builtins[name]; ok {
				kinds = append(kinds, [2]string{"builtin", ""})
			}
			if lines := r.ladderLines(name); lines != nil && !tflag && !pflag {
				// every rung that has the command, in the policy's order
				for _, l := range lines {
					kinds = append(kinds, [2]string{"rung", l})
				}
			} else {
				for _, p := range r.pathAll(name) {
					kinds = append(kinds, [2]string{"file", p})
				}
			}
		} else if Pflag {
			if p, ok := r.pathLookup(name); ok {
				kinds = append(kinds, [2]string{"file", p})
			} else if r.resident(name) {
				kinds = append(kinds, [2]string{"file", "/bin/" + name})
			}
		} else {
			k, d := r.classify(name)
			if fflag && k == "function" {
				k, d = "", ""
				if _, ok := builtins[name]; ok {
					k = "builtin"
				} else if p, ok := r.pathLookup(name); ok {
					k, d = "file", p
				}
			}
			if k != "" {
				kinds = append(kinds, [2]string{k, d})
			}
		}
		if len(kinds) == 0 {
			if !tflag && !pflag && !Pflag {
				r.errf("type: %s: not found", name)
			}
			st = 1
			continue
		}
		for _, kd := range kinds {
			switch {
			case tflag:
				r.out(kd[0] + "\n")
			case pflag || Pflag:
				if kd[0] == "file" {
					r.out(kd[1] + "\n")
				}
			default:
				switch kd[0] {
				case "alias":
					r.outf("%s is aliased to `%s'\n", name, kd[1])
				case "keyword":
					r.outf("%s is a shell keyword\n", name)
				case "function":
					r.outf("%s is a function\n", name)
					r.out(r.funcSource(name))
				case "builtin":
					r.outf("%s is a shell builtin\n", name)
				case "file":
					r.outf("%s is %s\n", name, kd[1])
				case "rung":
					r.out(kd[1] + "\n")
				}
			}
		}
	}
	return st
}

// pathAll lists every PATH entry where name is executable, for type -a; a
// resident command counts as present in /bin and /usr/bin without a file
// there, and as /bin/NAME when PATH has neither.
func (r *runner) pathAll(name string) []string {
	var out []string
	pathv := r.pathValue()
	for _, dir := range strings.Split(pathv, ":") {
		p := strings.TrimSuffix(dir, "/") + "/" + name
		fi, err := r.sh.cfg.FS.Stat(r.abs(p))
		if err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
			out = append(out, p)
		} else if err != nil && (dir == "/bin" || dir == "/usr/bin") && r.resident(name) {
			out = append(out, p)
		}
	}
	if len(out) == 0 && r.resident(name) {
		out = append(out, "/bin/"+name)
	}
	return out
}

// biCommand runs a name bypassing functions (a builtin, else an external
// command), or with -v or -V says what it is, as command -v and type do;
// -p looks it up in the default path instead of $PATH.
func biCommand(r *runner, args []string) int {
	args = args[1:]
	v, V, std := false, false, false
	for len(args) > 0 && strings.HasPrefix(args[0], "-") && len(args[0]) > 1 {
		if args[0] == "--" {
			args = args[1:]
			break
		}
		for _, c := range args[0][1:] {
			switch c {
			case 'v':
				v = true
			case 'V':
				V = true
			case 'p':
				std = true
			default:
				r.errf("command: -%c: invalid option", c)
				r.usage("command: usage: command [-pVv] command [arg ...]")
				return 2
			}
		}
		args = args[1:]
	}
	if len(args) == 0 {
		return 0
	}
	if std && !r.stdPath {
		r.stdPath = true
		defer func() { r.stdPath = false }()
	}
	if v || V {
		st := 0
		for _, name := range args {
			k, d := r.classify(name)
			switch {
			case k == "":
				if V {
					r.errf("command: %s: not found", name)
				}
				st = 1
			case v && k == "alias":
				r.outf("alias %s=%s\n", name, bashfmt.QuoteAlias(d))
			case v && k == "file":
				r.out(d + "\n")
			case v:
				r.out(name + "\n")
			default:
				if lines := r.ladderLines(name); lines != nil && k == "file" {
					r.out(strings.Join(lines, "\n") + "\n")
					continue
				}
				return biType(r, []string{"type", name})
			}
		}
		return st
	}
	if b, ok := builtins[args[0]]; ok {
		return b(r, args)
	}
	r.external(args, nil)
	return r.status
}

// biBuiltin runs the named builtin even where a function has its name.
func biBuiltin(r *runner, args []string) int {
	if len(args) < 2 {
		return 0
	}
	b, ok := builtins[args[1]]
	if !ok {
		r.errf("builtin: %s: not a shell builtin", args[1])
		return 1
	}
	return b(r, args[1:])
}

// biHash keeps no table (commands are looked up on every run), but checks
// its options and names as bash does: a name PATH does not reach is an
// error, and -t prints where a name is found.
func biHash(r *runner, args []string) int {
	args = args[1:]
	var del, print, path bool
	for len(args) > 0 && len(args[0]) > 1 && args[0][0] == '-' {
		o := args[0]
		args = args[1:]
		if o == "--" {
			break
		}
		for _, c := range o[1:] {
			switch c {
			case 'd':
				del = true
			case 't':
				print = true
			case 'p':
				path = true
				if len(args) > 0 {
					args = args[1:] // the pathname
				}
			case 'l', 'r':
			default:
				r.errf("hash: -%c: invalid option", c)
				r.usage("hash: usage: hash [-lr] [-p pathname] [-dt] [name ...]")
				return 2
			}
		}
	}
	if del || path {
		return 0
	}
	st := 0
	for _, name := range args {
		p := r.lookupPaths(name, false)
		if strings.Contains(name, "/") || len(p) == 0 {
			if !strings.Contains(name, "/") || print {
				r.errf("hash: %s: not found", name)
				st = 1
			}
			continue
		}
		if print {
			if len(args) > 1 {
				r.outf("%s\t%s\n", name, p[0])
			} else {
				r.outf("%s\n", p[0])
			}
		}
	}
	return st
}
