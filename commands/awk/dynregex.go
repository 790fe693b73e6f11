package awk

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/benhoyt/goawk/lexer"
)

// A regex built at run time that does not compile is fatal in both
// awks; GoAWK says so in Go's words ("invalid regex \"(\": error parsing
// regexp: missing closing ): ..."), gawk in GNU regex's, at the line of
// the match:
//
//	awk: cmd. line:2: (FILENAME=in FNR=1) fatal: invalid regexp: Unmatched ( or \(: /(/
//
// GoAWK does not say which match failed, so the line is a guess from the
// source: the first dynamic match whose regex is a string literal of the
// failing text, else the first whose regex is not a literal.

// regexUse is one match with a dynamic regex: ~ or !~ without a regex
// literal on the right, or a builtin's regex argument that is not one.
type regexUse struct {
	line  int
	lit   string // the string literal's value, when isLit
	isLit bool
}

// regexUses finds the dynamic matches of src.
func regexUses(src string) []regexUse {
	toks, ok := lex(src)
	if !ok {
		return nil
	}
	lineOf := func(off int) int { return strings.Count(src[:min(off, len(src))], "\n") + 1 }
	var uses []regexUse
	// add records the regex operand at toks[k]; lone says whether it is
	// the operand's only token
	add := func(k int, lone bool) {
		if toks[k].tok == lexer.REGEX {
			return
		}
		u := regexUse{line: lineOf(toks[k].off)}
		if toks[k].tok == lexer.STRING && lone {
			u.lit, u.isLit = toks[k].val, true
		}
		uses = append(uses, u)
	}
	for i, t := range toks {
		switch {
		case t.tok == lexer.MATCH || t.tok == lexer.NOT_MATCH:
			if i+1 < len(toks) {
				lone := false
				if i+2 < len(toks) {
					switch toks[i+2].tok {
					case lexer.RPAREN, lexer.NEWLINE, lexer.SEMICOLON, lexer.RBRACE, lexer.AND, lexer.OR,
						lexer.COMMA, lexer.QUESTION, lexer.COLON, lexer.LBRACE, lexer.EOF:
						lone = true
					}
				}
				add(i+1, lone)
			}
		case t.tok == lexer.F_SUB || t.tok == lexer.F_GSUB || t.tok == lexer.F_MATCH || t.tok == lexer.F_SPLIT ||
			t.tok == lexer.NAME && t.val == "gensub":
			if i+1 >= len(toks) || toks[i+1].tok != lexer.LPAREN {
				continue
			}
			close := matching(toks, i+1)
			if close < 0 {
				continue
			}
			args := splitArgs(toks, i+2, close)
			n := 0 // which argument is the regex
			switch t.tok {
			case lexer.F_MATCH:
				n = 1
			case lexer.F_SPLIT:
				n = 2
			}
			if n < len(args) {
				add(args[n][0], args[n][1] == args[n][0]+1)
			}
		}
	}
	return uses
}

// regexMessage is gawk's text for GoAWK's error msg about a regex that
// does not compile, or "" when msg is another error (or one whose GNU
// wording is not known: GoAWK's stays).
func regexMessage(msg string, uses []regexUse, where string, inInput bool, filename string, fnr int) string {
	rest, ok := strings.CutPrefix(msg, "invalid regex ")
	if !ok {
		return ""
	}
	q, err := strconv.QuotedPrefix(rest)
	if err != nil {
		return ""
	}
	re, _ := strconv.Unquote(q)
	rest, ok = strings.CutPrefix(rest[len(q):], ": error parsing regexp: ")
	if !ok {
		return ""
	}
	code, arg, _ := strings.Cut(rest, ": `")
	arg = strings.TrimSuffix(arg, "`")
	var gnu string
	switch code {
	case "missing closing )":
		gnu = `Unmatched ( or \(`
	case "missing closing ]":
		// GoAWK compiles (?s:RE), so the class runs into its ")"
		if arg == "[)" || arg == "[^)" {
			gnu = "Invalid regular expression"
		} else {
			gnu = "Unmatched [, [^, [:, [., or [="
		}
	case "invalid repeat count":
		gnu = `Invalid content of \{\}`
	case "invalid character class range":
		if strings.HasPrefix(arg, "[:") {
			gnu = "Invalid character class name"
		} else {
			gnu = "Invalid range end"
		}
	case "invalid character class":
		gnu = "Invalid character class name"
	default:
		return ""
	}
	line := 0
	for _, u := range uses {
		if u.isLit && u.lit == re {
			line = u.line
			break
		}
	}
	for _, u := range uses {
		if line == 0 && !u.isLit {
			line = u.line
		}
	}
	var b strings.Builder
	if line > 0 {
		fmt.Fprintf(&b, "%s:%d: ", where, line)
	}
	if inInput {
		fmt.Fprintf(&b, "(FILENAME=%s FNR=%d) ", filename, fnr)
	}
	fmt.Fprintf(&b, "fatal: invalid regexp: %s: /%s/", gnu, re)
	return b.String()
}
