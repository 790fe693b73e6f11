package coreutils

// Checking (-c) for the checksum commands: GNU's line grammar (untagged
// "SUM  NAME" / "SUM *NAME", the one-space reversed BSD form, tagged
// "TAG (NAME) = SUM", a leading backslash for an escaped name, # comments)
// and its report: per-file OK / FAILED lines, then per-list warnings.

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strconv"
	"strings"

	"github.com/warren-sandbox/warren/commands"
	"github.com/warren-sandbox/warren/commands/internal/textio"
)

// checkLine is one parsed line of a checksum list.
type checkLine struct {
	algo *digest
	bits int
	sum  string
	name string
}

func isHexString(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isHex(s[i]) {
			return false
		}
	}
	return true
}

// note prints a diagnostic that does not by itself fail the command.
func (c *sumConf) note(format string, args ...any) {
	c.r.out.Flush()
	fmt.Fprintf(c.r.inv.Stderr, "%s: %s\n", c.r.name, fmt.Sprintf(format, args...))
}

func isWhite(c byte) bool { return c == ' ' || c == '\t' }

// splitCheck parses one line (newline and trailing CR removed). reversed
// is GNU's bsd_reversed: -1 until the first untagged line decides whether
// the list uses one space ("SUM NAME") or GNU's two.
func (c *sumConf) splitCheck(s string, reversed *int, stdinList bool) (checkLine, bool) {
	var cl checkLine
	i := 0
	for i < len(s) && isWhite(s[i]) {
		i++
	}
	escaped := false
	if i < len(s) && s[i] == '\\' {
		i++
		escaped = true
	}
	rest := s[i:]
	// The tagged form: the algorithm's own tag, or any tag for cksum
	// without -a (which accepts only tagged lines).
	var tagged *digest
	if c.cksum && !c.algoSet {
		for _, d := range digests {
			if strings.HasPrefix(rest, d.tag) && len(rest) > len(d.tag) && strings.IndexByte(" (-", rest[len(d.tag)]) >= 0 {
				tagged = d
				break
			}
		}
		if tagged == nil || tagged.legacy() {
			return cl, false
		}
	} else if strings.HasPrefix(rest, c.algo.tag) {
		tagged = c.algo
	}
	if tagged != nil {
		c.curTag = tagged.tag
		j := len(tagged.tag)
		cl.algo, cl.bits = tagged, tagged.bits
		if tagged.name == "blake2b" {
			cl.bits = 512
			if c.lenSet {
				cl.bits = c.bits
			}
			if j < len(rest) && rest[j] == '-' {
				k := j + 1
				for k < len(rest) && isDigit(rest[k]) {
					k++
				}
				n, err := strconv.Atoi(rest[j+1 : k])
				if err != nil || n == 0 || n%8 != 0 || n > 512 {
					return cl, false
				}
				cl.bits, j = n, k
			}
		}
		if j < len(rest) && rest[j] == ' ' {
			j++
		}
		if j >= len(rest) || rest[j] != '(' {
			return cl, false
		}
		body := rest[j+1:]
		k := strings.LastIndexByte(body, ')')
		if k < 0 {
			return cl, false
		}
		cl.name = body[:k]
		if escaped {
			var ok bool
			if cl.name, ok = unescapeSumName(cl.name); !ok {
				return cl, false
			}
		}
		v := strings.TrimLeft(body[k+1:], " \t")
		if !strings.HasPrefix(v, "=") {
			return cl, false
		}
		cl.sum = strings.TrimLeft(v[1:], " \t")
	} else {
		if c.cksum && !c.algoSet {
			return cl, false
		}
		cl.algo, cl.bits = c.algo, c.bits
		if c.algo.name == "blake2b" && !c.lenSet {
			// The length is the run of hex digits (b2sum's auto-detection).
			n := 0
			for n < len(rest) && isHex(rest[n]) {
				n++
			}
			if n < 2 || n%2 != 0 || n > 128 {
				return cl, false
			}
			cl.bits = n * 4
		}
		hexLen := cl.bits / 4
		if len(rest) < hexLen+2 {
			return cl, false
		}
		cl.sum = rest[:hexLen]
		if !isWhite(rest[hexLen]) {
			return cl, false
		}
		tail := rest[hexLen+1:]
		if len(tail) == 1 || tail[0] != ' ' && tail[0] != '*' {
			if *reversed == 0 {
				return cl, false
			}
			*reversed = 1
		} else if *reversed != 1 {
			*reversed = 0
			tail = tail[1:]
		}
		cl.name = tail
		if escaped {
			var ok bool
			if cl.name, ok = unescapeSumName(cl.name); !ok {
				return cl, false
			}
		}
	}
	if stdinList && cl.name == "-" {
		return cl, false
	}
	if len(cl.sum) != cl.bits/4 || !isHexString(cl.sum) {
		return cl, false
	}
	return cl, true
}

