package fileutils

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strings"
	"syscall"

	"github.com/warren-sandbox/warren/commands"
	"github.com/warren-sandbox/warren/vfs"
)

func relabel(err error, name string) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return &fs.PathError{Op: pe.Op, Path: name, Err: pe.Err}
	}
	return err
}

func missingOperand(inv *commands.Invocation) int {
	inv.Errorf("missing operand")
	fmt.Fprintf(inv.Stderr, "Try '%s --help' for more information.\n", inv.Args[0])
	return 1
}

// sameFile reports whether a and b name the same inode.
func sameFile(a, b fs.FileInfo) bool {
	sa, oka := a.Sys().(*vfs.Stat)
	sb, okb := b.Sys().(*vfs.Stat)
	return oka && okb && sa != nil && sb != nil && sa.Ino != 0 && sa.Ino == sb.Ino
}

// isWithin reports whether p is dir or below it (both clean, absolute).
func isWithin(p, dir string) bool {
	return p == dir || dir == "/" || strings.HasPrefix(p, dir+"/")
}

// ---- cp ----

type cpConf struct {
	recursive, mode, owner, times, deref, force, noClobber, verbose, update bool
	hardlink, symlink, parents, removeDest, derefAll                        bool
	// links (-d, -a, --preserve=links): sources that are hard links of
	// one file are copied once and linked again, as GNU cp does; linked
	// maps a source inode to its first copy.
	links  bool
	linked map[uint64]string
}

func cp(ctx context.Context, inv *commands.Invocation) int {
	opts, args, err := newOpts("rRapfnvuilsdLPHxt:T", "recursive:r", "archive:a", "preserve?", "force:f",
		"no-clobber:n", "verbose:v", "update?:u", "interactive:i", "link:l", "symbolic-link:s",
		"no-dereference:P", "dereference:L", "target-directory=:t", "no-target-directory:T",
		"parents", "no-preserve=", "remove-destination", "reflink?", "sparse=", "strip-trailing-slashes",
		"one-file-system:x", "backup?", "debug").Parse(inv.Args[1:])
	if err != nil {
		return badUsage(inv, err, 1)
	}
	c := &cpConf{}
	derefSet := false
	target, noTarget := "", false
	for _, o := range opts {
		switch o.Key {
		case "r", "R":
			c.recursive = true
		case "a":
			c.recursive, c.mode, c.owner, c.times, c.links = true, true, true, true, true
		case "p":
			c.mode, c.owner, c.times = true, true, true
		case "preserve":
			attrs := o.Val
			if attrs == "" {
				attrs = "mode,ownership,timestamps"
			}
			for _, a := range strings.Split(attrs, ",") {
				switch a {
				case "mode":
					c.mode = true
				case "ownership":
					c.owner = true
				case "timestamps":
					c.times = true
				case "links":
					c.links = true
				case "all":
					c.mode, c.owner, c.times, c.links = true, true, true, true
				}
			}
		case "no-preserve":
			for _, a := range strings.Split(o.Val, ",") {
				switch a {
				case "mode":
					c.mode = false
				case "ownership":
					c.owner = false
				case "timestamps":
					c.times = false
				case "links":
					c.links = false
				case "all":
					c.mode, c.owner, c.times, c.links = false, false, false, false
				}
			}
		case "f":
			c.force = true
		case "n":
			c.noClobber = true
		case "v":
			c.verbose = true
		case "u":
			c.update = true
		case "l":
			c.hardlink = true
		case "s":
			c.symlink = true
		case "L":
			c.deref, c.derefAll, derefSet = true, true, true
		case "P":
			c.deref, derefSet = false, true
		case "d":
			c.deref, derefSet, c.links = false, true, true
		case "H":
			c.deref, derefSet = true, true
		case "t":
			target = o.Val
		case "T":
			noTarget = true
		case "parents":
			c.parents = true
		case "remove-destination":
			c.removeDest = true
		}
	}
	if !derefSet {
		c.deref = !c.recursive
	}
	if c.links {
		c.linked = map[uint64]string{}
	}
	if c.parents && target == "" && len(args) >= 2 {
		// GNU checks the destination before any source.
		if fi, err := inv.FS.Stat(inv.Abs(args[len(args)-1])); err != nil || !fi.IsDir() {
			inv.Errorf("with --parents, the destination must be a directory")
			fmt.Fprintf(inv.Stderr, "Try '%s --help' for more information.\n", inv.Args[0])
			return 1
		}
	}
	if c.parents {
		return c.copyParents(ctx, inv, args, target)
	}
	return copyMove(ctx, inv, args, target, noTarget, func(src, dst, srcName, dstName string) int {
		return c.copy(ctx, inv, src, dst, srcName, dstName, true)
	})
}

