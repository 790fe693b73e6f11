package coreutils

// The checksum commands: md5sum and the sha*sum family, b2sum, cksum (with
// -a choosing any of their algorithms) and sum, computing and checking
// (-c) the way GNU coreutils 9.1's md5sum.c and cksum.c do.

import (
	"bufio"
	"context"
	"crypto/md5"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/hex"
	"fmt"
	"hash"
	"io"
	"strconv"
	"strings"

	"golang.org/x/crypto/blake2b"

	"github.com/warren-sandbox/warren/commands"
	"github.com/warren-sandbox/warren/commands/bashfmt"
	"github.com/warren-sandbox/warren/commands/internal/getopt"
	"github.com/warren-sandbox/warren/commands/internal/textio"
)

// digest is one algorithm of cksum -a.
type digest struct {
	name string // -a's argument
	tag  string // the BSD-style tag ("MD5 (f) = ...")
	bits int    // digest size; 0 for the legacy sums (bsd, sysv, crc)
	new  func(bits int) hash.Hash
}

func fixed(f func() hash.Hash) func(int) hash.Hash { return func(int) hash.Hash { return f() } }

// digests is in cksum's order (its "Valid arguments" list).
var digests = []*digest{
	{name: "bsd", tag: "BSD"}, {name: "sysv", tag: "SYSV"}, {name: "crc", tag: "CRC"},
	{name: "md5", tag: "MD5", bits: 128, new: fixed(md5.New)},
	{name: "sha1", tag: "SHA1", bits: 160, new: fixed(sha1.New)},
	{name: "sha224", tag: "SHA224", bits: 224, new: fixed(sha256.New224)},
	{name: "sha256", tag: "SHA256", bits: 256, new: fixed(sha256.New)},
	{name: "sha384", tag: "SHA384", bits: 384, new: fixed(sha512.New384)},
	{name: "sha512", tag: "SHA512", bits: 512, new: fixed(sha512.New)},
	{name: "blake2b", tag: "BLAKE2b", bits: 512, new: func(bits int) hash.Hash {
		h, _ := blake2b.New(bits/8, nil) // bits is validated (8..512) first
		return h
	}},
	{name: "sm3", tag: "SM3", bits: 256}, // new == nil: refused
}

func digestNamed(name string) *digest {
	for _, d := range digests {
		if d.name == name {
			return d
		}
	}
	return nil
}

func (d *digest) legacy() bool { return d.bits == 0 }

var sumSpec = getopt.Spec{Short: "bctwz", Long: []getopt.Long{
	{Name: "binary", Key: "b"}, {Name: "check", Key: "c"}, {Name: "tag"}, {Name: "text", Key: "t"},
	{Name: "ignore-missing"}, {Name: "quiet"}, {Name: "status"}, {Name: "strict"}, {Name: "warn", Key: "w"},
	{Name: "zero", Key: "z"}}}

var b2sumSpec = getopt.Spec{Short: "bctwzl:", Long: append([]getopt.Long{{Name: "length", Arg: getopt.Required, Key: "l"}}, sumSpec.Long...)}

var cksumSpec = getopt.Spec{Short: "a:cl:wz", Long: []getopt.Long{
	{Name: "algorithm", Arg: getopt.Required, Key: "a"}, {Name: "check", Key: "c"},
	{Name: "length", Arg: getopt.Required, Key: "l"}, {Name: "tag"}, {Name: "untagged"},
	{Name: "zero", Key: "z"}, {Name: "ignore-missing"}, {Name: "quiet"}, {Name: "status"},
	{Name: "strict"}, {Name: "warn", Key: "w"}, {Name: "debug"}}}

func sumCommand(algo string) commands.Func {
	return func(ctx context.Context, inv *commands.Invocation) int {
		return checksum(ctx, inv, digestNamed(algo))
	}
}

var (
	// Md5sum is md5sum(1).
	Md5sum = sumCommand("md5")
	// Sha1sum is sha1sum(1).
	Sha1sum = sumCommand("sha1")
	// Sha224sum is sha224sum(1).
	Sha224sum = sumCommand("sha224")
	// Sha256sum is sha256sum(1).
	Sha256sum = sumCommand("sha256")
	// Sha384sum is sha384sum(1).
	Sha384sum = sumCommand("sha384")
	// Sha512sum is sha512sum(1).
	Sha512sum = sumCommand("sha512")
	// B2sum is b2sum(1).
	B2sum = sumCommand("blake2b")
)

