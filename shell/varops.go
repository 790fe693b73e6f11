package shell

import (
	"maps"
	"slices"
	"strconv"
	"strings"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

// lookup finds a variable without following namerefs.
func (r *runner) lookup(name string) *Var {
	for s := r.vars; s != nil; s = s.parent {
		if v, ok := s.vars[name]; ok {
			return v
		}
	}
	return nil
}

// resolve follows namerefs; it returns the final name (which may carry an
// index, as in declare -n r=a[1]).
func (r *runner) resolve(name string) string {
	for range 16 {
		v := r.lookup(name)
		if v == nil || v.Attr&attrNameref == 0 || !v.Set || v.Str == "" {
			return name
		}
		name = v.Str
	}
	return name
}

func (r *runner) lookupRef(name string) *Var {
	return r.lookup(r.resolve(name))
}

// varForWrite returns the variable to modify, creating it in the global
// scope; nil (after a message) when it is readonly.
//
// The exported environment is forgotten only when the variable is (or
// becomes, with allexport) exported: assigning other variables, the
// common case in loops, keeps the cached environ.
func (r *runner) varForWrite(name string) *Var {
	r.ownMaps()
	name = r.resolve(name)
	if name == "SHELLOPTS" || name == "BASHOPTS" {
		r.errf("%s: readonly variable", name)
		r.status = 1
		return nil
	}
	for s := r.vars; s != nil; s = s.parent {
		if v, ok := s.vars[name]; ok {
			if v.Attr&attrReadonly != 0 {
				r.errf("%s: readonly variable", name)
				r.status = 1
				return nil
			}
			if v.Attr&attrExport != 0 || r.opts[optAllexport] {
				r.envCache = nil
			}
			return v
		}
	}
	v := &Var{Kind: expand.String}
	if r.opts[optAllexport] {
		v.Attr |= attrExport
		r.envCache = nil
	}
	r.global.vars[name] = v
	return v
}

// setVar assigns a string value to name (element 0 of an array), applying
// the variable's attributes. It returns false on a readonly variable.
func (r *runner) setVar(name, val string) bool {
	if i := strings.IndexByte(name, '['); i > 0 && strings.HasSuffix(name, "]") {
		return r.setElem(name[:i], name[i+1:len(name)-1], val, false)
	}
	rn := r.resolve(name)
	if rn != name {
		if i := strings.IndexByte(rn, '['); i > 0 && strings.HasSuffix(rn, "]") {
			return r.setElem(rn[:i], rn[i+1:len(rn)-1], val, false)
		}
	}
	if r.specialAssign(rn, val) {
		return true
	}
	v := r.varForWrite(name)
	if v == nil {
		return false
	}
	val, ok := r.applyAttrs(v, val)
	if !ok {
		return false
	}
	if len(val) > r.rs.lim.MaxStringBytes {
		r.rs.fail(limitf("string size limit exceeded (%d bytes, max %d)", len(val), r.rs.lim.MaxStringBytes))
		r.exiting = true
		return false
	}
	switch v.Kind {
	case expand.Indexed:
		if !r.storeIndex(v, 0, val) {
			return false
		}
	case expand.Associative:
		if !r.storeKey(v, "0", val) {
			return false
		}
	default:
		if !r.chargeVar(v, strCost(val)-strCost(v.Str)) {
			return false
		}
		v.Kind = expand.String
		v.Str = val
		v.Set = true
	}
	if r.opts[optAllexport] {
		v.Attr |= attrExport
	}
	return true
}

func (r *runner) applyAttrs(v *Var, val string) (string, bool) {
	if v.Attr&attrInteger != 0 {
		n, err := r.arithString(val)
		if err != nil {
			r.arithErr(err)
			return "", false
		}
		val = strconv.FormatInt(n, 10)
	}
	if v.Attr&attrLower != 0 {
		val = strings.ToLower(val)
	}
	if v.Attr&attrUpper != 0 {
		val = strings.ToUpper(val)
	}
	return val, true
}

// setElem assigns name[key]=val.
func (r *runner) setElem(name, key, val string, appendTo bool) bool {
	return r.setElemKey(name, key, val, appendTo, true)
}

// setElemKey is setElem; expandKey false takes an associative key as it
// is, already expanded (arithmetic's assoc[$key]=1 expands the key once).
func (r *runner) setElemKey(name, key, val string, appendTo, expandKey bool) bool {
	if r.dirstackSpecial(r.resolve(name)) {
		n, err := r.arithString(key)
		if err != nil {
			r.arithErr(err)
			return false
		}
		r.setDirstackElem(n, val, appendTo)
		return true
	}
	v := r.varForWrite(name)
	if v == nil {
		return false
	}
	if v.Kind == expand.Associative || v.Attr&attrAssoc != 0 {
		if v.Kind != expand.Associative {
			v.Kind, v.Map, v.ord = expand.Associative, map[string]string{}, nil
		}
		if v.Map == nil {
			v.Map, v.ord = map[string]string{}, nil
		}
		k, ok := key, true
		if expandKey {
			k, ok = r.assocKey(key)
		}
		if !ok {
			return false
		}
		if k == "" {
			return r.emptyKey(name, key)
		}
		if appendTo {
			val = v.Map[k] + val
		}
		val, ok = r.applyAttrs(v, val)
		if !ok {
			return false
		}
		if !r.storeKey(v, k, val) {
			return false
		}
		v.Set = true
		return r.checkArray(v)
	}
	n, err := r.arithString(key)
	if err != nil {
		r.arithErr(err)
		return false
	}
	i := int(n)
	if i < 0 {
		i += v.maxIndex() + 1
		if v.Kind != expand.Indexed && v.Set {
			i = int(n) + 1
		}
		if i < 0 {
			r.errf("%s[%d]: bad array subscript", name, n)
			r.status = 1
			return false
		}
	}
	if appendTo {
		old, _ := v.index(i)
		if v.Attr&attrInteger != 0 {
			a, _ := r.arithString(old)
			b, err := r.arithString(val)
			if err != nil {
				r.arithErr(err)
				return false
			}
			val = strconv.FormatInt(a+b, 10)
		} else {
			val = old + val
		}
	}
	val, ok := r.applyAttrs(v, val)
	if !ok {
		return false
	}
	if !r.storeIndex(v, i, val) {
		return false
	}
	return r.checkArray(v)
}

func (r *runner) checkArray(v *Var) bool {
	if v.count() > r.rs.lim.MaxArrayElems {
		r.rs.fail(limitf("array size limit exceeded (%d elements)", r.rs.lim.MaxArrayElems))
		r.exiting = true
		return false
	}
	return true
}

// assocKey expands an associative array subscript given as text
// ('A["k"]', 'A[$key]'): quotes are removed and expansions done.
func (r *runner) assocKey(key string) (string, bool) {
	if !strings.ContainsAny(key, "$`'\"\\") {
		return key, true
	}
	return r.literal(keyWord(key))
}

// keyWord parses subscript text as one word (quotes and expansions kept).
func keyWord(key string) *syntax.Word {
	if ws, err := parseWords(key); err == nil && len(ws) == 1 {
		return ws[0]
	}
	return &syntax.Word{Parts: []syntax.WordPart{&syntax.SglQuoted{Value: key}}}
}

func (r *runner) unsetVar(name string) bool {
	r.own()
	if i := strings.IndexByte(name, '['); i > 0 && strings.HasSuffix(name, "]") {
		base, key := name[:i], name[i+1:len(name)-1]
		v := r.lookupRef(base)
		if v == nil {
			return true
		}
		if v.Attr&attrReadonly != 0 {
			r.errf("unset: %s: cannot unset: readonly variable", base)
			return false
		}
		if (key == "@" || key == "*") && v.Kind == expand.Indexed {
			// bash empties the array and keeps it declared
			v.List, v.Idx = []string{}, nil
			r.releaseVar(v)
			return true
		}
		if (key == "@" || key == "*") && v.Kind != expand.Associative {
			return r.unsetVar(base)
		}
		if v.Kind == expand.Associative { // m[@] is the key @
			k, ok := r.assocKey(key)
			if !ok {
				return false
			}
			if old, had := v.Map[k]; had {
				r.chargeVar(v, -(strCost(k) + strCost(old) + 16))
			}
			delete(v.Map, k)
			if v.ord != nil {
				v.ord.remove(k)
			}
			return true
		}
		n, err := r.arithString(key)
		if err != nil {
			r.arithErr(err)
			return false
		}
		if n < 0 {
			n += int64(v.maxIndex() + 1)
			if n < 0 {
				r.errf("%s[%s]: bad array subscript", base, key)
				return false
			}
		}
		if old, had := v.index(int(n)); had {
			r.chargeVar(v, -strCost(old))
		}
		v.unsetIndex(int(n))
		return true
	}
	name = r.resolve(name)
	r.dynUnset(name)
	for s := r.vars; s != nil; s = s.parent {
		if v, ok := s.vars[name]; ok {
			if v.Attr&attrReadonly != 0 {
				r.errf("unset: %s: cannot unset: readonly variable", name)
				return false
			}
			r.releaseVar(v)
			if s == r.global || s.temp {
				delete(s.vars, name)
			} else if s == r.funcScope() {
				// A local unset in its own function stays a local, unset:
				// ${x-default} does not see the global.
				s.vars[name] = &Var{Kind: expand.String, Attr: v.Attr &^ (attrExport | attrNameref)}
			} else {
				delete(s.vars, name)
			}
			return true
		}
	}
	return true
}

// environ returns the exported variables as K=V (cached until a write).
//
// The entries are cut from one string: a session's first Run (a tenth of
// density's execs) and every Run after an export would otherwise make one
// allocation per exported variable.
func (r *runner) environ() []string {
	if r.envCache != nil {
		return r.envCache
	}
	// Only scopes above the innermost can hide a name: a Run at the top
	// (one scope, a session's first exec) needs no set of names seen.
	var seen map[string]bool
	if r.vars.parent != nil {
		seen = map[string]bool{}
	}
	type kv struct{ k, v string }
	var buf [32]kv // a session's defaults and a few more, on the stack
	vars := buf[:0]
	size := 0
	for s := r.vars; s != nil; s = s.parent {
		for k, v := range s.vars {
			if seen != nil {
				if seen[k] {
					continue
				}
				seen[k] = true
			}
			if v.Attr&attrExport != 0 && v.Set && v.Kind == expand.String {
				vars = append(vars, kv{k, v.Str})
				size += len(k) + 1 + len(v.Str)
			}
		}
	}
	fenv := r.funcEnv()
	out := make([]string, 0, len(vars)+len(fenv))
	var b strings.Builder
	b.Grow(size)
	for _, e := range vars {
		b.WriteString(e.k)
		b.WriteByte('=')
		b.WriteString(e.v)
	}
	all, at := b.String(), 0
	for _, e := range vars {
		n := len(e.k) + 1 + len(e.v)
		out = append(out, all[at:at+n])
		at += n
	}
	out = append(out, fenv...)
	sortStrings(out)
	// Callers share the slice: clip it so that an append copies.
	out = out[:len(out):len(out)]
	r.envCache = out
	return out
}

// assign performs one assignment word (a=b, a+=b, a[i]=b, a=(...)).
func (r *runner) assign(as *syntax.Assign, local bool) bool {
	name := as.Name.Value
	if as.Naked {
		return true
	}
	if r.dirstackSpecial(r.resolve(name)) {
		return r.assignDirstack(as)
	}
	if as.Array != nil {
		if as.Index != nil {
			// d[7]=(a b): bash abandons the line
			r.errf("%s[%s]: cannot assign list to array member", name, unEmptySub(strings.ReplaceAll(arithText(as.Index), "\\\n", "")))
			r.status = 1
			r.exiting = true
			r.abandonLine = true
			return false
		}
		return r.assignArray(name, as.Array, as.Append, 0)
	}
	val, ok := r.assignLiteral(as.Value)
	if !ok {
		return false
	}
	if as.Index != nil {
		key := ""
		if isEmptySub(as.Index) {
			return r.emptySubAssign(name)
		}
		if w, ok := as.Index.(*syntax.Word); ok && (w.Lit() == "@" || w.Lit() == "*") && !r.isAssoc(name) {
			// bash: b[*]=x is no element of an indexed array
			return r.emptyKey(name, w.Lit())
		}
		if r.isAssoc(name) {
			k, ok := r.indexLiteral(as.Index)
			if !ok {
				return false
			}
			if k == "" {
				txt := ""
				if w, ok := as.Index.(*syntax.Word); ok {
					txt = wordText(w)
				}
				return r.emptyKey(name, txt)
			}
			v := r.varForWrite(name)
			if v == nil {
				return false
			}
			if v.Kind != expand.Associative {
				v.Kind, v.Map, v.ord = expand.Associative, map[string]string{}, nil
			}
			if as.Append {
				val = v.Map[k] + val
			}
			val, ok = r.applyAttrs(v, val)
			if !ok || !r.storeKey(v, k, val) {
				return false
			}
			v.Set = true
			return r.checkArray(v)
		}
		n, err := r.arith(as.Index)
		if err != nil {
			r.arithErr(err)
			return false
		}
		if v := r.lookupRef(name); n < 0 && v != nil && v.Attr&attrReadonly != 0 && v.Kind == expand.Indexed && int(n)+v.maxIndex()+1 < 0 {
			// bash checks the subscript before the readonly attribute
			r.errf("%s[%d]: bad array subscript", name, n)
			r.status = 1
			return false
		}
		key = strconv.FormatInt(n, 10)
		return r.setElem(name, key, val, as.Append)
	}
	if as.Append {
		v := r.lookupRef(name)
		if v != nil && v.Set {
			switch {
			case v.Kind == expand.Indexed:
				return r.setElem(name, "0", val, true)
			case v.Attr&attrInteger != 0:
				a, _ := r.arithString(v.Str)
				b, err := r.arithString(val)
				if err != nil {
					r.arithErr(err)
					return false
				}
				val = strconv.FormatInt(a+b, 10)
			default:
				val = v.str() + val
			}
		}
	}
	return r.setVar(name, val)
}

func (r *runner) indexLiteral(idx syntax.ArithmExpr) (string, bool) {
	if w, ok := idx.(*syntax.Word); ok {
		return r.literal(w)
	}
	// expand parsed the subscript as arithmetic; print it back as written
	// (an assignment, [x=y], printed as a node alone came out empty).
	// (the minifying printer may break a line after a unary sign)
	return strings.ReplaceAll(arithText(idx), "\\\n", ""), true
}

// assignArray performs name=(...) or name+=(...).
func (r *runner) assignArray(name string, arr *syntax.ArrayExpr, appendTo bool, forceAttr uint16) bool {
	v := r.varForWrite(name)
	if v == nil {
		return false
	}
	assoc := v.Kind == expand.Associative || v.Attr&attrAssoc != 0 || forceAttr&attrAssoc != 0
	if assoc {
		m := map[string]string{}
		// a=(...) empties the table and keeps its size (bash's
		// assoc_flush), a+=(...) adds to it
		var ord *keyOrder
		if v.Kind == expand.Associative {
			ord = v.ord.clone()
		}
		if appendTo && v.Kind == expand.Associative {
			for k, x := range v.Map {
				m[k] = x
			}
			if ord == nil {
				ord = newKeyOrder()
				for _, k := range slices.Sorted(maps.Keys(m)) {
					ord.insert(k)
				}
			}
		} else if ord != nil {
			ord.flush()
		}
		if ord == nil {
			ord = newKeyOrder()
		}
		for _, e := range arr.Elems {
			if e.Index == nil {
				r.errf("%s: %s: must use subscript when assigning associative array", name, wordText(e.Value))
				continue
			}
			k, ok := r.indexLiteral(e.Index)
			if !ok {
				return false
			}
			val, ok := r.literal(e.Value)
			if !ok {
				return false
			}
			if isEmptySub(e.Index) {
				r.errf("[]=%s: bad array subscript", val)
				continue
			}
			if k == "" {
				// bash reports an empty key and skips the element
				r.errf("['']=%s: bad array subscript", val)
				continue
			}
			m[k] = val
			ord.insert(k)
		}
		v.Kind, v.Map, v.Set, v.List, v.Idx, v.ord = expand.Associative, m, true, nil, nil, ord
		if !r.recharge(v) {
			return false
		}
		return r.checkArray(v)
	}
	// Values are expanded first, then indices are evaluated while the
	// array is filled, so [a[0]]=x sees earlier elements (bash order).
	type item struct {
		idx  syntax.ArithmExpr
		vals []string
	}
	items := make([]item, 0, len(arr.Elems))
	total := 0
	for _, e := range arr.Elems {
		if e.Index != nil {
			val, ok := r.assignLiteral(e.Value)
			if !ok {
				return false
			}
			items = append(items, item{e.Index, []string{val}})
			total++
			continue
		}
		fs, ok := r.fields(e.Value)
		if !ok {
			return false
		}
		total += len(fs)
		if total > r.rs.lim.MaxArrayElems {
			return r.checkArray(&Var{Kind: expand.Indexed, List: make([]string, total)})
		}
		items = append(items, item{nil, fs})
	}
	if !(appendTo && v.Set) {
		v.Kind, v.List, v.Idx, v.Map, v.Str, v.ord = expand.Indexed, []string{}, nil, nil, "", nil
		r.releaseVar(v)
	} else if v.Kind == expand.String {
		v.Kind, v.List, v.Str = expand.Indexed, []string{v.Str}, ""
	}
	v.Set = true
	next := v.maxIndex() + 1
	for _, it := range items {
		if it.idx != nil {
			// bash reports these elements and skips them
			if isEmptySub(it.idx) {
				r.errf("[]=%s: bad array subscript", it.vals[0])
				continue
			}
			if w, ok := it.idx.(*syntax.Word); ok && (w.Lit() == "@" || w.Lit() == "*") {
				r.errf("[%s]=%s: cannot assign to non-numeric index", w.Lit(), it.vals[0])
				continue
			}
			n, err := r.arith(it.idx)
			if err != nil {
				r.arithErr(err)
				return false
			}
			if n < 0 {
				n += int64(v.maxIndex() + 1)
				if n < 0 {
					r.errf("[%s]=%s: bad array subscript", strings.ReplaceAll(arithText(it.idx), "\\\n", ""), it.vals[0])
					continue
				}
			}
			val, ok := r.applyAttrs(v, it.vals[0])
			if !ok {
				return false
			}
			if !r.storeIndex(v, int(n), val) {
				return false
			}
			next = int(n) + 1
			continue
		}
		for _, f := range it.vals {
			f, ok := r.applyAttrs(v, f)
			if !ok {
				return false
			}
			if !r.storeIndex(v, next, f) {
				return false
			}
			next++
		}
	}
	return r.checkArray(v)
}

func wordText(w *syntax.Word) string {
	if w == nil {
		return ""
	}
	var b strings.Builder
	syntax.NewPrinter().Print(&b, w)
	return b.String()
}

func sortStrings(s []string) {
	// small insertion sort avoids importing sort in hot paths? keep simple
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}

// emptyKey refuses an empty associative key as bash does: the command line
// is abandoned.
func (r *runner) emptyKey(name, key string) bool {
	r.errf("%s[%s]: bad array subscript", name, key)
	r.status = 1
	r.exiting = true
	r.abandonLine = true
	return false
}
