package shell

import (
	"sort"
	"strconv"
	"strings"

	"github.com/warren-sandbox/warren/commands/bashfmt"
	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

// declareArgs runs declare & co. called with plain string arguments
// (builtin declare, command export, ...).
func (r *runner) declareArgs(args []string) int {
	var flags []string
	var ops []*syntax.Assign
	endOpts := false
	for _, a := range args[1:] {
		if a == "--" && !endOpts && len(ops) == 0 {
			endOpts = true // declare -- x=1, as declare -p prints it
			continue
		}
		if len(a) > 1 && (a[0] == '-' || a[0] == '+') && len(ops) == 0 && !endOpts {
			flags = append(flags, a)
			continue
		}
		name, val, hasEq := strings.Cut(a, "=")
		as := &syntax.Assign{Name: &syntax.Lit{Value: name}}
		if hasEq {
			if strings.HasSuffix(name, "+") {
				as.Append = true
				as.Name.Value = name[:len(name)-1]
			}
			if strings.HasPrefix(val, "(") && strings.HasSuffix(val, ")") {
				if f, err := r.parse(as.Name.Value + "=" + val); err == nil && len(f.Stmts) == 1 {
					if c, ok := f.Stmts[0].Cmd.(*syntax.CallExpr); ok && len(c.Assigns) == 1 && c.Assigns[0].Array != nil {
						as.Array = c.Assigns[0].Array
					}
				}
			}
			if as.Array == nil {
				as.Value = &syntax.Word{Parts: []syntax.WordPart{&syntax.SglQuoted{Value: val}}}
			}
		} else {
			as.Naked = true
		}
		if i := strings.IndexByte(as.Name.Value, '['); i > 0 && strings.HasSuffix(as.Name.Value, "]") {
			idx := as.Name.Value[i+1 : len(as.Name.Value)-1]
			as.Name.Value = as.Name.Value[:i]
			as.Index = litWord(idx)
		}
		ops = append(ops, as)
	}
	return r.declare(args[0], flags, ops)
}

func (r *runner) declare(variant string, flags []string, ops []*syntax.Assign) int {
	var add, del uint16
	printMode, funcMode, funcNames, global := false, false, false, false
	for _, f := range flags {
		on := f[0] == '-'
		for _, c := range f[1:] {
			var a uint16
			switch c {
			case 'a':
				a = attrArray
			case 'A':
				a = attrAssoc
			case 'i':
				a = attrInteger
			case 'l':
				a = attrLower
			case 'u':
				a = attrUpper
			case 'r':
				a = attrReadonly
			case 'x':
				a = attrExport
			case 'n':
				if variant == "export" {
					del |= attrExport
					continue
				}
				a = attrNameref
			case 'p':
				printMode = true
				continue
			case 'f':
				funcMode = true
				continue
			case 'F':
				funcMode, funcNames = true, true
				continue
			case 'g':
				global = true
				continue
			case 't', 'I':
				continue
			default:
				r.errf("%s: %c%c: invalid option", variant, f[0], c)
				return 2
			}
			if on {
				add |= a
			} else {
				del |= a
			}
		}
	}
	switch variant {
	case "export":
		if del&attrExport == 0 {
			add |= attrExport
		}
	case "readonly":
		add |= attrReadonly
	case "local":
		if !r.inFunc() {
			r.errf("local: can only be used in a function")
			return 1
		}
	}
	if funcMode {
		return r.declareFuncs(variant, ops, funcNames, printMode, add, del)
	}
	if printMode || (len(ops) == 0 && (variant == "declare" || variant == "typeset" || variant == "local" || variant == "readonly" || variant == "export")) {
		if len(ops) == 0 {
			if variant == "local" && r.inFunc() {
				// bash lists every local, as declare -p does, whatever
				// the options
				return r.printDeclared(func(s *scope) bool { return s == r.funcScope() }, 0, true)
			}
			if !printMode && add == 0 && (variant == "declare" || variant == "typeset") {
				r.printVars(true)
				return 0
			}
			// with an attribute to filter on, the list is in declare -p's form
			if r.opts[optPosix] && (variant == "export" || variant == "readonly") {
				// POSIX mode lists them as readonly/export commands,
				// keeping only the array flags
				return r.printDeclaredAs(nil, add, variant)
			}
			return r.printDeclared(nil, add, printMode || add != 0 || variant == "export" || variant == "readonly")
		}
		st := 0
		for _, op := range ops {
			v := r.lookup(op.Name.Value)
			if v == nil {
				v = r.shellArrayVar(op.Name.Value)
			}
			if v == nil {
				r.errf("%s: %s: not found", variant, op.Name.Value) // typeset says typeset
				st = 1
				continue
			}
			r.out(declLine(op.Name.Value, v) + "\n")
		}
		return st
	}
	st := 0
	inFunc := r.inFunc() && !global && (variant == "declare" || variant == "typeset" || variant == "local")
	for _, op := range ops {
		if op.Value == nil && !op.Naked && op.Array == nil {
			// `declare x=` as the parser gives it: an empty value, not
			// a bare name (the AST is shared: copy it).
			e := *op
			e.Value = &syntax.Word{}
			op = &e
		}
		name := op.Name.Value
		if variant == "export" && add == 0 && del == attrExport && op.Value == nil && op.Array == nil && r.lookupRef(name) == nil {
			continue // export -n of no variable creates none
		}
		if name == "-" && variant == "local" && op.Value == nil && op.Index == nil {
			// local -: the function's set options are its own
			if fs := r.funcScope(); fs.savedOpts == nil {
				o := r.opts
				fs.savedOpts = &o
			}
			continue
		}
		if !syntax.ValidName(name) || (op.Index != nil && (variant == "export" || variant == "readonly")) {
			bad := name
			if op.Index != nil {
				bad = name + "[" + arithText(op.Index) + "]"
				if op.Value != nil {
					bad += "=" + wordText(op.Value)
				}
			}
			r.errf("%s: `%s': not a valid identifier", variant, bad)
			st = 1
			continue
		}
		if add&attrNameref != 0 && op.Index != nil {
			r.errf("%s: %s[%s]: reference variable cannot be an array", variant, name, arithText(op.Index))
			st = 1
			continue
		}
		r.own()
		var v *Var
		created := false
		if inFunc {
			fs := r.funcScope()
			v = fs.vars[name]
			if prev := r.lookup(name); v == nil && prev != nil && prev.Attr&attrReadonly != 0 {
				// bash lets no local shadow a readonly variable
				r.errf("%s: %s: readonly variable", variant, name)
				st = 1
				continue
			}
			if v == nil {
				v = &Var{Kind: expand.String}
				if prev := r.lookup(name); prev != nil && variant == "local" && false {
					v = prev.clone()
				}
				fs.vars[name] = v
			}
		} else {
			if cur := r.lookup(name); del&attrNameref != 0 && op.Value != nil && op.Array == nil && cur != nil && cur.Attr&attrNameref != 0 {
				// typeset +n ref=v: bash assigns v through the
				// reference, then ref is a plain variable holding the
				// name it referred to
				if t := r.resolve(name); t != name && cur.Attr&attrReadonly == 0 {
					val, ok := r.assignLiteral(op.Value)
					if !ok {
						return 1
					}
					if !r.setVar(t, val) {
						st = 1
					}
					cur.Attr = (cur.Attr | add) &^ del
					continue
				}
			}
			target := name
			if add&attrNameref == 0 && del&attrNameref == 0 {
				target = r.resolve(name)
			}
			v = r.lookup(target)
			if v == nil {
				created = true
				v = &Var{Kind: expand.String}
				if global || len(r.funcNames) == 0 || variant == "export" || variant == "readonly" {
					r.global.vars[target] = v
				} else {
					r.global.vars[target] = v
				}
			}
			name = target
		}
		if v.Attr&attrReadonly != 0 && (op.Value != nil || op.Array != nil || del&attrReadonly != 0) {
			if variant == "export" || variant == "readonly" {
				r.errf("%s: readonly variable", name)
				if r.opts[optPosix] {
					// a special builtin's assignment error ends a POSIX shell
					r.exiting = true
					return 1
				}
			} else {
				r.errf("%s: %s: readonly variable", variant, name)
			}
			st = 1
			continue
		}
		if add&attrNameref != 0 && (v.Kind == expand.Indexed || v.Kind == expand.Associative) {
			r.errf("%s: %s: reference variable cannot be an array", variant, name)
			st = 1
			continue
		}
		if add&attrNameref != 0 {
			// a reference has no value of its own to convert
			del |= attrInteger | attrLower | attrUpper
		}
		if name == "OPTIND" {
			// local OPTIND, with a value or not, restarts getopts
			r.specialAssign(name, "")
		}
		prevAttr := v.Attr
		v.Attr = (v.Attr | add) &^ del
		if r.opts[optAllexport] && (op.Value != nil || op.Array != nil) {
			v.Attr |= attrExport
		}
		if add&attrReadonly != 0 {
			v.Attr |= attrReadonly
		}
		if add&attrUpper != 0 {
			v.Attr &^= attrLower
		}
		if add&attrLower != 0 {
			v.Attr &^= attrUpper
		}
		if add&attrAssoc != 0 && v.Kind != expand.Associative {
			if v.Kind == expand.Indexed && v.Set {
				r.errf("%s: %s: cannot convert indexed to associative array", variant, name)
				st = 1
				continue
			}
			v.Kind, v.Map, v.Str, v.ord = expand.Associative, map[string]string{}, "", nil
			if op.Value == nil && op.Array == nil {
				v.Set = false
			}
		}
		// declare name[N] without a value declares an array (the
		// subscript is ignored), whatever the other options
		bare := op.Index != nil && op.Value == nil && op.Array == nil && add&attrAssoc == 0 && v.Kind != expand.Associative
		if (add&attrArray != 0 || bare) && v.Kind != expand.Indexed {
			if v.Kind == expand.Associative {
				r.errf("%s: %s: cannot convert associative to indexed array", variant, name)
				st = 1
				continue
			}
			if v.Set && v.Kind == expand.String {
				v.Kind, v.List = expand.Indexed, []string{v.Str}
			} else {
				v.Kind = expand.Indexed
			}
		}
		if op.Array != nil {
			ro := v.Attr & attrReadonly
			v.Attr &^= attrReadonly
			ok := r.assignArrayTo(v, name, op.Array, op.Append)
			v.Attr |= ro
			if !ok {
				st = 1
			}
			continue
		}
		if op.Value != nil {
			val, ok := r.assignLiteral(op.Value)
			if !ok {
				return 1
			}
			if arr := quotedCompound(val, add, (v.Kind == expand.Indexed || v.Kind == expand.Associative) && variant != "export" && variant != "readonly"); arr != nil {
				// declare -a x='(a b)', or x already an array: bash
				// parses the value as a compound assignment (and expands
				// it again), a subscript on the name notwithstanding
				ro := v.Attr & attrReadonly
				v.Attr &^= attrReadonly
				ok := r.assignArrayTo(v, name, arr, op.Append)
				v.Attr |= ro
				if !ok {
					st = 1
				}
				continue
			}
			ro := v.Attr & attrReadonly
			v.Attr &^= attrReadonly
			if v.Attr&attrNameref != 0 {
				// At the top level bash refuses a reference to itself or
				// to nothing and leaves the variable as it was (in a
				// function it only warns: the name is looked up outside).
				if !inFunc && (val == name || val == "") && !(val == "" && del&attrNameref != 0) {
					if val == "" {
						r.errf("%s: `': not a valid identifier", variant)
					} else {
						r.errf("%s: %s: nameref variable self references not allowed", variant, name)
					}
					v.Attr = prevAttr
					if created {
						delete(r.global.vars, name)
					}
					st = 1
					continue
				}
				if val != "" && !validRef(val) {
					r.errf("%s: `%s': invalid variable name for name reference", variant, val)
					v.Attr |= ro
					st = 1
					continue
				}
				v.Str, v.Set, v.Kind = val, true, expand.String
				v.Attr |= ro
				continue
			}
			if op.Index != nil {
				v.Attr |= ro
				v.Attr &^= attrReadonly
				if !r.assignVarElem(v, name, op) {
					st = 1
				}
				v.Attr |= ro
				continue
			}
			if op.Append {
				switch {
				case v.Attr&attrInteger != 0:
					a, _ := r.arithString(v.str())
					b, err := r.arithString(val)
					if err != nil {
						r.arithErr(err)
						v.Attr |= ro
						return 1
					}
					val = strconv.FormatInt(a+b, 10)
				default:
					val = v.str() + val
				}
			} else if v2, ok := r.applyAttrs(v, val); ok {
				val = v2
			} else {
				v.Attr |= ro
				return 1
			}
			if r.specialAssign(name, val) {
				// the stored value is shadowed by the computed one
				v.Set = true
			}
			switch v.Kind {
			case expand.Indexed:
				v.setIndex(0, val)
			case expand.Associative:
				if _, had := v.Map["0"]; !had {
					v.noteKey("0")
				}
				v.Map["0"] = val
				v.Set = true
			default:
				v.Kind, v.Str, v.Set = expand.String, val, true
			}
			v.Attr |= ro
		}
	}
	return st
}

func validRef(s string) bool {
	if i := strings.IndexByte(s, '['); i > 0 && strings.HasSuffix(s, "]") {
		s = s[:i]
	}
	return syntax.ValidName(s)
}

func (r *runner) assignVarElem(v *Var, name string, op *syntax.Assign) bool {
	// Route through the normal element assignment, which finds v by name.
	return r.assign(op, false)
}

// assignArrayTo assigns an array literal into an existing Var.
func (r *runner) assignArrayTo(v *Var, name string, arr *syntax.ArrayExpr, appendTo bool) bool {
	// assignArray looks the variable up by name; make sure it finds v.
	fs := r.funcScope()
	if fs != nil && fs.vars[name] == v {
		saved := r.vars
		r.vars = &scope{vars: map[string]*Var{name: v}, parent: saved, temp: true}
		ok := r.assignArray(name, arr, appendTo, v.Attr)
		r.vars = saved
		return ok
	}
	return r.assignArray(name, arr, appendTo, v.Attr)
}

// funcScope is the scope of the innermost function call.
func (r *runner) funcScope() *scope {
	for s := r.vars; s != nil; s = s.parent {
		if !s.temp {
			return s
		}
	}
	return r.global
}

// declareFuncs is declare -f/-F (export -f, readonly -f): with names and
// attributes it sets them; else it prints the named functions, or all
// those having the attributes: definitions with -f (export and readonly,
// and a listing or -p of a function with attributes, follow each with its
// declare line), declare lines with -F, or just the name when -F is given
// names.
func (r *runner) declareFuncs(variant string, ops []*syntax.Assign, namesOnly, printMode bool, add, del uint16) int {
	add &= attrExport | attrReadonly
	del &= attrExport | attrReadonly
	st := 0
	if len(ops) > 0 && add|del != 0 {
		for _, op := range ops {
			n := op.Name.Value
			if op.Value != nil && !op.Naked {
				// function foo=bar is a name
				v, ok := r.assignLiteral(op.Value)
				if !ok {
					return 1
				}
				n += "=" + v
			}
			if _, ok := r.funcs[n]; !ok {
				if variant != "declare" && variant != "typeset" {
					r.errf("%s: %s: not a function", variant, n)
				}
				st = 1
				continue
			}
			if add&attrExport != 0 && !exportableFunc(n) {
				// a child would take it for a path or an assignment
				r.errf("%s: %s: cannot export", variant, n)
				st = 1
				continue
			}
			r.setFuncAttr(n, add, del)
		}
		return st
	}
	names := []string{}
	if len(ops) == 0 {
		for k := range r.funcs {
			if r.funcAttrOf(k)&add == add {
				names = append(names, k)
			}
		}
		sort.Strings(names)
	} else {
		for _, op := range ops {
			names = append(names, op.Name.Value)
		}
	}
	for _, n := range names {
		if _, ok := r.funcs[n]; !ok {
			st = 1
			continue
		}
		switch {
		case namesOnly && len(ops) > 0:
			r.out(n + "\n")
		case namesOnly:
			r.out(r.funcDeclLine(n))
		default:
			r.out(r.funcSource(n))
			// a listing (or -p) follows a definition that has attributes
			// with its declare line, as bash's does
			if variant == "export" || variant == "readonly" || (len(ops) == 0 || printMode) && r.funcAttrOf(n) != 0 {
				r.out(r.funcDeclLine(n))
			}
		}
	}
	return st
}

// funcDeclLine is "declare -f name" with the function's attributes.
func (r *runner) funcDeclLine(name string) string {
	flags := "f"
	a := r.funcAttrOf(name)
	if a&attrReadonly != 0 {
		flags += "r"
	}
	if a&attrExport != 0 {
		flags += "x"
	}
	return "declare -" + flags + " " + name + "\n"
}

func (r *runner) printDeclared(filter func(*scope) bool, need uint16, withDeclare bool) int {
	return r.printDeclaredAs(filter, need, map[bool]string{true: "declare"}[withDeclare])
}

// printDeclaredAs is printDeclared with the lines in cmd's form: "" for
// name=value, declare, or readonly/export in POSIX mode.
func (r *runner) printDeclaredAs(filter func(*scope) bool, need uint16, cmd string) int {
	withDeclare := cmd != ""
	seen := map[string]*Var{}
	for s := r.vars; s != nil; s = s.parent {
		if filter != nil && !filter(s) {
			continue
		}
		for k, v := range s.vars {
			if _, ok := seen[k]; !ok {
				seen[k] = v
			}
		}
	}
	names := make([]string, 0, len(seen))
	for k, v := range seen {
		a := v.Attr
		// an array made by assignment (a[2]=x) is -a to bash's filter too
		switch v.Kind {
		case expand.Indexed:
			a |= attrArray
		case expand.Associative:
			a |= attrAssoc
		}
		if need != 0 && a&need != need {
			continue
		}
		names = append(names, k)
	}
	sort.Strings(names)
	for _, n := range names {
		v := seen[n]
		if cmd != "" && cmd != "declare" {
			line := strings.TrimPrefix(declLine(n, v), "declare "+v.attrFlags()+" ")
			flags := strings.Map(func(c rune) rune {
				if c == 'a' || c == 'A' {
					return c
				}
				return -1
			}, v.attrFlags())
			if flags != "" {
				line = "-" + flags + " " + line
			}
			r.out(cmd + " " + line + "\n")
		} else if withDeclare {
			r.out(declLine(n, v) + "\n")
		} else if v.Set {
			r.out(n + "=" + bashfmt.QuoteSet(v.str()) + "\n")
		}
	}
	return 0
}

// declLine renders a variable as declare -p does.
func declLine(name string, v *Var) string {
	flags := v.attrFlags()
	if !v.Set {
		return "declare " + flags + " " + name
	}
	switch v.Kind {
	case expand.Indexed, expand.Associative:
		return "declare " + flags + " " + name + "=" + arrayLiteral(v)
	}
	return "declare " + flags + " " + name + "=" + bashfmt.QuoteDouble(v.Str)
}

func arrayLiteral(v *Var) string {
	var b strings.Builder
	b.WriteByte('(')
	keys := v.keys()
	vals := v.values()
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString("[" + arrayKey(v, k) + "]=" + bashfmt.QuoteDouble(vals[i]))
	}
	if v.Kind == expand.Associative && len(keys) > 0 {
		b.WriteByte(' ')
	}
	b.WriteByte(')')
	return b.String()
}

