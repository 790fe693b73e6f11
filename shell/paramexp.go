package shell

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/warren-sandbox/warren/commands/bashfmt"
	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/pattern"
	"mvdan.cc/sh/v3/syntax"
)

// pval is a parameter's value before operators apply.
type pval struct {
	name   string // resolved variable name ("" for specials)
	set    bool
	vals   []string
	isList bool // from @ or * (or a[@], a[*])
	star   bool // * form: joined with IFS[0] when quoted
	isArr  bool
	v      *Var
	key    string // element key for assignments
}

func badSubst(pe *syntax.ParamExp) error {
	return &cmdError{msg: wordText(&syntax.Word{Parts: []syntax.WordPart{pe}}) + ": bad substitution"}
}

// cmdError fails the current command (status 1) without ending the shell.
type cmdError struct{ msg string }

func (e *cmdError) Error() string { return e.msg }

// lineError is an expansion error after which bash abandons the command
// line being run, through any functions, and reads the next one (an
// indirect expansion naming nothing).
type lineError struct{ msg string }

func (e *lineError) Error() string { return e.msg }

// lookupParam resolves name[index] to its values.
func (r *runner) lookupParam(name string, index syntax.ArithmExpr, pe *syntax.ParamExp) (pval, error) {
	pv := pval{name: name}
	if s, ok := r.dynValue(name); ok {
		pv.set, pv.vals, pv.name = true, []string{s}, ""
		if index != nil {
			return r.varValues(pv, &Var{Set: true, Kind: expand.String, Str: s}, index, pe)
		}
		return pv, nil
	}
	if r.dirstackSpecial(name) {
		return r.varValues(pv, &Var{Set: true, Kind: expand.Indexed, List: r.dirstackList()}, index, pe)
	}
	switch name {
	case "@", "*":
		pv.set = true
		pv.vals = r.params
		pv.isList = true
		pv.star = name == "*"
		pv.name = ""
		return pv, nil
	case "PIPESTATUS":
		list := r.pipeMulti
		if list == nil {
			list = []int{r.pipeOne}
		}
		l := make([]string, len(list))
		for i, n := range list {
			l[i] = strconv.Itoa(n)
		}
		return r.varValues(pv, &Var{Set: true, Kind: expand.Indexed, List: l}, index, pe)
	case "SHELLOPTS", "BASHOPTS":
		if v := r.lookup(name); v == nil {
			pv.set = true
			pv.vals = []string{r.shellopts(name == "BASHOPTS")}
			return pv, nil
		}
	case "#", "?", "$", "!", "-", "0", "_", "BASHPID", "PPID", "LINENO", "FUNCNAME", "BASH_SOURCE", "BASH_LINENO", "BASH_COMMAND", "BASH_SUBSHELL":
		if name == "LINENO" {
			if v := r.lookup(name); v != nil && !v.Set && v.Attr == 0 {
				return pv, nil
			}
		}
		ev := env{r}.Get(name)
		if !ev.IsSet() {
			if w, ok := index.(*syntax.Word); ok && (w.Lit() == "@" || w.Lit() == "*") {
				pv.isList, pv.star = true, w.Lit() == "*"
			}
			return pv, nil
		}
		if ev.Kind == expand.Indexed {
			tmp := &Var{Set: true, Kind: expand.Indexed, List: ev.List}
			return r.varValues(pv, tmp, index, pe)
		}
		pv.set = true
		pv.vals = []string{ev.Str}
		pv.name = ""
		if index != nil {
			tmp := &Var{Set: true, Kind: expand.String, Str: ev.Str}
			return r.varValues(pv, tmp, index, pe)
		}
		return pv, nil
	}
	if name != "" && name[0] >= '0' && name[0] <= '9' {
		n, err := strconv.Atoi(name)
		if err != nil {
			return pv, badSubst(pe)
		}
		pv.name = ""
		if n >= 1 && n <= len(r.params) {
			pv.set = true
			pv.vals = []string{r.params[n-1]}
		}
		return pv, nil
	}
	rn := r.resolve(name)
	if rn != name {
		if i := strings.IndexByte(rn, '['); i > 0 && strings.HasSuffix(rn, "]") && index == nil {
			idx := rn[i+1 : len(rn)-1]
			rn = rn[:i]
			var ix syntax.ArithmExpr = litWord(idx)
			if idx != "@" && idx != "*" && r.isAssoc(rn) {
				ix = keyWord(idx)
			} else if idx != "@" && idx != "*" {
				if e, err := parseArith(idx); err == nil {
					ix = e
				}
			}
			index = ix
		}
		if rn == "@" || rn == "*" {
			return r.lookupParam(rn, index, pe)
		}
	}
	pv.name = rn
	v := r.lookup(rn)
	if v == nil {
		if index != nil {
			if w, ok := index.(*syntax.Word); ok && (w.Lit() == "@" || w.Lit() == "*") {
				pv.isList = true
				pv.star = w.Lit() == "*"
			} else if !r.isAssoc(rn) {
				n, err := r.arith(index)
				if err != nil {
					return pv, err
				}
				pv.key = strconv.FormatInt(n, 10)
			} else if k, ok := r.indexLiteral(index); ok {
				pv.key = k
			}
		}
		return pv, nil
	}
	return r.varValues(pv, v, index, pe)
}

