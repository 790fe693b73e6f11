package awk

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"strings"

	"github.com/benhoyt/goawk/lexer"

	"github.com/warren-sandbox/warren/commands"
)

// GoAWK runs system() and pipes on the host (os/exec), so it runs with
// NoExec and the program's commands go through the shell instead
// (Invocation.Exec, `sh -c CMD`, the sandbox's ladder), rewritten token by
// token:
//
//	system(cmd)              -> __warren_system(fflush(), cmd)
//	print a, b | cmd         -> __warren_pwrite(fflush(), cmd, (a) OFS (b) ORS)
//	printf f, a | cmd        -> __warren_pwrite(fflush(), cmd, sprintf(f, a))
//	close(cmd)               -> __warren_close(fflush(), cmd)
//
// fflush() first, as gawk flushes its output before it starts a command.
// Output to a command is collected and the command runs when the program
// closes it or ends (then in the reverse order of opening, before awk's
// own buffered output is flushed: gawk's order when its stdout is not a
// terminal); a command's output is never interleaved with awk's.
//
//	cmd | getline [var]     -> ((__warren_gl = __warren_cmdnext(fflush(), cmd, RS)) > 0 &&
//	                            (split(__warren_cmdline(), __warren_gla, "^$") || 1) &&
//	                            ((var = __warren_gla[1]) || 1) ? 1 : __warren_gl)
//
// runs cmd once, to its end, and hands out its output a record at a time
// (RS a newline or one character; split makes the value a strnum, as
// getline's); without var the record is $0. NR is left alone, as gawk
// leaves it. What is left out: a command
// reading its input while awk still writes to it, and a getline whose
// command or variable is too complex to find by tokens (GoAWK then
// reports that it cannot run commands).
const (
	systemFunc  = "__warren_system"
	pwriteFunc  = "__warren_pwrite"
	closeFunc   = "__warren_close"
	cmdNextFunc = "__warren_cmdnext"
	cmdLineFunc = "__warren_cmdline"
)

// maxPipeBytes bounds what the program's output pipes hold at once (it
// is also charged to the sandbox's memory budget).
var maxPipeBytes = 64 << 20

type pipes struct {
	ctx   context.Context
	inv   *commands.Invocation
	out   *bufio.Writer // awk's stdout, flushed before a command runs
	order []string
	bufs  map[string]*bytes.Buffer
	held  int
	reads map[string]*cmdOutput
	line  string
	res   *commands.Reservation // what is held, charged to the sandbox's memory (nil: unlimited)
}

// cmdOutput is what a getline command printed, and how much was read.
type cmdOutput struct {
	data    string
	status  int
	charged int64 // to the memory budget, given back at close
}

func newPipes(ctx context.Context, inv *commands.Invocation, out *bufio.Writer) *pipes {
	return &pipes{ctx: ctx, inv: inv, out: out, bufs: map[string]*bytes.Buffer{}, reads: map[string]*cmdOutput{}}
}

func (p *pipes) funcs() map[string]interface{} {
	return map[string]interface{}{
		systemFunc: func(_ float64, cmd string) (int, error) { return p.run(cmd, "") },
		pwriteFunc: p.write,
		closeFunc: func(_ float64, cmd string) (int, error) {
			if r, ok := p.reads[cmd]; ok {
				delete(p.reads, cmd)
				p.res.Shrink(r.charged)
				return r.status, nil
			}
			b, ok := p.bufs[cmd]
			if !ok {
				return -1, nil // not open: gawk's -1
			}
			p.forget(cmd)
			return p.run(cmd, b.String())
		},
		cmdNextFunc: p.next,
		cmdLineFunc: func() string { return p.line },
	}
}

// next reads cmd's next record into p.line: 1, 0 at the end, -1 when the
// command cannot run.
func (p *pipes) next(_ float64, cmd, rs string) (int, error) {
	r, ok := p.reads[cmd]
	if !ok {
		if p.inv.Exec == nil {
			return -1, nil
		}
		if err := p.out.Flush(); err != nil {
			return 0, err
		}
		var b limitedBuffer
		st := p.inv.Exec(p.ctx, []string{"sh", "-c", cmd}, strings.NewReader(""), &b, p.inv.Stderr, p.inv.Env)
		if b.over {
			return 0, fmt.Errorf("output of %q: more than %d bytes (the limit of the sandbox's awk)", cmd, maxPipeBytes)
		}
		if err := p.res.Grow(int64(b.Len())); err != nil {
			return 0, err
		}
		r = &cmdOutput{data: b.String(), status: st, charged: int64(b.Len())}
		p.reads[cmd] = r
	}
	if r.data == "" {
		return 0, nil
	}
	sep := byte('\n')
	if len(rs) == 1 {
		sep = rs[0]
	}
	if i := strings.IndexByte(r.data, sep); i >= 0 {
		p.line, r.data = r.data[:i], r.data[i+1:]
	} else {
		p.line, r.data = r.data, ""
	}
	return 1, nil
}

