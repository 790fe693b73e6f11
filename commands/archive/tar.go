package archive

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/bzip2"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	dsbzip2 "github.com/dsnet/compress/bzip2"
	"github.com/ulikunitz/xz"

	"github.com/warren-sandbox/warren/commands"
	"github.com/warren-sandbox/warren/commands/internal/textio"
	"github.com/warren-sandbox/warren/commands/sysinfo"
	"github.com/warren-sandbox/warren/vfs"
)

var tarOpts = newOpts("cxtrudf:zjJavC:OkpPhmT:X:Z",
	"create:c", "extract:x", "get:x", "list:t", "append:r", "update:u", "file=:f",
	"gzip:z", "gunzip:z", "ungzip:z", "bzip2:j", "xz:J", "auto-compress:a", "verbose:v",
	"directory=:C", "to-stdout:O", "keep-old-files:k", "preserve-permissions:p", "same-permissions:p",
	"absolute-names:P", "dereference:h", "touch:m", "files-from=:T", "exclude-from=:X",
	"exclude=", "strip-components=", "overwrite", "no-same-owner", "same-owner",
	"numeric-owner", "owner=", "group=", "mtime=", "sort=", "wildcards", "no-wildcards",
	"anchored", "no-anchored", "recursion", "no-recursion", "skip-old-files", "totals",
	"format=:H", "warning=", "delete", "compress:Z", "uncompress:Z", "one-file-system", "mode=",
	"show-transformed-names", "no-overwrite-dir", "keep-newer-files", "null", "checkpoint?")

type tarConf struct {
	inv                        *commands.Invocation
	ctx                        context.Context
	op                         byte
	file                       string
	comp                       byte // z j J or 0
	verbose                    int
	dir                        string
	excludes                   []string
	strip                      int
	toStdout, keepOld, skipOld bool
	overwrite                  bool // --overwrite: rewrite an existing regular file in place
	preserve, deref, touch     bool
	noSameOwner, numericOwner  bool
	owner, group               string
	mtime                      *time.Time
	recursion                  bool
	status                     int
	stripped                   map[string]bool
	users, groups              map[uint32]string
	loc                        *time.Location
	msgOut                     io.Writer
	fatalSeen                  bool
}

