package shell

import (
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"
	"unicode/utf8"

	"mvdan.cc/sh/v3/syntax"
)

// The parse front door. Everything that reaches syntax.Parser (scripts,
// eval, source, bash -c, traps, function bodies from saved state,
// arithmetic strings and subscripts evaluated at run time) goes through
// the functions of this file, which
//
//   - bound the parser's recursion: mvdan's parser recurses once or more
//     per nesting level, and a Go stack overflow is a fatal error that no
//     recover catches (it would end every sandbox of the process). The
//     source is handed to the parser in small chunks through guardReader,
//     and every chunk checks how deep the goroutine's stack is. A level
//     needs at least one byte of input, so between two checks the parser
//     can go at most guardChunk levels deeper. This measures the parser's
//     real recursion, whatever the syntax (quotes, here-docs, case
//     patterns), which no byte-level pre-scan can promise;
//   - bound the depth of the tree it returns (MaxNesting levels), since
//     the interpreter, the printer and syntax.Walk recurse over it too;
//   - let scripts be bytes: invalid UTF-8 is mapped to private code points
//     for the parser and back in the tree (see encodeBytes).

// MaxNesting is the deepest nesting of the parsed tree a script may have
// (subshells, groups, compound commands, substitutions, expansions and
// arithmetic parentheses all count). It is a constant, not a Limit, since
// parsed scripts are cached process-wide.
const MaxNesting = 1000

// guardChunk is the most bytes the parser gets per Read; guardFrames is how
// many frames the parser may add to the stack it was called on. The parser
// uses 3 to 27 frames per level (measured 2026-12-02: `[[ ( ( ` 2.6,
// `${x:-` 5.5, `$(` 7, `((( ` and `$(((` 25 while it tries arithmetic
// first), so guardFrames is reached only well past MaxNesting levels, and
// at a few hundred bytes a frame it is some megabytes of stack.
//
// Walking the stack costs time in its depth, and the runtime may already be
// deep (eval inside functions), so sources shorter than guardFree bytes are
// not checked at all: at one level per byte and guardPerByte frames per level they
// cannot reach guardFrames. Longer ones count the frames under the parser
// once, at its first Read, and check against that base.
const (
	guardChunk   = 512
	guardFrames  = 40 * MaxNesting
	guardPerByte = 30 // frames one byte of input can add (27 measured)
	guardFree    = guardFrames / guardPerByte
)

// NestingError is a script nested deeper than MaxNesting (status 2, like a
// syntax error).
type NestingError struct{ Limit int }

func (e *NestingError) Error() string {
	return fmt.Sprintf("warren: nesting too deep (limit %d)", e.Limit)
}

var errTooDeep = &NestingError{Limit: MaxNesting}

// guardReader feeds the parser in chunks, and panics with errTooDeep when
// the parser has added more than guardFrames frames to the stack.
type guardReader struct {
	s     string
	n     int
	base  int // frames under the parser's first Read (sources over guardFree)
	last  int // frames at the last count, when lastN bytes had been read
	lastN int
}

func (g *guardReader) Read(p []byte) (int, error) {
	if g.n >= len(g.s) {
		return 0, io.EOF
	}
	if len(g.s) > guardFree {
		// Count again only when the bytes read since the last count could
		// have taken the parser past guardFrames.
		if g.n == 0 {
			g.base = countFrames()
			g.last, g.lastN = g.base, 0
		} else if g.last+guardPerByte*(g.n-g.lastN) > g.base+guardFrames {
			d := countFrames()
			if d-g.base > guardFrames {
				panic(errTooDeep)
			}
			g.last, g.lastN = d, g.n
		}
	}
	end := min(len(g.s), g.n+min(len(p), guardChunk))
	n := copy(p, g.s[g.n:end])
	g.n += n
	return n, nil
}

