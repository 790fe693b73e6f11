package coreutils

// dd: block copies with GNU dd's operands, conversions and summary.

import (
	"context"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/warren-sandbox/warren/commands"
	"github.com/warren-sandbox/warren/commands/internal/textio"
	"github.com/warren-sandbox/warren/vfs"
)

type ddConfig struct {
	ifile, ofile      string
	ibs, obs          int64
	bsSet             bool // bs=: each input block is written as it is
	count, skip, seek int64
	conv              map[string]bool
	iflag, oflag      map[string]bool
	status            string
}

var ddConvs = map[string]bool{"notrunc": true, "ucase": true, "lcase": true, "sync": true,
	"swab": true, "noerror": true, "fsync": true, "fdatasync": true, "excl": true,
	"nocreat": true, "sparse": true}

// what dd knows about conversions it does not build: refused, so a
// native dd can run them.
var ddRefused = map[string]bool{"block": true, "unblock": true, "ascii": true, "ebcdic": true, "ibm": true}

var ddFlags = map[string]bool{"fullblock": true, "count_bytes": true, "skip_bytes": true,
	"seek_bytes": true, "append": true, "direct": true, "dsync": true, "sync": true,
	"nonblock": true, "noatime": true, "nocache": true, "noctty": true, "nofollow": true,
	"binary": true, "text": true}

// parseDDSize reads N with dd's multipliers: c w b, kB K KiB, MB M MiB,
// ... up to E, and products (2x512).
func parseDDSize(s string) (int64, bool) {
	if a, b, ok := strings.Cut(s, "x"); ok {
		x, ok1 := parseDDSize(a)
		y, ok2 := parseDDSize(b)
		if !ok1 || !ok2 || x != 0 && y > math.MaxInt64/x {
			return 0, false
		}
		return x * y, true
	}
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	if i == 0 {
		return 0, false
	}
	n, err := strconv.ParseInt(s[:i], 10, 64)
	if err != nil {
		return 0, false
	}
	mult := int64(1)
	switch suf := s[i:]; suf {
	case "", "c":
	case "w":
		mult = 2
	case "b":
		mult = 512
	default:
		p := strings.IndexByte("KMGTPE", suf[0]&^0x20)
		if p < 0 || suf[0] == 'k' && len(suf) > 1 && suf[1:] != "B" {
			return 0, false
		}
		base := int64(1024)
		switch suf[1:] {
		case "":
		case "B":
			base = 1000
		case "iB":
		default:
			return 0, false
		}
		for j := 0; j <= p; j++ {
			mult *= base
		}
	}
	if n != 0 && mult > math.MaxInt64/n {
		return 0, false
	}
	return n * mult, true
}

// ddMaxBuffer bounds ibs and obs even without a memory budget.
const ddMaxBuffer = 256 << 20

const ddUsage = "Try 'dd --help' for more information.\n"

// Dd is dd(1).
func Dd(ctx context.Context, inv *commands.Invocation) int {
	r := begin(ctx, inv)
	c := ddConfig{ibs: 512, obs: 512, count: -1, conv: map[string]bool{}, iflag: map[string]bool{}, oflag: map[string]bool{}}
	for _, a := range inv.Args[1:] {
		switch a {
		case "--help":
			io.WriteString(inv.Stdout, "Usage: dd [OPERAND]...\nCopy a file, converting and formatting according to the operands.\n")
			return 0
		case "--version":
			io.WriteString(inv.Stdout, "dd (GNU coreutils) 9.1 (warren)\n")
			return 0
		case "--":
			continue
		}
		k, v, ok := strings.Cut(a, "=")
		if !ok {
			r.errorf("unrecognized operand %s", r.q(a))
			io.WriteString(inv.Stderr, ddUsage)
			return 1
		}
		size := func(dst *int64, positive bool) bool {
			n, ok := parseDDSize(v)
			if !ok || positive && n == 0 {
				r.errorf("invalid number: %s", r.q(v))
				return false
			}
			*dst = n
			return true
		}
		okv := true
		switch k {
		case "if":
			c.ifile = v
		case "of":
			c.ofile = v
		case "bs":
			okv = size(&c.ibs, true)
			c.obs, c.bsSet = c.ibs, true
		case "ibs":
			okv = size(&c.ibs, true)
		case "obs":
			okv = size(&c.obs, true)
		case "count":
			okv = size(&c.count, false)
		case "skip", "iseek":
			okv = size(&c.skip, false)
		case "seek", "oseek":
			okv = size(&c.seek, false)
		case "status":
			if v != "none" && v != "noxfer" && v != "progress" && v != "default" {
				r.errorf("invalid status level: %s", r.q(v))
				io.WriteString(inv.Stderr, ddUsage)
				return 1
			}
			c.status = v
		case "conv", "iflag", "oflag":
			for _, f := range strings.Split(v, ",") {
				switch {
				case k == "conv" && ddRefused[f]:
					return inv.Refuse(&commands.UnsupportedError{Cmd: "dd", What: "conv=" + f})
				case k == "conv" && ddConvs[f]:
					c.conv[f] = true
				case k != "conv" && ddFlags[f]:
					if k == "iflag" {
						c.iflag[f] = true
					} else {
						c.oflag[f] = true
					}
				default:
					what := "conversion"
					if k != "conv" {
						what = "input flag"
						if k == "oflag" {
							what = "output flag"
						}
					}
					r.errorf("invalid %s: %s", what, r.q(f))
					io.WriteString(inv.Stderr, ddUsage)
					return 1
				}
			}
		case "cbs":
			return inv.Refuse(&commands.UnsupportedError{Cmd: "dd", What: "cbs="})
		default:
			r.errorf("unrecognized operand %s", r.q(a))
			io.WriteString(inv.Stderr, ddUsage)
			return 1
		}
		if !okv {
			return 1
		}
	}
	if c.conv["ucase"] && c.conv["lcase"] {
		r.errorf("cannot combine lcase and ucase")
		return 1
	}
	// The buffers are charged before they are made: bs=1G is refused by
	// the budget, not by the process running out of memory.
	for _, b := range []struct {
		n    int64
		what string
	}{{c.ibs, "input"}, {c.obs, "output"}} {
		if b.n > ddMaxBuffer {
			r.errorf("memory exhausted by %s buffer of size %d bytes (%s)", b.what, b.n, ddHuman(float64(b.n), 1024, "iB"))
			return 1
		}
	}
	res := commands.ReservationFrom(ctx)
	if err := res.Grow(c.ibs + c.obs); err != nil {
		if st, ok := r.limitFail(err); ok {
			return st
		}
	}
	return ddCopy(ctx, r, &c)
}