// copyParents is cp --parents: each source's whole path is recreated
// under the destination directory (cp --parents a/b/f d makes d/a/b/f).
func (c *cpConf) copyParents(ctx context.Context, inv *commands.Invocation, args []string, target string) int {
	if target == "" {
		target, args = args[len(args)-1], args[:len(args)-1]
	}
	status := 0
	for _, src := range args {
		dstName := strings.TrimRight(target, "/") + "/" + strings.TrimLeft(src, "/")
		if dir := path.Dir(dstName); dir != "." {
			if err := inv.FS.MkdirAll(inv.Abs(dir), 0o755); err != nil {
				inv.Errorf("cannot make directory %s: %s", quote(dir), commands.Strerror(err))
				status = 1
				continue
			}
		}
		status = max(status, c.copy(ctx, inv, inv.Abs(src), inv.Abs(dstName), src, dstName, true))
	}
	return status
}

// copyMove resolves cp/mv/ln/install operands: SRC DST, SRC... DIR or -t DIR.
func copyMove(ctx context.Context, inv *commands.Invocation, args []string, target string, noTarget bool,
	one func(src, dst, srcName, dstName string) int) int {
	if len(args) == 0 {
		inv.Errorf("missing file operand")
		fmt.Fprintf(inv.Stderr, "Try '%s --help' for more information.\n", inv.Args[0])
		return 1
	}
	if target == "" {
		if len(args) == 1 {
			inv.Errorf("missing destination file operand after %s", quote(args[0]))
			fmt.Fprintf(inv.Stderr, "Try '%s --help' for more information.\n", inv.Args[0])
			return 1
		}
		last := args[len(args)-1]
		fi, err := inv.FS.Stat(inv.Abs(last))
		if noTarget || (len(args) == 2 && (err != nil || !fi.IsDir())) {
			if len(args) > 2 {
				inv.Errorf("extra operand %s", quote(args[2]))
				fmt.Fprintf(inv.Stderr, "Try '%s --help' for more information.\n", inv.Args[0])
				return 1
			}
			if err != nil && strings.HasSuffix(last, "/") && inv.Args[0] != "mv" {
				if sfi, serr := inv.FS.Stat(inv.Abs(args[0])); serr == nil && !sfi.IsDir() {
					inv.Errorf("cannot create regular file %s: Not a directory", quote(last))
					return 1
				}
			}
			return one(inv.Abs(args[0]), inv.Abs(last), args[0], last)
		}
		if err != nil || !fi.IsDir() {
			if err != nil && isNotExist(err) {
				inv.Errorf("target %s: No such file or directory", quote(last))
			} else {
				inv.Errorf("target %s is not a directory", quote(last))
			}
			return 1
		}
		target, args = last, args[:len(args)-1]
	} else if fi, err := inv.FS.Stat(inv.Abs(target)); err != nil || !fi.IsDir() {
		if err != nil {
			inv.Errorf("target directory %s: %s", quote(target), commands.Strerror(err))
		} else {
			inv.Errorf("target %s is not a directory", quote(target))
		}
		return 1
	}
	status := 0
	for _, a := range args {
		if ctx.Err() != nil {
			return 130
		}
		base := path.Base(strings.TrimRight(a, "/"))
		if a == "/" {
			base = "/"
		}
		dstName := path.Join(target, base)
		if strings.HasSuffix(target, "/") {
			dstName = target + base
		}
		if st := one(inv.Abs(a), inv.Abs(path.Join(target, base)), a, dstName); st != 0 {
			status = st
		}
	}
	return status
}