// countFrames is the depth of the calling goroutine's stack.
func countFrames() int {
	var small [256]uintptr
	if n := runtime.Callers(0, small[:]); n < len(small) {
		return n
	}
	for size := 1 << 14; ; size *= 4 {
		pcs := make([]uintptr, size)
		if n := runtime.Callers(0, pcs); n < size {
			return n
		}
	}
}

// parseGuard turns a panic of the parser into an error: errTooDeep as
// itself, anything else (mvdan panics on some invalid input) as a syntax
// error. It reports whether the parser may be reused.
func parseGuard(e any, err *error) {
	if e == nil {
		return
	}
	if ne, ok := e.(*NestingError); ok {
		*err = ne
		return
	}
	*err = fmt.Errorf("syntax error: cannot parse input (%v)", e)
}

// parseStmts parses src statement by statement (a script, source, traps).
// A script that does not parse for the blanks of an associative key gets
// them quoted (see quoteSubscripts).
func parseStmts(src string) ([]*syntax.Stmt, error) {
	stmts, _, err := parseStmtsText(src)
	return stmts, err
}

// parseStmtsText is parseStmts that also returns the text the statements'
// positions refer to (src, or src with its subscripts quoted).
func parseStmtsText(src string) ([]*syntax.Stmt, string, error) {
	stmts, text, _, err := parseScript(src)
	return stmts, text, err
}

// eofDoc is a here-document that the end of the text left open: bash warns
// ("here-document at line N delimited by end-of-file") and takes the rest
// of the text as its body, so the script runs.
type eofDoc struct {
	line    uint   // line of the << operator, in the text
	word    string // the delimiter bash wanted
	eofLine int    // the text's last line, where bash reports the warning
}

// maxEOFDocs bounds the retries for here-documents left open (each retry is
// a parse of the whole text).
const maxEOFDocs = 8

// parseScript is parseStmtsText that also closes here-documents left open
// at the end of the text, as bash does, and says which (see eofDoc). The
// text returned then ends with their delimiters.
func parseScript(src string) ([]*syntax.Stmt, string, []eofDoc, error) {
	stmts, text, err := parseStmtsRewrite(src)
	var docs []eofDoc
	for len(docs) < maxEOFDocs {
		var pe syntax.ParseError
		if err == nil || !errors.As(err, &pe) {
			break
		}
		word, ok := strings.CutPrefix(pe.Text, "unclosed here-document `")
		if !ok || !strings.HasSuffix(word, "`") || strings.Contains(word, "\n") {
			break
		}
		word = strings.TrimSuffix(word, "`")
		lines := strings.Count(src, "\n")
		if !strings.HasSuffix(src, "\n") {
			lines++
		}
		closed := text
		if !strings.HasSuffix(closed, "\n") {
			closed += "\n"
		}
		closed += word + "\n"
		st2, text2, err2 := parseStmtsRewrite(closed)
		if err2 != nil && err2.Error() == err.Error() {
			break // the delimiter did not close it: report the first error
		}
		docs = append(docs, eofDoc{line: pe.Pos.Line(), word: word, eofLine: lines})
		stmts, text, err = st2, text2, err2
	}
	return stmts, text, docs, err
}

// parseStmtsRewrite is parseStmtsOnce with the subscript and case-toggle
// rewrites of parseRewrite tried when the text does not parse as written.
func parseStmtsRewrite(src string) ([]*syntax.Stmt, string, error) {
	stmts, err := parseStmtsOnce(src)
	if err != nil && !isNesting(err) {
		if q, ok := parseRewrite(src); ok {
			st2, err2 := parseStmtsOnce(q)
			if err2 == nil {
				return st2, q, nil
			}
			// The rewrites mended the first bad line but a later one
			// is still bad: bash runs every command before that one.
			// (The rewrites add no lines, so lines compare.)
			var pe, pe2 syntax.ParseError
			if errors.As(err, &pe) && errors.As(err2, &pe2) && pe2.Pos.Line() > pe.Pos.Line() {
				return st2, q, err2
			}
		}
	}
	return stmts, src, err
}

