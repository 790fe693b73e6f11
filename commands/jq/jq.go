// Package jq is jq(1) over gojq (github.com/itchyny/gojq). Inputs come from
// the shell's streams and the vfs; $ENV/env see the sandbox environment,
// never the host's; modules are not loadable. gojq keeps object keys sorted
// (jq keeps insertion order), which is the main visible difference.
package jq

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/itchyny/gojq"

	"github.com/warren-sandbox/warren/commands"
	"github.com/warren-sandbox/warren/commands/internal/textio"
)

// Register adds jq.
func Register(t commands.Table) { t.Register("jq", Jq) }

type options struct {
	null, raw, join, ascii, slurp, compact, sortKeys, exit, rawIn, tab, seq, raw0 bool
	indent                                                                        int
}

const helpHint = "Use jq --help for help with command-line options,\nor see the jq manpage, or online docs  at https://jqlang.github.io/jq\n"

// Jq is the jq command.
func Jq(ctx context.Context, inv *commands.Invocation) int {
	o := options{indent: 2}
	order := &keyOrder{}
	decodeOne := func(s string, v *any) error { return decodeText(s, v, order) }
	var filter string
	haveFilter := false
	var files []string
	var positional []any
	named := map[string]any{}
	var varNames []string
	var varValues []any
	var namedOrder []string
	setVar := func(name string, v any) {
		if _, dup := named[name]; !dup {
			namedOrder = append(namedOrder, name)
		}
		named[name] = v
		varNames = append(varNames, "$"+name)
		varValues = append(varValues, v)
	}
	usageErr := func(msg string) int {
		fmt.Fprintf(inv.Stderr, "jq: %s\n%s", msg, helpHint)
		return 2
	}
	args := inv.Args[1:]
	posMode := 0 // 0 files, 1 --args, 2 --jsonargs
	filterFile := ""
	for i := 0; i < len(args); i++ {
		a := args[i]
		need := func(n int) ([]string, bool) {
			if i+n >= len(args) {
				return nil, false
			}
			out := args[i+1 : i+1+n]
			i += n
			return out, true
		}
		if a == "--" {
			for _, rest := range args[i+1:] {
				if !haveFilter && filterFile == "" {
					filter, haveFilter = rest, true
					continue
				}
				if posMode == 0 {
					files = append(files, rest)
				} else if posMode == 1 {
					positional = append(positional, rest)
				} else {
					var v any
					if err := decodeText(rest, &v, order); err != nil {
						return usageErr("invalid JSON text passed to --jsonargs")
					}
					positional = append(positional, v)
				}
			}
			break
		}
		if len(a) > 1 && a[0] == '-' && !strings.HasPrefix(a, "--") {
			for _, c := range a[1:] {
				switch c {
				case 'n':
					o.null = true
				case 'r':
					o.raw = true
				case 'j':
					o.raw, o.join = true, true
				case 'a':
					o.ascii = true
				case 's':
					o.slurp = true
				case 'c':
					o.compact = true
				case 'S':
					o.sortKeys = true
				case 'e':
					o.exit = true
				case 'R':
					o.rawIn = true
				case 'C', 'M':
				case 'f':
					v, ok := need(1)
					if !ok {
						return usageErr("-f takes a parameter: (e.g. -f filename)")
					}
					filterFile = v[0]
				case 'h':
					fmt.Fprint(inv.Stdout, "Usage:\tjq [OPTIONS] FILTER [FILES...]\n")
					return 0
				case 'V':
					fmt.Fprintln(inv.Stdout, "jq-1.7.1 (gojq v0.12.20, warren)")
					return 0
				default:
					return usageErr(fmt.Sprintf("Unknown option: %s", a))
				}
			}
			continue
		}
		switch a {
		case "--null-input":
			o.null = true
		case "--raw-output":
			o.raw = true
		case "--join-output":
			o.raw, o.join = true, true
		case "--raw-output0":
			o.raw, o.raw0 = true, true
		case "--ascii-output":
			o.ascii = true
		case "--slurp":
			o.slurp = true
		case "--compact-output":
			o.compact = true
		case "--sort-keys":
			o.sortKeys = true
		case "--exit-status":
			o.exit = true
		case "--raw-input":
			o.rawIn = true
		case "--tab":
			o.tab = true
		case "--seq":
			o.seq = true
		case "--color-output", "--monochrome-output", "--unbuffered":
		case "--indent":
			v, ok := need(1)
			if !ok {
				return usageErr("--indent takes one parameter")
			}
			n, err := strconv.Atoi(v[0])
			if err != nil || n < 0 || n > 7 {
				return usageErr("Cannot indent more than 7 characters")
			}
			o.indent = n
		case "--from-file":
			v, ok := need(1)
			if !ok {
				return usageErr("--from-file takes a parameter")
			}
			filterFile = v[0]
		case "--arg":
			v, ok := need(2)
			if !ok {
				return usageErr("--arg takes two parameters (e.g. --arg varname value)")
			}
			setVar(v[0], v[1])
		case "--argjson":
			v, ok := need(2)
			if !ok {
				return usageErr("--argjson takes two parameters (e.g. --argjson varname text)")
			}
			var val any
			if err := decodeOne(v[1], &val); err != nil {
				return usageErr(fmt.Sprintf("invalid JSON text passed to --argjson"))
			}
			setVar(v[0], val)
		case "--slurpfile", "--rawfile":
			v, ok := need(2)
			if !ok {
				return usageErr(a + " takes two parameters (e.g. " + a + " varname filename)")
			}
			f, err := inv.Open(v[1])
			if err != nil {
				fmt.Fprintf(inv.Stderr, "jq: error: Could not open %s: %s\n", v[1], commands.Strerror(err))
				return 2
			}
			data, err := io.ReadAll(f)
			f.Close()
			if err != nil {
				fmt.Fprintf(inv.Stderr, "jq: error: Could not read %s: %s\n", v[1], commands.Strerror(err))
				return 2
			}
			if a == "--rawfile" {
				setVar(v[0], string(data))
				continue
			}
			var all []any
			dec := &decoder{r: bufio.NewReader(bytes.NewReader(data)), order: order}
			for {
				val, err := dec.Decode()
				if err == io.EOF {
					break
				} else if err != nil {
					fmt.Fprintf(inv.Stderr, "jq: Bad JSON in --slurpfile %s %s: %v\n", v[0], v[1], err)
					return 2
				}
				all = append(all, val)
			}
			if all == nil {
				all = []any{}
			}
			setVar(v[0], all)
		case "--args":
			posMode = 1
		case "--jsonargs":
			posMode = 2
		case "--stream", "--stream-errors":
			return usageErr("--stream is not supported")
		case "--help":
			fmt.Fprint(inv.Stdout, "Usage:\tjq [OPTIONS] FILTER [FILES...]\n")
			return 0
		case "--version":
			fmt.Fprintln(inv.Stdout, "jq-1.7.1")
			return 0
		default:
			if strings.HasPrefix(a, "--") {
				return usageErr(fmt.Sprintf("Unknown option: %s", a))
			}
			if !haveFilter && filterFile == "" {
				filter, haveFilter = a, true
				continue
			}
			switch posMode {
			case 0:
				files = append(files, a)
			case 1:
				positional = append(positional, a)
			default:
				var v any
				if err := decodeOne(a, &v); err != nil {
					return usageErr("invalid JSON text passed to --jsonargs")
				}
				positional = append(positional, v)
			}
		}
	}
	if filterFile != "" {
		f, err := inv.Open(filterFile)
		if err != nil {
			fmt.Fprintf(inv.Stderr, "jq: error: Could not open %s: %s\n", filterFile, commands.Strerror(err))
			return 2
		}
		data, _ := io.ReadAll(f)
		f.Close()
		if haveFilter {
			// With -f the first positional word is an input file.
			files = append([]string{filter}, files...)
		}
		filter, haveFilter = string(data), true
	}
	if !haveFilter {
		fmt.Fprint(inv.Stderr, "Usage:\tjq [OPTIONS] FILTER [FILES...]\n")
		return 2
	}
	if positional == nil {
		positional = []any{}
	}
	namedCopy := map[string]any{}
	for k, v := range named {
		namedCopy[k] = v
	}
	argsVal := map[string]any{"positional": positional, "named": namedCopy}
	order.remember(argsVal, []string{"positional", "named"}) // jq's order
	order.remember(namedCopy, namedOrder)
	varNames = append(varNames, "$ARGS")
	varValues = append(varValues, argsVal)

	if err := checkFilter(filter); err != nil {
		st, _ := inv.LimitExceeded(err)
		return st
	}
	q, err := gojq.Parse(filter)
	if err != nil {
		fmt.Fprintf(inv.Stderr, "jq: error: %s\njq: 1 compile error\n", err)
		return 3
	}
	order.addLiterals(q)
	renameOrdered(q)
	rewriteMul(q)
	mem := inv.Memory()
	res := mem.Reserve()
	defer res.Close()
	met := newMeter(ctx, mem, res)
	env := append([]string(nil), inv.Env...)
	in := &inputs{inv: inv, ctx: ctx, files: files, raw: o.rawIn, order: order, slurping: o.slurp}
	if inv.Sys != nil {
		in.limit = inv.Sys.MaxMemoryBytes
	}
	// The command's own limit bounds an input value's text; the shared
	// budget bounds its decoded form, which the meter charges.
	in.costLimit = mem.Max()
	code, err := gojq.Compile(q, append(orderedOptions(order, &o, ctx, res),
		gojq.WithVariables(varNames),
		gojq.WithEnvironLoader(func() []string { return env }),
		gojq.WithInputIter(in),
		gojq.WithFunction(mulFunc, 2, 2, func(_ any, args []any) any { return mul(res, args[0], args[1]) }),
	)...)
	if err != nil {
		fmt.Fprintf(inv.Stderr, "jq: error: %s\njq: 1 compile error\n", err)
		return 3
	}
	sink := &textio.ErrWriter{W: inv.Stdout}
	out := textio.NewWriter(sink)
	defer textio.PutWriter(out)
	enc := &encoder{w: out, opts: &o, order: order, guard: ctx.Err}
	status := 0
	var last any
	produced := false
	var inCost int64 // the meter's estimate of the input value, from the decoder
	run := func(v any) bool {
		iter := code.RunWithContext(met, v, varValues...)
		met.attach(iter, v, inCost)
		for {
			x, ok := iter.Next()
			if !ok {
				return true
			}
			if err, isErr := x.(error); isErr {
				var halt *gojq.HaltError
				if errors.As(err, &halt) {
					if hv := halt.Value(); hv != nil {
						out.Flush()
						if s, ok := hv.(string); ok {
							fmt.Fprint(inv.Stderr, s)
						} else {
							b, _ := gojq.Marshal(hv)
							fmt.Fprintf(inv.Stderr, "%s\n", b)
						}
					}
					status = halt.ExitCode()
					return false
				}
				if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
					status = 130
					return false
				}
				if errors.Is(err, commands.ErrMemoryLimit) || errors.Is(err, commands.ErrDepth) {
					out.Flush()
					status, _ = inv.LimitExceeded(err)
					return false
				}
				out.Flush()
				fmt.Fprintf(inv.Stderr, "jq: error (at %s): %s\n", in.position(), errText(err))
				status = 5
				continue
			}
			produced, last = true, x
			enc.emit(x)
			if sink.Err != nil {
				return false // the reader is gone
			}
			if enc.err != nil {
				status = 130
				return false
			}
		}
	}
	switch {
	case o.null:
		run(nil)
	case o.slurp:
		var all any
		if o.rawIn {
			var b strings.Builder
			for {
				chunk, ok := in.rawAll()
				if !ok {
					break
				}
				b.WriteString(chunk)
			}
			all = b.String()
		} else {
			arr := []any{}
			for {
				v, ok := in.Next()
				if !ok {
					break
				}
				if err, isErr := v.(error); isErr {
					in.failed = err
					break
				}
				arr = append(arr, v)
				inCost += in.cost() + nodeCost
			}
			all = arr
		}
		if in.failed == nil {
			run(all)
		}
	default:
		for {
			v, ok := in.Next()
			if !ok {
				break
			}
			if err, isErr := v.(error); isErr {
				in.failed = err
				break
			}
			inCost = in.cost()
			if !run(v) {
				break
			}
		}
	}
	if err := out.Flush(); textio.BrokenPipe(err) || textio.BrokenPipe(sink.Err) {
		return 141
	}
	if in.failed == errTooBig {
		max := in.limit
		if in.dec != nil && in.dec.overBudget {
			max = in.costLimit
		}
		in.failed = &commands.MemoryLimitError{Max: max}
	}
	if st, ok := inv.LimitExceeded(in.failed); ok {
		return st
	}
	if in.failed != nil {
		var pe *parseError
		if errors.As(in.failed, &pe) {
			fmt.Fprintf(inv.Stderr, "jq: parse error: %s\n", pe.err)
		} else {
			fmt.Fprintf(inv.Stderr, "jq: error (at %s): %s\n", in.position(), in.failed)
		}
		return 2
	}
	if in.openFailed && status == 0 {
		status = 2
	}
	if status != 0 {
		return status
	}
	if o.exit {
		if !produced {
			return 4
		}
		if last == nil || last == false {
			return 1
		}
	}
	return 0
}