// Cksum is cksum(1): the POSIX CRC by default, any other algorithm with -a
// (BSD-tagged output unless --untagged).
func Cksum(ctx context.Context, inv *commands.Invocation) int {
	return checksum(ctx, inv, nil)
}

// sumConf is one checksum invocation.
type sumConf struct {
	r      *run
	algo   *digest
	bits   int  // digest bits (blake2b -l; the algorithm's size otherwise)
	lenSet bool // -l given (blake2b: check lines must have that length)
	cksum  bool
	// algoSet: cksum -a (otherwise check lines name their algorithm)
	algoSet                                         bool
	tag, binary, zero                               bool
	quiet, status, strict, warn, ignoreMiss, verify bool
	curTag                                          string // the tag -w's messages name (cksum: the last line's)
}

func checksum(ctx context.Context, inv *commands.Invocation, algo *digest) int {
	r := begin(ctx, inv)
	c := &sumConf{r: r, algo: algo, cksum: algo == nil}
	spec := &sumSpec
	switch {
	case c.cksum:
		spec, c.algo, c.tag = &cksumSpec, digestNamed("crc"), true
	case algo.name == "blake2b":
		spec = &b2sumSpec
	}
	opts, files, code, ok := r.parse(spec)
	if !ok {
		return code
	}
	text, length := false, ""
	for _, o := range opts {
		switch o.Key {
		case "a":
			d, msg := matchAlgorithm(o.Arg)
			if d == nil {
				var list strings.Builder
				for _, d := range digests {
					fmt.Fprintf(&list, "  - %s\n", r.q(d.name))
				}
				r.out.Flush()
				fmt.Fprintf(inv.Stderr, "%s: %s argument %s for %s\nValid arguments are:\n%sTry '%s --help' for more information.\n",
					r.name, msg, r.q(o.Arg), r.q("--algorithm"), list.String(), r.name)
				r.status = 1
				return r.done()
			}
			c.algo, c.algoSet = d, true
		case "l":
			length = o.Arg
		case "c":
			c.verify = true
		case "tag":
			c.tag = true
		case "untagged":
			c.tag = false
		case "b":
			c.binary, text = true, false
		case "t":
			c.binary, text = false, true
		case "z":
			c.zero = true
		case "quiet":
			c.quiet = true
		case "status":
			c.status = true
		case "strict":
			c.strict = true
		case "w":
			c.warn = true
		case "ignore-missing":
			c.ignoreMiss = true
		}
	}
	c.bits = c.algo.bits
	if length != "" {
		if c.algo.name != "blake2b" {
			return r.fail(1, "--length is only supported with --algorithm=blake2b")
		}
		n, err := strconv.ParseUint(length, 10, 64)
		switch {
		case err != nil:
			return r.fail(1, "invalid length: %s", r.q(length))
		case n%8 != 0:
			r.errorf("invalid length: %s", r.q(length))
			return r.fail(1, "length is not a multiple of 8")
		case n > 512:
			r.errorf("invalid length: %s", r.q(length))
			return r.fail(1, "maximum digest length for %s is 512 bits", r.q("BLAKE2b"))
		case n > 0:
			c.bits, c.lenSet = int(n), true
		}
	}
	usage := func(msg string) int { return r.usage(fmt.Errorf("%s", msg), 1) }
	switch {
	case c.tag && text && !c.cksum:
		return usage("--tag does not support --text mode")
	case c.zero && c.verify:
		return usage("the --zero option is not supported when verifying checksums")
	case c.tag && c.verify && !c.cksum:
		return usage("the --tag option is meaningless when verifying checksums")
	case (c.binary || text) && c.verify:
		return usage("the --binary and --text options are meaningless when verifying checksums")
	case c.ignoreMiss && !c.verify:
		return usage("the --ignore-missing option is meaningful only when verifying checksums")
	case c.status && !c.verify:
		return usage("the --status option is meaningful only when verifying checksums")
	case c.warn && !c.verify:
		return usage("the --warn option is meaningful only when verifying checksums")
	case c.quiet && !c.verify:
		return usage("the --quiet option is meaningful only when verifying checksums")
	case c.strict && !c.verify:
		return usage("the --strict option is meaningful only when verifying checksums")
	case c.verify && c.algoSet && c.algo.legacy():
		return r.fail(1, "--check is not supported with --algorithm={bsd,sysv,crc}")
	}
	if c.algo.new == nil && !c.algo.legacy() {
		// Refused before any effect, so a fuller cksum may run it.
		return inv.Refuse(inv.Unsupported("-a " + c.algo.name))
	}
	if c.verify {
		if len(files) == 0 {
			files = []string{"-"}
		}
		for _, list := range files {
			if r.stopped() {
				break
			}
			c.checkList(list)
		}
		return r.done()
	}
	if c.algo.legacy() {
		return c.legacySums(files)
	}
	if len(files) == 0 {
		files = []string{"-"}
	}
	for _, name := range files {
		if r.stopped() {
			break
		}
		f, ok := c.open(name)
		if !ok {
			continue
		}
		sum, err := c.sum(f, c.bits)
		f.Close()
		if err != nil {
			if st, ok := inv.LimitExceeded(err); ok {
				r.out.Flush()
				r.status = st
				return r.done()
			}
			r.errorf("%s: %s", quotef(name), commands.Strerror(err))
			continue
		}
		c.printSum(name, sum)
	}
	return r.done()
}