// parseStmtsOnce is parseStmts without the subscript retry. A parser that
// panicked is not put back in the pool.
func parseStmtsOnce(src string) (stmts []*syntax.Stmt, err error) {
	stmts, err = parseStmtsLet(src, true)
	if err != nil && !isNesting(err) && hasLetWord(src) {
		// hiding let broke the parse (a variable named let in (( )), say):
		// the parser's reading stands where it gets further
		st2, err2 := parseStmtsLet(src, false)
		if err2 == nil || laterError(err2, err) {
			return st2, err2
		}
	}
	return stmts, err
}

// laterError reports whether parse error a is on a later line than b.
func laterError(a, b error) bool {
	var pa, pb syntax.ParseError
	return errors.As(a, &pa) && errors.As(b, &pb) && pa.Pos.Line() > pb.Pos.Line()
}

// parseStmtsLet is parseStmtsOnce, with the word let hidden from the
// parser or not (see hideLet).
func parseStmtsLet(src string, hide bool) (stmts []*syntax.Stmt, err error) {
	enc, mapped := encodeBytes(src)
	if hide {
		var hid bool
		enc, hid = hideLet(enc)
		mapped = mapped || hid
	}
	p := parserPool.Get().(*syntax.Parser)
	defer func() {
		if e := recover(); e != nil {
			stmts = nil
			parseGuard(e, &err)
			return
		}
		parserPool.Put(p)
	}()
	err = p.Stmts(&guardReader{s: enc}, func(st *syntax.Stmt) bool {
		stmts = append(stmts, st)
		return true
	})
	// Every level takes at least one byte of source, so short sources
	// (most scripts and evals) need no walk. (A statement's own span is no
	// guide: here-doc bodies lie outside it.)
	if d := nestDepthOf(enc, stmts); d > MaxNesting {
		// Keep the statements before the deep one: bash would run them.
		stmts, err = stmts[:d-MaxNesting-1], errTooDeep
	}
	if mapped {
		decodeTree(stmts)
	}
	fixTestPrecedence(enc, stmts)
	return stmts, err
}

// parseFile parses src whole (eval, functions from state, aliases), with
// parseStmts' subscript retry.
func parseFile(src string) (*syntax.File, error) {
	f, err := parseFileOnce(src)
	if err != nil && !isNesting(err) {
		if q, ok := parseRewrite(src); ok {
			if f2, err2 := parseFileOnce(q); err2 == nil {
				return f2, nil
			}
		}
	}
	return f, err
}

func parseFileOnce(src string) (f *syntax.File, err error) {
	f, err = parseFileLet(src, true)
	if err != nil && !isNesting(err) && hasLetWord(src) {
		if f2, err2 := parseFileLet(src, false); err2 == nil {
			return f2, nil
		}
	}
	return f, err
}

func parseFileLet(src string, hide bool) (f *syntax.File, err error) {
	enc, mapped := encodeBytes(src)
	if hide {
		var hid bool
		enc, hid = hideLet(enc)
		mapped = mapped || hid
	}
	p := parserPool.Get().(*syntax.Parser)
	defer func() {
		if e := recover(); e != nil {
			f = nil
			parseGuard(e, &err)
			return
		}
		parserPool.Put(p)
	}()
	f, err = p.Parse(&guardReader{s: enc}, "")
	if err != nil {
		return nil, err
	}
	if d := nestDepthOf(enc, f.Stmts); d > MaxNesting {
		return nil, errTooDeep
	}
	if mapped {
		decodeTree(f.Stmts)
	}
	fixTestPrecedence(enc, f.Stmts)
	return f, nil
}

