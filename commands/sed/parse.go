// Package sed implements GNU sed 4.9 over the vfs: the full command set
// except 'e' (no host commands), addresses and ranges including GNU's
// 0,/re/ first~step addr,+N addr,~N, s with every flag but 'e', -n -e -f
// -E/-r -i[SUFFIX] -s -z. Regular expressions are POSIX BRE/ERE translated
// to Go's RE2 (see posixre), so back-references in patterns are refused.
package sed

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/warren-sandbox/warren/commands/internal/posixre"
	"github.com/warren-sandbox/warren/commands/internal/recache"
)

type addrKind int

const (
	addrNone addrKind = iota
	addrLine
	addrLast
	addrRegex
	addrStep  // first~step
	addrPlus  // addr1,+N (second address only)
	addrMulti // addr1,~N (second address only)
	addrZero  // 0 as first address of 0,/re/
)

type address struct {
	kind  addrKind
	n, m  int64
	re    *regexp.Regexp // nil with addrRegex = last regex
	reSrc string
}

type command struct {
	a1, a2  address
	neg     bool
	name    byte
	text    string // a i c text, label, file name
	intArg  int64
	hasInt  bool
	block   int // '{': index of matching '}'; b/t/T: target index (-1 = end)
	sub     *substitution
	ySrc    []rune
	yDst    []rune
	rangeOn bool // range currently active
	// rangeRan: the range has started once. A range whose first address
	// is a line number that went by without reaching the command (1d;1,3p)
	// starts on the first later line that does, once, as in GNU sed.
	rangeRan bool
	rangeEnd int64 // for numeric / +N ends
	pos      int   // char position, for errors
}

type substitution struct {
	re      *regexp.Regexp // nil = last regex
	repl    []replPart
	global  bool
	nth     int
	print   int
	wfile   string
	evalCmd bool
}

type replPart struct {
	lit    string
	group  int  // -1 literal, 0 = &, 1..9
	caseOp byte // 'L','U','l','u','E' case conversion marker
}

type parseError struct {
	expr int
	pos  int
	msg  string
	file string
}

func (e *parseError) Error() string {
	if e.file != "" {
		return fmt.Sprintf("file %s line %d: %s", e.file, e.expr, e.msg)
	}
	return fmt.Sprintf("-e expression #%d, char %d: %s", e.expr, e.pos, e.msg)
}

// labelError is reported without an expression position, as GNU does (exit 1).
type labelError struct{ label string }

func (e *labelError) Error() string { return fmt.Sprintf("can't find label for jump to `%s'", e.label) }

type parser struct {
	src  string
	i    int
	ere  bool
	cmds []*command
	expr int
}

func (p *parser) fail(msg string) error { return &parseError{expr: p.expr, pos: p.i, msg: msg} }

func (p *parser) eof() bool { return p.i >= len(p.src) }

func (p *parser) peek() byte {
	if p.i < len(p.src) {
		return p.src[p.i]
	}
	return 0
}

func (p *parser) skipSpace() {
	for !p.eof() && (p.src[p.i] == ' ' || p.src[p.i] == '\t') {
		p.i++
	}
}