func tarCmd(ctx context.Context, inv *commands.Invocation) int {
	args := inv.Args[1:]
	// old-style "tar czf ARCHIVE ..." bundles letters without a dash
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") && strings.Trim(args[0], "cxtrudfzjJavCOkpPhmTXZ") == "" {
		args = append([]string{"-" + args[0]}, args[1:]...)
	}
	opts, operands, err := tarOpts.Parse(args)
	if err != nil {
		inv.Errorf("%s", err.Error())
		fmt.Fprintf(inv.Stderr, "Try 'tar --help' or 'tar --usage' for more information.\n")
		return 64
	}
	c := &tarConf{inv: inv, ctx: ctx, file: "-", recursion: true, stripped: map[string]bool{}, loc: sysinfo.Location(inv)}
	var filesFrom []string
	for _, o := range opts {
		switch o.Key {
		case "c", "x", "t", "r", "u", "delete":
			if c.op != 0 && c.op != o.Key[0] {
				inv.Errorf("You may not specify more than one '-Acdtrux', '--delete' or  '--test-label' option")
				fmt.Fprintf(inv.Stderr, "Try 'tar --help' or 'tar --usage' for more information.\n")
				return 2
			}
			c.op = o.Key[0]
		case "f":
			c.file = o.Val
		case "z", "j", "J", "Z":
			c.comp = o.Key[0]
		case "a":
			c.comp = 'a'
		case "v":
			c.verbose++
		case "C":
			c.dir = o.Val
		case "O":
			c.toStdout = true
		case "k":
			c.keepOld = true
		case "skip-old-files":
			c.skipOld = true
		case "overwrite":
			c.overwrite = true
		case "p":
			c.preserve = true
		case "h":
			c.deref = true
		case "m":
			c.touch = true
		case "exclude":
			c.excludes = append(c.excludes, o.Val)
		case "X", "T":
			data, err := inv.FS.ReadFile(inv.Abs(o.Val))
			if err != nil {
				inv.Errorf("%s: Cannot open: %s", o.Val, commands.Strerror(err))
				inv.Errorf("Error is not recoverable: exiting now")
				return 2
			}
			for _, l := range strings.Split(string(data), "\n") {
				if l == "" {
					continue
				}
				if o.Key == "X" {
					c.excludes = append(c.excludes, l)
				} else {
					filesFrom = append(filesFrom, l)
				}
			}
		case "strip-components":
			n, err := strconv.Atoi(o.Val)
			if err != nil || n < 0 {
				inv.Errorf("Invalid number of elements: %s", quote(o.Val))
				return 2
			}
			c.strip = n
		case "no-same-owner":
			c.noSameOwner = true
		case "numeric-owner":
			c.numericOwner = true
		case "owner":
			c.owner = o.Val
		case "group":
			c.group = o.Val
		case "mtime":
			t, err := sysinfo.ParseDate(o.Val, inv.Now(), c.loc)
			if err != nil {
				inv.Errorf("Substituting %s for unknown date format %s", "now", quote(o.Val))
				t = inv.Now()
			}
			c.mtime = &t
		case "no-recursion":
			c.recursion = false
		case "recursion":
			c.recursion = true
		}
	}
	operands = append(operands, filesFrom...)
	if c.comp == 'a' {
		c.comp = 0
		switch {
		case strings.HasSuffix(c.file, ".gz"), strings.HasSuffix(c.file, ".tgz"):
			c.comp = 'z'
		case strings.HasSuffix(c.file, ".bz2"), strings.HasSuffix(c.file, ".tbz2"):
			c.comp = 'j'
		case strings.HasSuffix(c.file, ".xz"), strings.HasSuffix(c.file, ".txz"):
			c.comp = 'J'
		}
	}
	c.msgOut = inv.Stdout
	if c.file == "-" && c.op == 'c' {
		c.msgOut = inv.Stderr
	}
	switch c.op {
	case 0:
		inv.Errorf("You must specify one of the '-Acdtrux', '--delete' or '--test-label' options")
		fmt.Fprintf(inv.Stderr, "Try 'tar --help' or 'tar --usage' for more information.\n")
		return 2
	case 'c':
		if len(operands) == 0 {
			inv.Errorf("Cowardly refusing to create an empty archive")
			fmt.Fprintf(inv.Stderr, "Try 'tar --help' or 'tar --usage' for more information.\n")
			return 2
		}
		c.create(operands)
	case 'x', 't':
		c.read(operands)
	default:
		inv.Errorf("the %s operation is not supported in the sandbox; create a new archive instead", map[byte]string{'r': "--append", 'u': "--update", 'd': "--delete"}[c.op])
		return 2
	}
	if c.status == 2 && !c.fatalSeen {
		inv.Errorf("Exiting with failure status due to previous errors")
	}
	return c.status
}

func (c *tarConf) fail(format string, a ...any) {
	c.inv.Errorf(format, a...)
	c.status = 2
}

func (c *tarConf) fatal(format string, a ...any) {
	c.inv.Errorf(format, a...)
	c.inv.Errorf("Error is not recoverable: exiting now")
	c.status, c.fatalSeen = 2, true
}

func (c *tarConf) base() string {
	if c.dir == "" {
		return c.inv.Dir
	}
	return c.inv.Abs(c.dir)
}

func (c *tarConf) excluded(name string) bool {
	base := path.Base(name)
	for _, p := range c.excludes {
		p = strings.TrimSuffix(p, "/")
		if ok, _ := path.Match(p, base); ok {
			return true
		}
		if ok, _ := path.Match(p, name); ok {
			return true
		}
		if strings.HasPrefix(name, p+"/") {
			return true
		}
	}
	return false
}

// ---- create ----