func (c *cpConf) copy(ctx context.Context, inv *commands.Invocation, src, dst, srcName, dstName string, top bool) int {
	if ctx.Err() != nil {
		return 130
	}
	var sfi fs.FileInfo
	var err error
	if c.deref {
		sfi, err = inv.FS.Stat(src)
	} else {
		sfi, err = inv.FS.Lstat(src)
	}
	if err != nil {
		inv.Errorf("cannot stat %s: %s", quote(srcName), commands.Strerror(err))
		return 1
	}
	dfi, derr := inv.FS.Lstat(dst)
	if derr == nil {
		if sameFile(sfi, dfi) && !(c.symlink || (c.hardlink && !sfi.IsDir())) {
			inv.Errorf("%s and %s are the same file", quote(srcName), quote(dstName))
			return 1
		}
		if dfi.Mode()&fs.ModeSymlink != 0 && sfi.IsDir() {
			if t, err := inv.FS.Stat(dst); err == nil && t.IsDir() {
				dfi = t
			}
		}
	}
	if sfi.IsDir() && !c.symlink {
		if !c.recursive {
			inv.Errorf("-r not specified; omitting directory %s", quote(srcName))
			return 1
		}
		if rs, err := inv.FS.Realpath(src); err == nil {
			rd := dst
			if r, err := inv.FS.Realpath(path.Dir(dst)); err == nil {
				rd = path.Join(r, path.Base(dst))
			}
			if isWithin(rd, rs) {
				inv.Errorf("cannot copy a directory, %s, into itself, %s", quote(srcName), quote(dstName))
				return 1
			}
		}
		if derr == nil && !dfi.IsDir() {
			inv.Errorf("cannot overwrite non-directory %s with directory %s", quote(dstName), quote(srcName))
			return 1
		}
		if derr != nil {
			if err := inv.FS.Mkdir(dst, sfi.Mode().Perm()|0o700); err != nil {
				inv.Errorf("cannot create directory %s: %s", quote(dstName), commands.Strerror(err))
				return 1
			}
			if c.verbose {
				fmt.Fprintf(inv.Stdout, "%s -> %s\n", quote(srcName), quote(dstName))
			}
		}
		ents, err := inv.FS.ReadDir(src)
		if err != nil {
			inv.Errorf("cannot access %s: %s", quote(srcName), commands.Strerror(err))
			return 1
		}
		status := 0
		sub := *c
		sub.deref = c.derefAll
		for _, e := range ents {
			if st := sub.copy(ctx, inv, path.Join(src, e.Name()), path.Join(dst, e.Name()),
				path.Join(srcName, e.Name()), path.Join(dstName, e.Name()), false); st != 0 {
				status = st
			}
		}
		perm := sfi.Mode().Perm() | sfi.Mode()&(fs.ModeSetuid|fs.ModeSetgid|fs.ModeSticky)
		if !c.mode && derr == nil {
			perm = dfi.Mode().Perm()
		} else if !c.mode {
			perm &^= umask(inv)
		}
		inv.FS.Chmod(dst, perm)
		c.attrs(inv, sfi, dst)
		return status
	}
	if derr == nil {
		if c.noClobber {
			return 0
		}
		if c.update && !sfi.ModTime().After(dfi.ModTime()) {
			return 0
		}
		if dfi.IsDir() {
			inv.Errorf("cannot overwrite directory %s with non-directory", quote(dstName))
			return 1
		}
		if c.removeDest || c.hardlink || c.symlink || sfi.Mode()&fs.ModeSymlink != 0 || dfi.Mode()&fs.ModeSymlink != 0 && !c.deref {
			if err := inv.FS.Remove(dst); err != nil {
				inv.Errorf("cannot remove %s: %s", quote(dstName), commands.Strerror(err))
				return 1
			}
			derr = fs.ErrNotExist
		}
	}
	var ino uint64
	if st, ok := sfi.Sys().(*vfs.Stat); ok && c.linked != nil && st != nil && st.Nlink > 1 && sfi.Mode().IsRegular() {
		ino = st.Ino
	}
	if first, ok := c.linked[ino]; ok && ino != 0 && !c.symlink && !c.hardlink {
		if derr == nil {
			if err := inv.FS.Remove(dst); err != nil {
				inv.Errorf("cannot remove %s: %s", quote(dstName), commands.Strerror(err))
				return 1
			}
		}
		if err := inv.FS.Link(first, dst); err != nil {
			inv.Errorf("cannot create hard link %s to %s: %s", quote(dstName), quote(first), commands.Strerror(err))
			return 1
		}
		if c.verbose {
			fmt.Fprintf(inv.Stdout, "%s -> %s\n", quote(srcName), quote(dstName))
		}
		return 0
	}
	if ino != 0 {
		c.linked[ino] = dst
	}
	switch {
	case c.symlink:
		if err := inv.FS.Symlink(srcName, dst); err != nil {
			inv.Errorf("cannot create symbolic link %s to %s: %s", quote(dstName), quote(srcName), commands.Strerror(err))
			return 1
		}
	case c.hardlink:
		if err := inv.FS.Link(src, dst); err != nil {
			inv.Errorf("cannot create hard link %s to %s: %s", quote(dstName), quote(srcName), commands.Strerror(err))
			return 1
		}
	case sfi.Mode()&fs.ModeSymlink != 0:
		t, err := inv.FS.Readlink(src)
		if err == nil {
			err = inv.FS.Symlink(t, dst)
		}
		if err != nil {
			inv.Errorf("cannot create symbolic link %s: %s", quote(dstName), commands.Strerror(err))
			return 1
		}
	case sfi.Mode()&(fs.ModeNamedPipe|fs.ModeDevice|fs.ModeSocket) != 0 && c.recursive:
		if err := inv.FS.Mknod(dst, sfi.Mode(), statOf(sfi).Rdev); err != nil {
			inv.Errorf("cannot create special file %s: %s", quote(dstName), commands.Strerror(err))
			return 1
		}
	default:
		if st := c.copyFile(ctx, inv, src, dst, srcName, dstName, sfi, derr == nil); st != 0 {
			return st
		}
	}
	if c.verbose {
		fmt.Fprintf(inv.Stdout, "%s -> %s\n", quote(srcName), quote(dstName))
	}
	if !c.symlink && !c.hardlink && sfi.Mode()&fs.ModeSymlink == 0 {
		if c.mode {
			inv.FS.Chmod(dst, sfi.Mode()&(fs.ModePerm|fs.ModeSetuid|fs.ModeSetgid|fs.ModeSticky))
		}
		c.attrs(inv, sfi, dst)
	}
	return 0
}

