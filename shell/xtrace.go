package shell

import (
	"io"
	"strings"

	"mvdan.cc/sh/v3/syntax"

	"github.com/warren-sandbox/warren/commands/bashfmt"
)

// set -x: the trace lines of simple commands, assignments and declaration
// builtins (compound commands trace their headers where they run).

func (r *runner) xtraceAssigns(pre string, as []*syntax.Assign) {
	for _, a := range as {
		v := r.lookup(a.Name.Value)
		if a.Array != nil {
			// arr=(1 "2 3"): bash shows the compound assignment as written
			op := "="
			if a.Append {
				op = "+="
			}
			r.xtraceWrite(pre, a.Name.Value+op+arrayText(a.Array))
			continue
		}
		val := ""
		if v != nil {
			val = v.str()
		}
		r.xtraceWrite(pre, xtraceAssignText(a.Name.Value, val))
	}
}

// xtraceAssignText is NAME=VALUE as bash traces it: the value quoted, an
// empty one bare (x=, y='a b', z='~').
func xtraceAssignText(name, val string) string {
	if val != "" {
		val = bashfmt.QuoteXtrace(val)
	}
	return name + "=" + val
}

func (r *runner) xtraceAssign(name, val string) { r.xtraceText(xtraceAssignText(name, val)) }

func (r *runner) xtrace(args []string) {
	var b strings.Builder
	for i, a := range args {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(bashfmt.QuoteXtrace(a))
	}
	r.xtraceText(b.String())
}

// xtraceText writes one trace line, prefixed as xtracePrefix says.
func (r *runner) xtraceText(text string) { r.xtraceWrite(r.xtracePrefix(), text) }

func (r *runner) xtraceWrite(pre, text string) {
	io.WriteString(r.stderr(), pre+text+"\n")
}

// xtracePrefix is PS4 expanded (parameters, command substitution,
// arithmetic, with tracing off meanwhile), its first character repeated
// once more per level of eval, source and command substitution the
// command runs in, as bash's "+ eval 'echo x'" then "++ echo x".
func (r *runner) xtracePrefix() string {
	ps4 := "+ "
	if v := r.lookup("PS4"); v != nil {
		ps4 = v.str()
		if strings.ContainsAny(ps4, "$`") {
			ps4 = r.expandPS4(ps4)
		}
	}
	if ps4 == "" || r.traceLevel == 0 {
		return ps4
	}
	return strings.Repeat(ps4[:1], min(r.traceLevel, 64)) + ps4
}

// expandPS4 expands PS4 as a double-quoted word; a value that does not
// parse stays as it is.
func (r *runner) expandPS4(ps4 string) string {
	ws, err := parseWords(`"` + strings.ReplaceAll(ps4, `"`, `\"`) + `"`)
	if err != nil || len(ws) != 1 {
		return ps4
	}
	r.opts[optXtrace] = false
	defer func() { r.opts[optXtrace] = true }()
	st := r.status
	fs, err := r.expandWord(ws[0], modeLiteral)
	r.status = st
	if err != nil || len(fs) == 0 {
		return ps4
	}
	return fs[0].str()
}

// xtraceDecl traces declare & co. as bash does: the command's words after
// expansion, each NAME=VALUE quoted as one word (+ local 'y=a b' z). A
// compound value is shown as written.
func (r *runner) xtraceDecl(variant string, flags []string, operands []*syntax.Assign) {
	words := append([]string{variant}, flags...)
	for _, as := range operands {
		if as.Name == nil {
			continue
		}
		w := as.Name.Value
		if as.Index != nil {
			w += "[" + arithText(as.Index) + "]"
		}
		op := "="
		if as.Append {
			op = "+="
		}
		switch {
		case as.Array != nil:
			w += op + arrayText(as.Array)
		case as.Value != nil && len(as.Value.Parts) == 1:
			if v, ok := as.Value.Parts[0].(*syntax.SglQuoted); ok {
				w += op + v.Value
			}
		case !as.Naked:
			w += op
		}
		words = append(words, w)
	}
	var b strings.Builder
	for i, w := range words {
		if i > 0 {
			b.WriteByte(' ')
		}
		if i == 0 || strings.Contains(w, "=(") {
			b.WriteString(w)
			continue
		}
		b.WriteString(bashfmt.QuoteXtrace(w))
	}
	r.xtraceText(b.String())
	if variant != "export" && variant != "readonly" {
		return
	}
	// the special builtins' assignments are traced again, as assignments
	for _, as := range operands {
		if as.Name == nil || as.Naked || as.Index != nil || as.Array != nil {
			continue
		}
		val := ""
		if as.Value != nil && len(as.Value.Parts) == 1 {
			if v, ok := as.Value.Parts[0].(*syntax.SglQuoted); ok {
				val = v.Value
			}
		}
		r.xtraceAssign(as.Name.Value, val)
	}
}
