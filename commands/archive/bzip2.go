package archive

import (
	"bufio"
	"compress/bzip2"
	"context"
	"errors"
	"fmt"
	"io"
	"path"
	"strings"
	"syscall"

	dsbzip2 "github.com/dsnet/compress/bzip2"

	"github.com/warren-sandbox/warren/commands"
	"github.com/warren-sandbox/warren/commands/internal/textio"
	"github.com/warren-sandbox/warren/vfs"
)

// bzip2, bunzip2 and bzcat: decompression by Go's compress/bzip2 (which
// reads every stream of a file), compression by dsnet/compress's encoder
// (Go has none): valid .bz2 that any bzip2 reads, not always bzip2's own
// bytes. Both hold one 900 kB block at a time.

var bzip2Opts = newOpts("dzkftcqvsLVh123456789", "decompress:d", "compress:z", "keep:k",
	"force:f", "test:t", "stdout:c", "quiet:q", "verbose:v", "small:s", "license:L",
	"version:V", "help:h", "fast:1", "best:9")

type bzConf struct {
	inv                          *commands.Invocation
	ctx                          context.Context
	prog                         string
	decomp, stdout, keep, force  bool
	test, quiet, compress, usage bool
	level                        int
	status                       int
}

func bzip2Cmd(ctx context.Context, inv *commands.Invocation) int {
	opts, args, err := bzip2Opts.Parse(inv.Args[1:])
	if err != nil {
		return badUsage(inv, err, 1)
	}
	c := &bzConf{inv: inv, ctx: ctx, prog: path.Base(inv.Args[0]), level: 9}
	switch c.prog {
	case "bunzip2":
		c.decomp = true
	case "bzcat":
		c.decomp, c.stdout = true, true
	}
	for _, o := range opts {
		switch o.Key {
		case "d":
			c.decomp = true
		case "z":
			c.decomp, c.compress = false, true
		case "k":
			c.keep = true
		case "f":
			c.force = true
		case "t":
			c.test, c.decomp = true, true
		case "c":
			c.stdout = true
		case "q":
			c.quiet = true
		case "L", "V", "h":
			c.usage = true
		default:
			if len(o.Key) == 1 && o.Key[0] >= '1' && o.Key[0] <= '9' {
				c.level = int(o.Key[0] - '0')
			}
		}
	}
	if c.usage {
		return inv.Refuse(&commands.UnsupportedError{Cmd: c.prog, What: "--help/--version"})
	}
	if !c.decomp {
		if len(args) == 0 {
			c.compressStream(stdinOrEmpty(inv.Stdin), inv.Stdout, "(stdin)", "(stdout)")
			return c.status
		}
		for _, a := range args {
			if ctx.Err() != nil {
				return 130
			}
			c.compressOne(a)
		}
		return c.status
	}
	if len(args) == 0 {
		c.stream(inv.Stdin, inv.Stdout, "(stdin)", "(stdout)")
		return c.status
	}
	for _, a := range args {
		if ctx.Err() != nil {
			return 130
		}
		c.one(a)
	}
	return c.status
}

func (c *bzConf) fail(status int, format string, a ...any) {
	fmt.Fprintf(c.inv.Stderr, "%s: %s\n", c.prog, fmt.Sprintf(format, a...))
	c.status = max(c.status, status)
}

// bzOutName is bunzip2's output name for an input name, and whether it
// had to guess (NAME.out).
func bzOutName(name string) (string, bool) {
	for _, s := range [][2]string{{".bz2", ""}, {".bz", ""}, {".tbz2", ".tar"}, {".tbz", ".tar"}} {
		if strings.HasSuffix(name, s[0]) && len(name) > len(s[0]) {
			return strings.TrimSuffix(name, s[0]) + s[1], false
		}
	}
	return name + ".out", true
}