func (c *tarConf) create(operands []string) {
	var out io.Writer
	var closer io.Closer
	if c.file == "-" {
		out = c.inv.Stdout
	} else {
		f, err := c.inv.OpenFile(c.file, vfs.O_WRONLY|vfs.O_CREATE|vfs.O_TRUNC, 0o644)
		if err != nil {
			c.fatal("%s: Cannot open: %s", c.file, commands.Strerror(err))
			return
		}
		out, closer = f, f
	}
	bw := bufio.NewWriterSize(out, 64<<10)
	var zw io.WriteCloser
	w := io.Writer(bw)
	switch c.comp {
	case 'z':
		zw = gzip.NewWriter(bw)
		w = zw
	case 'J':
		mem := c.inv.Memory()
		dict, cost, err := xzChargeDict(mem, xzPresetDict[6])
		if err != nil {
			if st, ok := c.inv.LimitExceeded(err); ok {
				c.status = max(c.status, st)
			}
			if closer != nil {
				closer.Close()
			}
			return
		}
		defer mem.Release(cost)
		xw, err := xz.WriterConfig{DictCap: dict}.NewWriter(bw)
		if err != nil {
			c.fatal("xz: %v", err)
			if closer != nil {
				closer.Close()
			}
			return
		}
		zw, w = xw, xw
	case 'j':
		mem := c.inv.Memory()
		cost := bzEncoderCost(9)
		if err := mem.Charge(cost); err != nil {
			if st, ok := c.inv.LimitExceeded(err); ok {
				c.status = max(c.status, st)
			}
			if closer != nil {
				closer.Close()
			}
			return
		}
		defer mem.Release(cost)
		bz, err := dsbzip2.NewWriter(bw, &dsbzip2.WriterConfig{Level: 9})
		if err != nil {
			c.fatal("bzip2: %v", err)
			if closer != nil {
				closer.Close()
			}
			return
		}
		zw, w = bz, bz
	case 'Z':
		c.fatal("compress (.Z) compression is not available in the sandbox (gzip, bzip2 and xz are: use -z, -j or -J)")
		if closer != nil {
			closer.Close()
		}
		return
	}
	tw := tar.NewWriter(w)
	links := map[uint64]string{}
	var archivePath string
	if c.file != "-" {
		archivePath = c.inv.Abs(c.file)
	}
	c.users = loadNames(c.inv, "/etc/passwd")
	c.groups = loadNames(c.inv, "/etc/group")
	for _, op := range operands {
		if strings.HasPrefix(op, "-C") {
			continue
		}
		abs := path.Join(c.base(), op)
		if strings.HasPrefix(op, "/") {
			abs = path.Clean(op)
		}
		c.add(tw, abs, op, links, archivePath, true)
		if c.ctx.Err() != nil {
			break
		}
	}
	if err := tw.Close(); err != nil {
		c.fatal("%s: Cannot write: %s", c.file, commands.Strerror(err))
	}
	if zw != nil {
		zw.Close()
	}
	if err := bw.Flush(); err != nil {
		c.fatal("%s: Cannot write: %s", c.file, commands.Strerror(err))
	}
	if closer != nil {
		if err := closer.Close(); err != nil {
			c.fatal("%s: Cannot close: %s", c.file, commands.Strerror(err))
		}
	}
}

func (c *tarConf) memberName(name string) string {
	n := name
	prefix := ""
	for {
		switch {
		case strings.HasPrefix(n, "/"):
			prefix, n = prefix+"/", n[1:]
			continue
		case strings.HasPrefix(n, "../"):
			prefix, n = prefix+"../", n[3:]
			continue
		}
		break
	}
	if prefix != "" && !c.stripped[prefix] {
		c.stripped[prefix] = true
		c.inv.Errorf("Removing leading `%s' from member names", prefix)
	}
	if n == "" {
		n = "."
	}
	return n
}