func ddCopy(ctx context.Context, r *run, c *ddConfig) int {
	inv := r.inv
	start := inv.Now()
	var in io.Reader = inv.Stdin
	inName := "standard input"
	if c.ifile != "" {
		f, err := inv.Open(c.ifile)
		if err != nil {
			r.errorf("failed to open %s: %s", r.q(c.ifile), commands.Strerror(err))
			return r.done()
		}
		defer f.Close()
		in, inName = f, r.q(c.ifile)
	}
	var out io.Writer = inv.Stdout
	if c.ofile != "" {
		flag := vfs.O_WRONLY | vfs.O_CREATE
		if c.oflag["append"] {
			flag |= vfs.O_APPEND
			if !c.conv["notrunc"] {
				r.errorf("you probably want conv=notrunc with oflag=append")
				r.status = 0
			}
		}
		if !c.conv["notrunc"] && c.seek == 0 {
			flag |= vfs.O_TRUNC
		}
		if c.conv["excl"] {
			flag |= vfs.O_EXCL
		}
		if c.conv["nocreat"] {
			flag &^= vfs.O_CREATE
		}
		f, err := inv.OpenFile(c.ofile, flag, 0o666&^inv.Umask)
		if err != nil {
			r.errorf("failed to open %s: %s", r.q(c.ofile), commands.Strerror(err))
			return r.done()
		}
		defer f.Close()
		out = f
	}
	// skip: seek a file, read and drop from a stream
	skip := c.skip
	if !c.iflag["skip_bytes"] {
		skip *= c.ibs
	}
	if skip > 0 {
		if s, ok := in.(io.Seeker); ok && c.ifile != "" {
			if _, err := s.Seek(skip, io.SeekCurrent); err != nil {
				r.errorf("%s: cannot skip: %s", inName, commands.Strerror(err))
				return r.done()
			}
		} else if n, err := io.CopyN(io.Discard, textio.WithContext(ctx, in), skip); ctx.Err() != nil {
			return r.done()
		} else if err != nil && err != io.EOF {
			r.errorf("%s: cannot skip: %s", inName, commands.Strerror(err))
			return r.done()
		} else if n < skip {
			r.errorf("%s: cannot skip to specified offset", inName)
		}
	}
	seek := c.seek
	if !c.oflag["seek_bytes"] {
		seek *= c.obs
	}
	if seek > 0 {
		s, ok := out.(io.Seeker)
		if !ok || c.ofile == "" {
			r.errorf("%s: cannot seek: Illegal seek", r.q("standard output"))
			return r.done()
		}
		if _, err := s.Seek(seek, io.SeekStart); err != nil {
			r.errorf("%s: cannot seek: %s", r.q(c.ofile), commands.Strerror(err))
			return r.done()
		}
		if t, ok := out.(interface{ Truncate(int64) error }); ok && !c.conv["notrunc"] {
			t.Truncate(seek)
		}
	}
	var fullIn, partIn, fullOut, partOut, total int64
	buf := make([]byte, c.ibs)
	var obuf []byte
	if !c.bsSet {
		obuf = make([]byte, 0, c.obs)
	}
	write := func(p []byte) bool {
		n, err := out.Write(p)
		total += int64(n)
		if int64(len(p)) == c.obs {
			fullOut++
		} else {
			partOut++
		}
		if err != nil {
			r.errorf("error writing %s: %s", outName(r, c), commands.Strerror(err))
			return false
		}
		return true
	}
	limit := c.count
	byBytes := c.iflag["count_bytes"]
	var inBytes int64
	lastProgress := start
	failed := false
	for {
		if ctx.Err() != nil {
			return r.done()
		}
		if limit >= 0 && (!byBytes && fullIn+partIn >= limit || byBytes && inBytes >= limit) {
			break
		}
		want := buf
		if byBytes && limit-inBytes < int64(len(want)) {
			want = buf[:limit-inBytes]
		}
		var n int
		var err error
		if c.iflag["fullblock"] {
			n, err = io.ReadFull(in, want)
			if err == io.ErrUnexpectedEOF {
				err = io.EOF
			}
		} else {
			for n == 0 && err == nil {
				n, err = in.Read(want)
			}
		}
		if n == 0 {
			if err != nil && err != io.EOF {
				r.errorf("error reading %s: %s", inName, commands.Strerror(err))
				failed = true
			}
			break
		}
		inBytes += int64(n)
		if int64(n) == c.ibs {
			fullIn++
		} else {
			partIn++
		}
		blk := buf[:n]
		if c.conv["sync"] && int64(n) < c.ibs {
			for i := n; i < len(buf); i++ {
				buf[i] = 0
			}
			blk = buf
		}
		ddConvert(blk, c)
		if c.bsSet {
			if !write(blk) {
				failed = true
				break
			}
		} else {
			for len(blk) > 0 {
				k := min(len(blk), int(c.obs)-len(obuf))
				obuf = append(obuf, blk[:k]...)
				blk = blk[k:]
				if int64(len(obuf)) == c.obs {
					if !write(obuf) {
						failed = true
						break
					}
					obuf = obuf[:0]
				}
			}
			if failed {
				break
			}
		}
		if c.status == "progress" {
			if now := inv.Now(); now.Sub(lastProgress) >= time.Second {
				lastProgress = now
				fmt.Fprintf(inv.Stderr, "\r%s", ddTransfer(total, now.Sub(start)))
			}
		}
		if err != nil && err != io.EOF {
			r.errorf("error reading %s: %s", inName, commands.Strerror(err))
			failed = true
			break
		}
		if err == io.EOF && c.iflag["fullblock"] {
			break
		}
	}
	if len(obuf) > 0 && !failed {
		write(obuf)
	}
	if c.status == "progress" && lastProgress != start {
		io.WriteString(inv.Stderr, "\n")
	}
	if c.status != "none" {
		fmt.Fprintf(inv.Stderr, "%d+%d records in\n%d+%d records out\n", fullIn, partIn, fullOut, partOut)
		if c.status != "noxfer" {
			fmt.Fprintf(inv.Stderr, "%s\n", ddTransfer(total, inv.Now().Sub(start)))
		}
	}
	if failed {
		r.status = 1
	}
	return r.done()
}

