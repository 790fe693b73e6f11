package bashfmt

import (
	"math"
	"strings"
	"time"
)

// conversion handles the conversion at format[i] ('%'); it returns how many
// bytes of format it used and whether printf must stop.
func (r *run) conversion(format string, i int) (int, bool) {
	gnu := r.p.Dialect == GNU
	j := i + 1
	if j < len(format) && format[j] == '%' {
		r.writeByte('%')
		return 2, false
	}
	if gnu && j < len(format) && (format[j] == 'b' || format[j] == 'q') {
		// GNU takes %b and %q only bare, and prints nothing without an
		// argument.
		if a, ok := r.next(); ok {
			if format[j] == 'q' {
				r.writeString(QuoteGNU(a))
			} else if r.percentB(a, nil) {
				return 2, true
			}
		}
		return 2, false
	}
	sp := spec{prec: -1}
	// GNU checks the flags against the conversion (ok), as glibc does not.
	bad := map[byte]bool{}
	for ; j < len(format); j++ {
		switch format[j] {
		case '-':
			sp.minus = true
		case '+':
			sp.plus = true
		case ' ':
			sp.space = true
		case '#':
			sp.hash = true
			for _, c := range "cdisu" {
				bad[byte(c)] = true
			}
		case '0':
			sp.zero = true
			bad['c'], bad['s'] = true, true
		case '\'':
			for _, c := range "aAceEosxX" {
				bad[byte(c)] = true
			}
		default:
			goto width
		}
	}
width:
	tooBig := false
	if j < len(format) && format[j] == '*' {
		j++
		sp.width = r.starArg("field width")
		if r.ended {
			return j - i, true
		}
		if sp.width < 0 {
			sp.minus, sp.width = true, -sp.width
		}
	} else {
		var n int
		n, j = digits(format, j)
		sp.width = n
		tooBig = tooBig || n > math.MaxInt32
	}
	if j < len(format) && format[j] == '.' {
		j++
		bad['c'] = true
		if j < len(format) && format[j] == '*' {
			j++
			sp.prec = r.starArg("precision")
			if r.ended {
				return j - i, true
			}
		} else {
			if !gnu && j < len(format) && format[j] == '-' {
				j++ // bash skips it and glibc then prints the spec as it is; taken as no precision
				_, j = digits(format, j)
			} else {
				var n int
				n, j = digits(format, j)
				sp.prec = n
				tooBig = tooBig || n > math.MaxInt32
			}
		}
	}
	mods := "hjlLtz"
	for j < len(format) && strings.IndexByte(mods, format[j]) >= 0 {
		j++
	}
	if j >= len(format) {
		if gnu {
			r.ended = true
			r.diag(false, "%s: invalid conversion specification", format[i:])
		} else {
			r.diag(false, "`%s': missing format character", format[i:])
		}
		return j - i, true
	}
	sp.verb = format[j]
	used := j + 1 - i
	if gnu {
		if bad[sp.verb] || strings.IndexByte("aAcdeEfFgGiosuxX", sp.verb) < 0 {
			r.ended = true
			r.diag(false, "%s: invalid conversion specification", format[i:j+1])
			return used, true
		}
	}
	if tooBig {
		// glibc refuses a width or precision past INT_MAX (EOVERFLOW) and
		// prints nothing of the conversion; the argument is still used.
		r.next()
		r.overflow = gnu
		return used, false
	}
	switch sp.verb {
	case 's':
		a, _ := r.next()
		r.str(&sp, a)
	case 'c':
		a, _ := r.next()
		c := "\x00" // an empty or missing argument prints a NUL
		if a != "" {
			c = a[:1] // the first byte, not character
		}
		sp.prec = -1
		r.str(&sp, c)
	case 'd', 'i':
		a, _ := r.next()
		r.integer(&sp, r.intArg(a, true))
	case 'o', 'u', 'x', 'X':
		a, _ := r.next()
		r.integer(&sp, r.intArg(a, false))
	case 'e', 'E', 'f', 'F', 'g', 'G', 'a', 'A':
		a, _ := r.next()
		r.float(&sp, r.floatArg(a))
	case 'b':
		a, _ := r.next()
		if r.percentB(a, &sp) {
			return used, true
		}
	case 'q', 'Q':
		a, _ := r.next()
		if sp.verb == 'Q' && sp.prec >= 0 && sp.prec < len(a) {
			a = a[:sp.prec]
			sp.prec = -1
		}
		r.str(&sp, QuoteQ(a))
	case 'n':
		a, _ := r.next()
		if a != "" && r.p.SetVar != nil {
			if err := r.p.SetVar(a, r.passN); err != nil {
				r.diag(false, "%s", err.Error())
				return used, true
			}
		}
	case '(':
		return r.timeConversion(format, i, j, &sp)
	default:
		r.diag(false, "`%c': invalid format character", sp.verb)
		return used, true
	}
	return used, false
}