// limitedBuffer keeps at most maxPipeBytes and notes that more came.
type limitedBuffer struct {
	bytes.Buffer
	over bool
}

func (b *limitedBuffer) Write(p []byte) (int, error) {
	if b.Len()+len(p) > maxPipeBytes {
		b.over = true
		return 0, fmt.Errorf("more than %d bytes", maxPipeBytes)
	}
	return b.Buffer.Write(p)
}

func (p *pipes) write(_ float64, cmd, s string) (int, error) {
	b, ok := p.bufs[cmd]
	if !ok {
		// gawk flushes its output when it starts a command
		if err := p.out.Flush(); err != nil {
			return 0, err
		}
		b = &bytes.Buffer{}
		p.bufs[cmd] = b
		p.order = append(p.order, cmd)
	}
	if p.held+len(s) > maxPipeBytes {
		// nothing held runs: the program stops on an error of ours
		p.order, p.bufs, p.held = nil, map[string]*bytes.Buffer{}, 0
		return 0, fmt.Errorf("output to %q: more than %d bytes held for commands (the limit of the sandbox's awk)", cmd, maxPipeBytes)
	}
	if err := p.res.Grow(int64(len(s))); err != nil {
		p.order, p.bufs, p.held = nil, map[string]*bytes.Buffer{}, 0
		p.res.Close()
		return 0, err
	}
	p.held += len(s)
	b.WriteString(s)
	return 0, nil
}

func (p *pipes) forget(cmd string) {
	p.held -= p.bufs[cmd].Len()
	p.res.Shrink(int64(p.bufs[cmd].Len()))
	delete(p.bufs, cmd)
	for i, c := range p.order {
		if c == cmd {
			p.order = append(p.order[:i], p.order[i+1:]...)
			break
		}
	}
}

// run runs cmd with input on its stdin and returns its status.
func (p *pipes) run(cmd, input string) (int, error) {
	if p.inv.Exec == nil {
		return 0, fmt.Errorf("cannot run %q: no shell to run commands here", cmd)
	}
	if err := p.out.Flush(); err != nil {
		return 0, err
	}
	return p.inv.Exec(p.ctx, []string{"sh", "-c", cmd}, strings.NewReader(input), p.inv.Stdout, p.inv.Stderr, p.inv.Env), nil
}

// closeAll runs the commands still open, the last opened first.
func (p *pipes) closeAll() {
	for len(p.order) > 0 {
		cmd := p.order[len(p.order)-1]
		b := p.bufs[cmd]
		p.forget(cmd)
		if p.ctx.Err() != nil {
			return
		}
		p.inv.Exec(p.ctx, []string{"sh", "-c", cmd}, strings.NewReader(b.String()), p.inv.Stdout, p.inv.Stderr, p.inv.Env)
	}
}

