package archive

import (
	"archive/zip"
	"bytes"
	"compress/flate"
	"context"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"path"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/warren-sandbox/warren/commands"
	"github.com/warren-sandbox/warren/commands/internal/textio"
	"github.com/warren-sandbox/warren/commands/sysinfo"
	"github.com/warren-sandbox/warren/vfs"
)

// zipMaxMember bounds one member held in memory while zip decides between
// storing and deflating it.
const zipMaxMember = 256 << 20

type zipEntry struct {
	hdr  zip.FileHeader
	data []byte // raw (already compressed) bytes
}

func zipCmd(ctx context.Context, inv *commands.Invocation) int {
	opts, args, err := newOpts("rqjdmy0123456789x:", "recurse-paths:r", "quiet:q", "junk-paths:j",
		"delete:d", "move:m", "symlinks:y", "exclude=:x").Parse(inv.Args[1:])
	if err != nil {
		return badUsage(inv, err, 16)
	}
	recurse, quiet, junk, del, symlinks, store := false, false, false, false, false, false
	var excludes []string
	for _, o := range opts {
		switch o.Key {
		case "r":
			recurse = true
		case "q":
			quiet = true
		case "j":
			junk = true
		case "d":
			del = true
		case "y":
			symlinks = true
		case "0":
			store = true
		case "x":
			excludes = append(excludes, o.Val)
		}
	}
	if len(args) == 0 {
		fmt.Fprintln(inv.Stderr, "zip error: Invalid command arguments (no archive name given)")
		return 16
	}
	archive := args[0]
	if path.Ext(archive) == "" {
		archive += ".zip"
	}
	files := args[1:]
	// existing members are kept unless replaced
	var entries []*zipEntry
	index := map[string]int{}
	// zip builds the whole archive in memory: the old archive, its
	// members' compressed data and the new archive are charged.
	res := inv.Memory().Reserve()
	defer res.Close()
	if data, err := inv.FS.ReadFile(inv.Abs(archive)); err == nil {
		if err := res.Grow(2 * int64(len(data))); err != nil {
			st, _ := inv.LimitExceeded(err)
			return st
		}
		zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
		if err != nil {
			fmt.Fprintf(inv.Stderr, "\nzip error: Zip file structure invalid (%s)\n", archive)
			return 3
		}
		for _, f := range zr.File {
			rc, err := f.OpenRaw()
			if err != nil {
				continue
			}
			raw, _ := io.ReadAll(rc)
			index[f.Name] = len(entries)
			entries = append(entries, &zipEntry{hdr: f.FileHeader, data: raw})
		}
	}
	if del {
		status := 12
		for _, n := range files {
			if i, ok := index[n]; ok {
				if !quiet {
					fmt.Fprintf(inv.Stdout, "deleting: %s\n", n)
				}
				entries[i] = nil
				status = 0
			}
		}
		if status != 0 {
			fmt.Fprintf(inv.Stderr, "\nzip error: Nothing to do! (%s)\n", archive)
			return status
		}
		return writeZip(inv, archive, entries)
	}
	added := 0
	archiveAbs := inv.Abs(archive)
	excluded := func(n string) bool {
		for _, p := range excludes {
			if ok, _ := path.Match(p, n); ok {
				return true
			}
		}
		return false
	}
	var memErr error
	var add func(name string, top bool) bool
	add = func(name string, top bool) bool {
		if ctx.Err() != nil {
			return false
		}
		abs := inv.Abs(name)
		if abs == archiveAbs || excluded(name) {
			return true
		}
		fi, err := inv.FS.Lstat(abs)
		if err == nil && fi.Mode()&fs.ModeSymlink != 0 && !symlinks {
			fi, err = inv.FS.Stat(abs)
		}
		if err != nil {
			fmt.Fprintf(inv.Stdout, "\tzip warning: name not matched: %s\n", name)
			return true
		}
		member := strings.TrimPrefix(path.Clean(name), "/")
		for strings.HasPrefix(member, "../") {
			member = member[3:]
		}
		if junk {
			member = path.Base(member)
		}
		e := &zipEntry{}
		e.hdr.Name = member
		e.hdr.Modified = fi.ModTime()
		e.hdr.ModifiedDate, e.hdr.ModifiedTime = dosTime(fi.ModTime().In(sysinfo.Location(inv)))
		e.hdr.SetMode(fi.Mode())
		var note string
		switch {
		case fi.IsDir():
			if junk {
				break
			}
			e.hdr.Name += "/"
			e.hdr.Method = zip.Store
			note = "stored 0%"
		case fi.Mode()&fs.ModeSymlink != 0:
			t, _ := inv.FS.Readlink(abs)
			e.data = []byte(t)
			e.hdr.Method = zip.Store
			e.hdr.UncompressedSize64 = uint64(len(t))
			e.hdr.CompressedSize64 = uint64(len(t))
			e.hdr.CRC32 = crc(e.data)
			note = "stored 0%"
		case fi.Mode().IsRegular():
			if fi.Size() > zipMaxMember {
				fmt.Fprintf(inv.Stderr, "\tzip warning: %s: larger than the sandbox's %d MiB member limit, skipped\n", name, zipMaxMember>>20)
				return true
			}
			data, err := inv.FS.ReadFile(abs)
			if err != nil {
				fmt.Fprintf(inv.Stderr, "\tzip warning: could not open for reading: %s\n", name)
				return true
			}
			// The member, its compressed form (at most as large, kept)
			// and its share of the archive buffer.
			if err := res.Grow(3 * int64(len(data))); err != nil {
				memErr = err
				return false
			}
			e.hdr.UncompressedSize64 = uint64(len(data))
			e.hdr.CRC32 = crc(data)
			var comp bytes.Buffer
			if !store && len(data) > 0 {
				fw, _ := flate.NewWriter(&comp, flate.DefaultCompression)
				fw.Write(data)
				fw.Close()
			}
			if !store && len(data) > 0 && comp.Len() < len(data) {
				e.hdr.Method = zip.Deflate
				e.data = comp.Bytes()
				pct := (int64(len(data)-comp.Len())*100 + int64(len(data))/2) / int64(len(data))
				note = fmt.Sprintf("deflated %d%%", pct)
			} else {
				e.hdr.Method = zip.Store
				e.data = data
				note = "stored 0%"
			}
			e.hdr.CompressedSize64 = uint64(len(e.data))
		default:
			return true
		}
		if e.hdr.Name != "/" && !(junk && fi.IsDir()) {
			verb := "adding"
			if i, ok := index[e.hdr.Name]; ok && entries[i] != nil {
				verb = "updating"
				entries[i] = e
			} else {
				index[e.hdr.Name] = len(entries)
				entries = append(entries, e)
			}
			added++
			if !quiet {
				if verb == "adding" {
					verb = "  adding"
				}
				fmt.Fprintf(inv.Stdout, "%s: %s (%s)\n", verb, e.hdr.Name, note)
			}
		}
		if fi.IsDir() && recurse {
			ents, _ := inv.FS.ReadDir(abs)
			names := make([]string, 0, len(ents))
			for _, d := range ents {
				names = append(names, d.Name())
			}
			sort.Strings(names)
			for _, n := range names {
				if !add(path.Join(name, n), false) {
					return false
				}
			}
		}
		return true
	}
	for _, f := range files {
		if !add(f, true) {
			if st, ok := inv.LimitExceeded(memErr); ok {
				return st
			}
			return 130
		}
	}
	if added == 0 {
		fmt.Fprintf(inv.Stdout, "\nzip error: Nothing to do! (%s)\n", archive)
		return 12
	}
	return writeZip(inv, archive, entries)
}