// matchAlgorithm is cksum's argmatch: exact names only (9.1 takes no
// abbreviations here).
func matchAlgorithm(arg string) (*digest, string) {
	if d := digestNamed(arg); d != nil {
		return d, ""
	}
	return nil, "invalid"
}

// open opens an operand, words failures as GNU's quotef does.
func (c *sumConf) open(name string) (io.ReadCloser, bool) {
	if name == "-" {
		return c.r.open(name)
	}
	f, err := c.r.inv.Open(name)
	if err != nil {
		c.r.errorf("%s: %s", quotef(name), commands.Strerror(err))
		return nil, false
	}
	return f, true
}

func (c *sumConf) sum(rd io.Reader, bits int) (string, error) {
	h := c.algo.new(bits)
	bufp := textio.GetChunk()
	defer textio.PutChunk(bufp)
	if _, err := io.CopyBuffer(h, textio.WithContext(c.r.ctx, rd), *bufp); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// tagName is the tag of a BSD-style line ("BLAKE2b-256" for a short blake2b).
func (c *sumConf) tagName() string {
	if c.algo.name == "blake2b" && c.bits != 512 {
		return fmt.Sprintf("BLAKE2b-%d", c.bits)
	}
	return c.algo.tag
}

// printSum writes one line of output: "SUM  NAME", "SUM *NAME" (-b) or
// "TAG (NAME) = SUM", a name holding \, \n or \r escaped behind a leading
// backslash unless -z.
func (c *sumConf) printSum(name, sum string) {
	w := c.r.out
	escape := !c.zero && strings.ContainsAny(name, "\\\n\r")
	if escape {
		w.WriteByte('\\')
		name = escapeSumName(name)
	}
	if c.tag {
		fmt.Fprintf(w, "%s (%s) = %s", c.tagName(), name, sum)
	} else {
		mode := byte(' ')
		if c.binary {
			mode = '*'
		}
		w.WriteString(sum)
		w.WriteByte(' ')
		w.WriteByte(mode)
		w.WriteString(name)
	}
	if c.zero {
		w.WriteByte(0)
	} else {
		w.WriteByte('\n')
	}
}

func escapeSumName(s string) string {
	return strings.NewReplacer("\\", "\\\\", "\n", "\\n", "\r", "\\r").Replace(s)
}

// unescapeSumName undoes escapeSumName; false for any other escape.
func unescapeSumName(s string) (string, bool) {
	if !strings.Contains(s, "\\") {
		return s, true
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' {
			b.WriteByte(s[i])
			continue
		}
		if i++; i == len(s) {
			return "", false
		}
		switch s[i] {
		case '\\':
			b.WriteByte('\\')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		default:
			return "", false
		}
	}
	return b.String(), true
}