func (c *cpConf) attrs(inv *commands.Invocation, sfi fs.FileInfo, dst string) {
	if c.owner {
		st := statOf(sfi)
		inv.FS.Chown(dst, int(st.Uid), int(st.Gid))
	}
	if c.times {
		inv.FS.Chtimes(dst, statOf(sfi).Atime, sfi.ModTime())
	}
}

func (c *cpConf) copyFile(ctx context.Context, inv *commands.Invocation, src, dst, srcName, dstName string, sfi fs.FileInfo, exists bool) int {
	in, err := inv.FS.Open(src)
	if err != nil {
		inv.Errorf("cannot open %s for reading: %s", quote(srcName), commands.Strerror(err))
		return 1
	}
	defer in.Close()
	perm := sfi.Mode().Perm() &^ umask(inv)
	if c.mode {
		perm = sfi.Mode().Perm()
	}
	out, err := inv.FS.OpenFile(dst, vfs.O_WRONLY|vfs.O_CREATE|vfs.O_TRUNC, perm)
	if err != nil && exists && c.force {
		if rerr := inv.FS.Remove(dst); rerr == nil {
			out, err = inv.FS.OpenFile(dst, vfs.O_WRONLY|vfs.O_CREATE|vfs.O_TRUNC, perm)
		}
	}
	if err != nil {
		inv.Errorf("cannot create regular file %s: %s", quote(dstName), commands.Strerror(err))
		return 1
	}
	if err := copyData(ctx, out, in); err != nil {
		out.Close()
		inv.Errorf("error writing %s: %s", quote(dstName), commands.Strerror(err))
		return 1
	}
	if err := out.Close(); err != nil {
		inv.Errorf("error writing %s: %s", quote(dstName), commands.Strerror(err))
		return 1
	}
	return 0
}

// ---- mv ----