func (c *tarConf) add(tw *tar.Writer, abs, name string, links map[uint64]string, archivePath string, top bool) {
	if c.ctx.Err() != nil {
		return
	}
	var fi fs.FileInfo
	var err error
	if c.deref {
		fi, err = c.inv.FS.Stat(abs)
	} else {
		fi, err = c.inv.FS.Lstat(abs)
	}
	if err != nil {
		c.fail("%s: Cannot stat: %s", name, commands.Strerror(err))
		return
	}
	member := c.memberName(name)
	if c.excluded(member) || (!top && c.excluded(path.Base(name))) {
		return
	}
	if abs == archivePath && !fi.IsDir() {
		c.inv.Errorf("%s: file is the archive; not dumped", name)
		return
	}
	st, _ := fi.Sys().(*vfs.Stat)
	hdr := &tar.Header{
		Name:    member,
		Mode:    int64(unixMode(fi.Mode())),
		ModTime: fi.ModTime().Truncate(time.Second),
		Format:  tar.FormatGNU,
	}
	if c.mtime != nil {
		hdr.ModTime = *c.mtime
	}
	if st != nil {
		hdr.Uid, hdr.Gid = int(st.Uid), int(st.Gid)
		if !c.numericOwner {
			hdr.Uname, hdr.Gname = c.users[st.Uid], c.groups[st.Gid]
		}
	}
	if c.owner != "" {
		hdr.Uname = c.owner
		if n, err := strconv.Atoi(c.owner); err == nil {
			hdr.Uid, hdr.Uname = n, ""
		}
	}
	if c.group != "" {
		hdr.Gname = c.group
		if n, err := strconv.Atoi(c.group); err == nil {
			hdr.Gid, hdr.Gname = n, ""
		}
	}
	m := fi.Mode()
	switch {
	case m.IsDir():
		hdr.Typeflag = tar.TypeDir
		if !strings.HasSuffix(hdr.Name, "/") {
			hdr.Name += "/"
		}
	case m&fs.ModeSymlink != 0:
		hdr.Typeflag = tar.TypeSymlink
		hdr.Linkname, _ = c.inv.FS.Readlink(abs)
	case m.IsRegular():
		hdr.Typeflag = tar.TypeReg
		if st != nil && st.Nlink > 1 {
			if first, ok := links[st.Ino]; ok {
				hdr.Typeflag, hdr.Linkname = tar.TypeLink, first
				break
			}
			links[st.Ino] = member
		}
		hdr.Size = fi.Size()
	case m&fs.ModeNamedPipe != 0:
		hdr.Typeflag = tar.TypeFifo
	case m&fs.ModeSocket != 0:
		c.inv.Errorf("%s: socket ignored", name)
		return
	default:
		c.inv.Errorf("%s: device nodes are not archived in the sandbox", name)
		return
	}
	if c.verbose > 1 {
		c.listLine(c.msgOut, hdr)
	} else if c.verbose > 0 {
		fmt.Fprintln(c.msgOut, hdr.Name)
	}
	if err := tw.WriteHeader(hdr); err != nil {
		c.fail("%s: Cannot write header: %v", name, err)
		return
	}
	if hdr.Typeflag == tar.TypeReg {
		f, err := c.inv.FS.Open(abs)
		if err != nil {
			c.fail("%s: Cannot open: %s", name, commands.Strerror(err))
			return
		}
		n, err := io.Copy(tw, io.LimitReader(f, hdr.Size))
		f.Close()
		if err != nil {
			c.fail("%s: Read error: %s", name, commands.Strerror(err))
			return
		}
		if n < hdr.Size {
			// the file shrank while we read it: pad as GNU tar does
			tw.Write(make([]byte, hdr.Size-n))
			c.fail("%s: File shrank by %d bytes; padding with zeros", name, hdr.Size-n)
		}
	}
	if m.IsDir() && c.recursion {
		ents, err := c.inv.FS.ReadDir(abs)
		if err != nil {
			c.fail("%s: Cannot open: %s", name, commands.Strerror(err))
			return
		}
		names := make([]string, 0, len(ents))
		for _, e := range ents {
			names = append(names, e.Name())
		}
		sort.Strings(names)
		for _, n := range names {
			child := name + "/" + n
			if strings.HasSuffix(name, "/") {
				child = name + n
			}
			c.add(tw, path.Join(abs, n), child, links, archivePath, false)
		}
	}
}