// quotef is GNU's quotef: a file name in a diagnostic, shell-quoted when it
// needs quoting (a colon included).
func quotef(s string) string {
	q := bashfmt.QuoteGNU(s)
	if q == s && strings.Contains(s, ":") {
		return "'" + s + "'"
	}
	return q
}

// legacySums is cksum's CRC (and -a bsd, -a sysv, as sum -r and sum -s).
func (c *sumConf) legacySums(files []string) int {
	r := c.r
	named := len(files) > 0
	r.each(files, func(name string, br *bufio.Reader) error {
		var line string
		var err error
		switch c.algo.name {
		case "crc":
			var crc uint32
			var n uint64
			crc, n, err = crcSum(br)
			line = fmt.Sprintf("%d %d", crc, n)
		default:
			line, err = bsdSysvSum(br, c.algo.name == "sysv")
		}
		if err != nil {
			return err
		}
		r.out.WriteString(line)
		if named {
			r.out.WriteByte(' ')
			r.out.WriteString(name)
		}
		if c.zero {
			r.out.WriteByte(0)
		} else {
			r.out.WriteByte('\n')
		}
		return nil
	})
	return r.done()
}

var crcTable = func() (t [256]uint32) {
	for i := range t {
		c := uint32(i) << 24
		for j := 0; j < 8; j++ {
			if c&0x80000000 != 0 {
				c = c<<1 ^ 0x04C11DB7
			} else {
				c <<= 1
			}
		}
		t[i] = c
	}
	return
}()

// crcSum is the POSIX cksum CRC of br and its length.
func crcSum(br *bufio.Reader) (uint32, uint64, error) {
	var crc uint32
	var n uint64
	bufp := textio.GetChunk()
	defer textio.PutChunk(bufp)
	buf := *bufp
	for {
		k, err := br.Read(buf)
		for _, c := range buf[:k] {
			crc = crc<<8 ^ crcTable[byte(crc>>24)^c]
		}
		n += uint64(k)
		if err == io.EOF {
			break
		}
		if err != nil {
			return 0, 0, err
		}
	}
	for l := n; l > 0; l >>= 8 {
		crc = crc<<8 ^ crcTable[byte(crc>>24)^byte(l)]
	}
	return ^crc, n, nil
}

// bsdSysvSum is sum's line without the name: the BSD checksum and 1K
// blocks, or the System V one and 512-byte blocks.
func bsdSysvSum(br *bufio.Reader, sysv bool) (string, error) {
	var bsd uint32
	var total, n uint64
	bufp := textio.GetChunk()
	defer textio.PutChunk(bufp)
	buf := *bufp
	for {
		k, err := br.Read(buf)
		for _, c := range buf[:k] {
			bsd = (bsd>>1 + (bsd&1)<<15 + uint32(c)) & 0xffff
			total += uint64(c)
		}
		n += uint64(k)
		if err == io.EOF {
			break
		}
		if err != nil {
			return "", err
		}
	}
	if sysv {
		s := total & 0xffffffff
		s = s&0xffff + s>>16
		return fmt.Sprintf("%d %d", s&0xffff+s>>16, (n+511)/512), nil
	}
	return fmt.Sprintf("%05d %5d", bsd, (n+1023)/1024), nil
}

var bsdSumSpec = getopt.Spec{Short: "rs", Long: []getopt.Long{{Name: "sysv", Key: "s"}}}

// Sum is sum(1): the BSD checksum and 1K blocks by default (-r), the
// System V one and 512-byte blocks with -s; the last of the two wins.
func Sum(ctx context.Context, inv *commands.Invocation) int {
	r := begin(ctx, inv)
	opts, files, code, ok := r.parse(&bsdSumSpec)
	if !ok {
		return code
	}
	name := "bsd"
	for _, o := range opts {
		if o.Key == "s" {
			name = "sysv"
		} else {
			name = "bsd"
		}
	}
	c := &sumConf{r: r, algo: digestNamed(name)}
	return c.legacySums(files)
}
