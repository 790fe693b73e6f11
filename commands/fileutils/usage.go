package fileutils

// What a tree holds and what it costs: du, df and tree.

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"io/fs"
	"path"
	"strconv"
	"strings"

	"github.com/warren-sandbox/warren/commands"
	"github.com/warren-sandbox/warren/vfs"
)

type duConf struct {
	all, human, apparent, total, summarize, nullEnd bool
	maxDepth                                        int
	blockSize                                       int64
	exclude                                         []string
	seen                                            map[uint64]bool
	countLinks                                      bool // -l: a hard link's blocks count each time
	w                                               *bufio.Writer
}

func du(ctx context.Context, inv *commands.Invocation) int {
	opts, args, err := newOpts("ahsd:cbkmLPxB:0SlH", "all:a", "human-readable:h", "summarize:s", "max-depth=:d",
		"total:c", "bytes:b", "apparent-size", "dereference:L", "no-dereference:P", "one-file-system:x",
		"block-size=:B", "null:0", "separate-dirs:S", "count-links:l", "exclude=", "si", "inodes", "time?", "threshold=:t").Parse(inv.Args[1:])
	if err != nil {
		return badUsage(inv, err, 1)
	}
	c := &duConf{maxDepth: -1, blockSize: 1024, seen: map[uint64]bool{}}
	for _, o := range opts {
		switch o.Key {
		case "a":
			c.all = true
		case "h", "si":
			c.human = true
		case "s":
			c.summarize = true
		case "d":
			n, err := strconv.Atoi(o.Val)
			if err != nil || n < 0 {
				inv.Errorf("invalid maximum depth %s", quote(o.Val))
				return 1
			}
			c.maxDepth = n
		case "c":
			c.total = true
		case "b":
			c.apparent, c.blockSize = true, 1
		case "apparent-size":
			c.apparent = true
		case "k":
			c.blockSize = 1024
		case "m":
			c.blockSize = 1 << 20
		case "B":
			n, ok := parseSize(o.Val)
			if !ok || n == 0 {
				n, ok = parseSize("1" + o.Val)
			}
			if !ok || n == 0 {
				inv.Errorf("invalid --block-size argument %s", quote(o.Val))
				return 1
			}
			c.blockSize = n
		case "0":
			c.nullEnd = true
		case "l":
			c.countLinks = true
		case "exclude":
			c.exclude = append(c.exclude, o.Val)
		}
	}
	if c.summarize {
		if c.all {
			inv.Errorf("cannot both summarize and show all entries")
			fmt.Fprintf(inv.Stderr, "Try '%s --help' for more information.\n", inv.Args[0])
			return 1
		}
		c.maxDepth = 0
	}
	if len(args) == 0 {
		args = []string{"."}
	}
	c.w = bufio.NewWriter(inv.Stdout)
	defer c.w.Flush()
	status := 0
	var grand int64
	for _, a := range args {
		fi, err := inv.FS.Lstat(inv.Abs(a))
		if err != nil {
			inv.Errorf("cannot access %s: %s", quote(a), commands.Strerror(err))
			status = 1
			continue
		}
		size, st := c.walk(ctx, inv, inv.Abs(a), a, fi, 0)
		if st != 0 {
			status = st
		}
		grand += size
	}
	if c.total {
		c.emit(grand, "total")
	}
	return status
}

// quota reports the delta's byte and inode limits when the vfs exposes
// them; 0 means unlimited.
func quota(inv *commands.Invocation) (int64, int64) {
	if q, ok := any(inv.FS).(interface{ Quota() (int64, int64) }); ok {
		return q.Quota()
	}
	return 0, 0
}

