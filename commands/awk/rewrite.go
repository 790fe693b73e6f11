package awk

import (
	"sort"
	"strings"

	"github.com/benhoyt/goawk/lexer"
)

// GoAWK runs with file access off (it would open host files), which leaves
// two everyday things broken: FILENAME (GoAWK sees every input as "-") and
// print/printf > "/dev/stderr". The program text is rewritten, token by
// token with GoAWK's own lexer, so those go through native functions:
//
//	FILENAME                   -> __warren_filename()
//	print a, b > "/dev/stderr" -> __warren_ewrite((a) OFS (b) ORS)
//	printf f, a > "/dev/stderr"-> __warren_ewrite(sprintf(f, a))
//	> "/dev/stdout", < "/dev/stdin" -> "-" (GoAWK's own stdout/stdin)
const (
	filenameFunc = "__warren_filename"
	ewriteFunc   = "__warren_ewrite"
)

type token struct {
	tok lexer.Token
	val string
	off int
}

type replacement struct {
	start, end int
	text       string
}

// rewrite returns the rewritten program and whether anything changed; a
// program that does not lex is returned unchanged (GoAWK will report it).
func rewrite(src string) (string, bool) {
	if !strings.Contains(src, "FILENAME") && !strings.Contains(src, "/dev/") {
		return src, false
	}
	toks, ok := lex(src)
	if !ok {
		return src, false
	}
	var filenames []int // offsets, ascending
	for i, t := range toks {
		if t.tok == lexer.NAME && t.val == "FILENAME" {
			if i+1 < len(toks) && isAssignOp(toks[i+1].tok) {
				return src, false // the program sets FILENAME itself
			}
			filenames = append(filenames, t.off)
		}
	}
	// render copies src[from:to] with FILENAME reads replaced.
	render := func(from, to int) string {
		var b strings.Builder
		last := from
		for _, off := range filenames {
			if off >= from && off+len("FILENAME") <= to {
				b.WriteString(src[last:off])
				b.WriteString(filenameFunc + "()")
				last = off + len("FILENAME")
			}
		}
		b.WriteString(src[last:to])
		return b.String()
	}
	var reps []replacement
	for i := 0; i < len(toks); i++ {
		t := toks[i]
		switch {
		case t.tok == lexer.STRING && i > 0 && (toks[i-1].tok == lexer.GREATER || toks[i-1].tok == lexer.APPEND) &&
			literalAt(src, t.off, "/dev/stdout"):
			reps = append(reps, replacement{t.off, t.off + len(`"/dev/stdout"`), `"-"`})
		case t.tok == lexer.STRING && i > 0 && toks[i-1].tok == lexer.LESS && literalAt(src, t.off, "/dev/stdin"):
			reps = append(reps, replacement{t.off, t.off + len(`"/dev/stdin"`), `"-"`})
		case t.tok == lexer.PRINT || t.tok == lexer.PRINTF:
			end := statementEnd(toks, i+1)
			g := end - 2 // the redirect, if this is print ... > "/dev/stderr"
			if g <= i || (toks[g].tok != lexer.GREATER && toks[g].tok != lexer.APPEND) ||
				toks[g+1].tok != lexer.STRING || !literalAt(src, toks[g+1].off, "/dev/stderr") || depthAt(toks, i+1, g) != 0 {
				continue
			}
			args := toks[i+1 : g]
			argsEnd := toks[g].off // the arguments end where the redirect starts
			if len(args) > 1 && args[0].tok == lexer.LPAREN && matching(args, 0) == len(args)-1 {
				argsEnd = args[len(args)-1].off // print(a, b): inside the parentheses
				args = args[1 : len(args)-1]
			}
			var parts []string
			start := -1
			depth := 0
			for _, a := range args {
				if start < 0 {
					start = a.off
				}
				switch a.tok {
				case lexer.LPAREN, lexer.LBRACKET:
					depth++
				case lexer.RPAREN, lexer.RBRACKET:
					depth--
				case lexer.COMMA:
					if depth == 0 {
						parts = append(parts, render(start, a.off))
						start = -1
					}
				}
			}
			if start >= 0 {
				parts = append(parts, render(start, argsEnd))
			}
			var text string
			if t.tok == lexer.PRINTF {
				text = ewriteFunc + "(sprintf(" + strings.Join(parts, ",") + "))"
			} else {
				if len(parts) == 0 {
					parts = []string{"$0"}
				}
				for k := range parts {
					parts[k] = "(" + strings.TrimSpace(parts[k]) + ")"
				}
				text = ewriteFunc + "(" + strings.Join(parts, " OFS ") + " ORS)"
			}
			strEnd := toks[g+1].off + len(`"/dev/stderr"`)
			reps = append(reps, replacement{t.off, strEnd, text})
			i = g + 1
		}
	}
	if len(reps) == 0 && len(filenames) == 0 {
		return src, false
	}
	sort.Slice(reps, func(a, b int) bool { return reps[a].start < reps[b].start })
	var b strings.Builder
	last := 0
	for _, r := range reps {
		b.WriteString(render(last, r.start))
		b.WriteString(r.text)
		last = r.end
	}
	b.WriteString(render(last, len(src)))
	return b.String(), true
}