func (r *runner) varValues(pv pval, v *Var, index syntax.ArithmExpr, pe *syntax.ParamExp) (pval, error) {
	pv.v = v
	pv.isArr = v.Kind == expand.Indexed || v.Kind == expand.Associative
	if index == nil {
		switch v.Kind {
		case expand.Indexed:
			s, ok := v.index(0)
			pv.set, pv.vals = ok, []string{s}
		case expand.Associative:
			s, ok := v.Map["0"]
			pv.set, pv.vals = ok, []string{s}
		default:
			pv.set = v.Set
			pv.vals = []string{v.Str}
		}
		return pv, nil
	}
	if w, ok := index.(*syntax.Word); ok {
		switch w.Lit() {
		case "@", "*":
			pv.isList = true
			pv.star = w.Lit() == "*"
			pv.vals = v.values()
			pv.set = v.Set && len(pv.vals) > 0
			if v.Kind == expand.String && !v.Set {
				pv.vals = nil
			}
			return pv, nil
		}
	}
	if v.Kind == expand.Associative {
		k, ok := r.indexLiteral(index)
		if !ok {
			return pv, errSilent
		}
		s, ok := v.Map[k]
		pv.set, pv.vals, pv.key = ok, []string{s}, k
		return pv, nil
	}
	n, err := r.arith(index)
	if err != nil {
		return pv, err
	}
	i := int(n)
	if i < 0 {
		i += v.maxIndex() + 1
		if i < 0 {
			n := pv.name
			if pe != nil && pe.Param != nil {
				n = pe.Param.Value
			}
			r.errf("%s: bad array subscript", n) // bash names the array alone here
			pv.set, pv.vals = false, []string{""}
			return pv, nil
		}
	}
	s, ok := v.index(i)
	pv.set, pv.vals, pv.key = ok, []string{s}, strconv.Itoa(i)
	return pv, nil
}

func (r *runner) bashLineno() []string {
	out := make([]string, len(r.funcNames))
	for i := range out {
		out[i] = "0"
	}
	return out
}