// parseScript compiles the whole script (all -e/-f pieces joined by newlines).
func parseScript(src string, ere bool) ([]*command, error) {
	p := &parser{src: src, ere: ere, expr: 1}
	var stack []int
	for {
		// Skip separators.
		for !p.eof() && strings.IndexByte(" \t\n;", p.peek()) >= 0 {
			p.i++
		}
		if p.eof() {
			break
		}
		if p.peek() == '#' {
			for !p.eof() && p.peek() != '\n' {
				p.i++
			}
			continue
		}
		c := &command{pos: p.i}
		if err := p.addresses(c); err != nil {
			return nil, err
		}
		p.skipSpace()
		for p.peek() == '!' {
			c.neg = true
			p.i++
			p.skipSpace()
		}
		if p.eof() {
			return nil, p.fail("missing command")
		}
		c.name = p.src[p.i]
		p.i++
		switch c.name {
		case '{':
			stack = append(stack, len(p.cmds))
		case '}':
			if c.a1.kind != addrNone {
				return nil, p.fail("} doesn't want any addresses")
			}
			if len(stack) == 0 {
				return nil, p.fail("unexpected `}'")
			}
			open := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			p.cmds[open].block = len(p.cmds)
		case '=', 'd', 'D', 'g', 'G', 'h', 'H', 'n', 'N', 'p', 'P', 'x', 'z', 'F':
		case 'q', 'Q', 'l', 'L':
			p.skipSpace()
			j := p.i
			for !p.eof() && isDigit(p.peek()) {
				p.i++
			}
			if j < p.i {
				c.intArg, _ = strconv.ParseInt(p.src[j:p.i], 10, 64)
				c.hasInt = true
			}
		case 'a', 'i', 'c':
			text, err := p.text()
			if err != nil {
				return nil, err
			}
			c.text = text
		case ':':
			if c.a1.kind != addrNone {
				return nil, p.fail(": doesn't want any addresses")
			}
			p.skipSpace()
			c.text = p.label()
			if c.text == "" {
				return nil, p.fail("\":\" lacks a label")
			}
		case 'b', 't', 'T':
			p.skipSpace()
			c.text = p.jumpLabel()
		case 'r', 'R', 'w', 'W':
			p.skipSpace()
			c.text = p.restOfLine()
			if c.text == "" {
				return nil, p.fail("missing filename in r/R/w/W commands")
			}
		case 's':
			if err := p.subst(c); err != nil {
				return nil, err
			}
		case 'y':
			if err := p.translit(c); err != nil {
				return nil, err
			}
		case 'e':
			return nil, p.fail("e command is not supported in the sandbox")
		case 'v':
			p.label()
		default:
			return nil, p.fail(fmt.Sprintf("unknown command: `%c'", c.name))
		}
		p.cmds = append(p.cmds, c)
		// After a command: spaces, then ; newline } or #.
		p.skipSpace()
		if !p.eof() && strings.IndexByte(";\n}#", p.peek()) < 0 && strings.IndexByte("{aicrRwWbtT:", c.name) < 0 {
			return nil, p.fail(fmt.Sprintf("extra characters after command"))
		}
	}
	if len(stack) > 0 {
		p.i = p.cmds[stack[0]].pos
		return nil, &parseError{expr: p.expr, pos: 0, msg: "unmatched `{'"}
	}
	// Resolve branch targets.
	labels := map[string]int{}
	for i, c := range p.cmds {
		if c.name == ':' {
			if _, dup := labels[c.text]; dup {
				return nil, &parseError{expr: p.expr, msg: fmt.Sprintf("duplicate label `%s'", c.text)}
			}
			labels[c.text] = i
		}
	}
	for _, c := range p.cmds {
		if c.name == 'b' || c.name == 't' || c.name == 'T' {
			if c.text == "" {
				c.block = -1
				continue
			}
			t, ok := labels[c.text]
			if !ok {
				return nil, &labelError{c.text}
			}
			c.block = t
		}
	}
	return p.cmds, nil
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func (p *parser) label() string {
	j := p.i
	for !p.eof() && strings.IndexByte(";\n", p.peek()) < 0 {
		p.i++
	}
	return strings.TrimRight(p.src[j:p.i], " \t")
}

// jumpLabel is the label of b, t and T, which a } also ends (GNU sed:
// /x/{b end}).
func (p *parser) jumpLabel() string {
	j := p.i
	for !p.eof() && strings.IndexByte(";\n}", p.peek()) < 0 {
		p.i++
	}
	return strings.TrimRight(p.src[j:p.i], " \t")
}

func (p *parser) restOfLine() string {
	j := p.i
	for !p.eof() && p.peek() != '\n' {
		p.i++
	}
	return p.src[j:p.i]
}

// text parses a/i/c text in both the POSIX (a\ newline) and GNU one-line forms.
func (p *parser) text() (string, error) {
	p.skipSpace()
	if p.peek() == '\\' {
		p.i++
		if p.peek() == '\n' {
			p.i++
		}
	}
	if p.eof() {
		return "", p.fail("expected \\ after `a', `c' or `i'")
	}
	var b strings.Builder
	for !p.eof() {
		c := p.src[p.i]
		if c == '\n' {
			p.i++
			break
		}
		if c == '\\' && p.i+1 < len(p.src) {
			p.i++
			d := p.src[p.i]
			if e, n, ok := textEscape(p.src[p.i:]); ok {
				b.WriteByte(e)
				p.i += n
				continue
			}
			b.WriteByte(d) // \ newline, \\ and any other: the character itself
			p.i++
			continue
		}
		b.WriteByte(c)
		p.i++
	}
	return b.String(), nil
}

// textEscape decodes the escape after a backslash in a/i/c text as GNU
// does (\t \n \r \f \v \a, \dNNN, \oNNN, \xHH, \cX), returning the byte
// and how many bytes of s it took; ok is false for any other character.
func textEscape(s string) (byte, int, bool) {
	switch s[0] {
	case 'a':
		return '\a', 1, true
	case 'f':
		return '\f', 1, true
	case 'n':
		return '\n', 1, true
	case 'r':
		return '\r', 1, true
	case 't':
		return '\t', 1, true
	case 'v':
		return '\v', 1, true
	case 'c':
		if len(s) > 1 {
			c := s[1]
			if 'a' <= c && c <= 'z' {
				c -= 'a' - 'A'
			}
			return c ^ 0x40, 2, true
		}
	case 'd', 'o', 'x':
		base, max := 10, 3
		if s[0] == 'o' {
			base = 8
		} else if s[0] == 'x' {
			base, max = 16, 2
		}
		v, n := 0, 1
		for n <= max && n < len(s) {
			d := digitVal(s[n])
			if d < 0 || d >= base {
				break
			}
			v = v*base + d
			n++
		}
		if n > 1 {
			return byte(v), n, true
		}
	}
	return 0, 0, false
}

func digitVal(c byte) int {
	switch {
	case '0' <= c && c <= '9':
		return int(c - '0')
	case 'a' <= c && c <= 'f':
		return int(c-'a') + 10
	case 'A' <= c && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}

func (p *parser) addresses(c *command) error {
	a, err := p.address(true)
	if err != nil {
		return err
	}
	c.a1 = a
	if a.kind == addrNone {
		return nil
	}
	p.skipSpace()
	if p.peek() != ',' {
		if a.kind == addrZero {
			return p.fail("invalid usage of line address 0")
		}
		return nil
	}
	p.i++
	p.skipSpace()
	b, err := p.address(false)
	if err != nil {
		return err
	}
	if b.kind == addrNone {
		return p.fail("unexpected `,'")
	}
	if a.kind == addrZero && b.kind != addrRegex {
		return p.fail("invalid usage of line address 0")
	}
	c.a2 = b
	return nil
}

func (p *parser) address(first bool) (address, error) {
	switch c := p.peek(); {
	case isDigit(c):
		j := p.i
		for !p.eof() && isDigit(p.peek()) {
			p.i++
		}
		n, _ := strconv.ParseInt(p.src[j:p.i], 10, 64)
		if p.peek() == '~' && first {
			p.i++
			k := p.i
			for !p.eof() && isDigit(p.peek()) {
				p.i++
			}
			m, _ := strconv.ParseInt(p.src[k:p.i], 10, 64)
			return address{kind: addrStep, n: n, m: m}, nil
		}
		if n == 0 && first {
			return address{kind: addrZero}, nil
		}
		return address{kind: addrLine, n: n}, nil
	case c == '+' || c == '~':
		if first {
			return address{}, nil
		}
		p.i++
		j := p.i
		for !p.eof() && isDigit(p.peek()) {
			p.i++
		}
		if j == p.i {
			return address{}, p.fail("expected number after + or ~")
		}
		n, _ := strconv.ParseInt(p.src[j:p.i], 10, 64)
		if c == '+' {
			return address{kind: addrPlus, n: n}, nil
		}
		return address{kind: addrMulti, n: n}, nil
	case c == '$':
		p.i++
		return address{kind: addrLast}, nil
	case c == '/' || c == '\\':
		delim := byte('/')
		if c == '\\' {
			p.i++
			if p.eof() {
				return address{}, p.fail("unexpected end of expression")
			}
			delim = p.peek()
		}
		p.i++
		pat, err := p.delimited(delim, true)
		if err != nil {
			return address{}, p.fail("unterminated address regex")
		}
		flags := ""
		for !p.eof() && (p.peek() == 'I' || p.peek() == 'M') {
			if p.peek() == 'I' {
				flags += "i"
			} else {
				flags += "m"
			}
			p.i++
		}
		re, err := p.compile(pat, flags)
		if err != nil {
			return address{}, err
		}
		return address{kind: addrRegex, re: re, reSrc: pat}, nil
	}
	return address{}, nil
}

// delimited reads up to an unescaped delim; "\delim" becomes delim, and in
// regexes "\n" becomes a newline. Brackets are skipped whole in regexes.
func (p *parser) delimited(delim byte, regex bool) (string, error) {
	var b strings.Builder
	for !p.eof() {
		c := p.src[p.i]
		if c == delim {
			p.i++
			return b.String(), nil
		}
		if c == '\\' && p.i+1 < len(p.src) {
			d := p.src[p.i+1]
			p.i += 2
			switch {
			case d == delim && !regex && d == '&':
				// s&a&[\&]&: an escaped delimiter in the replacement is
				// that character itself, so & stays literal.
				b.WriteString(`\&`)
			case d == delim:
				// GNU strips the backslash: "\|" with delimiter '|' is a
				// plain '|' (alternation in ERE, literal in BRE).
				b.WriteByte(d)
			case d == 'n' && regex:
				b.WriteByte('\n')
			case regex && strings.IndexByte("trfva", d) >= 0:
				// GNU sed's escapes for control characters ("s/\r$//").
				b.WriteByte("\t\r\f\v\a"[strings.IndexByte("trfva", d)])
			case d == '\n':
				b.WriteByte('\n')
			default:
				b.WriteByte('\\')
				b.WriteByte(d)
			}
			continue
		}
		if c == '\n' && regex {
			return "", fmt.Errorf("newline in regex")
		}
		if c == '[' && regex {
			// Copy a bracket expression verbatim (delim inside is literal).
			j := p.i + 1
			if j < len(p.src) && p.src[j] == '^' {
				j++
			}
			if j < len(p.src) && p.src[j] == ']' {
				j++
			}
			for j < len(p.src) && p.src[j] != ']' {
				if p.src[j] == '[' && j+1 < len(p.src) && strings.IndexByte(":.=", p.src[j+1]) >= 0 {
					if k := strings.Index(p.src[j+2:], string(p.src[j+1])+"]"); k >= 0 {
						j += k + 4
						continue
					}
				}
				if p.src[j] == '\n' {
					break
				}
				j++
			}
			if j < len(p.src) && p.src[j] == ']' {
				seg := p.src[p.i : j+1]
				seg = strings.ReplaceAll(seg, `\n`, "\n")
				seg = strings.ReplaceAll(seg, `\t`, "\t")
				b.WriteString(seg)
				p.i = j + 1
				continue
			}
		}
		b.WriteByte(c)
		p.i++
	}
	return "", fmt.Errorf("unterminated")
}

func (p *parser) compile(pat, flags string) (*regexp.Regexp, error) {
	if pat == "" {
		return nil, nil // the last regex used
	}
	// Cached by (syntax, flags, pattern): the same script in a loop
	// translates and compiles each expression once.
	var kb [128]byte
	key := append(kb[:0], 'G')
	if p.ere {
		key[0] = 'E'
	}
	key = append(append(append(key, flags...), 0), pat...)
	if re, ok := regexps.Get(key); ok {
		return re, nil
	}
	g, err := posixre.Translate(pat, p.ere)
	if err != nil {
		if err == posixre.ErrBackref {
			return nil, p.fail("back-references (\\1..\\9) in regular expressions are not supported")
		}
		return nil, p.fail(err.Error())
	}
	// In sed's pattern space '.' matches a newline too.
	expr := "(?s" + flags + ")" + g
	re, err := regexp.Compile(expr)
	if err != nil {
		return nil, p.fail("invalid regular expression: " + err.Error())
	}
	re.Longest()
	regexps.Add(string(key), re, recache.Cost(expr))
	return re, nil
}

// regexps holds compiled addresses and s/// patterns; bounded because
// scripts are untrusted. A shared *regexp.Regexp is safe for concurrent use.
var regexps = recache.New[*regexp.Regexp](256, 4<<20)

func (p *parser) subst(c *command) error {
	if p.eof() {
		return p.fail("unterminated `s' command")
	}
	delim := p.peek()
	if delim == '\n' || delim == '\\' {
		return p.fail("unterminated `s' command")
	}
	p.i++
	pat, err := p.delimited(delim, true)
	if err != nil {
		return p.fail("unterminated `s' command")
	}
	replSrc, err := p.delimited(delim, false)
	if err != nil {
		return p.fail("unterminated `s' command")
	}
	s := &substitution{}
	flags := ""
	for !p.eof() {
		f := p.peek()
		switch {
		case f == 'g':
			s.global = true
		case f == 'p':
			s.print++
		case f == 'i' || f == 'I':
			flags += "i"
		case f == 'm' || f == 'M':
			flags += "m"
		case f == 'e':
			return p.fail("the s///e flag is not supported in the sandbox")
		case isDigit(f):
			j := p.i
			for !p.eof() && isDigit(p.peek()) {
				p.i++
			}
			n, _ := strconv.Atoi(p.src[j:p.i])
			if n == 0 {
				return p.fail("number option to `s' command may not be zero")
			}
			s.nth = n
			continue
		case f == 'w':
			p.i++
			p.skipSpace()
			s.wfile = p.restOfLine()
			if s.wfile == "" {
				return p.fail("missing filename in r/R/w/W commands")
			}
			continue
		default:
			goto done
		}
		p.i++
	}
done:
	re, err := p.compile(pat, flags)
	if err != nil {
		return err
	}
	s.re = re
	s.repl, err = parseRepl(replSrc, re)
	if err != nil {
		return p.fail(err.Error())
	}
	c.sub = s
	return nil
}

func parseRepl(src string, re *regexp.Regexp) ([]replPart, error) {
	var parts []replPart
	var lit strings.Builder
	flush := func() {
		if lit.Len() > 0 {
			parts = append(parts, replPart{lit: lit.String(), group: -1})
			lit.Reset()
		}
	}
	for i := 0; i < len(src); i++ {
		c := src[i]
		switch {
		case c == '&':
			flush()
			parts = append(parts, replPart{group: 0})
		case c == '\\' && i+1 < len(src):
			i++
			d := src[i]
			switch {
			case isDigit(d):
				n := int(d - '0')
				if re != nil && n > re.NumSubexp() {
					return nil, fmt.Errorf("invalid reference \\%d on `s' command's RHS", n)
				}
				flush()
				parts = append(parts, replPart{group: n})
			case d == 'n':
				lit.WriteByte('\n')
			case d == 't':
				lit.WriteByte('\t')
			case d == 'r':
				lit.WriteByte('\r')
			case d == 'a':
				lit.WriteByte(7)
			case d == 'f':
				lit.WriteByte(12)
			case d == 'v':
				lit.WriteByte(11)
			case d == 'L' || d == 'U' || d == 'l' || d == 'u' || d == 'E':
				flush()
				parts = append(parts, replPart{group: -1, caseOp: d})
			case d == '\n':
				lit.WriteByte('\n')
			default:
				lit.WriteByte(d)
			}
		default:
			lit.WriteByte(c)
		}
	}
	flush()
	return parts, nil
}

func (p *parser) translit(c *command) error {
	if p.eof() {
		return p.fail("unterminated `y' command")
	}
	delim := p.peek()
	p.i++
	read := func() ([]rune, error) {
		var out []rune
		for !p.eof() {
			ch := p.src[p.i]
			if ch == delim {
				p.i++
				return out, nil
			}
			if ch == '\\' && p.i+1 < len(p.src) {
				d := p.src[p.i+1]
				p.i += 2
				switch d {
				case 'n':
					out = append(out, '\n')
				case 't':
					out = append(out, '\t')
				case '\\':
					out = append(out, '\\')
				default:
					if d == delim {
						out = append(out, rune(d))
					} else {
						return nil, p.fail("unknown option to `y'")
					}
				}
				continue
			}
			r := []rune(p.src[p.i:])[0]
			out = append(out, r)
			p.i += len(string(r))
		}
		return nil, p.fail("unterminated `y' command")
	}
	src, err := read()
	if err != nil {
		return err
	}
	dst, err := read()
	if err != nil {
		return err
	}
	if len(src) != len(dst) {
		return p.fail("strings for `y' command are different lengths")
	}
	c.ySrc, c.yDst = src, dst
	return nil
}