// arrayKey is key k of array v as declare -p and ${a[@]@K} print it: bash
// quotes an associative key only when set would (a shell metacharacter, a
// character that is not printable).
func arrayKey(v *Var, k string) string {
	if v.Kind == expand.Associative && (k == "" || shellMetas(k) || strings.HasPrefix(bashfmt.QuoteDouble(k), "$")) {
		return bashfmt.QuoteDouble(k)
	}
	return k
}

// keyValueList is ${a[@]@K}: key and value pairs quoted as declare -p
// quotes them, and for an associative array the same trailing space.
func keyValueList(v *Var) string {
	var b strings.Builder
	keys := v.keys()
	vals := v.values()
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(arrayKey(v, k) + " " + bashfmt.QuoteDouble(vals[i]))
	}
	if v.Kind == expand.Associative && len(keys) > 0 {
		b.WriteByte(' ')
	}
	return b.String()
}

// shellMetas reports whether an associative key needs quotes in declare -p
// (bash's sh_contains_shell_metas, plus the keys @ and *): blanks, quotes,
// operators, glob and expansion characters anywhere, ~ at the start or
// after = or :, # at the start.
func shellMetas(k string) bool {
	if k == "@" || k == "*" {
		return true
	}
	for i := 0; i < len(k); i++ {
		switch c := k[i]; c {
		case ' ', '\t', '\n', '\'', '"', '\\', '|', '&', ';', '(', ')', '<', '>',
			'!', '{', '}', '*', '[', '?', ']', '^', '$', '`':
			return true
		case '~':
			if i == 0 || k[i-1] == '=' || k[i-1] == ':' {
				return true
			}
		case '#':
			if i == 0 {
				return true
			}
		}
	}
	return false
}

// quotedCompound is the array literal val holds when declare's options make
// the variable an array and val reads (...), else nil.
func quotedCompound(val string, add uint16, isArray bool) *syntax.ArrayExpr {
	if add&(attrArray|attrAssoc) == 0 && !isArray || len(val) < 2 || val[0] != '(' || val[len(val)-1] != ')' {
		return nil
	}
	f, err := parseFile("x=" + val)
	if err != nil || len(f.Stmts) != 1 {
		return nil
	}
	c, ok := f.Stmts[0].Cmd.(*syntax.CallExpr)
	if !ok || len(c.Args) != 0 || len(c.Assigns) != 1 || c.Assigns[0].Array == nil || f.Stmts[0].Redirs != nil {
		return nil
	}
	return c.Assigns[0].Array
}