func writeZip(inv *commands.Invocation, archive string, entries []*zipEntry) int {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, e := range entries {
		if e == nil {
			continue
		}
		h := e.hdr
		w, err := zw.CreateRaw(&h)
		if err != nil {
			fmt.Fprintf(inv.Stderr, "zip error: %v\n", err)
			return 15
		}
		w.Write(e.data)
	}
	if err := zw.Close(); err != nil {
		fmt.Fprintf(inv.Stderr, "zip error: %v\n", err)
		return 15
	}
	if err := inv.FS.WriteFile(inv.Abs(archive), buf.Bytes(), 0o644); err != nil {
		fmt.Fprintf(inv.Stderr, "zip I/O error: %s\n", commands.Describe(err))
		return 15
	}
	return 0
}

// dosTime packs t into MS-DOS date and time fields (2-second resolution).
func dosTime(t time.Time) (uint16, uint16) {
	if t.Year() < 1980 {
		t = time.Date(1980, 1, 1, 0, 0, 0, 0, t.Location())
	}
	d := uint16(t.Day() + int(t.Month())<<5 + (t.Year()-1980)<<9)
	tm := uint16(t.Second()/2 + t.Minute()<<5 + t.Hour()<<11)
	return d, tm
}

func crc(b []byte) uint32 { return crc32.ChecksumIEEE(b) }