// digits reads a decimal number at format[j:], saturating.
func digits(format string, j int) (int, int) {
	n := 0
	for ; j < len(format) && format[j] >= '0' && format[j] <= '9'; j++ {
		if n <= math.MaxInt32 {
			n = n*10 + int(format[j]-'0')
		}
	}
	return n, j
}

// starArg is the argument of a * width or precision.
func (r *run) starArg(what string) int {
	a, ok := r.next()
	if !ok {
		return 0
	}
	v := int64(r.intArg(a, true))
	if r.p.Dialect == GNU {
		switch {
		case what == "precision" && v < 0:
			return -1
		case v < math.MinInt32 || v > math.MaxInt32:
			r.ended = true
			r.diag(false, "invalid %s: %s", what, r.gnuQuote(a))
			return 0
		}
		return int(v)
	}
	// bash's getint clamps to an int, naming the argument after this one
	// in its warning; with none left it truncates instead.
	if r.ai >= len(r.args) {
		v = int64(int32(v))
	} else if v > math.MaxInt32 || v < math.MinInt32 {
		r.diag(true, "warning: %s: Numerical result out of range", r.args[r.ai])
		v = max(min(v, math.MaxInt32), math.MinInt32)
	}
	if what == "precision" && v < 0 {
		return -1
	}
	return int(v)
}

// percentB writes a with %b's escapes, cut and padded as %s when sp is
// given (bash); it reports \c or a GNU escape error, after which printf
// stops.
func (r *run) percentB(a string, sp *spec) bool {
	kind := escBBash
	if r.p.Dialect == GNU {
		kind = escBGNU
	}
	b, stop, err := unescape(nil, a, kind, r.warnf)
	if sp != nil {
		r.str(sp, string(b))
	} else {
		r.write(b)
	}
	if err != nil {
		r.ended = true
		r.diag(false, "%s", err.Error())
		return true
	}
	if stop {
		r.ended = true
	}
	return stop
}

// timeConversion is bash's %(fmt)T at format[i:], '(' at j.
func (r *run) timeConversion(format string, i, j int, sp *spec) (int, bool) {
	depth, k := 1, j+1
	for ; k < len(format); k++ {
		if format[k] == '(' {
			depth++
		} else if format[k] == ')' {
			depth--
			if depth == 0 {
				break
			}
		}
	}
	if k+1 >= len(format) || format[k+1] != 'T' {
		c := byte(0)
		if k+1 < len(format) {
			c = format[k+1]
		}
		r.diag(true, "warning: `%c': invalid time format specification", c)
		r.writeByte('%')
		return 1, false
	}
	tf := format[j+1 : k]
	if tf == "" {
		tf = "%X"
	}
	secs := int64(-1)
	if r.ai < len(r.args) {
		secs = int64(r.intArg(r.args[r.ai], true))
		r.ai++
	}
	var t time.Time
	switch secs {
	case -1:
		t = time.Now()
		if r.p.Now != nil {
			t = r.p.Now()
		}
	case -2:
		t = r.p.Start
	default:
		t = time.Unix(secs, 0)
	}
	loc := r.p.Location
	if loc == nil {
		loc = time.UTC
	}
	out := strftime(tf, t.In(loc))
	if len(out) >= 128 {
		out = "" // bash's strftime buffer is 128 bytes
	}
	r.str(sp, out)
	return k + 2 - i, false
}