// ---- list / extract ----

// openArchive opens the archive and undoes its compression, detected from
// the magic bytes when no -z/-j was given.
func (c *tarConf) openArchive() (io.Reader, func(), bool) {
	var in io.Reader
	closeFn := func() {}
	if c.file == "-" {
		in = c.inv.Stdin
		if in == nil {
			in = strings.NewReader("")
		}
	} else {
		rc, err := c.inv.Open(c.file)
		if err != nil {
			c.fatal("%s: Cannot open: %s", c.file, commands.Strerror(err))
			return nil, nil, false
		}
		in, closeFn = rc, func() { rc.Close() }
	}
	br := bufio.NewReaderSize(in, 64<<10)
	magic, _ := br.Peek(6)
	comp := c.comp
	switch {
	case bytes.HasPrefix(magic, []byte{0x1f, 0x8b}):
		comp = 'z'
	case bytes.HasPrefix(magic, []byte("BZh")):
		comp = 'j'
	case bytes.HasPrefix(magic, []byte("\xfd7zXZ\x00")):
		comp = 'J'
	case len(magic) > 0:
		if comp != 0 {
			// as GNU tar, the decompressor complains and tar gives up
			closeFn()
			switch comp {
			case 'j':
				fmt.Fprintln(c.inv.Stderr, "bzip2: (stdin) is not a bzip2 file.")
				c.fatal("Child returned status 2")
			case 'J':
				fmt.Fprintln(c.inv.Stderr, "xz: (stdin): File format not recognized")
				c.fatal("Child returned status 1")
			default:
				fmt.Fprintln(c.inv.Stderr, "gzip: stdin: not in gzip format")
				c.fatal("Child returned status 1")
			}
			return nil, nil, false
		}
	}
	switch comp {
	case 'z':
		zr, err := gzip.NewReader(br)
		if err != nil {
			closeFn()
			c.inv.Errorf("gzip: stdin: not in gzip format")
			c.fatal("Child returned status 1")
			return nil, nil, false
		}
		return textio.WithContext(c.ctx, zr), closeFn, true
	case 'j':
		return textio.WithContext(c.ctx, bzip2.NewReader(br)), closeFn, true
	case 'J':
		x := newXzReader(br, c.inv.Memory(), false)
		return textio.WithContext(c.ctx, x), func() { x.Close(); closeFn() }, true
	case 'Z':
		closeFn()
		c.fatal("compress (.Z) archives are not supported in the sandbox")
		return nil, nil, false
	}
	return br, closeFn, true
}

func (c *tarConf) read(members []string) {
	in, closeFn, ok := c.openArchive()
	if !ok {
		return
	}
	defer closeFn()
	var x *extractor
	if c.op == 'x' && !c.toStdout {
		root := c.base()
		fi, err := c.inv.FS.Stat(root)
		if err != nil || !fi.IsDir() {
			if err == nil {
				err = fmt.Errorf("Not a directory")
			}
			c.fatal("%s: Cannot open: %s", c.dir, commands.Strerror(err))
			return
		}
		if r, err := c.inv.FS.Realpath(root); err == nil {
			root = r
		}
		x = &extractor{inv: c.inv, root: root}
	}
	found := make([]bool, len(members))
	tr := tar.NewReader(in)
	var dirTimes []func()
	sawAny := false
	for {
		if c.ctx.Err() != nil {
			c.status = 130
			return
		}
		if c.fatalSeen {
			return
		}
		hdr, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			if c.ctx.Err() != nil {
				c.status = 130
				return
			}
			if st, ok := c.inv.LimitExceeded(err); ok {
				c.status, c.fatalSeen = st, true
				return
			}
			if isXzErr(err) {
				// as GNU tar reports its xz child's failure
				fmt.Fprintf(c.inv.Stderr, "xz: (stdin): %v\n", err)
				c.fatal("Child returned status 1")
				return
			}
			if !sawAny {
				c.inv.Errorf("This does not look like a tar archive")
				c.fatal("Skipping to next header")
			} else {
				c.fatal("Unexpected EOF in archive")
			}
			return
		}
		sawAny = true
		if len(members) > 0 {
			match := false
			for i, m := range members {
				m = strings.TrimSuffix(m, "/")
				n := strings.TrimSuffix(hdr.Name, "/")
				if n == m || strings.HasPrefix(n, m+"/") {
					match, found[i] = true, true
				}
			}
			if !match {
				continue
			}
		}
		if c.excluded(strings.TrimSuffix(hdr.Name, "/")) {
			continue
		}
		if c.op == 't' {
			if c.verbose > 0 {
				c.listLine(c.inv.Stdout, hdr)
			} else {
				fmt.Fprintln(c.inv.Stdout, hdr.Name)
			}
			continue
		}
		if f := c.extract(x, tr, hdr); f != nil {
			dirTimes = append(dirTimes, f)
		}
	}
	for i := len(dirTimes) - 1; i >= 0; i-- {
		dirTimes[i]()
	}
	for i, m := range members {
		if !found[i] {
			c.fail("%s: Not found in archive", m)
		}
	}
}