func (c *bzConf) one(name string) {
	inv := c.inv
	if name == "-" {
		c.stream(inv.Stdin, inv.Stdout, "(stdin)", "(stdout)")
		return
	}
	abs := inv.Abs(name)
	fi, err := inv.FS.Stat(abs)
	if err != nil {
		c.fail(1, "Can't open input file %s: %s.", name, commands.Strerror(err))
		return
	}
	if fi.IsDir() {
		c.fail(1, "Input file %s is a directory.", name)
		return
	}
	in, err := inv.FS.Open(abs)
	if err != nil {
		c.fail(1, "Can't open input file %s: %s.", name, commands.Strerror(err))
		return
	}
	defer in.Close()
	if c.stdout || c.test {
		c.stream(in, inv.Stdout, name, "(stdout)")
		return
	}
	outName, guessed := bzOutName(name)
	// bunzip2 checks the magic before it makes the output file
	br := bufio.NewReader(in)
	if magic, _ := br.Peek(3); string(magic) != "BZh" {
		c.fail(2, "%s is not a bzip2 file.", name)
		return
	}
	if guessed && !c.quiet {
		fmt.Fprintf(inv.Stderr, "%s: Can't guess original name for %s -- using %s\n", c.prog, name, outName)
	}
	outAbs := inv.Abs(outName)
	if _, err := inv.FS.Lstat(outAbs); err == nil {
		if !c.force {
			c.fail(1, "Output file %s already exists.", outName)
			return
		}
		inv.FS.Remove(outAbs)
	}
	out, err := inv.FS.OpenFile(outAbs, vfs.O_WRONLY|vfs.O_CREATE|vfs.O_EXCL, fi.Mode().Perm())
	if err != nil {
		c.fail(1, "Can't create output file %s: %s.", outName, commands.Strerror(err))
		return
	}
	ok := c.stream(br, out, name, outName)
	if err := out.Close(); err != nil && ok {
		c.fail(1, "%s: %s", outName, commands.Strerror(err))
		ok = false
	}
	if !ok {
		inv.FS.Remove(outAbs)
		return
	}
	inv.FS.Chtimes(outAbs, fi.ModTime(), fi.ModTime())
	if !c.keep {
		inv.FS.Remove(abs)
	}
}

const bzRecover = "\nYou can use the `bzip2recover' program to attempt to recover\ndata from undamaged sections of corrupted files.\n"

// stream decompresses in to out (io.Discard under -t), with bzip2's
// reports of a bad input.
func (c *bzConf) stream(in io.Reader, out io.Writer, inName, outName string) bool {
	if in == nil {
		in = strings.NewReader("")
	}
	br, ok := in.(*bufio.Reader)
	if !ok {
		br = bufio.NewReader(in)
	}
	if magic, _ := br.Peek(3); string(magic) != "BZh" {
		if c.test {
			c.fail(2, "%s: bad magic number (file not created by bzip2)\n%s", inName, bzRecover)
		} else {
			c.fail(2, "%s is not a bzip2 file.", inName)
		}
		return false
	}
	if c.test {
		out = io.Discard
	}
	// A bomb expands without end into /dev/null or a pipe: stop on
	// cancellation (into the vfs, the disk quota stops it with ENOSPC).
	_, err := io.Copy(out, textio.WithContext(c.ctx, bzip2.NewReader(br)))
	if err == nil {
		return true
	}
	if c.ctx.Err() != nil {
		c.status = 130
		return false
	}
	var se bzip2.StructuralError
	switch {
	case errors.Is(err, io.ErrUnexpectedEOF):
		fmt.Fprintln(c.inv.Stderr) // bzip2 starts this report on a line of its own
		c.fail(2, "Compressed file ends unexpectedly;\n\tperhaps it is corrupted?  *Possible* reason follows.\n%s: Success\n\tInput file = %s, output file = %s\n\nIt is possible that the compressed file(s) have become corrupted.\nYou can use the -tvv option to test integrity of such files.\n%s", c.prog, inName, outName, bzRecover)
	case errors.As(err, &se):
		c.fail(2, "Data integrity error when decompressing.\n\tInput file = %s, output file = %s\n\nIt is possible that the compressed file(s) have become corrupted.\nYou can use the -tvv option to test integrity of such files.\n%s", inName, outName, bzRecover)
	default:
		var errno syscall.Errno
		if st, ok := c.inv.LimitExceeded(err); ok {
			c.status = st
		} else if errors.As(err, &errno) && errno == syscall.EPIPE {
			c.status = max(c.status, 1)
		} else {
			c.fail(1, "I/O or other error, bailing out.  Possible reason follows.\n%s: %s\n\tInput file = %s, output file = %s", c.prog, commands.Strerror(err), inName, outName)
		}
	}
	return false
}

