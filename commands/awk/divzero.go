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
