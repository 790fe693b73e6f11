package shell

// Builtins that move around the filesystem: cd, pwd and the directory stack.

import (
	"path"
	"slices"
	"strings"
)

// biCd changes directory: no argument means $HOME, - means $OLDPWD
// (printed), and a relative name not starting with . is tried under each
// CDPATH entry first (printed when found there). -L, -P, -e and -@ are
// accepted; -P, given last, resolves symlinks.
func biCd(r *runner, args []string) int {
	args = args[1:]
	physical := false
	for len(args) > 0 && (args[0] == "-L" || args[0] == "-P" || args[0] == "-e" || args[0] == "-@") {
		physical = args[0] == "-P"
		args = args[1:]
	}
	r.cdPhysical = physical
	if len(args) > 0 && args[0] == "--" {
		args = args[1:]
	}
	if len(args) > 1 {
		r.errf("cd: too many arguments")
		return 1
	}
	dir := ""
	if len(args) == 0 {
		v := r.lookup("HOME")
		if v == nil || !v.Set {
			r.errf("cd: HOME not set")
			return 1
		}
		dir = v.str()
	} else {
		dir = args[0]
	}
	printDir := false
	if dir == "-" {
		v := r.lookup("OLDPWD")
		if v == nil || !v.Set {
			r.errf("cd: OLDPWD not set")
			return 1
		}
		dir = v.str()
		printDir = true
	}
	if dir == "" {
		return 0
	}
	if !strings.HasPrefix(dir, "/") && !strings.HasPrefix(dir, ".") {
		if v := r.lookup("CDPATH"); v != nil && v.str() != "" {
			for _, cp := range strings.Split(v.str(), ":") {
				cand := r.abs(path.Join(cp, dir))
				if fi, err := r.sh.cfg.FS.Stat(cand); err == nil && fi.IsDir() {
					dir = cand
					printDir = true
					break
				}
			}
		}
	}
	return r.chdir(dir, printDir)
}

// chdir makes dir the working directory and sets OLDPWD (exported) and
// PWD (unless read-only); printDir prints the new directory, as cd - and
// a CDPATH hit do.
func (r *runner) chdir(dir string, printDir bool) int {
	if strings.Contains(dir, "..") {
		// each component before a ".." must be a directory, as with chdir(2)
		parts := strings.Split(dir, "/")
		for i, c := range parts {
			if c == ".." && i > 0 {
				pre := strings.Join(parts[:i], "/")
				if pre == "" {
					continue
				}
				if fi, err := r.sh.cfg.FS.Stat(r.abs(pre)); err != nil || !fi.IsDir() {
					msg := "No such file or directory"
					if err == nil {
						msg = "Not a directory"
					}
					r.errf("cd: %s: %s", dir, msg)
					return 1
				}
			}
		}
	}
	p := r.abs(dir)
	fi, err := r.sh.cfg.FS.Stat(p)
	if err != nil {
		r.errf("cd: %s: %s", dir, errText(err))
		return 1
	}
	if !fi.IsDir() {
		r.errf("cd: %s: Not a directory", dir)
		return 1
	}
	if r.cdPhysical {
		if rp, err := r.sh.cfg.FS.Realpath(p); err == nil {
			p = rp
		}
	}
	r.setVar("OLDPWD", r.cwd)
	if v := r.lookup("OLDPWD"); v != nil {
		v.Attr |= attrExport
	}
	r.cwd = p
	if v := r.lookup("PWD"); v == nil || v.Attr&attrReadonly == 0 {
		r.setVar("PWD", p)
	}
	if printDir {
		r.out(p + "\n")
	}
	return 0
}

// biPwd prints the logical working directory, or with -P the one with
// symlinks resolved.
func biPwd(r *runner, args []string) int {
	for _, a := range args[1:] {
		if a == "-P" {
			if rp, err := r.sh.cfg.FS.Realpath(r.cwd); err == nil {
				r.out(rp + "\n")
				return 0
			}
		}
	}
	r.out(r.cwd + "\n")
	return 0
}

// tildeDir abbreviates $HOME at the start of d to ~, as dirs prints it.
func (r *runner) tildeDir(d string) string {
	home := ""
	if v := r.lookup("HOME"); v != nil {
		home = v.str()
	}
	if home != "" && (d == home || strings.HasPrefix(d, home+"/")) {
		return "~" + d[len(home):]
	}
	return d
}

// biDirs prints the directory stack, the working directory first: on one
// line with ~ for $HOME, -l without the ~, -p one a line, -v numbered;
// -c clears it.
func biDirs(r *runner, args []string) int {
	long, perLine, clear, numbered := false, false, false, false
	for _, a := range args[1:] {
		switch a {
		case "-l":
			long = true
		case "-p":
			perLine = true
		case "-c":
			clear = true
		case "-v":
			perLine, numbered = true, true
		default:
			r.errf("dirs: %s: invalid option", a)
			return 1
		}
	}
	if clear {
		r.dirs = nil
		return 0
	}
	stack := append([]string{r.cwd}, reversed(r.dirs)...)
	for i, d := range stack {
		if !long {
			d = r.tildeDir(d)
		}
		switch {
		case numbered:
			r.outf("%2d  %s\n", i, d)
		case perLine:
			r.out(d + "\n")
		default:
			if i > 0 {
				r.out(" ")
			}
			r.out(d)
		}
	}
	if !perLine {
		r.out("\n")
	}
	return 0
}

// reversed returns a reversed copy of s: r.dirs keeps the top of the
// stack last, dirs prints it first.
func reversed(s []string) []string {
	out := slices.Clone(s)
	slices.Reverse(out)
	return out
}

// biPushd pushes the working directory and changes to the argument, or
// with none swaps it with the top of the stack; then it prints the stack.
func biPushd(r *runner, args []string) int {
	if len(args) > 1 && args[1] == "--" {
		args = append([]string{args[0]}, args[2:]...)
	} else if len(args) > 1 && strings.HasPrefix(args[1], "-") && len(args[1]) > 1 {
		r.errf("pushd: %s: invalid option", args[1])
		return 2
	}
	if len(args) > 2 {
		r.errf("pushd: too many arguments")
		return 1
	}
	if len(args) < 2 {
		if len(r.dirs) == 0 {
			r.errf("pushd: no other directory")
			return 1
		}
		top := r.dirs[len(r.dirs)-1]
		old := r.cwd
		if st := r.chdir(top, false); st != 0 {
			return st
		}
		r.dirs[len(r.dirs)-1] = old
		return biDirs(r, []string{"dirs"})
	}
	old := r.cwd
	if st := r.chdir(args[1], false); st != 0 {
		return st
	}
	r.dirs = append(r.dirs, old)
	return biDirs(r, []string{"dirs"})
}

// biPopd changes to the directory on top of the stack and removes it,
// then prints the stack; +N and -N are not supported.
func biPopd(r *runner, args []string) int {
	if len(args) > 1 && args[1] == "--" {
		args = append([]string{args[0]}, args[2:]...)
	}
	if len(args) > 1 {
		r.errf("popd: %s: invalid argument", args[1])
		return 2
	}
	if len(r.dirs) == 0 {
		r.errf("popd: directory stack empty")
		return 1
	}
	top := r.dirs[len(r.dirs)-1]
	if st := r.chdir(top, false); st != 0 {
		return st
	}
	r.dirs = r.dirs[:len(r.dirs)-1]
	return biDirs(r, []string{"dirs"})
}
