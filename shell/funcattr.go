package shell

import (
	"maps"
	"sort"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Function attributes: export -f puts a function in the environment of
// the commands a shell runs (as bash's BASH_FUNC_name%%=() { ... } entry,
// which a bash started from it defines again), readonly -f forbids
// redefining and unsetting it. r.funcAttr is replaced, never changed, so
// a subshell's copy keeps its own. The attributes are not part of a saved
// session.

// funcAttrOf returns name's function attributes.
func (r *runner) funcAttrOf(name string) uint16 { return r.funcAttr[name] }

// setFuncAttr adds and removes attributes of the function name.
func (r *runner) setFuncAttr(name string, add, del uint16) {
	old := r.funcAttr[name]
	nw := (old | add) &^ del
	if nw == old {
		return
	}
	m := maps.Clone(r.funcAttr)
	if m == nil {
		m = map[string]uint16{}
	}
	if nw == 0 {
		delete(m, name)
	} else {
		m[name] = nw
	}
	r.funcAttr = m
	if (old^nw)&attrExport != 0 {
		r.envCache = nil
	}
}

// funcChanged is called when name is defined or unset: the environment
// holds an exported function's text.
func (r *runner) funcChanged(name string, unset bool) {
	if r.funcAttr[name]&attrExport != 0 {
		r.envCache = nil
	}
	if unset {
		r.setFuncAttr(name, 0, ^uint16(0))
	}
}

const funcEnvPrefix, funcEnvSuffix = "BASH_FUNC_", "%%"

// funcEnv is the environment entries of the exported functions.
func (r *runner) funcEnv() []string {
	var out []string
	for name, a := range r.funcAttr {
		if a&attrExport == 0 || r.funcs[name] == nil {
			continue
		}
		out = append(out, funcEnvPrefix+name+funcEnvSuffix+"="+r.funcExportText(name))
	}
	sort.Strings(out)
	return out
}

// funcExportText is the value bash exports a function as: "() " and the
// body laid out one space a level, the first command on the brace's line.
func (r *runner) funcExportText(name string) string {
	p := newBashLayout()
	p.step = 1
	p.function("", r.funcs[name], 0, false)
	s := strings.TrimPrefix(p.b.String(), " () \n")
	return "() " + strings.Replace(s, "{ \n", "{ ", 1)
}

// importFuncs defines the functions a parent bash exported in env; an
// entry that is not a function definition is left alone, as bash does.
func (r *runner) importFuncs(env []string) {
	for _, kv := range env {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || !strings.HasPrefix(k, funcEnvPrefix) || !strings.HasSuffix(k, funcEnvSuffix) || !strings.HasPrefix(v, "() {") {
			continue
		}
		name := k[len(funcEnvPrefix) : len(k)-len(funcEnvSuffix)]
		if !exportableFunc(name) || strings.ContainsAny(name, " \t\n$`'\"\\|&;()<>") {
			continue
		}
		f, err := parseFile(name + " " + v)
		if err != nil || len(f.Stmts) != 1 {
			continue
		}
		fd, ok := f.Stmts[0].Cmd.(*syntax.FuncDecl)
		if !ok {
			continue
		}
		r.own()
		if r.funcs == nil {
			r.funcs = map[string]*syntax.Stmt{}
		}
		r.funcs[name] = fd.Body
		r.setFuncAttr(name, attrExport, 0)
	}
}

// unsetFunc removes the function name; false (with bash's message) when
// it is readonly.
func (r *runner) unsetFunc(name string) bool {
	if r.funcAttrOf(name)&attrReadonly != 0 {
		r.errf("unset: %s: cannot unset: readonly function", name)
		return false
	}
	r.own()
	r.funcChanged(name, true)
	delete(r.funcs, name)
	return true
}

// exportableFunc reports whether bash exports (and imports) a function of
// this name: not one a child would read as a path or an assignment.
func exportableFunc(name string) bool {
	return name != "" && !strings.ContainsAny(name, "/=")
}
