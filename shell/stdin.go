package shell

import (
	"context"
	"errors"
	"io"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// RunStdinScript runs script the way `bash < script` does: commands that
// read standard input (read, cat, ...) consume the rest of the script text,
// which then is not executed. The conformance cases rely on this.
func (s *Shell) RunStdinScript(ctx context.Context, script string, stdout, stderr io.Writer) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.st
	return r.runTopWith(ctx, strings.NewReader(""), stdout, stderr, func() { r.runStdinScript(script) })
}

// countReader counts what commands read of the remaining script.
type countReader struct {
	s string
	n int
}

func (c *countReader) Read(p []byte) (int, error) {
	if c.n >= len(c.s) {
		return 0, io.EOF
	}
	n := copy(p, c.s[c.n:])
	c.n += n
	return n, nil
}

func (r *runner) runStdinScript(script string) {
	offset := 0
	for offset < len(script) && !r.exiting && !r.cancelled() {
		src := script[offset:]
		base := strings.Count(script[:offset], "\n")
		stmts, text, docs, err := parseScript(src)
		if text != src {
			// positions refer to the text with quoted subscripts: go on
			// reading that text
			script = script[:offset] + text
			src = text
		}
		r.lineBase = base
		restarted := false
		errLine := uint(0)
		if err != nil {
			var pe syntax.ParseError
			if errors.As(err, &pe) {
				errLine = pe.Pos.Line()
			}
		}
	groups:
		for i := 0; i < len(stmts); {
			st := stmts[i]
			if r.exiting || r.cancelled() {
				break
			}
			if errLine > 0 && st.End().Line() >= errLine {
				break
			}
			n, end, group, aerr := r.readGroup(src, stmts, i)
			if aerr == nil {
				docs = r.warnEOFDocs(docs, stmts[i+n-1].End().Line())
			}
			if le, ok := isLimit(aerr); ok {
				r.rs.fail(le)
				r.exiting = true
				break
			}
			if aerr != nil {
				err = aerr
				break
			}
			if end < 0 {
				end = lineEnd(src, st)
			}
			i += n
			for _, st := range group {
				if r.exiting || r.cancelled() {
					break groups
				}
				cr := &countReader{s: src[end:]}
				r.fds[0] = &fdesc{r: cr, path: "/dev/stdin"}
				r.stmt(st)
				if r.abandonLine && !r.cancelled() {
					// the rest of the line is dropped with it
					r.failAbandon()
					for i < len(stmts) && int(stmts[i].Pos().Offset()) < end {
						i++
					}
					break
				}
				if r.breakN > 0 || r.contN > 0 {
					r.breakN, r.contN = 0, 0
				}
				if r.returning {
					r.returning = false
				}
				if cr.n > 0 {
					offset += end + cr.n
					restarted = true
					break groups
				}
			}
		}
		if restarted {
			continue
		}
		if err != nil && !r.exiting {
			r.status = r.syntaxErrorIn(err, src, true)
			r.exiting = true
		}
		break
	}
	r.lineBase = 0
}

// lineEnd is the offset just past the line on which st ends (after any
// here-document bodies).
func lineEnd(src string, st *syntax.Stmt) int {
	end := int(st.End().Offset())
	syntax.Walk(st, func(n syntax.Node) bool {
		if n == nil {
			return true
		}
		if rd, ok := n.(*syntax.Redirect); ok && rd.Hdoc != nil {
			if e := int(rd.Hdoc.End().Offset()); e > end {
				end = e
			}
		}
		return true
	})
	if end > len(src) {
		end = len(src)
	}
	if i := strings.IndexByte(src[end:], '\n'); i >= 0 {
		return end + i + 1
	}
	return len(src)
}