func df(ctx context.Context, inv *commands.Invocation) int {
	opts, operands, err := newOpts("hHikTPaB:lx:t:", "human-readable:h", "si:H", "inodes:i", "print-type:T",
		"portability:P", "all:a", "block-size=:B", "local:l", "output?", "total", "exclude-type=:x", "type=:t").Parse(inv.Args[1:])
	if err != nil {
		return badUsage(inv, err, 1)
	}
	human, inodes, showType := false, false, false
	for _, o := range opts {
		switch o.Key {
		case "h", "H":
			human = true
		case "i":
			inodes = true
		case "T":
			showType = true
		}
	}
	type row struct{ fs, typ, size, used, avail, pct, mnt string }
	pct := func(used, size int64) string {
		if size <= 0 {
			return "-"
		}
		p := (used*100 + size - 1) / size
		return strconv.FormatInt(p, 10) + "%"
	}
	head := row{"Filesystem", "Type", "1K-blocks", "Used", "Available", "Use%", "Mounted on"}
	if inodes {
		head = row{"Filesystem", "Type", "Inodes", "IUsed", "IFree", "IUse%", "Mounted on"}
	} else if human {
		head.size, head.avail = "Size", "Avail"
	}
	mkrow := func(name, mnt string, u vfs.Usage, maxB, maxI int64) row {
		r := row{fs: name, typ: "warren", mnt: mnt}
		switch {
		case inodes:
			r.used = strconv.FormatInt(u.Inodes, 10)
			if maxI > 0 {
				r.size, r.avail, r.pct = strconv.FormatInt(maxI, 10), strconv.FormatInt(max(0, maxI-u.Inodes), 10), pct(u.Inodes, maxI)
			} else {
				r.size, r.avail, r.pct = "-", "-", "-"
			}
		case human:
			r.used = humanSize(u.Bytes)
			if u.Bytes == 0 {
				r.used = "0"
			}
			if maxB > 0 {
				r.size, r.avail, r.pct = humanSize(maxB), humanSize(max(0, maxB-u.Bytes)), pct(u.Bytes, maxB)
			} else {
				r.size, r.avail, r.pct = "-", "-", "-"
			}
		default:
			r.used = strconv.FormatInt((u.Bytes+1023)/1024, 10)
			if maxB > 0 {
				r.size, r.avail, r.pct = strconv.FormatInt(maxB/1024, 10), strconv.FormatInt(max(0, maxB-u.Bytes)/1024, 10), pct(u.Bytes, maxB)
			} else {
				r.size, r.avail, r.pct = "-", "-", "-"
			}
		}
		return r
	}
	maxB, maxI := quota(inv)
	all := []row{mkrow("warren", "/", inv.FS.Usage(), maxB, maxI)}
	// Volumes mounted in the vfs (vfs.FS.Mount), each its own filesystem.
	mounts := inv.FS.Mounts()
	// A remote mount (a shared drive) reports bytes only: its inode
	// columns are "-".
	for _, m := range mounts {
		name := strings.TrimPrefix(m.Name, "volume ")
		if m.Remote != nil {
			name = strings.TrimPrefix(m.Name, "drive ")
			used, quota := m.Remote.Usage()
			r := mkrow(name, m.Path, vfs.Usage{Bytes: used}, quota, 0)
			r.typ = "drive"
			if inodes {
				r.used = "-"
			}
			all = append(all, r)
			continue
		}
		mb, mi := m.FS.Quota()
		all = append(all, mkrow(name, m.Path, m.FS.Usage(), mb, mi))
	}
	rows := []row{head}
	if len(operands) == 0 {
		rows = append(rows, all...)
	}
	status := 0
	for _, op := range operands {
		// The filesystem holding op: the longest mount path over it.
		p := path.Clean(inv.Abs(op))
		if _, err := inv.FS.Stat(p); err != nil {
			inv.Errorf("%s: %s", op, commands.Strerror(err))
			status = 1
			continue
		}
		best, bestLen := 0, 0
		for i, m := range mounts {
			if (p == m.Path || strings.HasPrefix(p, m.Path+"/")) && len(m.Path) > bestLen {
				best, bestLen = i+1, len(m.Path)
			}
		}
		rows = append(rows, all[best])
	}
	wfs, wt, ws, wu, wa, wp := 0, 0, 0, 0, 0, 0
	for _, x := range rows {
		wfs, wt, ws = max(wfs, len(x.fs)), max(wt, len(x.typ)), max(ws, len(x.size))
		wu, wa, wp = max(wu, len(x.used)), max(wa, len(x.avail)), max(wp, len(x.pct))
	}
	var b strings.Builder
	for i, x := range rows {
		fmt.Fprintf(&b, "%-*s ", wfs, x.fs)
		if showType {
			fmt.Fprintf(&b, "%-*s ", wt, x.typ)
		}
		if i == 0 {
			fmt.Fprintf(&b, "%*s %*s %*s %*s %s\n", ws, x.size, wu, x.used, wa, x.avail, wp, x.pct, x.mnt)
		} else {
			fmt.Fprintf(&b, "%*s %*s %*s %*s %s\n", ws, x.size, wu, x.used, wa, x.avail, wp, x.pct, x.mnt)
		}
	}
	io.WriteString(inv.Stdout, b.String())
	return status
}

// ---- tree ----