func outName(r *run, c *ddConfig) string {
	if c.ofile == "" {
		return r.q("standard output")
	}
	return r.q(c.ofile)
}

func ddConvert(b []byte, c *ddConfig) {
	if c.conv["swab"] {
		for i := 0; i+1 < len(b); i += 2 {
			b[i], b[i+1] = b[i+1], b[i]
		}
	}
	switch {
	case c.conv["ucase"]:
		for i, x := range b {
			if x >= 'a' && x <= 'z' {
				b[i] = x - 32
			}
		}
	case c.conv["lcase"]:
		for i, x := range b {
			if x >= 'A' && x <= 'Z' {
				b[i] = x + 32
			}
		}
	}
}

// ddTransfer is GNU dd's last summary line: "N bytes (SI, IEC) copied,
// T s, R/s".
func ddTransfer(n int64, d time.Duration) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d byte", n)
	if n != 1 {
		b.WriteByte('s')
	}
	if n >= 1000 {
		b.WriteString(" (" + ddHuman(float64(n), 1000, "B"))
		if n >= 1024 {
			b.WriteString(", " + ddHuman(float64(n), 1024, "iB"))
		}
		b.WriteString(")")
	}
	secs := d.Seconds()
	rate := "Infinity B/s"
	if secs > 0 {
		rate = ddHuman(float64(n)/secs, 1000, "B/s")
	}
	fmt.Fprintf(&b, " copied, %g s, %s", secs, rate)
	return b.String()
}

// ddHuman renders x with three significant digits and a unit prefix.
func ddHuman(x float64, base float64, unit string) string {
	prefixes := []string{"", "k", "M", "G", "T", "P", "E"}
	if base == 1024 {
		prefixes = []string{"", "K", "M", "G", "T", "P", "E"}
	}
	i := 0
	for x >= base && i < len(prefixes)-1 {
		x /= base
		i++
	}
	if i == 0 && base == 1000 && strings.HasSuffix(unit, "/s") {
		// rates are never below kB/s in GNU's summary
		return fmt.Sprintf("%.1f k%s", x/1000, unit)
	}
	if x < 10 {
		return fmt.Sprintf("%.1f %s%s", x, prefixes[i], unit)
	}
	return fmt.Sprintf("%.0f %s%s", x, prefixes[i], unit)
}
