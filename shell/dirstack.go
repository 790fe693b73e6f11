package shell

// The directory stack: dirs, pushd, popd and $DIRSTACK, after bash 5.2's
// pushd.def. r.dirs holds the stack without the working directory, its
// bottom first and its top (dirs' +1) last, as bash's array does; the
// working directory is always entry 0. Where bash's own bookkeeping has
// quirks a script can see (pushd -n +N drops an entry, popd "" removes
// the bottom one), they are kept: scripts see what bash shows them.

import (
	"strconv"
	"strings"
	"unicode"

	"mvdan.cc/sh/v3/syntax"
)

const (
	dirsUsage  = "dirs: usage: dirs [-clpv] [+N] [-N]"
	pushdUsage = "pushd: usage: pushd [-n] [+N | -N | dir]"
	popdUsage  = "popd: usage: popd [-n] [+N | -N]"
)

// tildeDir abbreviates $HOME at the start of d to ~, as dirs prints it
// (bash's polite_directory_format: not when HOME is / or empty).
func (r *runner) tildeDir(d string) string {
	home := ""
	if v := r.lookup("HOME"); v != nil {
		home = v.str()
	}
	if len(home) > 1 && (d == home || strings.HasPrefix(d, home+"/")) {
		return "~" + d[len(home):]
	}
	return d
}

// legalNumber reads a decimal integer as bash's legal_number does:
// optional leading white space and sign, digits, optional trailing
// blanks; nothing else, and no overflow.
func legalNumber(s string) (int64, bool) {
	t := strings.TrimLeftFunc(s, unicode.IsSpace)
	t = strings.TrimRight(t, " \t")
	if t == "" {
		return 0, false
	}
	digits := strings.TrimLeft(t, "+-")
	if len(t)-len(digits) > 1 || digits == "" {
		return 0, false
	}
	n, err := strconv.ParseInt(t, 10, 64)
	if err != nil {
		return 0, false
	}
	return n, true
}

// dirsError is bash's pushd_error: an empty stack, or an index past it.
func (r *runner) dirsError(who, arg string) int {
	if len(r.dirs) == 0 {
		r.errf("%s: directory stack empty", who)
	} else {
		r.errf("%s: %s: directory stack index out of range", who, arg)
	}
	return 1
}

// pushDir adds d on top of the stack, charged to the memory budget.
func (r *runner) pushDir(d string) bool {
	if !r.memGrow(strCost(d)) {
		return false
	}
	r.dirs = append(r.dirs, d)
	return true
}

// dropDir removes entry i of r.dirs (bottom first) and gives back its charge.
func (r *runner) dropDir(i int) {
	r.memGrow(-strCost(r.dirs[i]))
	r.dirs = append(r.dirs[:i:i], r.dirs[i+1:]...)
}

// dirsIndex is bash's get_dirstack_index: the r.dirs index of dirs' +N
// (sign > 0) or -N, or -1; flag is 1 when the entry is the working
// directory's side of the count (+0, or -N naming the top), 2 otherwise.
func (r *runner) dirsIndex(n int64, sign int) (idx int, flag int) {
	off := int64(len(r.dirs))
	flag = 2
	if sign > 0 {
		flag = 1
	}
	switch {
	case n == 0 && sign > 0:
		return 0, flag
	case n == off:
		flag = 3 - flag
		return 0, flag
	case n >= 0 && n <= off:
		if sign > 0 {
			return int(off - n), flag
		}
		return int(n), flag
	}
	return -1, flag
}