// param expands one ${...} into the word being built.
func (x *wexp) param(pe *syntax.ParamExp, quoted bool) error {
	r := x.r
	if pe.Param == nil {
		return badSubst(pe)
	}
	if err := badParamExp(pe); err != nil {
		return err
	}
	if isEmptySub(pe.Index) {
		// bash abandons the line for ${b[]}
		return &lineError{msg: unEmptySub(wordText(&syntax.Word{Parts: []syntax.WordPart{pe}})) + ": bad substitution"}
	}
	name := pe.Param.Value
	index := pe.Index
	// ${!prefix*} ${!prefix@}
	if pe.Names != 0 {
		names := r.varNames(name)
		return x.emitList(names, pe.Names == syntax.NamesPrefix, quoted)
	}
	if pe.Excl {
		if index != nil && pe.Slice == nil && pe.Exp == nil && pe.Repl == nil {
			if w, ok := index.(*syntax.Word); ok && (w.Lit() == "@" || w.Lit() == "*") {
				v := r.lookupRef(name)
				if v == nil {
					// the shell's own arrays (FUNCNAME, PIPESTATUS, DIRSTACK...)
					if pv, err := r.lookupParam(name, index, pe); err == nil && pv.v != nil && pv.set {
						v = pv.v
					}
				}
				var keys []string
				if v != nil {
					keys = v.keys()
				}
				return x.emitList(keys, w.Lit() == "*", quoted)
			}
		}
		// a nameref: ${!ref} is the name it points to
		if v := r.lookup(name); v != nil && v.Attr&attrNameref != 0 && index == nil {
			if !v.Set {
				return x.emitScalar("", quoted)
			}
			return x.emitScalar(v.Str, quoted)
		}
		pv, err := r.lookupParam(name, index, pe)
		if err != nil {
			return err
		}
		target := strings.Join(pv.vals, " ")
		if pv.isList {
			ifs := r.ifsValue()
			if pv.star && ifs != "" {
				target = strings.Join(pv.vals, ifs[:1])
			}
		}
		if !pv.set || len(pv.vals) == 0 {
			if r.opts[optNounset] && !overridesUnset(pe) {
				return &exitError{msg: name + ": unbound variable"}
			}
			if !pv.set && syntax.ValidName(name) && r.lookup(name) == nil {
				// no such variable, whatever the operator
				return &lineError{msg: name + ": invalid indirect expansion"}
			}
			// declared without a value (or an empty array, an unset
			// positional parameter): nothing, and no error
			return x.applyOps(pe, pval{}, quoted)
		}
		tname, tidx, ok := splitRef(target)
		if !ok {
			return &lineError{msg: target + ": invalid variable name"}
		}
		pv2, err := r.lookupParam(tname, tidx, pe)
		if err != nil {
			return err
		}
		return x.applyOps(pe, pv2, quoted)
	}
	pv, err := r.lookupParam(name, index, pe)
	if err != nil {
		return err
	}
	return x.applyOps(pe, pv, quoted)
}

// splitRef parses an indirection target such as "x", "a[1]", "a[@]", "@", "1".
func splitRef(s string) (string, syntax.ArithmExpr, bool) {
	if i := strings.IndexByte(s, '['); i > 0 && strings.HasSuffix(s, "]") {
		name, idx := s[:i], s[i+1:len(s)-1]
		if !syntax.ValidName(name) {
			return "", nil, false
		}
		if idx == "@" || idx == "*" {
			return name, litWord(idx), true
		}
		return name, keyWord(idx), true
	}
	if syntax.ValidName(s) || s == "@" || s == "*" || s == "#" || s == "?" || s == "$" || s == "!" || s == "-" {
		return s, nil, true
	}
	if _, err := strconv.Atoi(s); err == nil {
		return s, nil, true
	}
	return "", nil, false
}

func overridesUnset(pe *syntax.ParamExp) bool {
	if pe.Exp == nil {
		return false
	}
	switch pe.Exp.Op {
	case syntax.DefaultUnset, syntax.DefaultUnsetOrNull, syntax.AlternateUnset, syntax.AlternateUnsetOrNull,
		syntax.AssignUnset, syntax.AssignUnsetOrNull, syntax.ErrorUnset, syntax.ErrorUnsetOrNull:
		return true
	}
	return false
}