// extract writes one member; it returns a func that sets a directory's
// times once its contents are in place.
func (c *tarConf) extract(x *extractor, tr *tar.Reader, hdr *tar.Header) func() {
	name, ok := cleanName(hdr.Name, false, func(prefix string) {
		if !c.stripped[prefix] {
			c.stripped[prefix] = true
			c.inv.Errorf("Removing leading `%s' from member names", prefix)
		}
	})
	if !ok {
		c.fail("%s: Member name contains '..'", hdr.Name)
		return nil
	}
	if c.strip > 0 {
		parts := strings.Split(name, "/")
		if len(parts) <= c.strip || name == "." {
			return nil
		}
		name = strings.Join(parts[c.strip:], "/")
	}
	if c.toStdout {
		if hdr.Typeflag == tar.TypeReg || hdr.Typeflag == tar.TypeRegA {
			io.Copy(c.inv.Stdout, tr)
		}
		return nil
	}
	if c.verbose > 0 {
		if c.verbose > 1 {
			c.listLine(c.inv.Stdout, hdr)
		} else {
			fmt.Fprintln(c.inv.Stdout, hdr.Name)
		}
	}
	if name == "." {
		return nil
	}
	abs, err := x.parent(name)
	if err != nil {
		c.fail("%s: Cannot open: %s", hdr.Name, commands.Strerror(err))
		return nil
	}
	// as for GNU tar run by root, permissions are kept (minus set-id bits,
	// which are never restored); other users get the umask applied
	perm := fs.FileMode(hdr.Mode) & 0o777
	if c.preserve || c.inv.Sys == nil || c.inv.Sys.Uid == 0 {
		if hdr.Mode&0o1000 != 0 {
			perm |= fs.ModeSticky
		}
	} else {
		perm &^= 0o022
	}
	mtime := hdr.ModTime
	if c.touch {
		mtime = c.inv.Now()
	}
	inPlace := false
	if existing, err := c.inv.FS.Lstat(abs); err == nil {
		if c.keepOld {
			c.fail("%s: Cannot open: File exists", hdr.Name)
			return nil
		}
		if c.skipOld {
			return nil
		}
		// GNU's --overwrite opens an existing regular file without
		// unlinking it, so its other hard links see the new data; never
		// through a symlink (O_NOFOLLOW), which could point outside.
		inPlace = c.overwrite && existing.Mode().IsRegular()
	}
	switch hdr.Typeflag {
	case tar.TypeDir:
		if err := x.clear(abs, true); err != nil {
			c.fail("%s: Cannot mkdir: %s", hdr.Name, commands.Strerror(err))
			return nil
		}
		if err := c.inv.FS.Mkdir(abs, perm|0o700); err != nil && !errors.Is(err, fs.ErrExist) {
			c.fail("%s: Cannot mkdir: %s", hdr.Name, commands.Strerror(err))
			return nil
		}
		c.chownMember(abs, hdr)
		return func() {
			c.inv.FS.Chmod(abs, perm)
			c.inv.FS.Chtimes(abs, mtime, mtime)
		}
	case tar.TypeReg, tar.TypeRegA, tar.TypeGNUSparse:
		var f *vfs.File
		var err error
		if inPlace {
			f, err = c.inv.FS.OpenFile(abs, vfs.O_WRONLY|vfs.O_TRUNC|vfs.O_NOFOLLOW, perm)
		} else if err = x.clear(abs, false); err == nil {
			f, err = openWrite(c.inv, abs, perm)
		}
		if err != nil {
			c.fail("%s: Cannot open: %s", hdr.Name, commands.Strerror(err))
			return nil
		}
		_, err = io.Copy(f, tr)
		cerr := f.Close()
		if err == nil {
			err = cerr
		}
		if err != nil {
			if errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT) {
				// The disk is full: every later member would fail too,
				// and skipping a bomb's data still decompresses all of it.
				c.fatal("%s: Cannot write: %s", hdr.Name, commands.Strerror(err))
				return nil
			}
			c.fail("%s: Cannot write: %s", hdr.Name, commands.Strerror(err))
			return nil
		}
	case tar.TypeSymlink:
		if err := x.clear(abs, false); err != nil {
			c.fail("%s: Cannot create symlink to %s: %s", hdr.Name, quote(hdr.Linkname), commands.Strerror(err))
			return nil
		}
		if err := c.inv.FS.Symlink(hdr.Linkname, abs); err != nil {
			c.fail("%s: Cannot create symlink to %s: %s", hdr.Name, quote(hdr.Linkname), commands.Strerror(err))
			return nil
		}
		c.inv.FS.Lchown(abs, hdr.Uid, hdr.Gid)
		return nil
	case tar.TypeLink:
		target, ok := cleanName(hdr.Linkname, true, func(prefix string) {
			key := "link:" + prefix
			if !c.stripped[key] {
				c.stripped[key] = true
				c.inv.Errorf("Removing leading `%s' from hard link targets", prefix)
			}
		})
		if ok && c.strip > 0 {
			parts := strings.Split(target, "/")
			if len(parts) <= c.strip {
				ok = false
			} else {
				target = strings.Join(parts[c.strip:], "/")
			}
		}
		if !ok || target == "." {
			c.fail("%s: Cannot hard link to %s: hard link target is outside the extraction directory", hdr.Name, quote(hdr.Linkname))
			return nil
		}
		tabs, err := x.inside(target)
		if err == nil {
			if fi, serr := c.inv.FS.Lstat(tabs); serr == nil && fi.IsDir() {
				err = fmt.Errorf("Operation not permitted")
			}
		}
		if err != nil {
			c.fail("%s: Cannot hard link to %s: %s", hdr.Name, quote(target), commands.Strerror(err))
			return nil
		}
		if tabs == abs {
			return nil
		}
		if err := x.clear(abs, false); err == nil {
			err = c.inv.FS.Link(tabs, abs)
			if err != nil {
				c.fail("%s: Cannot hard link to %s: %s", hdr.Name, quote(target), commands.Strerror(err))
			}
		}
		return nil
	case tar.TypeFifo:
		x.clear(abs, false)
		if err := c.inv.FS.Mknod(abs, fs.ModeNamedPipe|perm, 0); err != nil {
			c.fail("%s: Cannot mkfifo: %s", hdr.Name, commands.Strerror(err))
			return nil
		}
	case tar.TypeChar, tar.TypeBlock:
		c.fail("%s: Cannot mknod: Operation not permitted", hdr.Name)
		return nil
	case tar.TypeXGlobalHeader, tar.TypeXHeader:
		return nil
	default:
		c.inv.Errorf("%s: Unknown file type '%c', extracted as normal file", hdr.Name, hdr.Typeflag)
		x.clear(abs, false)
		if f, err := openWrite(c.inv, abs, perm); err == nil {
			io.Copy(f, tr)
			f.Close()
		}
	}
	c.chownMember(abs, hdr)
	c.inv.FS.Chmod(abs, perm)
	c.inv.FS.Chtimes(abs, mtime, mtime)
	return nil
}