// biDirs prints the directory stack, the working directory first: on one
// line with ~ for $HOME, -l without the ~, -p one a line, -v numbered,
// +N or -N only that entry; -c clears it.
func biDirs(r *runner, args []string) int {
	long, clear := false, false
	vflag, idx, flag, word := 0, -1, 0, ""
loop:
	for _, a := range args[1:] {
		switch {
		case a == "-l":
			long = true
		case a == "-c":
			clear = true
		case a == "-v":
			vflag |= 2
		case a == "-p":
			vflag |= 1
		case a == "--":
			break loop
		case a != "" && (a[0] == '+' || a[0] == '-'):
			n, ok := legalNumber(a[1:])
			if !ok {
				r.errf("dirs: %s: invalid number", a)
				r.usage(dirsUsage)
				return 2
			}
			word = a[1:]
			sign := 1
			if a[0] == '-' {
				sign = -1
			}
			idx, flag = r.dirsIndex(n, sign)
		default:
			r.errf("dirs: %s: invalid option", a)
			r.usage(dirsUsage)
			return 2
		}
	}
	if clear {
		for len(r.dirs) > 0 {
			r.dropDir(len(r.dirs) - 1)
		}
		return 0
	}
	off := len(r.dirs)
	if flag != 0 && (idx < 0 || idx > off) {
		return r.dirsError("dirs", word)
	}
	format := func(d string) string {
		if long {
			return d
		}
		return r.tildeDir(d)
	}
	var b strings.Builder
	if flag == 0 || flag == 1 && idx == 0 {
		if vflag&2 != 0 {
			b.WriteString(" 0  ")
		}
		b.WriteString(format(r.cwd))
		if flag != 0 {
			r.out(b.String() + "\n")
			return 0
		}
	}
	if flag != 0 {
		if vflag&2 != 0 {
			b.WriteString(numbered(off - idx))
		}
		b.WriteString(format(r.dirs[idx]))
	} else {
		for i := off - 1; i >= 0; i-- {
			switch {
			case vflag >= 2:
				b.WriteString("\n" + numbered(off-i))
			case vflag&1 != 0:
				b.WriteString("\n")
			default:
				b.WriteString(" ")
			}
			b.WriteString(format(r.dirs[i]))
		}
	}
	r.out(b.String() + "\n")
	return 0
}

// numbered is dirs -v's "%2d  " before an entry.
func numbered(n int) string {
	s := strconv.Itoa(n)
	if len(s) < 2 {
		s = " " + s
	}
	return s + "  "
}

// dirsChangeTo is bash's change_to_temp: cd -- d, then print the stack.
func (r *runner) dirsChangeTo(who, d string) int {
	if st := r.cd(who, []string{"--", d}); st != 0 {
		return st
	}
	return biDirs(r, []string{"dirs"})
}

// biPushd pushes the working directory and changes to the argument; with
// none it swaps the working directory with the top of the stack; +N and
// -N rotate the stack to bring that entry to the top; -n only changes
// the stack. Then it prints the stack.
func biPushd(r *runner, args []string) int {
	list := args[1:]
	skipopt := len(list) > 0 && list[0] == "--"
	if skipopt {
		list = list[1:]
	}
	if len(list) == 0 {
		if len(r.dirs) == 0 {
			r.errf("pushd: no other directory")
			return 1
		}
		j := len(r.dirs) - 1
		top := r.dirs[j]
		r.memGrow(strCost(r.cwd) - strCost(top))
		r.dirs[j] = r.cwd
		return r.dirsChangeTo("pushd", top)
	}
	nocd, rotate := false, false
	var num int64
	rest := list
	if !skipopt {
	loop:
		for len(rest) > 0 {
			w := rest[0]
			switch {
			case w == "-n":
				nocd = true
			case w == "--":
				rest = rest[1:]
				break loop
			case w == "-":
				break loop // pushd - is cd -
			case w != "" && (w[0] == '+' || w[0] == '-'):
				n, ok := legalNumber(w[1:])
				if !ok {
					r.errf("pushd: %s: invalid number", w)
					r.usage(pushdUsage)
					return 2
				}
				if w[0] == '-' {
					n = int64(len(r.dirs)) - n
				}
				if n > int64(len(r.dirs)) || n < 0 {
					return r.dirsError("pushd", w)
				}
				num, rotate = n, true
			default:
				break loop
			}
			rest = rest[1:]
		}
	}
	if rotate {
		// The working directory takes part in the rotation as entry 0.
		// Under -n bash rotates without changing directory, and the entry
		// that would have become the working directory is dropped.
		temp := r.cwd
		if num == 0 {
			if nocd {
				return 0
			}
			return r.dirsChangeTo("pushd", temp)
		}
		r.memGrow(strCost(temp))
		for ; num > 0; num-- {
			top := r.dirs[len(r.dirs)-1]
			copy(r.dirs[1:], r.dirs[:len(r.dirs)-1])
			r.dirs[0] = temp
			temp = top
		}
		r.memGrow(-strCost(temp))
		if nocd {
			return 0
		}
		return r.dirsChangeTo("pushd", temp)
	}
	if len(rest) == 0 {
		return 0
	}
	cur := r.cwd
	if nocd {
		cur = rest[0]
	} else {
		cdArgs := rest
		if skipopt {
			cdArgs = args[1:]
		}
		if r.cd("pushd", cdArgs) != 0 {
			return 1
		}
	}
	if !r.pushDir(cur) {
		return 1
	}
	return biDirs(r, []string{"dirs"})
}