func mv(ctx context.Context, inv *commands.Invocation) int {
	opts, args, err := newOpts("fnivuTt:b", "force:f", "no-clobber:n", "interactive:i", "verbose:v",
		"update?:u", "no-target-directory:T", "target-directory=:t", "strip-trailing-slashes", "backup?:b").Parse(inv.Args[1:])
	if err != nil {
		return badUsage(inv, err, 1)
	}
	noClobber, verbose, update, noTarget, target := false, false, false, false, ""
	for _, o := range opts {
		switch o.Key {
		case "f", "i":
			noClobber = false
		case "n":
			noClobber = true
		case "v":
			verbose = true
		case "u":
			update = true
		case "T":
			noTarget = true
		case "t":
			target = o.Val
		}
	}
	return copyMove(ctx, inv, args, target, noTarget, func(src, dst, srcName, dstName string) int {
		sfi, err := inv.FS.Lstat(src)
		if err != nil {
			inv.Errorf("cannot stat %s: %s", quote(srcName), commands.Strerror(err))
			return 1
		}
		if dfi, err := inv.FS.Lstat(dst); err == nil {
			if sameFile(sfi, dfi) {
				inv.Errorf("%s and %s are the same file", quote(srcName), quote(dstName))
				return 1
			}
			if noClobber {
				return 0
			}
			if update && !sfi.ModTime().After(dfi.ModTime()) {
				return 0
			}
			if sfi.IsDir() && !dfi.IsDir() {
				inv.Errorf("cannot overwrite non-directory %s with directory %s", quote(dstName), quote(srcName))
				return 1
			}
			if !sfi.IsDir() && dfi.IsDir() {
				inv.Errorf("cannot overwrite directory %s with non-directory", quote(dstName))
				return 1
			}
		}
		if sfi.IsDir() {
			rs, _ := inv.FS.Realpath(src)
			rd := dst
			if r, err := inv.FS.Realpath(path.Dir(dst)); err == nil {
				rd = path.Join(r, path.Base(dst))
			}
			if rs != "" && rd != rs && isWithin(rd, rs) {
				inv.Errorf("cannot move %s to a subdirectory of itself, %s", quote(srcName), quote(dstName))
				return 1
			}
		}
		err = inv.FS.Rename(src, dst)
		if errnoOf(err) == syscall.EXDEV {
			c := &cpConf{recursive: true, mode: true, owner: true, times: true}
			if st := c.copy(ctx, inv, src, dst, srcName, dstName, true); st != 0 {
				return st
			}
			err = inv.FS.RemoveAll(src)
		}
		if err != nil {
			inv.Errorf("cannot move %s to %s: %s", quote(srcName), quote(dstName), commands.Strerror(err))
			return 1
		}
		if verbose {
			fmt.Fprintf(inv.Stdout, "renamed %s -> %s\n", quote(srcName), quote(dstName))
		}
		return 0
	})
}

// ---- rm ----

func rm(ctx context.Context, inv *commands.Invocation) int {
	opts, args, err := newOpts("rRfvidI", "recursive:r", "force:f", "verbose:v", "interactive?:i",
		"dir:d", "preserve-root?", "no-preserve-root", "one-file-system").Parse(inv.Args[1:])
	if err != nil {
		return badUsage(inv, err, 1)
	}
	recursive, force, verbose, dirOK, preserveRoot := false, false, false, false, true
	for _, o := range opts {
		switch o.Key {
		case "r", "R":
			recursive = true
		case "f":
			force = true
		case "i", "I", "interactive":
			force = false
		case "v":
			verbose = true
		case "d":
			dirOK = true
		case "no-preserve-root":
			preserveRoot = false
		}
	}
	if len(args) == 0 {
		if force {
			return 0
		}
		return missingOperand(inv)
	}
	status := 0
	for _, a := range args {
		if ctx.Err() != nil {
			return 130
		}
		base := path.Base(strings.TrimRight(a, "/"))
		if base == "." || base == ".." {
			inv.Errorf("refusing to remove '.' or '..' directory: skipping %s", quote(a))
			status = 1
			continue
		}
		abs := inv.Abs(a)
		if abs == "/" && recursive && preserveRoot {
			inv.Errorf("it is dangerous to operate recursively on %s", quote("/"))
			inv.Errorf("use --no-preserve-root to override this failsafe")
			status = 1
			continue
		}
		fi, err := inv.FS.Lstat(abs)
		if err != nil {
			if force && isNotExist(err) {
				continue
			}
			inv.Errorf("cannot remove %s: %s", quote(a), commands.Strerror(err))
			status = 1
			continue
		}
		if fi.IsDir() && !recursive {
			if dirOK {
				if err := inv.FS.Remove(abs); err != nil {
					inv.Errorf("cannot remove %s: %s", quote(a), commands.Strerror(err))
					status = 1
				} else if verbose {
					fmt.Fprintf(inv.Stdout, "removed directory %s\n", quote(a))
				}
				continue
			}
			inv.Errorf("cannot remove %s: Is a directory", quote(a))
			status = 1
			continue
		}
		if st := removeTree(ctx, inv, abs, a, fi, verbose); st != 0 {
			status = st
		}
	}
	return status
}

func removeTree(ctx context.Context, inv *commands.Invocation, abs, name string, fi fs.FileInfo, verbose bool) int {
	if ctx.Err() != nil {
		return 130
	}
	status := 0
	if fi.IsDir() {
		ents, err := inv.FS.ReadDir(abs)
		if err != nil {
			inv.Errorf("cannot remove %s: %s", quote(name), commands.Strerror(err))
			return 1
		}
		for _, e := range ents {
			cfi, err := e.Info()
			if err != nil {
				cfi, err = inv.FS.Lstat(path.Join(abs, e.Name()))
				if err != nil {
					continue
				}
			}
			if st := removeTree(ctx, inv, path.Join(abs, e.Name()), path.Join(name, e.Name()), cfi, verbose); st != 0 {
				status = st
			}
		}
	}
	if err := inv.FS.Remove(abs); err != nil {
		inv.Errorf("cannot remove %s: %s", quote(name), commands.Strerror(err))
		return 1
	}
	if verbose {
		if fi.IsDir() {
			fmt.Fprintf(inv.Stdout, "removed directory %s\n", quote(name))
		} else {
			fmt.Fprintf(inv.Stdout, "removed %s\n", quote(name))
		}
	}
	return status
}