func (c *tarConf) chownMember(abs string, hdr *tar.Header) {
	if c.noSameOwner {
		return
	}
	uid, gid := hdr.Uid, hdr.Gid
	if !c.numericOwner {
		if hdr.Uname != "" {
			if id, ok := lookupID(c.inv, "/etc/passwd", hdr.Uname); ok {
				uid = id
			}
		}
		if hdr.Gname != "" {
			if id, ok := lookupID(c.inv, "/etc/group", hdr.Gname); ok {
				gid = id
			}
		}
	}
	c.inv.FS.Chown(abs, uid, gid)
}

// listLine prints a member as tar -tv does.
func (c *tarConf) listLine(w io.Writer, hdr *tar.Header) {
	mode := fs.FileMode(hdr.Mode).Perm()
	typ := byte('-')
	switch hdr.Typeflag {
	case tar.TypeDir:
		typ = 'd'
	case tar.TypeSymlink:
		typ = 'l'
	case tar.TypeLink:
		typ = 'h'
	case tar.TypeFifo:
		typ = 'p'
	case tar.TypeChar:
		typ = 'c'
	case tar.TypeBlock:
		typ = 'b'
	}
	ms := []byte(modeStr(mode, hdr.Mode))
	ms[0] = typ
	if typ == 'h' {
		ms[0] = '-'
	}
	u := hdr.Uname
	if u == "" {
		u = strconv.Itoa(hdr.Uid)
	}
	g := hdr.Gname
	if g == "" {
		g = strconv.Itoa(hdr.Gid)
	}
	ug := u + "/" + g
	size := strconv.FormatInt(hdr.Size, 10)
	pad := 19 - len(ug) - len(size)
	if pad < 1 {
		pad = 1
	}
	name := hdr.Name
	switch hdr.Typeflag {
	case tar.TypeSymlink:
		name += " -> " + hdr.Linkname
	case tar.TypeLink:
		name += " link to " + hdr.Linkname
	}
	fmt.Fprintf(w, "%s %s%s%s %s %s\n", ms, ug, strings.Repeat(" ", pad), size,
		hdr.ModTime.In(c.loc).Format("2006-01-02 15:04"), name)
}