// rewritePipes rewrites system, close and print/printf to a command (see
// above); a program that does not lex is returned as it is.
func rewritePipes(src string) string {
	if !strings.Contains(src, "|") && !strings.Contains(src, "system") && !strings.Contains(src, "close") {
		return src
	}
	toks, ok := lex(src)
	if !ok {
		return src
	}
	var reps []replacement
	for i := 0; i+1 < len(toks); i++ {
		t := toks[i]
		switch t.tok {
		case lexer.F_SYSTEM, lexer.F_CLOSE:
			if toks[i+1].tok != lexer.LPAREN {
				continue
			}
			close := matching(toks, i+1)
			if close < 0 || close == i+2 || len(topCommas(toks, i+2, close)) != 0 {
				continue
			}
			name := systemFunc
			if t.tok == lexer.F_CLOSE {
				name = closeFunc
			}
			reps = append(reps, replacement{t.off, toks[i+1].off + 1, name + "(fflush(), "})
		case lexer.PIPE:
			if toks[i+1].tok != lexer.GETLINE {
				continue
			}
			from := operandStart(toks, i)
			if from < 0 {
				continue
			}
			to := getlineVarEnd(toks, i+2) // exclusive
			if to < 0 {
				continue
			}
			cmd := strings.TrimSpace(src[toks[from].off:t.off])
			target := "$0"
			if to > i+2 {
				target = strings.TrimSpace(src[toks[i+2].off:toks[to].off])
			}
			text := "((__warren_gl = " + cmdNextFunc + "(fflush(), " + cmd + ", RS)) > 0 && (split(" + cmdLineFunc +
				"(), __warren_gla, \"^$\") || 1) && ((" + target + " = __warren_gla[1]) || 1) ? 1 : __warren_gl)"
			if to == i+2 {
				text = "((__warren_gl = " + cmdNextFunc + "(fflush(), " + cmd + ", RS)) > 0 && (($0 = " + cmdLineFunc +
					"()) || 1) ? 1 : __warren_gl)"
			}
			// a replacement never overlaps one made before it
			for len(reps) > 0 && reps[len(reps)-1].end > toks[from].off {
				reps = reps[:len(reps)-1]
			}
			reps = append(reps, replacement{toks[from].off, toks[to].off, text})
			i = to - 1
		case lexer.PRINT, lexer.PRINTF:
			end := statementEnd(toks, i+1)
			pipe := -1
			depth := 0
			for k := i + 1; k < end; k++ {
				switch toks[k].tok {
				case lexer.LPAREN, lexer.LBRACKET:
					depth++
				case lexer.RPAREN, lexer.RBRACKET:
					depth--
				case lexer.PIPE:
					if depth == 0 && pipe < 0 {
						pipe = k
					}
				}
			}
			if pipe < 0 || pipe+1 >= end || toks[pipe+1].tok == lexer.GETLINE {
				continue
			}
			args := toks[i+1 : pipe]
			argsEnd := toks[pipe].off
			if len(args) > 1 && args[0].tok == lexer.LPAREN && matching(args, 0) == len(args)-1 {
				argsEnd = args[len(args)-1].off
				args = args[1 : len(args)-1]
			}
			var parts []string
			start := -1
			depth = 0
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
						parts = append(parts, src[start:a.off])
						start = -1
					}
				}
			}
			if start >= 0 {
				parts = append(parts, src[start:argsEnd])
			}
			cmd := strings.TrimSpace(src[toks[pipe+1].off:toks[end].off])
			var text string
			if t.tok == lexer.PRINTF {
				text = pwriteFunc + "(fflush(), " + cmd + ", sprintf(" + strings.Join(parts, ",") + "))"
			} else {
				if len(parts) == 0 {
					parts = []string{"$0"}
				}
				for k := range parts {
					parts[k] = "(" + strings.TrimSpace(parts[k]) + ")"
				}
				text = pwriteFunc + "(fflush(), " + cmd + ", " + strings.Join(parts, " OFS ") + " ORS)"
			}
			reps = append(reps, replacement{t.off, toks[end].off, text})
			i = end - 1
		}
	}
	if len(reps) == 0 {
		return src
	}
	return applyReplacements(src, reps)
}

// operandStart finds where the command of cmd | getline starts: the
// tokens before the pipe that bind tighter than it (strings, names,
// numbers, fields, calls, subscripts, arithmetic and concatenation), -1
// when there are none.
func operandStart(toks []token, pipe int) int {
	k := pipe - 1
	start := -1
	for k >= 0 {
		switch toks[k].tok {
		case lexer.RPAREN, lexer.RBRACKET:
			depth := 0
			for ; k >= 0; k-- {
				switch toks[k].tok {
				case lexer.RPAREN, lexer.RBRACKET:
					depth++
				case lexer.LPAREN, lexer.LBRACKET:
					depth--
				}
				if depth == 0 {
					break
				}
			}
			if k < 0 {
				return -1
			}
			start = k
			k--
			// the name or builtin the parentheses or brackets belong to
			if k >= 0 && (toks[k].tok == lexer.NAME || toks[k].tok >= lexer.FIRST_FUNC && toks[k].tok <= lexer.LAST_FUNC) {
				start = k
				k--
			}
		case lexer.STRING, lexer.NAME, lexer.NUMBER, lexer.DOLLAR, lexer.ADD, lexer.SUB, lexer.MUL, lexer.DIV,
			lexer.MOD, lexer.POW, lexer.INCR, lexer.DECR:
			start = k
			k--
		default:
			return start
		}
	}
	return start
}

// getlineVarEnd returns the index just past getline's variable starting
// at i (i itself when there is none), -1 when it is not a name, a
// subscripted name or a field with a simple index.
func getlineVarEnd(toks []token, i int) int {
	if i >= len(toks) {
		return -1
	}
	switch toks[i].tok {
	case lexer.NAME:
		if i+1 < len(toks) && toks[i+1].tok == lexer.LBRACKET {
			m := matching(toks, i+1)
			if m < 0 {
				return -1
			}
			return m + 1
		}
		return i + 1
	case lexer.DOLLAR:
		if i+1 >= len(toks) {
			return -1
		}
		switch toks[i+1].tok {
		case lexer.NUMBER, lexer.NAME:
			return i + 2
		case lexer.LPAREN:
			m := matching(toks, i+1)
			if m < 0 {
				return -1
			}
			return m + 1
		}
		return -1
	}
	return i
}