// biPopd removes the top of the stack and changes to it; +N or -N
// removes that entry instead (+0 is the working directory: the top
// becomes it); -n only changes the stack. Then it prints the stack.
func biPopd(r *runner, args []string) int {
	nocd := false
	var which int64
	direction := byte('+')
	word := ""
loop:
	for _, w := range args[1:] {
		switch {
		case w == "-n":
			nocd = true
			continue
		case w == "--":
			break loop
		}
		// bash notes each word's first byte as the direction, so an empty
		// word leaves neither + nor - (and removes the bottom entry).
		if w != "" {
			direction = w[0]
		} else {
			direction = 0
		}
		switch {
		case direction == '+' || direction == '-':
			n, ok := legalNumber(w[1:])
			if !ok {
				r.errf("popd: %s: invalid number", w)
				r.usage(popdUsage)
				return 2
			}
			which, word = n, w
		case w != "":
			r.errf("popd: %s: invalid argument", w)
			r.usage(popdUsage)
			return 2
		default:
			break loop
		}
	}
	off := int64(len(r.dirs))
	if which > off || which < -off || off == 0 && which == 0 {
		return r.dirsError("popd", word)
	}
	if direction == '+' && which == 0 || direction == '-' && which == off {
		if !nocd {
			if st := r.cd("popd", []string{"--", r.dirs[off-1]}); st != 0 {
				return st
			}
		}
		r.dropDir(int(off - 1))
	} else {
		i := which
		if direction == '+' {
			i = off - which
		}
		if i < 0 || i > off {
			return r.dirsError("popd", word)
		}
		r.dropDir(int(i))
	}
	return biDirs(r, []string{"dirs"})
}

// dirstackSpecial reports whether $DIRSTACK is still the stack (not unset,
// not shadowed by a local).
func (r *runner) dirstackSpecial(name string) bool {
	return name == "DIRSTACK" && r.dynamic(name)
}

// dirstackList is $DIRSTACK's value: the working directory, then the
// stack from its top, in full (no ~).
func (r *runner) dirstackList() []string {
	out := make([]string, 0, len(r.dirs)+1)
	out = append(out, r.cwd)
	for i := len(r.dirs) - 1; i >= 0; i-- {
		out = append(out, r.dirs[i])
	}
	return out
}

// setDirstackElem assigns DIRSTACK[n]: it replaces entry n of the stack
// when there is one; element 0 (the working directory) and indices past
// the stack are ignored, as bash ignores them. A negative n counts from
// the end of the array.
func (r *runner) setDirstackElem(n int64, val string, appendTo bool) {
	off := int64(len(r.dirs))
	if n < 0 {
		n += off + 1
	}
	if n <= 0 || n > off {
		return
	}
	i := off - n
	if appendTo {
		val = r.dirs[i] + val
	}
	if !r.memGrow(strCost(val) - strCost(r.dirs[i])) {
		return
	}
	r.dirs[i] = val
}

// assignDirstackArray performs DIRSTACK=(...) or DIRSTACK+=(...): each
// element is assigned on its own, so only entries the stack has change.
func (r *runner) assignDirstackArray(arr *syntax.ArrayExpr, appendTo bool) bool {
	next := int64(0)
	if appendTo {
		next = int64(len(r.dirs)) + 1
	}
	for _, e := range arr.Elems {
		if e.Index != nil {
			val, ok := r.assignLiteral(e.Value)
			if !ok {
				return false
			}
			n, err := r.arith(e.Index)
			if err != nil {
				r.arithErr(err)
				return false
			}
			r.setDirstackElem(n, val, false)
			next = n + 1
			continue
		}
		fs, ok := r.fields(e.Value)
		if !ok {
			return false
		}
		for _, f := range fs {
			r.setDirstackElem(next, f, false)
			next++
		}
	}
	return true
}

// assignDirstack performs an assignment to $DIRSTACK still special.
func (r *runner) assignDirstack(as *syntax.Assign) bool {
	if as.Array != nil {
		return r.assignDirstackArray(as.Array, as.Append)
	}
	val, ok := r.assignLiteral(as.Value)
	if !ok {
		return false
	}
	var n int64
	if as.Index != nil {
		var err error
		if n, err = r.arith(as.Index); err != nil {
			r.arithErr(err)
			return false
		}
	}
	r.setDirstackElem(n, val, as.Append)
	return true
}
