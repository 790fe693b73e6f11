package archive

import (
	"bufio"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"path"
	"strings"
	"syscall"
	"time"

	"github.com/warren-sandbox/warren/commands"
	"github.com/warren-sandbox/warren/commands/internal/textio"
	"github.com/warren-sandbox/warren/commands/sysinfo"
	"github.com/warren-sandbox/warren/vfs"
)

var gzipOpts = newOpts("cdfklnNqrtvS:123456789", "stdout:c", "to-stdout:c", "decompress:d",
	"uncompress:d", "force:f", "keep:k", "list:l", "no-name:n", "name:N", "quiet:q",
	"recursive:r", "test:t", "verbose:v", "suffix=:S", "fast:1", "best:9")

type gzConf struct {
	inv                                     *commands.Invocation
	ctx                                     context.Context
	stdout, decomp, force, keep, list       bool
	noName, quiet, recursive, test, verbose bool
	suffix                                  string
	level                                   int
	status                                  int
	listed                                  bool
	totIn, totOut                           int64
	nList                                   int
}

func gzipCmd(ctx context.Context, inv *commands.Invocation) int {
	opts, args, err := gzipOpts.Parse(inv.Args[1:])
	if err != nil {
		return badUsage(inv, err, 1)
	}
	c := &gzConf{inv: inv, ctx: ctx, suffix: ".gz", level: gzip.DefaultCompression}
	switch path.Base(inv.Args[0]) {
	case "gunzip":
		c.decomp = true
	case "zcat":
		c.decomp, c.stdout = true, true
	}
	for _, o := range opts {
		switch o.Key {
		case "c":
			c.stdout = true
		case "d":
			c.decomp = true
		case "f":
			c.force = true
		case "k":
			c.keep = true
		case "l":
			c.list = true
		case "n":
			c.noName = true
		case "q":
			c.quiet = true
		case "r":
			c.recursive = true
		case "t":
			c.test, c.decomp = true, true
		case "v":
			c.verbose = true
		case "S":
			c.suffix = o.Val
		default:
			if len(o.Key) == 1 && o.Key[0] >= '1' && o.Key[0] <= '9' {
				c.level = int(o.Key[0] - '0')
			}
		}
	}
	if len(args) == 0 {
		args = []string{"-"}
	}
	for _, a := range args {
		if ctx.Err() != nil {
			return 130
		}
		c.one(a)
	}
	if c.list && c.nList > 1 {
		fmt.Fprintf(inv.Stdout, "%19d %19d %5s (totals)\n", c.totIn, c.totOut, ratio(c.totIn, c.totOut))
	}
	return c.status
}

func (c *gzConf) errorf(status int, format string, a ...any) {
	if !c.quiet || status == 1 {
		fmt.Fprintf(c.inv.Stderr, "gzip: %s\n", fmt.Sprintf(format, a...))
	}
	if status > c.status && !(c.status == 1 && status == 2) {
		c.status = status
	}
	if status == 1 {
		c.status = 1
	}
}

func ratio(comp, orig int64) string {
	if orig == 0 {
		return "0.0%"
	}
	r := float64(orig-comp) / float64(orig) * 100
	return fmt.Sprintf("%.1f%%", r)
}

func (c *gzConf) one(name string) {
	inv := c.inv
	if name == "-" {
		if c.list {
			c.list1("stdin", "stdout", inv.Stdin)
			return
		}
		c.stream(inv.Stdin, inv.Stdout, "stdin", "")
		return
	}
	abs := inv.Abs(name)
	fi, err := inv.FS.Stat(abs)
	if err != nil {
		c.errorf(1, "%s: %s", name, commands.Strerror(err))
		return
	}
	if fi.IsDir() {
		if c.recursive {
			ents, _ := inv.FS.ReadDir(abs)
			for _, e := range ents {
				c.one(path.Join(name, e.Name()))
			}
			return
		}
		c.errorf(2, "%s is a directory -- ignored", name)
		return
	}
	if c.list {
		c.listOne(name, abs)
		return
	}
	var outName string
	if c.decomp {
		switch {
		case strings.HasSuffix(name, c.suffix) && len(name) > len(c.suffix):
			outName = strings.TrimSuffix(name, c.suffix)
		case strings.HasSuffix(name, ".tgz"):
			outName = strings.TrimSuffix(name, ".tgz") + ".tar"
		case strings.HasSuffix(name, ".gz"):
			outName = strings.TrimSuffix(name, ".gz")
		default:
			if !c.stdout && !c.test {
				c.errorf(2, "%s: unknown suffix -- ignored", name)
				return
			}
		}
	} else {
		if strings.HasSuffix(name, c.suffix) && !c.stdout {
			c.errorf(2, "%s already has %s suffix -- unchanged", name, c.suffix)
			return
		}
		outName = name + c.suffix
	}
	in, err := inv.FS.Open(abs)
	if err != nil {
		c.errorf(1, "%s: %s", name, commands.Strerror(err))
		return
	}
	defer in.Close()
	if c.stdout || c.test {
		c.stream(in, inv.Stdout, name, path.Base(name))
		return
	}
	outAbs := inv.Abs(outName)
	if _, err := inv.FS.Lstat(outAbs); err == nil {
		if !c.force {
			c.errorf(2, "%s already exists;\tnot overwritten", outName)
			return
		}
		inv.FS.Remove(outAbs)
	}
	out, err := inv.FS.OpenFile(outAbs, vfs.O_WRONLY|vfs.O_CREATE|vfs.O_EXCL, fi.Mode().Perm())
	if err != nil {
		c.errorf(1, "%s: %s", outName, commands.Strerror(err))
		return
	}
	ok := c.streamFile(in, out, name, path.Base(name), fi)
	if err := out.Close(); err != nil && ok {
		c.errorf(1, "%s: %s", outName, commands.Strerror(err))
		ok = false
	}
	if !ok {
		inv.FS.Remove(outAbs)
		return
	}
	inv.FS.Chtimes(outAbs, fi.ModTime(), fi.ModTime())
	if c.verbose {
		fmt.Fprintf(inv.Stderr, "%s:\t replaced with %s\n", name, outName)
	}
	if !c.keep {
		inv.FS.Remove(abs)
	}
}