func tree(ctx context.Context, inv *commands.Invocation) int {
	opts, args, err := newOpts("adfL:I:P:FCnispugDJ", "noreport", "dirsfirst", "charset=", "prune").Parse(inv.Args[1:])
	if err != nil {
		return badUsage(inv, err, 1)
	}
	all, dirsOnly, full, classify, noReport, dirsFirst := false, false, false, false, false, false
	level := -1
	var ignore, only []string
	for _, o := range opts {
		switch o.Key {
		case "a":
			all = true
		case "d":
			dirsOnly = true
		case "f":
			full = true
		case "F":
			classify = true
		case "L":
			n, err := strconv.Atoi(o.Val)
			if err != nil || n < 1 {
				fmt.Fprintln(inv.Stderr, "tree: Invalid level, must be greater than 0.")
				return 1
			}
			level = n
		case "I":
			ignore = append(ignore, strings.Split(o.Val, "|")...)
		case "P":
			only = append(only, strings.Split(o.Val, "|")...)
		case "noreport":
			noReport = true
		case "dirsfirst":
			dirsFirst = true
		}
	}
	if len(args) == 0 {
		args = []string{"."}
	}
	w := bufio.NewWriter(inv.Stdout)
	defer w.Flush()
	// tree draws with box characters only in a UTF-8 locale
	tee, corner, bar := "|-- ", "`-- ", "|   "
	if utf8Locale(inv) {
		tee, corner, bar = "├── ", "└── ", "│   "
	}
	ndirs, nfiles := 0, 0
	status := 0
	match := func(pats []string, n string) bool {
		for _, p := range pats {
			if ok, _ := path.Match(p, n); ok {
				return true
			}
		}
		return false
	}
	var walk func(abs, disp, prefix string, depth int)
	walk = func(abs, disp, prefix string, depth int) {
		if ctx.Err() != nil || (level >= 0 && depth >= level) {
			return
		}
		ents, err := inv.FS.ReadDir(abs)
		if err != nil {
			return
		}
		type ent struct {
			name string
			fi   fs.FileInfo
			dir  bool
		}
		var list []ent
		for _, e := range ents {
			n := e.Name()
			if !all && strings.HasPrefix(n, ".") {
				continue
			}
			if match(ignore, n) {
				continue
			}
			fi, err := inv.FS.Lstat(path.Join(abs, n))
			if err != nil {
				continue
			}
			isDir := fi.IsDir()
			if fi.Mode()&fs.ModeSymlink != 0 {
				if t, err := inv.FS.Stat(path.Join(abs, n)); err == nil && t.IsDir() {
					isDir = true
				}
			}
			if dirsOnly && !isDir {
				continue
			}
			if len(only) > 0 && !isDir && !match(only, n) {
				continue
			}
			list = append(list, ent{n, fi, isDir})
		}
		if dirsFirst {
			var d, f []ent
			for _, e := range list {
				if e.dir {
					d = append(d, e)
				} else {
					f = append(f, e)
				}
			}
			list = append(d, f...)
		}
		for i, e := range list {
			branch, cont := tee, bar
			if i == len(list)-1 {
				branch, cont = corner, "    "
			}
			label := e.name
			if full {
				label = path.Join(disp, e.name)
			}
			if e.fi.Mode()&fs.ModeSymlink != 0 {
				t, _ := inv.FS.Readlink(path.Join(abs, e.name))
				label += " -> " + t
			} else if classify {
				switch {
				case e.fi.IsDir():
					label += "/"
				case e.fi.Mode()&0o111 != 0:
					label += "*"
				}
			}
			w.WriteString(prefix + branch + label + "\n")
			if e.dir {
				ndirs++
				if e.fi.Mode()&fs.ModeSymlink == 0 {
					walk(path.Join(abs, e.name), path.Join(disp, e.name), prefix+cont, depth+1)
				}
			} else {
				nfiles++
			}
		}
	}
	for _, a := range args {
		fi, err := inv.FS.Stat(inv.Abs(a))
		if err != nil || !fi.IsDir() {
			w.WriteString(a + "  [error opening dir]\n")
			status = 2
			continue
		}
		w.WriteString(a + "\n")
		ndirs++
		walk(inv.Abs(a), a, "", 0)
	}
	if !noReport {
		d := "directories"
		if ndirs == 1 {
			d = "directory"
		}
		f := "files"
		if nfiles == 1 {
			f = "file"
		}
		if dirsOnly {
			fmt.Fprintf(w, "\n%d %s\n", ndirs, d)
		} else {
			fmt.Fprintf(w, "\n%d %s, %d %s\n", ndirs, d, nfiles, f)
		}
	}
	return status
}

// ---- file ----