func (r *runner) varNames(prefix string) []string {
	seen := map[string]bool{}
	for s := r.vars; s != nil; s = s.parent {
		for k, v := range s.vars {
			if strings.HasPrefix(k, prefix) && (v.Set || v.Kind != expand.String) {
				seen[k] = true
			}
		}
	}
	out := make([]string, 0, len(seen))
	for k := range seen {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func (x *wexp) emitScalar(s string, quoted bool) error {
	if quoted || x.mode == modeDoc {
		x.add(s, true)
	} else if x.mode == modePattern {
		x.add(s, false)
	} else {
		x.addSplit(s)
	}
	return nil
}

func (x *wexp) emitList(vals []string, star, quoted bool) error {
	if x.mode != modeFields {
		sep := " "
		if star {
			ifs := x.r.ifsValue()
			sep = ""
			if ifs != "" {
				_, n := utf8.DecodeRuneInString(ifs)
				sep = ifs[:n]
			}
		}
		return x.emitScalar(strings.Join(vals, sep), quoted)
	}
	if quoted {
		if star {
			ifs := x.r.ifsValue()
			sep := ""
			if ifs != "" {
				_, n := utf8.DecodeRuneInString(ifs)
				sep = ifs[:n]
			}
			x.add(strings.Join(vals, sep), true)
			return nil
		}
		for i, v := range vals {
			if i > 0 {
				x.endField(true)
			}
			x.add(v, true)
		}
		return nil
	}
	// Unquoted $@ and $*: joined with the first IFS character, then split.
	ifs := x.r.ifsValue()
	if ifs == "" {
		for i, v := range vals {
			if i > 0 {
				x.endField(false)
			}
			x.add(v, false)
		}
		return nil
	}
	_, n := utf8.DecodeRuneInString(ifs)
	x.addSplit(strings.Join(vals, ifs[:n]))
	return nil
}

func (x *wexp) emit(pv pval, quoted bool) error {
	if pv.isList {
		return x.emitList(pv.vals, pv.star, quoted)
	}
	s := ""
	if len(pv.vals) > 0 {
		s = pv.vals[0]
	}
	return x.emitScalar(s, quoted)
}

// applyOps applies the operators of a ${...} to pv and emits the result.
func (x *wexp) applyOps(pe *syntax.ParamExp, pv pval, quoted bool) error {
	r := x.r
	name := pe.Param.Value
	if r.opts[optNounset] && !pv.set && !overridesUnset(pe) && !(pv.isList && pv.name == "") {
		if !(pv.isList && pe.Length) && !(pv.isList && pv.v != nil) {
			n := name
			if pe.Index != nil && !pv.isList {
				n += "[" + arithText(pe.Index) + "]"
			}
			return &exitError{msg: n + ": unbound variable"}
		}
	}
	if pe.Length {
		if pv.isList {
			return x.emitScalar(strconv.Itoa(len(pv.vals)), quoted)
		}
		s := ""
		if len(pv.vals) > 0 {
			s = pv.vals[0]
		}
		return x.emitScalar(strconv.Itoa(utf8.RuneCountInString(s)), quoted)
	}
	if pe.Slice != nil {
		if err := r.slice(pe, &pv); err != nil {
			return err
		}
	}
	if pe.Repl != nil {
		repl := *pe.Repl
		if repl.All && (repl.Orig == nil || len(repl.Orig.Parts) == 0) && repl.With != nil {
			// ${x////c}: bash reads the pattern as "/"
			if l, ok := repl.With.Parts[0].(*syntax.Lit); ok && strings.HasPrefix(l.Value, "/") {
				nl := *l
				nl.Value = l.Value[1:]
				repl.Orig = litWord("\\/")
				repl.With = &syntax.Word{Parts: append([]syntax.WordPart{&nl}, repl.With.Parts[1:]...)}
			}
		}
		pe = &syntax.ParamExp{Param: pe.Param, Repl: &repl, Index: pe.Index, Exp: pe.Exp}
		pat := ""
		if pe.Repl.Orig != nil {
			var ok bool
			pat, ok = r.pattern(pe.Repl.Orig)
			if !ok {
				return errSilent
			}
		}
		with := ""
		if pe.Repl.With != nil {
			var ok bool
			with, ok = r.literal(pe.Repl.With)
			if !ok {
				return errSilent
			}
		}
		out := make([]string, len(pv.vals))
		for i, s := range pv.vals {
			if pat == toggleAll || pat == toggleFirst {
				out[i] = toggleCase(s, pat == toggleAll) // see rewriteToggles
				continue
			}
			out[i] = r.replace(s, pat, with, pe.Repl.All)
		}
		pv.vals = out
	}
	if pe.Exp == nil {
		return x.emit(pv, quoted)
	}
	op := pe.Exp.Op
	null := !pv.set
	if !null {
		if pv.isList {
			null = len(pv.vals) == 0 || (len(pv.vals) == 1 && pv.vals[0] == "")
			if pv.star && !null && len(pv.vals) > 0 {
				null = strings.Join(pv.vals, "") == "" && len(pv.vals) == 1
			}
		} else {
			null = len(pv.vals) == 0 || pv.vals[0] == ""
		}
	}
	unset := !pv.set || (pv.isList && len(pv.vals) == 0)
	switch op {
	case syntax.DefaultUnset, syntax.DefaultUnsetOrNull:
		if (op == syntax.DefaultUnset && unset) || (op == syntax.DefaultUnsetOrNull && null) {
			return x.subWord(pe.Exp.Word, quoted)
		}
		return x.emit(pv, quoted)
	case syntax.AlternateUnset, syntax.AlternateUnsetOrNull:
		if (op == syntax.AlternateUnset && unset) || (op == syntax.AlternateUnsetOrNull && null) {
			if quoted {
				x.add("", true)
			}
			return nil
		}
		return x.subWord(pe.Exp.Word, quoted)
	case syntax.AssignUnset, syntax.AssignUnsetOrNull:
		if (op == syntax.AssignUnset && unset) || (op == syntax.AssignUnsetOrNull && null) {
			val, ok := r.literal(pe.Exp.Word)
			if !ok {
				return errSilent
			}
			if pv.name == "" {
				return &exitError{msg: "$" + name + ": cannot assign in this way"}
			}
			target := pv.name
			if pv.key != "" && !pv.isList {
				if !r.setElem(target, pv.key, val, false) {
					return errSilent
				}
			} else if pv.v != nil && pv.v.Kind == expand.Indexed {
				if !r.setElem(target, "0", val, false) {
					return errSilent
				}
			} else if !r.setVar(target, val) {
				return errSilent
			}
			if v := r.lookup(target); v != nil && v.Attr&attrInteger != 0 {
				val = v.str()
			}
			return x.emitScalar(val, quoted)
		}
		return x.emit(pv, quoted)
	case syntax.ErrorUnset, syntax.ErrorUnsetOrNull:
		if (op == syntax.ErrorUnset && unset) || (op == syntax.ErrorUnsetOrNull && null) {
			msg, ok := r.literal(pe.Exp.Word)
			if !ok {
				return errSilent
			}
			if msg == "" {
				if op == syntax.ErrorUnset {
					msg = "parameter not set"
				} else {
					msg = "parameter null or not set"
				}
			}
			return &exitError{msg: name + ": " + msg}
		}
		return x.emit(pv, quoted)
	case syntax.RemSmallPrefix, syntax.RemLargePrefix, syntax.RemSmallSuffix, syntax.RemLargeSuffix:
		pat, ok := r.pattern(pe.Exp.Word)
		if !ok {
			return errSilent
		}
		out := make([]string, len(pv.vals))
		for i, s := range pv.vals {
			out[i] = r.removePattern(s, pat, op)
		}
		pv.vals = out
		return x.emit(pv, quoted)
	case syntax.UpperFirst, syntax.UpperAll, syntax.LowerFirst, syntax.LowerAll:
		pat := ""
		if pe.Exp.Word != nil {
			var ok bool
			pat, ok = r.pattern(pe.Exp.Word)
			if !ok {
				return errSilent
			}
		}
		out := make([]string, len(pv.vals))
		for i, s := range pv.vals {
			out[i] = r.caseConv(s, pat, op)
		}
		pv.vals = out
		return x.emit(pv, quoted)
	case syntax.OtherParamOps:
		arg := ""
		if pe.Exp.Word != nil {
			arg = pe.Exp.Word.Lit()
		}
		return x.transform(pv, arg, quoted, name)
	}
	return badSubst(pe)
}

// subWord expands the word of ${x:-word} in the current context.
func (x *wexp) subWord(w *syntax.Word, quoted bool) error {
	if w == nil {
		if quoted {
			x.add("", true)
		}
		return nil
	}
	if quoted {
		// Inside double quotes the word is expanded as if double-quoted.
		return x.parts(w.Parts, true, false)
	}
	saved := x.splitLits
	x.splitLits = true
	err := x.parts(w.Parts, false, true)
	x.splitLits = saved
	return err
}

func (r *runner) slice(pe *syntax.ParamExp, pv *pval) error {
	off, length := int64(0), int64(-1)
	hasLen := false
	if pe.Slice.Offset != nil {
		n, err := r.arith(pe.Slice.Offset)
		if err != nil {
			return err
		}
		off = n
	}
	if pe.Slice.Length != nil {
		n, err := r.arith(pe.Slice.Length)
		if err != nil {
			return err
		}
		length, hasLen = n, true
	}
	// An offset past the end is an empty expansion before a negative
	// length is an error, as bash's verify_substring_values has it: past
	// the highest index of an array, past $# + 1 for the positional
	// parameters, past the length of a string.
	if pv.isList {
		vals := pv.vals
		positional := pv.name == "" && (pe.Param.Value == "@" || pe.Param.Value == "*")
		if positional {
			vals = append([]string{r.arg0}, vals...)
		} else if pv.v != nil && pv.v.Kind == expand.Indexed && pv.v.Idx != nil {
			// sparse arrays slice by index, not position
			var out []string
			o := off
			if o < 0 {
				o += int64(pv.v.maxIndex() + 1)
			}
			for k, idx := range pv.v.Idx {
				if int64(idx) >= o {
					out = append(out, pv.v.List[k])
				}
			}
			if o > int64(pv.v.maxIndex()) {
				pv.vals = nil
				return nil
			}
			if hasLen {
				if length < 0 {
					return &lineError{msg: fmt.Sprintf("%d: substring expression < 0", length)}
				}
				if int64(len(out)) > length {
					out = out[:length]
				}
			}
			pv.vals = out
			return nil
		}
		n := int64(len(vals))
		if off < 0 {
			off += n
			if off < 0 {
				pv.vals = nil
				return nil
			}
		}
		if off > n || (!positional && off == n) {
			pv.vals = nil
			return nil
		}
		end := n
		if hasLen {
			if length < 0 {
				return &lineError{msg: fmt.Sprintf("%d: substring expression < 0", length)}
			}
			end = min(n, off+length)
		}
		pv.vals = vals[off:end]
		return nil
	}
	s := ""
	if len(pv.vals) > 0 {
		s = pv.vals[0]
	}
	// Character offsets, not runes: an invalid byte is one character
	// and comes out as itself (a []rune would make it U+FFFD).
	n := int64(utf8.RuneCountInString(s)) // an invalid byte counts as one
	if off < 0 {
		off += n
		if off < 0 {
			pv.vals = []string{""}
			return nil
		}
	}
	if off > n {
		pv.vals = []string{""}
		return nil
	}
	end := n
	if hasLen {
		if length < 0 {
			end = n + length
			if end < off {
				return &lineError{msg: fmt.Sprintf("%d: substring expression < 0", length)}
			}
		} else {
			end = min(n, off+length)
		}
	}
	from := charOffset(s, 0, int(off))
	pv.vals = []string{s[from:charOffset(s, from, int(end-off))]}
	return nil
}

// charOffset is the byte offset k characters after byte offset from
// (len(s) past the end), without allocating: strings here can be large.
func charOffset(s string, from, k int) int {
	i := from
	for ; k > 0 && i < len(s); k-- {
		if s[i] < utf8.RuneSelf {
			i++
			continue
		}
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
	}
	return i
}

func (r *runner) patRx(pat string, mode pattern.Mode) (*regexpT, bool) {
	if r.shopts["extglob"] {
		mode |= pattern.ExtendedOperators
	}
	if r.shopts["nocasematch"] && false {
		mode |= pattern.NoGlobCase
	}
	expr, err := r.patternRegexp(pat, mode)
	if err != nil {
		return nil, false
	}
	rx, err := compileRx(expr)
	if err != nil {
		return nil, false
	}
	return rx, true
}

func (r *runner) removePattern(s, pat string, op syntax.ParExpOperator) string {
	switch op {
	case syntax.RemSmallPrefix, syntax.RemLargePrefix:
		mode := pattern.Mode(0)
		if op == syntax.RemSmallPrefix {
			mode = pattern.Shortest
		}
		rx, ok := r.patRxAnchored(pat, mode, "^(?:", ")", op == syntax.RemLargePrefix)
		if !ok {
			return s
		}
		if loc := rx.FindStringIndex(s); loc != nil {
			return s[loc[1]:]
		}
		return s
	case syntax.RemLargeSuffix:
		// the leftmost match that reaches the end is the longest suffix
		rx, ok := r.patRxAnchored(pat, 0, "(?:", ")$", true)
		if !ok {
			return s
		}
		if loc := rx.FindStringIndex(s); loc != nil {
			return s[:loc[0]]
		}
		return s
	}
	// shortest suffix: the longest one bounds the search, then try start
	// positions from the end (huge strings take the longest, to stay linear)
	lrx, ok := r.patRxAnchored(pat, 0, "(?:", ")$", true)
	if !ok {
		return s
	}
	loc := lrx.FindStringIndex(s)
	if loc == nil {
		return s
	}
	if len(s)-loc[0] > 1<<16 {
		return s[:loc[0]]
	}
	rx, ok := r.patRx(pat, pattern.EntireString)
	if !ok {
		return s
	}
	for i := len(s); i >= loc[0]; i-- {
		if i < len(s) && !utf8.RuneStart(s[i]) {
			continue
		}
		if rx.MatchString(s[i:]) {
			return s[:i]
		}
	}
	return s
}

// patRxAnchored compiles a shell pattern wrapped in pre/post regexp text.
func (r *runner) patRxAnchored(pat string, mode pattern.Mode, pre, post string, longest bool) (*regexpT, bool) {
	if r.shopts["extglob"] {
		mode |= pattern.ExtendedOperators
	}
	expr, err := r.patternRegexp(pat, mode)
	if err != nil {
		return nil, false
	}
	expr = strings.TrimPrefix(expr, "(?s)")
	rx, err := compileRx("(?s)" + pre + expr + post)
	if err != nil {
		return nil, false
	}
	if longest {
		rx = rxLongest(rx)
	}
	return rx, true
}

// rxLongest returns a leftmost-longest copy of a cached regexp.
func rxLongest(rx *regexpT) *regexpT {
	c := rx.Copy()
	c.Longest()
	return c
}

func (r *runner) replace(s, pat, with string, all bool) string {
	anchorStart, anchorEnd := false, false
	if strings.HasPrefix(pat, "#") {
		anchorStart, pat = true, pat[1:]
	} else if strings.HasPrefix(pat, "%") {
		anchorEnd, pat = true, pat[1:]
	}
	pre, post := "(?:", ")"
	if anchorStart {
		pre = "^(?:"
	}
	if anchorEnd {
		post = ")$"
	}
	if pat == "" && !anchorStart && !anchorEnd {
		return s
	}
	rx, ok := r.patRxAnchored(pat, 0, pre, post, true)
	if !ok {
		return s
	}
	if anchorStart || anchorEnd {
		loc := rx.FindStringIndex(s)
		if loc == nil {
			return s
		}
		return s[:loc[0]] + with + s[loc[1]:]
	}
	// One match at a time (FindAllStringIndex would hold every match of
	// ${x//?/y} at once: 40 bytes each), checking the Run's context, the
	// string limit and the memory budget as the result grows.
	var b strings.Builder
	last, pos := 0, 0
	for iter := 1; pos <= len(s); iter++ {
		loc := rx.FindStringIndex(s[pos:])
		if loc == nil {
			break
		}
		start, end := pos+loc[0], pos+loc[1]
		if start == end {
			// bash never replaces an empty match: step over one character
			_, w := utf8.DecodeRuneInString(s[end:])
			pos = end + max(w, 1)
			continue
		}
		b.WriteString(s[last:start])
		b.WriteString(with)
		last, pos = end, end
		if !all {
			break
		}
		if iter%4096 == 0 || b.Len() > r.rs.lim.MaxStringBytes {
			if !r.growthOK(b.Len()) {
				return s
			}
		}
	}
	b.WriteString(s[last:])
	return b.String()
}

// growthOK is checked while one expansion builds a long result: false
// (and the Run ending) when the Run is cancelled, the result is over the
// string limit or the memory budget has no room for it.
func (r *runner) growthOK(n int) bool {
	if r.cancelled() {
		r.exiting = true
		return false
	}
	if n > r.rs.lim.MaxStringBytes {
		r.rs.fail(limitf("string size limit exceeded (%d bytes, max %d)", n, r.rs.lim.MaxStringBytes))
		r.exiting = true
		return false
	}
	return r.memFits(int64(n))
}

func (r *runner) caseConv(s, pat string, op syntax.ParExpOperator) string {
	match := func(c rune) bool {
		if pat == "" {
			return true
		}
		return r.matchPattern(pat, string(c), true)
	}
	if pat == "" && (op == syntax.UpperAll || op == syntax.LowerAll) {
		// Whole-string conversion without a pattern (and without []rune:
		// four bytes a character of a string that may be MaxStringBytes).
		if op == syntax.UpperAll {
			return strings.Map(unicode.ToUpper, s)
		}
		return strings.Map(unicode.ToLower, s)
	}
	if !r.growthOK(4 * len(s)) {
		return s
	}
	rs := []rune(s)
	for i, c := range rs {
		if i%65536 == 65535 && r.cancelled() {
			return s
		}
		if (op == syntax.UpperFirst || op == syntax.LowerFirst) && i > 0 {
			break
		}
		if !match(c) {
			continue
		}
		if op == syntax.UpperFirst || op == syntax.UpperAll {
			rs[i] = unicode.ToUpper(c)
		} else {
			rs[i] = unicode.ToLower(c)
		}
	}
	return string(rs)
}

// transform implements ${x@Q} and friends.
func (x *wexp) transform(pv pval, op string, quoted bool, name string) error {
	r := x.r
	switch op {
	case "a":
		flags := ""
		if pv.v != nil {
			flags = strings.TrimPrefix(pv.v.attrFlags(), "-")
			flags = strings.TrimPrefix(flags, "-")
		}
		if pv.isList {
			out := make([]string, len(pv.vals))
			for i := range out {
				out[i] = flags
			}
			pv.vals = out
			return x.emit(pv, quoted)
		}
		return x.emitScalar(flags, quoted)
	case "A":
		if pv.v == nil {
			if pv.isList && !pv.star {
				return x.emit(pv, quoted) // like "${unset[@]}": no word
			}
			return x.emitScalar("", quoted)
		}
		f := pv.v.attrFlags()
		if pv.isList && pv.isArr {
			if ifs := r.ifsValue(); !pv.star && (ifs == "" || strings.Contains(ifs, " ")) {
				// "${a[@]@A}" is three words in bash, unless IFS lacks a
				// space
				pv.vals = []string{"declare", f, pv.name + "=" + arrayLiteral(pv.v)}
				return x.emit(pv, quoted)
			}
			return x.emitScalar("declare "+f+" "+pv.name+"="+arrayLiteral(pv.v), quoted)
		}
		// ${a@A} of an array is its element 0, as $a is
		if !pv.set {
			if pv.isArr {
				return x.emitScalar("declare "+f+" "+pv.name, quoted)
			}
			return x.emitScalar("", quoted)
		}
		if f == "--" {
			return x.emitScalar(pv.name+"="+bashfmt.QuoteSingle(pv.vals[0]), quoted)
		}
		return x.emitScalar("declare "+f+" "+pv.name+"="+bashfmt.QuoteSingle(pv.vals[0]), quoted)
	case "K", "k":
		if pv.v != nil && pv.isList && pv.isArr {
			if op == "K" {
				return x.emitScalar(keyValueList(pv.v), quoted)
			}
			keys := pv.v.keys()
			vals := pv.v.values()
			parts := make([]string, 0, 2*len(keys))
			for i, k := range keys {
				parts = append(parts, k, vals[i])
			}
			pv.vals = parts
			return x.emit(pv, quoted)
		}
		op = "Q"
	}
	if !pv.set && !pv.isList {
		return x.emitScalar("", quoted)
	}
	out := make([]string, len(pv.vals))
	for i, s := range pv.vals {
		switch op {
		case "Q":
			out[i] = bashfmt.QuoteSingle(s)
		case "E":
			out[i] = ansiC(s)
		case "P":
			out[i] = s
		case "U":
			out[i] = strings.ToUpper(s)
		case "u":
			out[i] = r.caseConv(s, "", syntax.UpperFirst)
		case "L":
			out[i] = strings.ToLower(s)
		default:
			return &cmdError{msg: "${" + name + "@" + op + "}: bad substitution"}
		}
	}
	pv.vals = out
	return x.emit(pv, quoted)
}

type regexpT = regexp.Regexp

func (r *runner) shellopts(bashopts bool) string {
	var on []string
	if bashopts {
		for k, v := range r.shopts {
			if v {
				on = append(on, k)
			}
		}
	} else {
		for i, v := range r.opts {
			if v {
				on = append(on, optNames[i])
			}
		}
	}
	sort.Strings(on)
	return strings.Join(on, ":")
}
