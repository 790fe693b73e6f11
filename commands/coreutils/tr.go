package coreutils

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/warren-sandbox/warren/commands"
	"github.com/warren-sandbox/warren/commands/internal/getopt"
	"github.com/warren-sandbox/warren/commands/internal/textio"
)

var trSpec = getopt.Spec{Short: "cCdst", Long: []getopt.Long{
	{Name: "complement", Key: "c"}, {Name: "delete", Key: "d"}, {Name: "squeeze-repeats", Key: "s"},
	{Name: "truncate-set1", Key: "t"}}}

var trClasses = map[string]func(c byte) bool{
	"alnum":  func(c byte) bool { return isAlpha(c) || isDigit(c) },
	"alpha":  isAlpha,
	"blank":  isBlank,
	"cntrl":  func(c byte) bool { return c < 32 || c == 127 },
	"digit":  isDigit,
	"graph":  func(c byte) bool { return c > 32 && c < 127 },
	"lower":  func(c byte) bool { return c >= 'a' && c <= 'z' },
	"print":  func(c byte) bool { return c >= 32 && c < 127 },
	"punct":  func(c byte) bool { return c > 32 && c < 127 && !isAlpha(c) && !isDigit(c) },
	"space":  func(c byte) bool { return c == ' ' || c >= 9 && c <= 13 },
	"upper":  func(c byte) bool { return c >= 'A' && c <= 'Z' },
	"xdigit": func(c byte) bool { return isDigit(c) || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' },
}

// trElem is one parsed element of a tr set.
type trElem struct {
	chars  []byte
	class  string
	repeat int  // [c*n]: -1 = fill
	equiv  bool // [=c=]
}

// trUnescape decodes one possibly escaped byte at s[i].
func trUnescape(s string, i int) (byte, int) {
	if s[i] != '\\' || i+1 >= len(s) {
		return s[i], i + 1
	}
	i++
	switch c := s[i]; c {
	case 'a':
		return 7, i + 1
	case 'b':
		return 8, i + 1
	case 'f':
		return 12, i + 1
	case 'n':
		return '\n', i + 1
	case 'r':
		return '\r', i + 1
	case 't':
		return '\t', i + 1
	case 'v':
		return 11, i + 1
	default:
		if c >= '0' && c <= '7' {
			v, j := 0, i
			for j < len(s) && j < i+3 && s[j] >= '0' && s[j] <= '7' {
				v = v*8 + int(s[j]-'0')
				j++
			}
			return byte(v), j
		}
		return c, i + 1
	}
}

func parseTrSet(s string) ([]trElem, error) {
	var out []trElem
	for i := 0; i < len(s); {
		if s[i] == '[' && i+1 < len(s) {
			if s[i+1] == ':' {
				if end := strings.Index(s[i+2:], ":]"); end >= 0 {
					name := s[i+2 : i+2+end]
					if _, ok := trClasses[name]; !ok {
						return nil, fmt.Errorf("invalid character class %s", quoteGNU(name))
					}
					out = append(out, trElem{class: name})
					i += end + 4
					continue
				}
			}
			if s[i+1] == '=' {
				if end := strings.Index(s[i+2:], "=]"); end == 1 {
					out = append(out, trElem{chars: []byte{s[i+2]}, equiv: true})
					i += 5
					continue
				}
			}
			// [c*n] repeat
			if i+2 < len(s) {
				c, j := trUnescape(s, i+1)
				if j < len(s) && s[j] == '*' {
					if end := strings.IndexByte(s[j:], ']'); end >= 0 {
						num := s[j+1 : j+end]
						n := -1
						if num != "" {
							base := 10
							if num[0] == '0' {
								base = 8
							}
							v := 0
							for _, d := range num {
								if d < '0' || d > '9' {
									return nil, fmt.Errorf("invalid repeat count %s in [c*n] construct", quoteGNU(num))
								}
								v = v*base + int(d-'0')
							}
							n = v
							if n == 0 {
								n = -1
							}
						}
						out = append(out, trElem{chars: []byte{c}, repeat: n})
						i = j + end + 1
						continue
					}
				}
			}
		}
		c, j := trUnescape(s, i)
		if j < len(s) && s[j] == '-' && j+1 < len(s) {
			hi, k := trUnescape(s, j+1)
			if hi < c {
				return nil, fmt.Errorf("range-endpoints of '%c-%c' are in reverse collating sequence order", c, hi)
			}
			var rng []byte
			for x := int(c); x <= int(hi); x++ {
				rng = append(rng, byte(x))
			}
			out = append(out, trElem{chars: rng})
			i = k
			continue
		}
		out = append(out, trElem{chars: []byte{c}})
		i = j
	}
	return out, nil
}

// expandSet flattens a set; fillTo > 0 sizes a [c*] element in SET2.
func expandSet(elems []trElem, fillTo int) []byte {
	var out []byte
	fixed := 0
	for _, e := range elems {
		switch {
		case e.class != "":
			for c := 0; c < 256; c++ {
				if trClasses[e.class](byte(c)) {
					fixed++
				}
			}
		case e.repeat > 0:
			fixed += e.repeat
		case e.repeat == 0:
			fixed += len(e.chars)
		}
	}
	for _, e := range elems {
		switch {
		case e.class != "":
			for c := 0; c < 256; c++ {
				if trClasses[e.class](byte(c)) {
					out = append(out, byte(c))
				}
			}
		case e.repeat > 0:
			for k := 0; k < e.repeat; k++ {
				out = append(out, e.chars[0])
			}
		case e.repeat < 0:
			for k := 0; k < fillTo-fixed; k++ {
				out = append(out, e.chars[0])
			}
		default:
			out = append(out, e.chars...)
		}
	}
	return out
}

// trValidate is GNU tr's validate(): the checks on SET2 (and on how it
// lines up with SET1) made before any input is read; "" when it passes.
// n1 is SET1's length (complemented when -c).
func trValidate(e1, e2 []trElem, n1 int, translate, comp, trunc bool) string {
	fills := 0
	for _, e := range e2 {
		if e.repeat < 0 {
			fills++
		}
	}
	if fills > 1 {
		return "only one [c*] repeat construct may appear in string2"
	}
	if !translate {
		if fills > 0 {
			return "the [c*] construct may appear in string2 only when translating"
		}
		return ""
	}
	hasClass := false
	for _, e := range e2 {
		if e.equiv {
			return "[=c=] expressions may not appear in string2 when translating"
		}
		if e.class != "" {
			hasClass = true
			if e.class != "upper" && e.class != "lower" {
				return "when translating, the only character classes that may appear in\nstring2 are 'upper' and 'lower'"
			}
		}
	}
	if !comp && hasClass && !trCaseAligned(e1, e2, n1) {
		return "misaligned [:upper:] and/or [:lower:] construct"
	}
	n2 := trSetLen(e2, n1)
	if n1 > n2 && !trunc {
		if n2 == 0 {
			return "when not truncating set1, string2 must be non-empty"
		}
		if e2[len(e2)-1].class != "" {
			return "when translating with string1 longer than string2,\nthe latter string must not end with a character class"
		}
		n2 = n1 // extended with its last character
	}
	classy := false
	for _, e := range e1 {
		classy = classy || e.class != ""
	}
	if comp && classy {
		// SET2 (as extended) must be one character repeated, as long as SET1.
		s2 := expandSet(e2, n1)
		same := n2 == n1
		for _, c := range s2 {
			same = same && c == s2[0]
		}
		if !same {
			return "when translating with complemented character classes,\nstring2 must map all characters in the domain to one"
		}
	}
	return ""
}

// trSetLen is len(expandSet(elems, fillTo)) without building the set.
func trSetLen(elems []trElem, fillTo int) int {
	n, fill := 0, false
	for _, e := range elems {
		switch {
		case e.class != "":
			for c := 0; c < 256; c++ {
				if trClasses[e.class](byte(c)) {
					n++
				}
			}
		case e.repeat > 0:
			n += e.repeat
		case e.repeat < 0:
			fill = true
		default:
			n += len(e.chars)
		}
	}
	if fill && fillTo > n {
		n = fillTo
	}
	return n
}

// trCaseAligned is GNU's validate_case_classes: walking both sets a
// character at a time, every [:upper:] or [:lower:] of SET2 must begin
// where one of SET1 begins (the pair then maps case to case).
func trCaseAligned(e1, e2 []trElem, n1 int) bool {
	type cursor struct {
		lens []int
		ul   []bool
		i    int
		off  int
		last int
	}
	mk := func(es []trElem, fill int) *cursor {
		c := &cursor{}
		for _, e := range es {
			n := len(expandSet([]trElem{e}, 0))
			if e.repeat < 0 {
				n = fill
			}
			c.lens = append(c.lens, n)
			c.ul = append(c.ul, e.class == "upper" || e.class == "lower")
		}
		return c
	}
	// next returns whether a character came, whether it began its element
	// and whether that element is a case class.
	next := func(c *cursor) (bool, bool, bool) {
		for c.i < len(c.lens) && c.lens[c.i] == 0 {
			c.i++
		}
		if c.i >= len(c.lens) {
			return false, false, false
		}
		first, ul := c.off == 0, c.ul[c.i]
		c.last = c.i
		if c.off++; c.off >= c.lens[c.i] {
			c.i, c.off = c.i+1, 0
		}
		return true, first, ul
	}
	skip := func(c *cursor) { c.i, c.off = c.last+1, 0 }
	fixed := 0
	for _, e := range e2 {
		if e.repeat >= 0 {
			fixed += len(expandSet([]trElem{e}, 0))
		}
	}
	c1, c2 := mk(e1, 0), mk(e2, max(n1-fixed, 0))
	for {
		ok1, new1, ul1 := next(c1)
		ok2, new2, ul2 := next(c2)
		if ok2 && new2 && ul2 && !(ok1 && new1 && ul1) {
			return false
		}
		if !ok1 || !ok2 {
			return true
		}
		if ul2 {
			skip(c1)
			skip(c2)
		}
	}
}

// Tr is tr(1) over bytes.
func Tr(ctx context.Context, inv *commands.Invocation) int {
	r := begin(ctx, inv)
	opts, sets, code, ok := r.parse(&trSpec)
	if !ok {
		return code
	}
	var comp, del, squeeze, trunc bool
	for _, o := range opts {
		switch o.Key {
		case "c", "C":
			comp = true
		case "d":
			del = true
		case "s":
			squeeze = true
		case "t":
			trunc = true
		}
	}
	need := 2
	if del && !squeeze || (squeeze && !del && len(sets) < 2) {
		need = 1
	}
	switch {
	case len(sets) == 0:
		return r.usage(fmt.Errorf("missing operand"), 1)
	case len(sets) < need:
		msg := fmt.Sprintf("missing operand after %s", r.q(sets[0]))
		if del && squeeze {
			msg += "\nTwo strings must be given when both deleting and squeezing repeats."
		} else {
			msg += "\nTwo strings must be given when translating."
		}
		return r.usage(fmt.Errorf("%s", msg), 1)
	case len(sets) > need:
		msg := fmt.Sprintf("extra operand %s", r.q(sets[need]))
		if need == 1 && del {
			msg += "\nOnly one string may be given when deleting without squeezing repeats."
		}
		return r.usage(fmt.Errorf("%s", msg), 1)
	}
	e1, err := parseTrSet(sets[0])
	if err != nil {
		return r.fail(1, "%v", err)
	}
	s1 := expandSet(e1, 0)
	var in1 [256]bool
	for _, c := range s1 {
		in1[c] = true
	}
	if comp {
		var cs []byte
		for c := 0; c < 256; c++ {
			if !in1[c] {
				cs = append(cs, byte(c))
			}
			in1[c] = !in1[c]
		}
		s1 = cs
	}
	var mapping [256]byte
	for c := range mapping {
		mapping[c] = byte(c)
	}
	var sqz [256]bool
	translate := !del && len(sets) == 2
	for _, e := range e1 {
		if e.repeat < 0 {
			return r.fail(1, "the [c*] repeat construct may not appear in string1")
		}
	}
	var e2 []trElem
	if len(sets) == 2 {
		if e2, err = parseTrSet(sets[1]); err != nil {
			return r.fail(1, "%v", err)
		}
		if msg := trValidate(e1, e2, len(s1), translate, comp, trunc); msg != "" {
			return r.fail(1, "%s", msg)
		}
	}
	if translate {
		s2 := expandSet(e2, len(s1))
		if trunc && len(s1) > len(s2) {
			s1 = s1[:len(s2)]
		}
		for len(s2) < len(s1) {
			s2 = append(s2, s2[len(s2)-1])
		}
		for i, c := range s1 {
			mapping[c] = s2[i]
		}
		if squeeze {
			for _, c := range s2 {
				sqz[c] = true
			}
		}
	} else if squeeze {
		src := in1
		if del && len(sets) == 2 {
			src = [256]bool{}
			for _, c := range expandSet(e2, 0) {
				src[c] = true
			}
		}
		sqz = src
	}
	bufp := textio.GetChunk()
	defer textio.PutChunk(bufp)
	buf := *bufp
	last := -1
	src := inv.Stdin
	for {
		if r.stopped() {
			break
		}
		n, err := src.Read(buf)
		for _, c := range buf[:n] {
			if del && in1[c] {
				continue
			}
			c = mapping[c]
			if squeeze && sqz[c] && int(c) == last {
				continue
			}
			last = int(c)
			r.out.WriteByte(c)
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			r.errorf("read error: %s", commands.Strerror(err))
			break
		}
	}
	return r.done()
}
