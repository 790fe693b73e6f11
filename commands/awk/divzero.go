package awk

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/benhoyt/goawk/lexer"
)

// Division by zero as gawk reports it. A constant divisor of zero (x / 0,
// x % 0) is an error gawk finds while parsing: it names every one and
// exits 1 without running anything. At run time it is fatal, status 2:
//
//	awk: cmd. line:3: (FILENAME=in FNR=2) fatal: division by zero attempted in `%='
//
// GoAWK's run-time error says neither the line nor the operator, so the
// program's candidates (/ % /= %= whose divisor is not a non-zero number)
// are found here, and the first one GoAWK's message fits is named.

// divOp is one candidate division.
type divOp struct {
	line int
	op   string // "/", "%", "/=", "%="
}

// divisions scans src for constant divisions by zero (returned as gawk's
// error lines, without the program name) and the other candidates.
func divisions(src, where string) (consts []string, cands []divOp) {
	if !strings.Contains(src, "/") && !strings.Contains(src, "%") && !strings.Contains(src, "NF") {
		return nil, nil
	}
	toks, ok := lex(src)
	if !ok {
		return nil, nil
	}
	lineOf := func(off int) int { return strings.Count(src[:min(off, len(src))], "\n") + 1 }
	for i, t := range toks {
		var op string
		if t.tok == lexer.NAME && t.val == "NF" && i+1 < len(toks) && isAssignOp(toks[i+1].tok) {
			cands = append(cands, divOp{lineOf(t.off), "NF"})
			continue
		}
		switch t.tok {
		case lexer.DIV:
			op = "/"
		case lexer.MOD:
			op = "%"
		case lexer.DIV_ASSIGN:
			op = "/="
		case lexer.MOD_ASSIGN:
			op = "%="
		default:
			continue
		}
		var zero, nonzero bool
		if i+1 < len(toks) && toks[i+1].tok == lexer.NUMBER && (i+2 >= len(toks) || toks[i+2].tok != lexer.POW) {
			if v, err := strconv.ParseFloat(toks[i+1].val, 64); err == nil {
				zero, nonzero = v == 0, v != 0
			}
		}
		switch {
		case zero && (op == "/" || op == "%"):
			msg := fmt.Sprintf("%s:%d: error: division by zero attempted", where, lineOf(t.off))
			if op == "%" {
				msg += " in `%'"
			}
			consts = append(consts, msg)
		case !nonzero:
			cands = append(cands, divOp{lineOf(t.off), op})
		}
	}
	return consts, cands
}

// divMessage is gawk's text for GoAWK's division error msg (and for NF
// set below zero, whose candidates are NF's assignments), or "" when msg
// is another error. inInput says whether a record was read (gawk then
// names FILENAME and FNR).
func divMessage(msg string, cands []divOp, where string, inInput bool, filename string, fnr int) string {
	var mod bool
	switch {
	case msg == "division by zero":
	case msg == "division by zero in mod":
		mod = true
	case strings.HasPrefix(msg, "NF set to negative value"):
		return fatalAt(cands, "NF", where, inInput, filename, fnr, "NF set to negative value")
	default:
		return ""
	}
	// The first candidate the message fits, in source order: rules and
	// statements run top to bottom, so it is the one that failed unless
	// an earlier one had a non-zero divisor.
	line, op := 0, ""
	for _, c := range cands {
		if c.op != "NF" && (c.op[0] == '%') == mod {
			line, op = c.line, c.op
			break
		}
	}
	var b strings.Builder
	if line > 0 {
		fmt.Fprintf(&b, "%s:%d: ", where, line)
	}
	if inInput {
		fmt.Fprintf(&b, "(FILENAME=%s FNR=%d) ", filename, fnr)
	}
	b.WriteString("fatal: division by zero attempted")
	if op != "/" {
		b.WriteString(" in `" + op + "'")
	}
	return b.String()
}