// compressOne compresses name to name.bz2 (or to stdout under -c).
func (c *bzConf) compressOne(name string) {
	inv := c.inv
	if name == "-" {
		c.compressStream(stdinOrEmpty(inv.Stdin), inv.Stdout, "(stdin)", "(stdout)")
		return
	}
	abs := inv.Abs(name)
	fi, err := inv.FS.Stat(abs)
	if err != nil {
		c.fail(1, "Can't open input file %s: %s.", name, commands.Strerror(err))
		return
	}
	if fi.IsDir() {
		c.fail(1, "Input file %s is a directory.", name)
		return
	}
	for _, s := range []string{".bz2", ".bz", ".tbz2", ".tbz"} {
		if strings.HasSuffix(name, s) {
			c.fail(1, "Input file %s already has %s suffix.", name, s)
			return
		}
	}
	in, err := inv.FS.Open(abs)
	if err != nil {
		c.fail(1, "Can't open input file %s: %s.", name, commands.Strerror(err))
		return
	}
	defer in.Close()
	if c.stdout {
		c.compressStream(in, inv.Stdout, name, "(stdout)")
		return
	}
	outName := name + ".bz2"
	outAbs := inv.Abs(outName)
	if _, err := inv.FS.Lstat(outAbs); err == nil {
		if !c.force {
			c.fail(1, "Output file %s already exists.", outName)
			return
		}
		inv.FS.Remove(outAbs)
	}
	out, err := inv.FS.OpenFile(outAbs, vfs.O_WRONLY|vfs.O_CREATE|vfs.O_EXCL, fi.Mode().Perm())
	if err != nil {
		c.fail(1, "Can't create output file %s: %s.", outName, commands.Strerror(err))
		return
	}
	ok := c.compressStream(in, out, name, outName)
	if err := out.Close(); err != nil && ok {
		c.fail(1, "%s: %s", outName, commands.Strerror(err))
		ok = false
	}
	if !ok {
		inv.FS.Remove(outAbs)
		return
	}
	inv.FS.Chtimes(outAbs, fi.ModTime(), fi.ModTime())
	if !c.keep {
		inv.FS.Remove(abs)
	}
}

// bzEncoderCost is what the encoder holds for a level (its block and the
// sort's arrays, several times the block), charged before it starts.
func bzEncoderCost(level int) int64 { return int64(level) * 100_000 * 10 }

func (c *bzConf) compressStream(in io.Reader, out io.Writer, inName, outName string) bool {
	mem := c.inv.Memory()
	cost := bzEncoderCost(c.level)
	if err := mem.Charge(cost); err != nil {
		st, _ := c.inv.LimitExceeded(err)
		c.status = max(c.status, st)
		return false
	}
	defer mem.Release(cost)
	bw := bufio.NewWriter(out)
	zw, err := dsbzip2.NewWriter(bw, &dsbzip2.WriterConfig{Level: c.level})
	if err == nil {
		_, err = io.Copy(zw, textio.WithContext(c.ctx, in))
		if cerr := zw.Close(); err == nil {
			err = cerr
		}
		if ferr := bw.Flush(); err == nil {
			err = ferr
		}
	}
	if err == nil {
		return true
	}
	if c.ctx.Err() != nil {
		c.status = 130
		return false
	}
	var errno syscall.Errno
	if errors.As(err, &errno) && errno == syscall.EPIPE {
		c.status = max(c.status, 1)
		return false
	}
	c.fail(1, "I/O or other error, bailing out.  Possible reason follows.\n%s: %s\n\tInput file = %s, output file = %s", c.prog, commands.Strerror(err), inName, outName)
	return false
}
