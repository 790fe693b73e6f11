package shell

// Builtins that move around the filesystem: cd, pwd and the directory stack.

import (
	"path"
	"strings"
)

// biCd changes directory: no argument means $HOME, - means $OLDPWD
// (printed), and a relative name not starting with . is tried under each
// CDPATH entry first (printed when found there). -L, -P, -e and -@ are
// accepted; -P, given last, resolves symlinks.
func biCd(r *runner, args []string) int { return r.cd("cd", args[1:]) }

// cd is cd's work; who names the builtin in messages (pushd and popd
// change directory through it, as bash's do through cd_builtin).
func (r *runner) cd(who string, args []string) int {
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
		r.errf("%s: too many arguments", who)
		return 1
	}
	dir := ""
	if len(args) == 0 {
		v := r.lookup("HOME")
		if v == nil || !v.Set {
			r.errf("%s: HOME not set", who)
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
			r.errf("%s: OLDPWD not set", who)
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
	return r.chdir(who, dir, printDir)
}

// chdir makes dir the working directory and sets OLDPWD (exported) and
// PWD (unless read-only); printDir prints the new directory, as cd - and
// a CDPATH hit do.
func (r *runner) chdir(who, dir string, printDir bool) int {
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
					r.errf("%s: %s: %s", who, dir, msg)
					return 1
				}
			}
		}
	}
	p := r.abs(dir)
	fi, err := r.sh.cfg.FS.Stat(p)
	if err != nil {
		r.errf("%s: %s: %s", who, dir, errText(err))
		return 1
	}
	if !fi.IsDir() {
		r.errf("%s: %s: Not a directory", who, dir)
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