// ---- mkdir / rmdir ----

func mkdir(ctx context.Context, inv *commands.Invocation) int {
	opts, args, err := newOpts("pm:vZ", "parents:p", "mode=:m", "verbose:v", "context?").Parse(inv.Args[1:])
	if err != nil {
		return badUsage(inv, err, 1)
	}
	parents, verbose := false, false
	mode, modeSet := fs.FileMode(0o777)&^umask(inv), false
	for _, o := range opts {
		switch o.Key {
		case "p":
			parents = true
		case "v":
			verbose = true
		case "m":
			m, ok := parseMode(o.Val, 0o777, false, umask(inv))
			if !ok {
				inv.Errorf("invalid mode %s", quote(o.Val))
				return 1
			}
			mode, modeSet = m, true
		}
	}
	if len(args) == 0 {
		return missingOperand(inv)
	}
	status := 0
	for _, a := range args {
		abs := inv.Abs(a)
		if parents {
			// create each missing component, reporting each with -v
			var todo []string
			p := abs
			failed := false
			for p != "/" {
				fi, err := inv.FS.Stat(p)
				if err == nil {
					if !fi.IsDir() && p != abs {
						inv.Errorf("cannot create directory %s: Not a directory", quote(rel(a, abs, p)))
						failed = true
					}
					break
				}
				todo = append(todo, p)
				p = path.Dir(p)
			}
			if failed {
				status = 1
				continue
			}
			for i := len(todo) - 1; i >= 0; i-- {
				perm := fs.FileMode(0o777)&^umask(inv) | 0o300
				if i == 0 {
					perm = mode
				}
				if err := inv.FS.Mkdir(todo[i], perm); err != nil && errnoOf(err) != syscall.EEXIST {
					inv.Errorf("cannot create directory %s: %s", quote(rel(a, abs, todo[i])), commands.Strerror(err))
					failed = true
					break
				}
				if verbose {
					fmt.Fprintf(inv.Stdout, "mkdir: created directory %s\n", quote(rel(a, abs, todo[i])))
				}
			}
			if failed {
				status = 1
				continue
			}
			if fi, err := inv.FS.Stat(abs); err != nil || !fi.IsDir() {
				if err == nil {
					err = syscall.EEXIST
				}
				inv.Errorf("cannot create directory %s: %s", quote(a), commands.Strerror(err))
				status = 1
				continue
			}
			if modeSet && len(todo) > 0 {
				inv.FS.Chmod(abs, mode)
			}
			continue
		}
		if err := inv.FS.Mkdir(abs, mode); err != nil {
			inv.Errorf("cannot create directory %s: %s", quote(a), commands.Strerror(err))
			status = 1
			continue
		}
		if modeSet {
			inv.FS.Chmod(abs, mode)
		}
		if verbose {
			fmt.Fprintf(inv.Stdout, "mkdir: created directory %s\n", quote(a))
		}
	}
	return status
}

// rel renders component (an absolute prefix of abs) the way the user
// spelled the operand name.
func rel(name, abs, component string) string {
	suffix := strings.TrimPrefix(abs, component)
	n := strings.TrimRight(name, "/")
	if suffix == "" {
		return n
	}
	if strings.HasSuffix(n, suffix) {
		return strings.TrimSuffix(n, suffix)
	}
	return component
}

func rmdir(ctx context.Context, inv *commands.Invocation) int {
	opts, args, err := newOpts("pv", "parents:p", "verbose:v", "ignore-fail-on-non-empty").Parse(inv.Args[1:])
	if err != nil {
		return badUsage(inv, err, 1)
	}
	parents, verbose, ignore := false, false, false
	for _, o := range opts {
		switch o.Key {
		case "p":
			parents = true
		case "v":
			verbose = true
		case "ignore-fail-on-non-empty":
			ignore = true
		}
	}
	if len(args) == 0 {
		return missingOperand(inv)
	}
	status := 0
	for _, a := range args {
		name := strings.TrimRight(a, "/")
		if name == "" {
			name = "/"
		}
		for {
			abs := inv.Abs(name)
			if verbose {
				fmt.Fprintf(inv.Stdout, "rmdir: removing directory, %s\n", quote(name))
			}
			err := rmdirOne(inv, abs)
			if err != nil {
				if !(ignore && errnoOf(err) == syscall.ENOTEMPTY) {
					inv.Errorf("failed to remove %s: %s", quote(name), commands.Strerror(err))
					status = 1
				}
				break
			}
			if !parents {
				break
			}
			next := path.Dir(name)
			if next == name || next == "." || next == "/" {
				break
			}
			name = next
		}
	}
	return status
}

