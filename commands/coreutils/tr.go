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
	repeat int // [c*n]: -1 = fill
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
					out = append(out, trElem{chars: []byte{s[i+2]}})
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
		msg := fmt.Sprintf("missing operand after %s", quoteGNU(sets[0]))
		if del && squeeze {
			msg += "\nTwo strings must be given when both deleting and squeezing repeats."
		} else {
			msg += "\nTwo strings must be given when translating."
		}
		return r.usage(fmt.Errorf("%s", msg), 1)
	case len(sets) > need:
		msg := fmt.Sprintf("extra operand %s", quoteGNU(sets[need]))
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
	if translate {
		e2, err := parseTrSet(sets[1])
		if err != nil {
			return r.fail(1, "%v", err)
		}
		s2 := expandSet(e2, len(s1))
		if len(s2) == 0 && len(s1) > 0 {
			return r.fail(1, "when not truncating set1, string2 must be non-empty")
		}
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
			e2, err := parseTrSet(sets[1])
			if err != nil {
				return r.fail(1, "%v", err)
			}
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