func (c *gzConf) streamFile(in io.Reader, out io.Writer, name, base string, fi fs.FileInfo) bool {
	if c.decomp {
		return c.stream(in, out, name, base)
	}
	bw := bufio.NewWriterSize(out, 64<<10)
	zw, _ := gzip.NewWriterLevel(bw, c.level)
	if !c.noName {
		zw.Name = base
		zw.ModTime = fi.ModTime()
	}
	if _, err := io.Copy(zw, in); err != nil {
		c.errorf(1, "%s: %s", name, commands.Strerror(err))
		return false
	}
	zw.Close()
	if err := bw.Flush(); err != nil {
		c.errorf(1, "%s: %s", name, commands.Strerror(err))
		return false
	}
	return true
}

// stream (de)compresses in to out; multi-member gzip input is concatenated.
func (c *gzConf) stream(in io.Reader, out io.Writer, name, base string) bool {
	if in == nil {
		in = strings.NewReader("")
	}
	if !c.decomp {
		bw := bufio.NewWriterSize(out, 64<<10)
		zw, _ := gzip.NewWriterLevel(bw, c.level)
		if _, err := io.Copy(zw, in); err != nil {
			c.errorf(1, "%s: %s", name, commands.Strerror(err))
			return false
		}
		zw.Close()
		bw.Flush()
		return true
	}
	zr, err := gzip.NewReader(bufio.NewReader(in))
	if err != nil {
		if name != "stdin" {
			fmt.Fprintln(c.inv.Stderr) // gzip starts this message on a new line
		}
		c.errorf(1, "%s: not in gzip format", name)
		return false
	}
	if c.test {
		out = io.Discard
	}
	// A bomb expands without end into /dev/null or a pipe: stop on
	// cancellation (into the vfs, the disk quota stops it with ENOSPC).
	if _, err := io.Copy(out, textio.WithContext(c.ctx, zr)); err != nil {
		if c.ctx.Err() != nil {
			c.status = 130
			return false
		}
		var errno syscall.Errno
		if errors.Is(err, io.ErrUnexpectedEOF) {
			c.errorf(1, "%s: unexpected end of file", name)
		} else if errors.As(err, &errno) {
			c.errorf(1, "%s: %s", name, commands.Strerror(err)) // No space left on device
		} else {
			c.errorf(1, "%s: %s", name, strings.TrimPrefix(err.Error(), "gzip: "))
		}
		return false
	}
	return true
}

func (c *gzConf) listOne(name, abs string) {
	f, err := c.inv.FS.Open(abs)
	if err != nil {
		c.errorf(1, "%s: %s", name, commands.Strerror(err))
		return
	}
	defer f.Close()
	c.list1(name, strings.TrimSuffix(name, c.suffix), f)
}

// countingReader counts what passes through it (gzip -l of standard
// input: the compressed size is what was read).
type countingReader struct {
	r io.Reader
	n int64
}

func (cr *countingReader) Read(p []byte) (int, error) {
	n, err := cr.r.Read(p)
	cr.n += int64(n)
	return n, err
}

// list1 prints the -l line of one compressed stream (uname "stdout" for
// standard input, as GNU says); -v adds the method, the CRC and the
// header's time.
func (c *gzConf) list1(name, uname string, r io.Reader) {
	cr := &countingReader{r: r}
	zr, err := gzip.NewReader(bufio.NewReader(cr))
	if err != nil {
		c.errorf(1, "%s: not in gzip format", name)
		return
	}
	zr.Multistream(false)
	crc := crc32.NewIEEE()
	n, err := io.Copy(crc, zr)
	if err != nil && c.ctx.Err() != nil {
		return
	}
	io.Copy(io.Discard, cr) // a trailer or garbage after the member counts
	if !c.listed {
		if c.verbose {
			fmt.Fprint(c.inv.Stdout, "method  crc     date  time  ")
		}
		fmt.Fprintln(c.inv.Stdout, "         compressed        uncompressed  ratio uncompressed_name")
		c.listed = true
	}
	comp := cr.n
	// gzip's ratio leaves out the header and trailer
	body := comp - 18
	if zr.Name != "" {
		body -= int64(len(zr.Name)) + 1
	}
	if c.verbose {
		mt := zr.ModTime
		if mt.IsZero() {
			mt = time.Unix(0, 0)
		}
		fmt.Fprintf(c.inv.Stdout, "defla %08x %s ", crc.Sum32(), mt.In(sysinfo.Location(c.inv)).Format("Jan _2 15:04"))
	}
	fmt.Fprintf(c.inv.Stdout, "%19d %19d %5s %s\n", comp, n, ratio(body, n), uname)
	c.totIn += comp
	c.totOut += n
	c.nList++
}
