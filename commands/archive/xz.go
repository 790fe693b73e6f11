package archive

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"path"
	"strings"

	"github.com/ulikunitz/xz"
	"github.com/ulikunitz/xz/lzma"

	"github.com/warren-sandbox/warren/commands"
	"github.com/warren-sandbox/warren/commands/internal/textio"
	"github.com/warren-sandbox/warren/vfs"
)

// xz, unxz, xzcat, lzma, unlzma and lzcat: XZ Utils' command over the .xz
// format (and the legacy .lzma one), decoded by xzformat.go and encoded by
// ulikunitz/xz. What it writes is a valid .xz any xz reads, but not the
// same bytes XZ Utils writes (another encoder). Not resident: --list,
// --format=raw and filter chains (BCJ, delta), which are refused by name
// so the image's own xz runs them.

var xzOpts = newOpts("zdtlkfcqvhHVeT:F:C:S:M:Q0123456789",
	"compress:z", "decompress:d", "uncompress:d", "test:t", "list:l", "keep:k", "force:f",
	"stdout:c", "to-stdout:c", "quiet:q", "verbose:v", "help:h", "long-help:H", "version:V",
	"extreme:e", "threads=:T", "format=:F", "check=:C", "suffix=:S", "memlimit=:M",
	"memory=:M", "no-warn:Q", "single-stream", "no-sparse", "fast:0", "best:9", "ignore-check")

// xzCompressCost is what the encoder allocates for a dictionary of d bytes
// (measured: 5-10× d, hash tables and buffers), charged before it starts.
func xzCompressCost(d int) int64 { return 6*int64(d) + 4<<20 }

// xzPresetDict is XZ Utils' dictionary per preset level.
var xzPresetDict = [10]int{256 << 10, 1 << 20, 2 << 20, 4 << 20, 4 << 20, 8 << 20, 8 << 20, 16 << 20, 32 << 20, 64 << 20}

type xzConf struct {
	inv                         *commands.Invocation
	ctx                         context.Context
	prog                        string
	decomp, test, keep, force   bool
	stdout, quiet, single, noCk bool
	format                      string // auto, xz, lzma
	check                       byte
	level                       int
	suffix                      string
	status                      int
}