func modeStr(m fs.FileMode, raw int64) string {
	const rwx = "rwxrwxrwx"
	b := []byte("----------")
	for i := 0; i < 9; i++ {
		if m&(1<<uint(8-i)) != 0 {
			b[i+1] = rwx[i]
		}
	}
	set := func(i int, on bool, lo, up byte) {
		if on {
			if b[i] == 'x' {
				b[i] = lo
			} else {
				b[i] = up
			}
		}
	}
	set(3, raw&0o4000 != 0, 's', 'S')
	set(6, raw&0o2000 != 0, 's', 'S')
	set(9, raw&0o1000 != 0, 't', 'T')
	return string(b)
}

func unixMode(m fs.FileMode) uint32 {
	u := uint32(m.Perm())
	if m&fs.ModeSetuid != 0 {
		u |= 0o4000
	}
	if m&fs.ModeSetgid != 0 {
		u |= 0o2000
	}
	if m&fs.ModeSticky != 0 {
		u |= 0o1000
	}
	return u
}

func loadNames(inv *commands.Invocation, file string) map[uint32]string {
	m := map[uint32]string{0: "root"}
	data, err := inv.FS.ReadFile(file)
	if err != nil {
		return m
	}
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Split(line, ":")
		if len(f) < 3 {
			continue
		}
		if id, err := strconv.ParseUint(f[2], 10, 32); err == nil {
			if _, dup := m[uint32(id)]; !dup || id == 0 {
				m[uint32(id)] = f[0]
			}
		}
	}
	return m
}

func lookupID(inv *commands.Invocation, file, name string) (int, bool) {
	for id, n := range loadNames(inv, file) {
		if n == name {
			return int(id), true
		}
	}
	return 0, false
}