// parseArith parses an arithmetic expression given as a string (a
// variable's value, a subscript).
func parseArith(src string) (x syntax.ArithmExpr, err error) {
	enc, mapped := encodeBytes(src)
	p := parserPool.Get().(*syntax.Parser)
	defer func() {
		if e := recover(); e != nil {
			x = nil
			parseGuard(e, &err)
			return
		}
		parserPool.Put(p)
	}()
	x, err = p.Arithmetic(&guardReader{s: enc})
	if err != nil || x == nil {
		return x, err
	}
	if len(src) > MaxNesting && nodeDepth(x, MaxNesting+1) > MaxNesting {
		return nil, errTooDeep
	}
	if mapped {
		decodeNode(x)
	}
	return x, nil
}

// parseWords parses src as words (subscripts, completion word lists).
func parseWords(src string) (ws []*syntax.Word, err error) {
	enc, mapped := encodeBytes(src)
	p := parserPool.Get().(*syntax.Parser)
	defer func() {
		if e := recover(); e != nil {
			ws = nil
			parseGuard(e, &err)
			return
		}
		parserPool.Put(p)
	}()
	err = p.Words(&guardReader{s: enc}, func(w *syntax.Word) bool {
		ws = append(ws, w)
		return true
	})
	if err != nil {
		return nil, err
	}
	for _, w := range ws {
		if len(src) > MaxNesting && nodeDepth(w, MaxNesting+1) > MaxNesting {
			return nil, errTooDeep
		}
		if mapped {
			decodeNode(w)
		}
	}
	return ws, nil
}

// isNesting reports whether err is the nesting bound.
func isNesting(err error) bool {
	var ne *NestingError
	return errors.As(err, &ne)
}

// nesting reports whether n opens a nesting level for MaxNesting.
func nesting(n syntax.Node) bool {
	switch n.(type) {
	case *syntax.Subshell, *syntax.Block, *syntax.IfClause, *syntax.WhileClause,
		*syntax.ForClause, *syntax.CaseClause, *syntax.FuncDecl, *syntax.CmdSubst,
		*syntax.ProcSubst, *syntax.ParamExp, *syntax.ArithmExp, *syntax.ArithmCmd,
		*syntax.ParenArithm, *syntax.TestClause, *syntax.ParenTest, *syntax.BinaryCmd,
		*syntax.BinaryArithm, *syntax.UnaryArithm, *syntax.BinaryTest, *syntax.UnaryTest,
		*syntax.CoprocClause:
		return true
	}
	return false
}

// nodeDepth is the nesting depth of the tree under n, counting only the
// nodes for which nesting holds; it stops descending past stop.
func nodeDepth(n syntax.Node, stop int) int {
	w := depthWalker{stop: stop}
	w.path = w.buf[:0]
	syntax.Walk(n, w.visit)
	return w.deepest
}

type depthWalker struct {
	depth, deepest, stop int
	path                 []bool // whether each node on the walk's path counted
	buf                  [64]bool
}

func (w *depthWalker) visit(n syntax.Node) bool {
	if n == nil {
		if k := len(w.path); k > 0 {
			if w.path[k-1] {
				w.depth--
			}
			w.path = w.path[:k-1]
		}
		return true
	}
	c := nesting(n)
	if c {
		w.depth++
		w.deepest = max(w.deepest, w.depth)
	}
	if w.depth > w.stop {
		if c {
			w.depth-- // Walk sends no nil for a node it does not descend into
		}
		return false
	}
	w.path = append(w.path, c)
	return true
}

// nestDepth checks statements in order; it returns 0 when all are within
// MaxNesting, else MaxNesting+1+i for the first statement i that is not.
func nestDepth(stmts []*syntax.Stmt) int {
	for i, st := range stmts {
		if nodeDepth(st, MaxNesting+1) > MaxNesting {
			return MaxNesting + 1 + i
		}
	}
	return 0
}

// Scripts are bytes. The parser refuses invalid UTF-8, bash does not: each
// invalid byte b is handed to the parser as the private-use code point
// byteRune+b (U+10FF80..U+10FFFF) and turned back into b in the tree's
// literals. A valid script pays one utf8.ValidString scan. (A script that
// has both invalid bytes and those code points gets the bytes for both.)
const byteRune = 0x10FF00