func rmdirOne(inv *commands.Invocation, abs string) error {
	fi, err := inv.FS.Lstat(abs)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return syscall.ENOTDIR
	}
	return inv.FS.Remove(abs)
}

// ---- ln ----

func ln(ctx context.Context, inv *commands.Invocation) int {
	opts, args, err := newOpts("sfnvTt:irLPb", "symbolic:s", "force:f", "no-dereference:n", "verbose:v",
		"no-target-directory:T", "target-directory=:t", "interactive:i", "relative:r", "logical:L",
		"physical:P", "backup?:b").Parse(inv.Args[1:])
	if err != nil {
		return badUsage(inv, err, 1)
	}
	sym, force, noDeref, verbose, noTarget, relative, target := false, false, false, false, false, false, ""
	for _, o := range opts {
		switch o.Key {
		case "s":
			sym = true
		case "f":
			force = true
		case "n":
			noDeref = true
		case "v":
			verbose = true
		case "T":
			noTarget = true
		case "t":
			target = o.Val
		case "r":
			relative = true
		}
	}
	if len(args) == 1 && target == "" {
		args = append(args, ".")
	}
	if len(args) == 2 && target == "" && noDeref {
		if fi, err := inv.FS.Lstat(inv.Abs(args[1])); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
			noTarget = true
		}
	}
	return copyMove(ctx, inv, args, target, noTarget, func(src, dst, srcName, dstName string) int {
		kind := "hard link"
		if sym {
			kind = "symbolic link"
		}
		if dstName == "./"+path.Base(srcName) || (dstName == "." && len(args) == 2) {
			dstName = path.Base(strings.TrimRight(srcName, "/"))
		}
		if !sym {
			fi, err := inv.FS.Stat(src)
			if err != nil {
				inv.Errorf("failed to access %s: %s", quote(srcName), commands.Strerror(err))
				return 1
			}
			if fi.IsDir() {
				inv.Errorf("%s: hard link not allowed for directory", srcName)
				return 1
			}
		}
		if dfi, err := inv.FS.Lstat(dst); err == nil {
			if force {
				if sfi, err := inv.FS.Stat(src); err == nil && sameFile(sfi, dfi) && !sym {
					inv.Errorf("%s and %s are the same file", quote(srcName), quote(dstName))
					return 1
				}
				if dfi.IsDir() {
					inv.Errorf("cannot overwrite directory %s", quote(dstName))
					return 1
				}
				inv.FS.Remove(dst)
			} else {
				inv.Errorf("failed to create %s %s: File exists", kind, quote(dstName))
				return 1
			}
		}
		var err error
		linkText := srcName
		if sym {
			if relative {
				linkText = relPath(path.Dir(dst), src)
			}
			err = inv.FS.Symlink(linkText, dst)
		} else {
			err = inv.FS.Link(src, dst)
		}
		if err != nil {
			if sym {
				inv.Errorf("failed to create %s %s: %s", kind, quote(dstName), commands.Strerror(err))
			} else {
				inv.Errorf("failed to create %s %s => %s: %s", kind, quote(dstName), quote(srcName), commands.Strerror(err))
			}
			return 1
		}
		if verbose {
			arrow := "=>"
			if sym {
				arrow = "->"
			}
			fmt.Fprintf(inv.Stdout, "%s %s %s\n", quote(dstName), arrow, quote(linkText))
		}
		return 0
	})
}

// relPath is target relative to dir (both absolute, clean).
func relPath(dir, target string) string {
	d := strings.Split(strings.Trim(dir, "/"), "/")
	t := strings.Split(strings.Trim(target, "/"), "/")
	if dir == "/" {
		d = nil
	}
	if target == "/" {
		t = nil
	}
	i := 0
	for i < len(d) && i < len(t) && d[i] == t[i] {
		i++
	}
	var parts []string
	for range d[i:] {
		parts = append(parts, "..")
	}
	parts = append(parts, t[i:]...)
	if len(parts) == 0 {
		return "."
	}
	return strings.Join(parts, "/")
}

// ---- install ----