func unzipCmd(ctx context.Context, inv *commands.Invocation) int {
	opts, args, err := newOpts("lqojnpd:tvxZ").Parse(inv.Args[1:])
	if err != nil {
		return badUsage(inv, err, 10)
	}
	list, quiet, overwrite, never, junk, pipe, test := false, false, false, false, false, false, false
	dest := ""
	for _, o := range opts {
		switch o.Key {
		case "l", "v", "Z":
			list = true
		case "q":
			quiet = true
		case "o":
			overwrite = true
		case "n":
			never = true
		case "j":
			junk = true
		case "p":
			pipe = true
		case "d":
			dest = o.Val
		case "t":
			test = true
		}
	}
	if len(args) == 0 {
		fmt.Fprintln(inv.Stderr, "UnZip: usage: unzip [-Z] [-opts[modifiers]] file[.zip] [list] [-x xlist] [-d exdir]")
		return 10
	}
	archive := args[0]
	members := args[1:]
	data, err := inv.FS.ReadFile(inv.Abs(archive))
	if err != nil {
		alt := archive + ".zip"
		if d2, err2 := inv.FS.ReadFile(inv.Abs(alt)); err2 == nil {
			data, err, archive = d2, nil, alt
		}
	}
	if err != nil {
		fmt.Fprintf(inv.Stderr, "unzip:  cannot find or open %s, %s.zip or %s.ZIP.\n", archive, archive, archive)
		return 9
	}
	// The archive is held in memory while it is read: charge it.
	res := inv.Memory().Reserve()
	defer res.Close()
	if err := res.Grow(int64(len(data))); err != nil {
		st, _ := inv.LimitExceeded(err)
		return st
	}
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		fmt.Fprintf(inv.Stderr, "  End-of-central-directory signature not found.  Either this file is not\n  a zipfile, or it constitutes one disk of a multi-part archive.  In the\n  latter case the central directory and zipfile comment will be found on\n  the last disk(s) of this archive.\nunzip:  cannot find zipfile directory in %s.\n", archive)
		return 9
	}
	loc := sysinfo.Location(inv)
	want := func(n string) bool {
		if len(members) == 0 {
			return true
		}
		for _, m := range members {
			if ok, _ := path.Match(m, n); ok || m == n {
				return true
			}
		}
		return false
	}
	out := inv.Stdout
	if !pipe && (!quiet || list) {
		fmt.Fprintf(out, "Archive:  %s\n", archive)
	}
	if list {
		fmt.Fprintln(out, "  Length      Date    Time    Name\n---------  ---------- -----   ----")
		var total uint64
		n := 0
		for _, f := range zr.File {
			if !want(f.Name) {
				continue
			}
			fmt.Fprintf(out, "%9d  %s   %s\n", f.UncompressedSize64, f.Modified.In(loc).Format("2006-01-02 15:04"), f.Name)
			total += f.UncompressedSize64
			n++
		}
		unit := "files"
		if n == 1 {
			unit = "file"
		}
		fmt.Fprintf(out, "---------                     -------\n%9d                     %d %s\n", total, n, unit)
		return 0
	}
	root := inv.Dir
	if dest != "" {
		root = inv.Abs(dest)
		if err := inv.FS.MkdirAll(root, 0o755); err != nil {
			fmt.Fprintf(inv.Stderr, "checkdir:  cannot create extraction directory: %s\n           %s\n", dest, commands.Strerror(err))
			return 3
		}
		if !quiet && !pipe {
			if _, err := inv.FS.Stat(root); err == nil {
				// unzip announces the directory only when it had to create it
			}
		}
	}
	if r, err := inv.FS.Realpath(root); err == nil {
		root = r
	}
	x := &extractor{inv: inv, root: root}
	status := 0
	stopAll := false
	for _, f := range zr.File {
		if ctx.Err() != nil {
			return 130
		}
		if !want(f.Name) {
			continue
		}
		name := strings.ReplaceAll(f.Name, `\`, "/")
		if pipe || test {
			if strings.HasSuffix(name, "/") {
				continue
			}
			rc, err := f.Open()
			if err != nil {
				status = 2
				continue
			}
			w := out
			if test {
				w = io.Discard
			}
			if _, err := io.Copy(w, textio.WithContext(ctx, rc)); err != nil {
				if ctx.Err() != nil {
					return 130
				}
				fmt.Fprintf(inv.Stderr, "error: %s: %v\n", name, err)
				status = 2
			} else if test && !quiet {
				fmt.Fprintf(out, "    testing: %-22s   OK\n", name)
			}
			rc.Close()
			continue
		}
		// unzip strips absolute and ".." parts with a warning
		clean := strings.TrimLeft(name, "/")
		if clean != name {
			fmt.Fprintf(inv.Stderr, "warning:  stripped absolute path spec from %s\n", name)
			status = max(status, 1)
		}
		var parts []string
		dotdot := false
		for _, p := range strings.Split(clean, "/") {
			switch p {
			case "..":
				dotdot = true
			case ".", "":
			default:
				parts = append(parts, p)
			}
		}
		if dotdot {
			fmt.Fprintf(inv.Stderr, "warning:  skipped \"../\" path component(s) in %s\n", name)
			status = max(status, 1)
		}
		isDir := strings.HasSuffix(name, "/") || f.Mode().IsDir()
		if junk {
			if isDir {
				continue
			}
			parts = parts[len(parts)-1:]
		}
		if len(parts) == 0 {
			continue
		}
		rel := strings.Join(parts, "/")
		abs, err := x.parent(rel)
		if err != nil {
			fmt.Fprintf(inv.Stderr, "error:  cannot create %s\n        %s\n", path.Join(dest, rel), commands.Strerror(err))
			status = max(status, 1)
			continue
		}
		display := rel
		if dest != "" {
			display = path.Join(dest, rel)
		}
		if isDir {
			if err := inv.FS.Mkdir(abs, 0o755); err == nil && !quiet {
				fmt.Fprintf(out, "   creating: %s/\n", display)
			}
			continue
		}
		if fi, err := inv.FS.Lstat(abs); err == nil {
			if never || stopAll {
				continue
			}
			if !overwrite {
				fmt.Fprintf(inv.Stderr, "replace %s? [y]es, [n]o, [A]ll, [N]one, [r]ename:  NULL\n(EOF or read error, treating as \"[N]one\" ...)\n", display)
				stopAll = true
				status = max(status, 1)
				continue
			}
			if fi.IsDir() {
				fmt.Fprintf(inv.Stderr, "error:  cannot create %s\n        Is a directory\n", display)
				status = max(status, 1)
				continue
			}
			inv.FS.Remove(abs)
		}
		rc, err := f.Open()
		if err != nil {
			fmt.Fprintf(inv.Stderr, "  error:  %s: %v\n", display, err)
			status = 2
			continue
		}
		if f.Mode()&fs.ModeSymlink != 0 {
			t, _ := io.ReadAll(io.LimitReader(rc, 4096))
			rc.Close()
			if err := inv.FS.Symlink(string(t), abs); err != nil {
				fmt.Fprintf(inv.Stderr, "error:  cannot create %s\n        %s\n", display, commands.Strerror(err))
				status = max(status, 1)
			} else if !quiet {
				fmt.Fprintf(out, "    linking: %-22s  -> %s \n", display, t)
			}
			continue
		}
		perm := f.Mode().Perm()
		if perm == 0 {
			perm = 0o644
		}
		w, err := inv.FS.OpenFile(abs, vfs.O_WRONLY|vfs.O_CREATE|vfs.O_EXCL|vfs.O_NOFOLLOW, perm)
		if err != nil {
			rc.Close()
			fmt.Fprintf(inv.Stderr, "error:  cannot create %s\n        %s\n", display, commands.Strerror(err))
			status = max(status, 1)
			continue
		}
		if !quiet {
			verb := " extracting"
			if f.Method == zip.Deflate {
				verb = "  inflating"
			}
			fmt.Fprintf(out, "%s: %-22s  \n", verb, display)
		}
		_, err = io.Copy(w, textio.WithContext(ctx, rc))
		rc.Close()
		if cerr := w.Close(); err == nil {
			err = cerr
		}
		if ctx.Err() != nil {
			return 130
		}
		if err != nil {
			fmt.Fprintf(inv.Stderr, "error:  %s: %s\n", display, commands.Strerror(err))
			if errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT) {
				// unzip's "disk full": going on would only fail again.
				return 50
			}
			status = 2
			continue
		}
		mt := f.Modified
		if mt.IsZero() {
			mt = time.Unix(0, 0)
		}
		inv.FS.Chtimes(abs, mt, mt)
	}
	return status
}