func encodeBytes(s string) (string, bool) {
	if utf8.ValidString(s) {
		return s, false
	}
	var b strings.Builder
	b.Grow(len(s) + len(s)/4)
	for i := 0; i < len(s); {
		r, w := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && w == 1 {
			b.WriteRune(byteRune + rune(s[i]))
		} else {
			b.WriteString(s[i : i+w])
		}
		i += w
	}
	return b.String(), true
}

// mvdan's parser reads `let` in a command's place as its own clause whose
// operands are arithmetic expressions, so `let x=1 2>/dev/null`, `let x=`
// and `let` alone do not parse, `let x=1>f` compares instead of
// redirecting and `let y=$a*2` does not expand $a as text. To bash, let is
// a builtin like any other: its arguments are words, expanded, then each
// evaluated. So the parser is given the word let as letRune, a private-use
// code point of the same three bytes (offsets and columns stay), which it
// takes as a plain command name; the tree gets let back with the bytes of
// encodeBytes. Only a whole word is hidden, one that may start a command:
// after a blank, an operator or the start of the text, before a blank, an
// operator or the end. (A script that has U+F8FE itself and the word let
// gets let for both.)
const letRune = '\uF8FE'

var letRuneText = string(letRune)

// hasLetWord reports whether src may have a let for hideLet.
func hasLetWord(src string) bool { return strings.Contains(src, "let") }

// hideLet replaces each whole word let that may be a command name with
// letRune.
func hideLet(s string) (string, bool) {
	if !hasLetWord(s) {
		return s, false
	}
	var b []byte
	for i := 0; ; {
		j := strings.Index(s[i:], "let")
		if j < 0 {
			break
		}
		k := i + j
		i = k + 3
		if k > 0 && !strings.ContainsRune(" \t\n;&|(`", rune(s[k-1])) {
			continue
		}
		if k+3 < len(s) && !strings.ContainsRune(" \t\n;&|)<>`", rune(s[k+3])) {
			continue
		}
		if pre := strings.TrimRight(s[:k], " \t"); strings.HasSuffix(pre, "for") || strings.HasSuffix(pre, "select") || strings.HasSuffix(pre, "((") {
			continue // for let in ..., (( let += 1 )): a name the parser checks
		}
		if b == nil {
			b = []byte(s)
		}
		copy(b[k:], letRuneText)
	}
	if b == nil {
		return s, false
	}
	return string(b), true
}

// decodeBytes undoes encodeBytes and hideLet in one string.
func decodeBytes(s string) string {
	if !strings.Contains(s, "\xf4\x8f") && !strings.Contains(s, letRuneText) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		r, w := utf8.DecodeRuneInString(s[i:])
		if r >= byteRune+0x80 && r <= byteRune+0xff {
			b.WriteByte(byte(r - byteRune))
		} else if r == letRune {
			b.WriteString("let")
		} else {
			b.WriteString(s[i : i+w])
		}
		i += w
	}
	return b.String()
}

func decodeTree(stmts []*syntax.Stmt) {
	for _, st := range stmts {
		decodeNode(st)
	}
}

func decodeNode(n syntax.Node) {
	syntax.Walk(n, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.Lit:
			n.Value = decodeBytes(n.Value)
		case *syntax.SglQuoted:
			n.Value = decodeBytes(n.Value)
		case *syntax.Comment:
			n.Text = decodeBytes(n.Text)
		}
		return true
	})
}

// nestingFail ends the Run with status 2 and the nesting message (a script
// nested too deep is a syntax error, wherever it is parsed).
func (r *runner) nestingFail() error {
	le := &limitError{what: fmt.Sprintf("nesting too deep (limit %d)", MaxNesting), status: 2}
	r.rs.fail(le)
	r.exiting = true
	return le
}

func nestDepthOf(src string, stmts []*syntax.Stmt) int {
	if len(src) <= MaxNesting {
		return 0
	}
	return nestDepth(stmts)
}