func unwrap(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

func errText(err error) string {
	if v, ok := err.(interface{ Value() any }); ok {
		if s, ok := v.Value().(string); ok {
			return s
		}
		b, _ := gojq.Marshal(v.Value())
		return string(b) + " (not a string)"
	}
	return err.Error()
}

// decodeText parses exactly one JSON value (for --argjson, --jsonargs).
func decodeText(s string, v *any, order *keyOrder) error {
	d := &decoder{r: bufio.NewReader(strings.NewReader(s)), order: order}
	val, err := d.Decode()
	if err != nil {
		return err
	}
	if _, err := d.Decode(); err != io.EOF {
		return errors.New("trailing data")
	}
	*v = val
	return nil
}

// parseError is invalid JSON in the input (jq 1.7: "jq: parse error: ...", status 2).
type parseError struct{ err error }

func (e *parseError) Error() string { return e.err.Error() }

// inputs is the stream of input values (also gojq's input/inputs).
type inputs struct {
	inv        *commands.Invocation
	ctx        context.Context
	files      []string
	raw        bool
	idx        int
	order      *keyOrder
	limit      int64 // sandbox memory limit for input values' text (0 = none)
	costLimit  int64 // the shared budget, for their decoded form (0 = none)
	slurping   bool  // -s: the limit applies to all values together
	slurped    int64
	dec        *decoder
	lines      *textio.LineReader
	src        io.Reader
	name       string
	failed     error
	openFailed bool
	started    bool
	pending    string // -R: partial line carried across files
}

func (in *inputs) position() string {
	name := in.name
	if name == "" || name == "-" {
		name = "<stdin>"
	}
	return name + ":0"
}

// reader returns a reader over every input in turn (jq treats them as one stream).
func (in *inputs) reader() io.Reader {
	if in.src != nil {
		return in.src
	}
	names := in.files
	if len(names) == 0 {
		names = []string{"-"}
	}
	var rs []io.Reader
	for _, n := range names {
		rs = append(rs, &lazyFile{in: in, name: n})
	}
	in.src = textio.WithContext(in.ctx, io.MultiReader(rs...))
	return in.src
}

type lazyFile struct {
	in   *inputs
	name string
	f    io.ReadCloser
	done bool
}

func (l *lazyFile) Read(p []byte) (int, error) {
	if l.done {
		return 0, io.EOF
	}
	if l.f == nil {
		f, err := l.in.inv.Open(l.name)
		if err != nil {
			fmt.Fprintf(l.in.inv.Stderr, "jq: error: Could not open file %s: %s\n", l.name, commands.Strerror(unwrap(err)))
			l.in.openFailed = true
			l.done = true
			return 0, io.EOF
		}
		l.f = f
		l.in.name = l.name
	}
	n, err := l.f.Read(p)
	if err == io.EOF {
		l.f.Close()
		l.done = true
	}
	return n, err
}

func (in *inputs) Next() (any, bool) {
	if in.failed != nil {
		return nil, false
	}
	if in.raw {
		if in.lines == nil {
			in.lines = &textio.LineReader{R: textio.NewReader(in.reader()), Delim: '\n'}
		}
		line, _, err := in.lines.Next()
		if err != nil {
			return nil, false
		}
		return string(line), true
	}
	if in.dec == nil {
		in.dec = &decoder{r: bufio.NewReaderSize(in.reader(), textio.BufSize), order: in.order, limit: in.limit, costLimit: in.costLimit}
	}
	v, err := in.dec.Decode()
	if err != nil {
		if err == io.EOF {
			return nil, false
		}
		if err == errTooBig {
			return err, true
		}
		return &parseError{err}, true
	}
	if in.slurped += in.dec.consumed; in.slurping && in.limit > 0 && in.slurped > in.limit {
		return errTooBig, true
	}
	return v, true
}

// cost is the decoder's estimate for the last value (0 for raw input: the
// meter then walks it).
func (in *inputs) cost() int64 {
	if in.dec == nil {
		return 0
	}
	return in.dec.cost
}

func (in *inputs) rawAll() (string, bool) {
	if in.started {
		return "", false
	}
	in.started = true
	data, _ := io.ReadAll(in.reader())
	return string(data), true
}

// encoder prints values as jq does: 2-space indent, or compact with -c.
type encoder struct {
	w interface {
		io.Writer
		io.ByteWriter
		io.StringWriter
	}
	opts  *options
	order *keyOrder
	depth int
	// guard, when set, is asked every guardEvery values whether to go on
	// (cancellation, the budget): a value shared many times over prints
	// exponentially larger than it is, and the encoder runs inside one
	// gojq instruction or the output loop, where nothing else checks.
	guard func() error
	n     int
	err   error
}

const guardEvery = 1024

func (e *encoder) emit(v any) {
	if e.opts.seq {
		e.w.WriteByte(0x1e)
	}
	if s, ok := v.(string); ok && e.opts.raw {
		e.w.WriteString(s)
	} else {
		e.value(v)
	}
	switch {
	case e.opts.raw0:
		e.w.WriteByte(0)
	case !e.opts.join:
		e.w.WriteByte('\n')
	}
}

func (e *encoder) newline() {
	if e.opts.compact {
		return
	}
	e.w.WriteByte('\n')
	if e.opts.tab {
		for i := 0; i < e.depth; i++ {
			e.w.WriteByte('\t')
		}
		return
	}
	for i := 0; i < e.depth*e.opts.indent; i++ {
		e.w.WriteByte(' ')
	}
}

func (e *encoder) scalar(v any) {
	b, _ := gojq.Marshal(v)
	if e.opts.ascii {
		b = asciiEscape(b)
	}
	e.w.Write(b)
}

func (e *encoder) value(v any) {
	if e.err != nil {
		return
	}
	if e.n++; e.guard != nil && e.n%guardEvery == 0 {
		if e.err = e.guard(); e.err != nil {
			return
		}
	}
	compact := e.opts.compact || (e.opts.indent == 0 && !e.opts.tab)
	switch x := v.(type) {
	case []any:
		if len(x) == 0 {
			e.w.WriteString("[]")
			return
		}
		e.w.WriteByte('[')
		e.depth++
		for i, el := range x {
			if i > 0 {
				e.w.WriteByte(',')
			}
			if !compact {
				e.newline()
			}
			e.value(el)
		}
		e.depth--
		if !compact {
			e.newline()
		}
		e.w.WriteByte(']')
	case map[string]any:
		if len(x) == 0 {
			e.w.WriteString("{}")
			return
		}
		var keys []string
		if e.opts.sortKeys {
			keys = (*keyOrder)(nil).of(x)
		} else {
			keys = e.order.of(x)
		}
		e.w.WriteByte('{')
		e.depth++
		for i, k := range keys {
			if i > 0 {
				e.w.WriteByte(',')
			}
			if !compact {
				e.newline()
			}
			e.scalar(k)
			e.w.WriteByte(':')
			if !compact {
				e.w.WriteByte(' ')
			}
			e.value(x[k])
		}
		e.depth--
		if !compact {
			e.newline()
		}
		e.w.WriteByte('}')
	default:
		e.scalar(v)
	}
}

// asciiEscape rewrites non-ASCII runes in encoded JSON as \uXXXX (jq -a).
func asciiEscape(b []byte) []byte {
	ascii := true
	for _, c := range b {
		if c >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	if ascii {
		return b
	}
	var out []byte
	for _, r := range string(b) {
		switch {
		case r < utf8.RuneSelf:
			out = append(out, byte(r))
		case r > 0xffff:
			r -= 0x10000
			out = fmt.Appendf(out, `\u%04x\u%04x`, 0xd800+(r>>10), 0xdc00+(r&0x3ff))
		default:
			out = fmt.Appendf(out, `\u%04x`, r)
		}
	}
	return out
}