func xzCmd(ctx context.Context, inv *commands.Invocation) int {
	opts, args, err := xzOpts.Parse(inv.Args[1:])
	if err != nil {
		p := path.Base(inv.Args[0])
		return inv.BadUsage(err, fmt.Sprintf("%s: %s\n%s: Try `%s --help' for more information.\n", p, err, p, p), 1)
	}
	c := &xzConf{inv: inv, ctx: ctx, prog: path.Base(inv.Args[0]), format: "auto", check: xz.CRC64, level: 6}
	switch c.prog {
	case "unxz", "unlzma":
		c.decomp = true
	case "xzcat", "lzcat":
		c.decomp, c.stdout = true, true
	}
	if strings.Contains(c.prog, "lz") {
		c.format = "lzma"
	}
	for _, o := range opts {
		switch o.Key {
		case "z":
			c.decomp = false
		case "d":
			c.decomp = true
		case "t":
			c.test, c.decomp = true, true
		case "k":
			c.keep = true
		case "f":
			c.force = true
		case "c":
			c.stdout = true
		case "q":
			c.quiet = true
		case "single-stream":
			c.single = true
		case "ignore-check":
			c.noCk = true
		case "F":
			switch o.Val {
			case "auto", "xz", "lzma", "alone":
				c.format = strings.Replace(o.Val, "alone", "lzma", 1)
			case "raw":
				return inv.Refuse(&commands.UnsupportedError{Cmd: c.prog, What: "--format=raw"})
			default:
				fmt.Fprintf(inv.Stderr, "%s: %s: Unknown file format type\n", c.prog, o.Val)
				return 1
			}
		case "C":
			switch o.Val {
			case "none":
				c.check = xz.None
			case "crc32":
				c.check = xz.CRC32
			case "crc64":
				c.check = xz.CRC64
			case "sha256":
				c.check = xz.SHA256
			default:
				fmt.Fprintf(inv.Stderr, "%s: %s: Unsupported integrity check type\n", c.prog, o.Val)
				return 1
			}
		case "S":
			c.suffix = o.Val
		case "l":
			return inv.Refuse(&commands.UnsupportedError{Cmd: c.prog, What: "--list"})
		case "h", "H", "V":
			return inv.Refuse(&commands.UnsupportedError{Cmd: c.prog, What: "--help/--version"})
		case "e", "T", "M", "Q", "v", "no-sparse":
			// extreme, threads, memory limits, warnings and progress
			// change nothing in what this encoder writes
		default:
			if len(o.Key) == 1 && o.Key[0] >= '0' && o.Key[0] <= '9' {
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
	return c.status
}

func (c *xzConf) fail(name string, err error) {
	if status, ok := c.inv.LimitExceeded(err); ok {
		c.status = max(c.status, status)
		return
	}
	msg := err.Error()
	if c.ctx.Err() != nil {
		c.status = max(c.status, 130)
		return
	}
	fmt.Fprintf(c.inv.Stderr, "%s: %s: %s\n", c.prog, name, msg)
	c.status = max(c.status, 1)
}

func (c *xzConf) warn(format string, a ...any) {
	if !c.quiet {
		fmt.Fprintf(c.inv.Stderr, "%s: %s\n", c.prog, fmt.Sprintf(format, a...))
	}
	if c.status == 0 {
		c.status = 2
	}
}

// suffixes are the (compressed, plain) name endings xz knows.
func (c *xzConf) suffixes() [][2]string {
	var s [][2]string
	if c.suffix != "" {
		s = append(s, [2]string{c.suffix, ""})
	}
	if c.format == "lzma" {
		return append(s, [2]string{".lzma", ""}, [2]string{".tlz", ".tar"})
	}
	s = append(s, [2]string{".xz", ""}, [2]string{".txz", ".tar"})
	if c.format == "auto" {
		s = append(s, [2]string{".lzma", ""}, [2]string{".tlz", ".tar"})
	}
	return s
}

func (c *xzConf) one(name string) {
	inv := c.inv
	if name == "-" {
		c.stream(bufio.NewReader(stdinOrEmpty(inv.Stdin)), inv.Stdout, "(stdin)")
		return
	}
	abs := inv.Abs(name)
	fi, err := inv.FS.Stat(abs)
	if err != nil {
		c.fail(name, errors.New(commands.Strerror(err)))
		return
	}
	if fi.IsDir() {
		c.warn("%s: Is a directory, skipping", name)
		return
	}
	var outName string
	if !c.stdout && !c.test {
		if c.decomp {
			for _, s := range c.suffixes() {
				if strings.HasSuffix(name, s[0]) && len(name) > len(s[0]) {
					outName = strings.TrimSuffix(name, s[0]) + s[1]
					break
				}
			}
		} else {
			for _, s := range c.suffixes() {
				if strings.HasSuffix(name, s[0]) {
					c.warn("%s: File already has `%s' suffix, skipping", name, s[0])
					return
				}
			}
			ext := ".xz"
			if c.format == "lzma" {
				ext = ".lzma"
			}
			if c.suffix != "" {
				ext = c.suffix
			}
			outName = name + ext
		}
	}
	in, err := inv.FS.Open(abs)
	if err != nil {
		c.fail(name, errors.New(commands.Strerror(err)))
		return
	}
	defer in.Close()
	br := bufio.NewReader(in)
	if outName == "" && (c.stdout || c.test) {
		c.stream(br, inv.Stdout, name)
		return
	}
	if c.decomp {
		// xz looks at the data before the name: a file it cannot read is
		// "not recognized" whatever it is called
		if !c.recognized(br) {
			c.fail(name, errXzFormat)
			return
		}
		if outName == "" {
			c.warn("%s: Filename has an unknown suffix, skipping", name)
			return
		}
	}
	outAbs := inv.Abs(outName)
	if _, err := inv.FS.Lstat(outAbs); err == nil {
		if !c.force {
			c.fail(outName, errors.New("File exists"))
			return
		}
		inv.FS.Remove(outAbs)
	}
	out, err := inv.FS.OpenFile(outAbs, vfs.O_WRONLY|vfs.O_CREATE|vfs.O_EXCL, fi.Mode().Perm())
	if err != nil {
		c.fail(outName, errors.New(commands.Strerror(err)))
		return
	}
	ok := c.stream(br, out, name)
	if err := out.Close(); err != nil && ok {
		c.fail(outName, errors.New(commands.Strerror(err)))
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

func stdinOrEmpty(r io.Reader) io.Reader {
	if r == nil {
		return strings.NewReader("")
	}
	return r
}

// recognized: the input starts as the format being read does.
func (c *xzConf) recognized(br *bufio.Reader) bool {
	head, _ := br.Peek(13)
	if c.format != "lzma" && len(head) >= 6 && string(head[:6]) == string(xzMagic) {
		return true
	}
	return c.format != "xz" && lzmaHeaderOK(head)
}

// lzmaHeaderOK is XZ Utils' test for a .lzma ("alone") header: valid
// properties, a dictionary size that is 2^n or 2^n+2^(n-1), and a known
// size below 256 GiB or unknown.
func lzmaHeaderOK(h []byte) bool {
	if len(h) < 13 || h[0] > 224 {
		return false
	}
	d := binary.LittleEndian.Uint32(h[1:5])
	if d != 0xffffffff {
		x := d - 1
		x |= x >> 2
		x |= x >> 3
		x |= x >> 4
		x |= x >> 8
		x |= x >> 16
		if x++; x != d {
			return false
		}
	}
	size := binary.LittleEndian.Uint64(h[5:13])
	return size == ^uint64(0) || size < 1<<38
}

// decoder is the plain-bytes reader over br for the format in use.
func (c *xzConf) decoder(br *bufio.Reader) (io.Reader, func(), error) {
	mem := c.inv.Memory()
	head, _ := br.Peek(13)
	if c.format != "lzma" && len(head) >= 6 && string(head[:6]) == string(xzMagic) {
		x := newXzReader(br, mem, c.single)
		return x, func() { x.Close() }, nil
	}
	if c.format == "xz" || !lzmaHeaderOK(head) {
		return nil, nil, errXzFormat
	}
	d := int64(max(binary.LittleEndian.Uint32(head[1:5]), lzma.MinDictCap))
	if err := mem.Charge(d + xzDecoderOverhead); err != nil {
		return nil, nil, err
	}
	release := func() { mem.Release(d + xzDecoderOverhead) }
	r, err := lzma.ReaderConfig{DictCap: int(d)}.NewReader(br)
	if err != nil {
		release()
		return nil, nil, errXzCorrupt
	}
	return r, release, nil
}

// stream runs one input through: decompress (or test) or compress.
func (c *xzConf) stream(br *bufio.Reader, out io.Writer, name string) bool {
	if c.test {
		out = io.Discard
	}
	if !c.decomp {
		return c.compress(br, out, name)
	}
	if c.force && c.stdout && !c.recognized(br) {
		// -dcf passes what it cannot read through, as cat would
		_, err := io.Copy(out, textio.WithContext(c.ctx, br))
		if err != nil {
			c.fail(name, err)
			return false
		}
		return true
	}
	r, done, err := c.decoder(br)
	if err != nil {
		c.fail(name, err)
		return false
	}
	defer done()
	// A bomb expands without end into /dev/null or a pipe: stop on
	// cancellation (into the vfs, the disk quota stops it with ENOSPC).
	w := &xzOut{w: out}
	if _, err := io.Copy(w, textio.WithContext(c.ctx, r)); err != nil {
		switch {
		case w.err != nil:
			c.fail(name, fmt.Errorf("Write error: %s", commands.Strerror(w.err)))
		case errors.Is(err, io.ErrUnexpectedEOF):
			c.fail(name, errXzEOF)
		case isXzErr(err), errors.Is(err, commands.ErrMemoryLimit):
			c.fail(name, err)
		default:
			c.fail(name, errors.New(commands.Strerror(err)))
		}
		return false
	}
	return true
}

// xzOut tells the output's errors from the input's.
type xzOut struct {
	w   io.Writer
	err error
}

func (o *xzOut) Write(p []byte) (int, error) {
	n, err := o.w.Write(p)
	if err != nil {
		o.err = err
	}
	return n, err
}

func (c *xzConf) compress(in io.Reader, out io.Writer, name string) bool {
	mem := c.inv.Memory()
	dict, cost, err := xzChargeDict(mem, xzPresetDict[c.level])
	if err != nil {
		c.fail(name, err)
		return false
	}
	defer mem.Release(cost)
	bw := bufio.NewWriter(out)
	var w io.WriteCloser
	if c.format == "lzma" {
		w, err = lzma.WriterConfig{DictCap: dict}.NewWriter(bw)
	} else {
		w, err = xz.WriterConfig{DictCap: dict, CheckSum: c.check, NoCheckSum: c.check == xz.None}.NewWriter(bw)
	}
	if err != nil {
		c.fail(name, err)
		return false
	}
	_, err = io.Copy(w, textio.WithContext(c.ctx, in))
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	if ferr := bw.Flush(); err == nil {
		err = ferr
	}
	if err != nil {
		c.fail(name, errors.New(commands.Strerror(err)))
		return false
	}
	return true
}

// xzChargeDict charges the encoder for dict, or for the largest smaller
// dictionary the sandbox's budget has room for (as XZ Utils adjusts its
// dictionary to a memory limit): the output is a valid .xz either way,
// compressed a little less. It fails below the smallest preset's.
func xzChargeDict(mem *commands.Memory, dict int) (int, int64, error) {
	for {
		cost := xzCompressCost(dict)
		err := mem.Charge(cost)
		if err == nil {
			return dict, cost, nil
		}
		if dict <= xzPresetDict[0] {
			return 0, 0, err
		}
		dict /= 2
	}
}