func install(ctx context.Context, inv *commands.Invocation) int {
	opts, args, err := newOpts("m:dDvo:g:t:TCcsp", "mode=:m", "directory:d", "verbose:v", "owner=:o",
		"group=:g", "target-directory=:t", "no-target-directory:T", "compare:C", "strip:s",
		"preserve-timestamps:p").Parse(inv.Args[1:])
	if err != nil {
		return badUsage(inv, err, 1)
	}
	mode := fs.FileMode(0o755)
	dirs, mkParents, verbose, noTarget, preserve := false, false, false, false, false
	target, owner, group := "", "", ""
	for _, o := range opts {
		switch o.Key {
		case "m":
			m, ok := parseMode(o.Val, 0o755, false, 0)
			if !ok {
				inv.Errorf("invalid mode %s", quote(o.Val))
				return 1
			}
			mode = m
		case "d":
			dirs = true
		case "D":
			mkParents = true
		case "v":
			verbose = true
		case "t":
			target = o.Val
		case "T":
			noTarget = true
		case "o":
			owner = o.Val
		case "g":
			group = o.Val
		case "p":
			preserve = true
		}
	}
	setOwner := func(abs string) {
		if owner == "" && group == "" {
			return
		}
		uid, gid := -1, -1
		if owner != "" {
			if id, ok := loadIDs(inv, "/etc/passwd").lookup(owner); ok {
				uid = int(id)
			}
		}
		if group != "" {
			if id, ok := loadIDs(inv, "/etc/group").lookup(group); ok {
				gid = int(id)
			}
		}
		inv.FS.Chown(abs, uid, gid)
	}
	if dirs {
		if len(args) == 0 {
			return missingOperand(inv)
		}
		status := 0
		for _, a := range args {
			abs := inv.Abs(a)
			if err := inv.FS.MkdirAll(abs, mode); err != nil {
				inv.Errorf("cannot create directory %s: %s", quote(a), commands.Strerror(err))
				status = 1
				continue
			}
			inv.FS.Chmod(abs, mode)
			setOwner(abs)
			if verbose {
				fmt.Fprintf(inv.Stdout, "install: creating directory %s\n", quote(a))
			}
		}
		return status
	}
	if mkParents {
		var dir string
		if target != "" {
			dir = target
		} else if len(args) >= 2 {
			dir = path.Dir(args[len(args)-1])
		}
		if dir != "" {
			if _, err := inv.FS.Stat(inv.Abs(dir)); err != nil {
				if err := inv.FS.MkdirAll(inv.Abs(dir), 0o755); err != nil {
					inv.Errorf("cannot create directory %s: %s", quote(dir), commands.Strerror(err))
					return 1
				}
				if verbose {
					fmt.Fprintf(inv.Stdout, "install: creating directory %s\n", quote(dir))
				}
			}
		}
	}
	c := &cpConf{deref: true, times: preserve, removeDest: true}
	return copyMove(ctx, inv, args, target, noTarget, func(src, dst, srcName, dstName string) int {
		if fi, err := inv.FS.Stat(src); err == nil && fi.IsDir() {
			inv.Errorf("omitting directory %s", quote(srcName))
			return 1
		}
		v := c.verbose
		c.verbose = false
		st := c.copy(ctx, inv, src, dst, srcName, dstName, true)
		c.verbose = v
		if st != 0 {
			return st
		}
		inv.FS.Chmod(dst, mode)
		setOwner(dst)
		if verbose {
			fmt.Fprintf(inv.Stdout, "%s -> %s\n", quote(srcName), quote(dstName))
		}
		return 0
	})
}

// ---- mkfifo ----

func mkfifo(ctx context.Context, inv *commands.Invocation) int {
	opts, args, err := newOpts("m:Z", "mode=:m", "context?").Parse(inv.Args[1:])
	if err != nil {
		return badUsage(inv, err, 1)
	}
	mode := fs.FileMode(0o666) &^ umask(inv)
	for _, o := range opts {
		if o.Key == "m" {
			m, ok := parseMode(o.Val, 0o666, false, 0)
			if !ok {
				inv.Errorf("invalid mode")
				return 1
			}
			mode = m
		}
	}
	if len(args) == 0 {
		return missingOperand(inv)
	}
	status := 0
	for _, a := range args {
		if err := inv.FS.Mknod(inv.Abs(a), fs.ModeNamedPipe|mode, 0); err != nil {
			inv.Errorf("cannot create fifo %s: %s", quote(a), commands.Strerror(err))
			status = 1
		}
	}
	return status
}