// checkList verifies the sums listed in one file ("-": stdin).
func (c *sumConf) checkList(list string) {
	r := c.r
	stdinList := list == "-"
	listName := list
	if stdinList {
		listName = "standard input"
	}
	f, ok := c.open(list)
	if !ok {
		return
	}
	defer f.Close()
	br := textio.NewReader(textio.WithContext(r.ctx, f))
	defer textio.PutReader(br)
	lr := textio.LineReader{R: br, Delim: '\n', Limit: r.budget().Max, Res: commands.ReservationFrom(r.ctx)}
	c.curTag = c.algo.tag
	reversed := -1
	var lineNo, misformatted, proper, mismatched, unreadable, matched int
	for !r.stopped() {
		line, _, err := lr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			if st, ok := r.inv.LimitExceeded(err); ok {
				r.out.Flush()
				r.status = st
				return
			}
			r.errorf("%s: %s", quotef(list), commands.Strerror(err))
			return
		}
		lineNo++
		if len(line) > 0 && line[0] == '#' {
			continue
		}
		s := strings.TrimSuffix(string(line), "\r")
		if s == "" {
			continue
		}
		cl, ok := c.splitCheck(s, &reversed, stdinList)
		if !ok {
			misformatted++
			if c.warn {
				c.note("%s: %d: improperly formatted %s checksum line", quotef(listName), lineNo, c.curTag)
			}
			continue
		}
		proper++
		shown := cl.name
		escape := strings.Contains(shown, "\n")
		if escape {
			shown = "\\" + escapeSumName(shown)
		}
		var got string
		var rerr error
		in, opened := io.ReadCloser(nil), false
		if cl.name == "-" {
			in, opened = &stdinCloser{Reader: r.inv.Stdin}, true
		} else if fi, err := r.inv.Open(cl.name); err == nil {
			in, opened = fi, true
		} else {
			rerr = err
		}
		if opened {
			saved := c.algo
			c.algo = cl.algo
			got, rerr = c.sum(in, cl.bits)
			c.algo = saved
			in.Close()
		}
		if rerr != nil {
			if st, ok := r.inv.LimitExceeded(rerr); ok {
				r.out.Flush()
				r.status = st
				return
			}
			if c.ignoreMiss && !opened && errors.Is(rerr, fs.ErrNotExist) {
				continue
			}
			unreadable++
			r.errorf("%s: %s", quotef(cl.name), commands.Strerror(rerr))
			if !c.status {
				fmt.Fprintf(r.out, "%s: FAILED open or read\n", shown)
			}
			continue
		}
		if !strings.EqualFold(got, cl.sum) {
			mismatched++
			if !c.status {
				fmt.Fprintf(r.out, "%s: FAILED\n", shown)
			}
			continue
		}
		matched++
		if !c.quiet && !c.status {
			fmt.Fprintf(r.out, "%s: OK\n", shown)
		}
	}
	plural := func(n int, one, many string) string {
		if n == 1 {
			return fmt.Sprintf(one, n)
		}
		return fmt.Sprintf(many, n)
	}
	if proper == 0 {
		r.errorf("%s: no properly formatted checksum lines found", quotef(listName))
		return
	}
	if !c.status {
		if misformatted > 0 {
			c.note("WARNING: %s", plural(misformatted, "%d line is improperly formatted", "%d lines are improperly formatted"))
		}
		if unreadable > 0 {
			r.errorf("WARNING: %s", plural(unreadable, "%d listed file could not be read", "%d listed files could not be read"))
		}
		if mismatched > 0 {
			r.errorf("WARNING: %s", plural(mismatched, "%d computed checksum did NOT match", "%d computed checksums did NOT match"))
		}
		if c.ignoreMiss && matched == 0 {
			c.note("%s: no file was verified", quotef(listName))
		}
	}
	if mismatched > 0 || unreadable > 0 || c.strict && misformatted > 0 || c.ignoreMiss && matched == 0 {
		r.status = 1
	}
}