func literalAt(src string, off int, s string) bool {
	return strings.HasPrefix(src[off:], `"`+s+`"`)
}

func isAssignOp(t lexer.Token) bool {
	switch t {
	case lexer.ASSIGN, lexer.ADD_ASSIGN, lexer.SUB_ASSIGN, lexer.MUL_ASSIGN, lexer.DIV_ASSIGN,
		lexer.MOD_ASSIGN, lexer.POW_ASSIGN, lexer.INCR, lexer.DECR:
		return true
	}
	return false
}

// statementEnd returns the index of the token ending the simple statement
// that starts at i (newline, ';', '}' or EOF at nesting depth 0).
func statementEnd(toks []token, i int) int {
	depth := 0
	for ; i < len(toks); i++ {
		switch toks[i].tok {
		case lexer.LPAREN, lexer.LBRACKET, lexer.LBRACE:
			depth++
		case lexer.RPAREN, lexer.RBRACKET:
			depth--
		case lexer.RBRACE:
			if depth == 0 {
				return i
			}
			depth--
		case lexer.NEWLINE, lexer.SEMICOLON, lexer.EOF:
			if depth == 0 {
				return i
			}
		}
	}
	return len(toks)
}

// depthAt is the bracket depth at token to, counting from token from.
func depthAt(toks []token, from, to int) int {
	depth := 0
	for i := from; i < to; i++ {
		switch toks[i].tok {
		case lexer.LPAREN, lexer.LBRACKET:
			depth++
		case lexer.RPAREN, lexer.RBRACKET:
			depth--
		}
	}
	return depth
}

// matching returns the index of the bracket closing toks[i].
func matching(toks []token, i int) int {
	depth := 0
	for k := i; k < len(toks); k++ {
		switch toks[k].tok {
		case lexer.LPAREN, lexer.LBRACKET:
			depth++
		case lexer.RPAREN, lexer.RBRACKET:
			depth--
			if depth == 0 {
				return k
			}
		}
	}
	return -1
}

// lex tokenizes src; a '/' after an operand divides, elsewhere it starts a
// regex (as GoAWK's parser decides).
func lex(src string) ([]token, bool) {
	lineStart := []int{0}
	for i := 0; i < len(src); i++ {
		if src[i] == '\n' {
			lineStart = append(lineStart, i+1)
		}
	}
	l := lexer.NewLexer([]byte(src))
	var toks []token
	prevOperand := false
	for {
		pos, tok, val := l.Scan()
		if tok == lexer.ILLEGAL {
			return nil, false
		}
		if (tok == lexer.DIV || tok == lexer.DIV_ASSIGN) && !prevOperand {
			pos, tok, val = l.ScanRegex()
			if tok == lexer.ILLEGAL {
				return nil, false
			}
		}
		off := len(src)
		if tok != lexer.EOF && pos.Line-1 < len(lineStart) {
			off = lineStart[pos.Line-1] + pos.Column - 1
		}
		toks = append(toks, token{tok, val, off})
		if tok == lexer.EOF {
			return toks, true
		}
		switch tok {
		case lexer.NAME, lexer.NUMBER, lexer.STRING, lexer.REGEX, lexer.RPAREN, lexer.RBRACKET,
			lexer.INCR, lexer.DECR, lexer.DOLLAR:
			prevOperand = true
		default:
			prevOperand = false
		}
	}
}