// fatalAt is gawk's fatal text for msg at the first candidate of kind op.
func fatalAt(cands []divOp, op, where string, inInput bool, filename string, fnr int, msg string) string {
	var b strings.Builder
	for _, c := range cands {
		if c.op == op {
			fmt.Fprintf(&b, "%s:%d: ", where, c.line)
			break
		}
	}
	if inInput {
		fmt.Fprintf(&b, "(FILENAME=%s FNR=%d) ", filename, fnr)
	}
	return b.String() + "fatal: " + msg
}

// fmtCall is a printf or sprintf whose format is a string literal.
type fmtCall struct {
	line  int
	fmt   string
	args  int // after the format
	caret int // index in fmt of the conversion that runs out, -1 if none
}

// formatCalls finds the printf and sprintf calls with a literal format
// that give it fewer arguments than it converts.
func formatCalls(src string) []fmtCall {
	if !strings.Contains(src, "printf") {
		return nil
	}
	toks, ok := lex(src)
	if !ok {
		return nil
	}
	var out []fmtCall
	for i, t := range toks {
		if t.tok != lexer.PRINTF && t.tok != lexer.F_SPRINTF {
			continue
		}
		k, end := i+1, -1
		if k < len(toks) && toks[k].tok == lexer.LPAREN {
			end = matching(toks, k)
			k++
		}
		if end < 0 {
			if t.tok == lexer.F_SPRINTF {
				continue
			}
			end = statementEnd(toks, k)
			// a redirect ends the arguments
			for j := k; j < end; j++ {
				if toks[j].tok == lexer.GREATER || toks[j].tok == lexer.APPEND || toks[j].tok == lexer.PIPE {
					if depthAt(toks, k, j) == 0 {
						end = j
						break
					}
				}
			}
		}
		if k >= end || toks[k].tok != lexer.STRING || (k+1 < end && toks[k+1].tok != lexer.COMMA) {
			continue
		}
		c := fmtCall{line: strings.Count(src[:t.off], "\n") + 1, fmt: toks[k].val, args: len(topCommas(toks, k, end))}
		if need := argNeeds(c.fmt); len(need) > c.args {
			c.caret = need[c.args]
			out = append(out, c)
		}
	}
	return out
}

// argNeeds lists, for each argument a format converts, the index of the
// character that takes it (a '*' or the conversion letter).
func argNeeds(f string) []int {
	var need []int
	for i := 0; i < len(f); i++ {
		if f[i] != '%' {
			continue
		}
		i++
		for i < len(f) && strings.IndexByte("-+ #0", f[i]) >= 0 {
			i++
		}
		if i < len(f) && f[i] == '*' {
			need = append(need, i)
			i++
		}
		for i < len(f) && f[i] >= '0' && f[i] <= '9' {
			i++
		}
		if i < len(f) && f[i] == '.' {
			i++
			if i < len(f) && f[i] == '*' {
				need = append(need, i)
				i++
			}
			for i < len(f) && f[i] >= '0' && f[i] <= '9' {
				i++
			}
		}
		if i < len(f) && f[i] != '%' {
			need = append(need, i)
		}
	}
	return need
}

// formatMessage is gawk's text for GoAWK's "format error: got N args" when
// a literal format of the program explains it ("" otherwise).
func formatMessage(msg string, calls []fmtCall, where string, inInput bool, filename string, fnr int) string {
	var got, want int
	if n, _ := fmt.Sscanf(msg, "format error: got %d args, expected %d", &got, &want); n != 2 {
		return ""
	}
	for _, c := range calls {
		if c.args != got {
			continue
		}
		at := ""
		if inInput {
			at = fmt.Sprintf("(FILENAME=%s FNR=%d) ", filename, fnr)
		}
		return fmt.Sprintf("%s:%d: %sfatal: not enough arguments to satisfy format string\n\t`%s'\n\t%s^ ran out for this one",
			where, c.line, at, c.fmt, strings.Repeat(" ", c.caret))
	}
	return ""
}
