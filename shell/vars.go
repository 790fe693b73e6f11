package shell

import (
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"

	"mvdan.cc/sh/v3/expand"
)

// Variable attributes.
const (
	attrExport = 1 << iota
	attrReadonly
	attrInteger
	attrLower
	attrUpper
	attrNameref
	attrArray // declared -a
	attrAssoc // declared -A
)

// Var is one shell variable. Indexed arrays are List plus, when sparse,
// Idx (sorted indices, one per List element), as expand wants them.
type Var struct {
	Set  bool
	Kind expand.ValueKind // String, Indexed or Associative (namerefs are String + attrNameref)
	Str  string
	List []string
	Idx  []int
	Map  map[string]string
	Attr uint16
	mem  int64     // bytes charged to the memory budget for this value (memory.go)
	ord  *keyOrder // an associative array's key order, as bash lists it (assocorder.go)
}

func (v *Var) clone() *Var {
	n := *v
	n.mem = 0 // the clone shares the strings; it charges what it changes
	if v.List != nil {
		n.List = slices.Clone(v.List)
	}
	if v.Idx != nil {
		n.Idx = slices.Clone(v.Idx)
	}
	if v.Map != nil {
		n.Map = maps.Clone(v.Map)
	}
	n.ord = v.ord.clone()
	return &n
}

// str is the value of the variable as "$name" sees it.
func (v *Var) str() string {
	switch v.Kind {
	case expand.Indexed:
		s, _ := v.index(0)
		return s
	case expand.Associative:
		return v.Map["0"]
	}
	return v.Str
}

func (v *Var) index(i int) (string, bool) {
	if v.Kind != expand.Indexed {
		if i == 0 && v.Set && v.Kind != expand.Associative {
			return v.Str, true
		}
		return "", false
	}
	if v.Idx == nil {
		if i >= 0 && i < len(v.List) {
			return v.List[i], true
		}
		return "", false
	}
	j := sort.SearchInts(v.Idx, i)
	if j < len(v.Idx) && v.Idx[j] == i {
		return v.List[j], true
	}
	return "", false
}

func (v *Var) maxIndex() int {
	if v.Idx == nil {
		return len(v.List) - 1
	}
	if len(v.Idx) == 0 {
		return -1
	}
	return v.Idx[len(v.Idx)-1]
}

// setIndex sets element i (i >= 0) of an indexed array.
func (v *Var) setIndex(i int, s string) {
	if v.Kind != expand.Indexed {
		old, had := v.Str, v.Set && v.Kind == expand.String
		v.Kind, v.Str, v.List, v.Idx = expand.Indexed, "", nil, nil
		if had {
			v.List = []string{old}
		}
	}
	v.Set = true
	if v.Idx == nil {
		if i < len(v.List) {
			v.List[i] = s
			return
		}
		if i == len(v.List) {
			v.List = append(v.List, s)
			return
		}
		v.Idx = make([]int, len(v.List))
		for k := range v.Idx {
			v.Idx[k] = k
		}
	}
	j := sort.SearchInts(v.Idx, i)
	if j < len(v.Idx) && v.Idx[j] == i {
		v.List[j] = s
		return
	}
	v.Idx = slices.Insert(v.Idx, j, i)
	v.List = slices.Insert(v.List, j, s)
}

func (v *Var) unsetIndex(i int) {
	if v.Kind != expand.Indexed {
		if i == 0 {
			v.Set = false
			v.Str = ""
		}
		return
	}
	if v.Idx == nil {
		if i < 0 || i >= len(v.List) {
			return
		}
		if i == len(v.List)-1 {
			v.List = v.List[:i]
			return
		}
		v.Idx = make([]int, len(v.List))
		for k := range v.Idx {
			v.Idx[k] = k
		}
	}
	j := sort.SearchInts(v.Idx, i)
	if j < len(v.Idx) && v.Idx[j] == i {
		v.Idx = slices.Delete(v.Idx, j, j+1)
		v.List = slices.Delete(v.List, j, j+1)
	}
}

// keys returns the indices (or map keys) of an array, in order.
func (v *Var) keys() []string {
	switch v.Kind {
	case expand.Indexed:
		out := make([]string, len(v.List))
		for k := range v.List {
			if v.Idx == nil {
				out[k] = strconv.Itoa(k)
			} else {
				out[k] = strconv.Itoa(v.Idx[k])
			}
		}
		return out
	case expand.Associative:
		if v.ord != nil {
			return v.ord.sortKeys(slices.Collect(maps.Keys(v.Map)))
		}
		return slices.Sorted(maps.Keys(v.Map))
	}
	if v.Set {
		return []string{"0"}
	}
	return nil
}

func (v *Var) values() []string {
	switch v.Kind {
	case expand.Indexed:
		return v.List
	case expand.Associative:
		ks := v.keys()
		out := make([]string, len(ks))
		for i, k := range ks {
			out[i] = v.Map[k]
		}
		return out
	}
	if v.Set {
		return []string{v.Str}
	}
	return nil
}

func (v *Var) count() int {
	switch v.Kind {
	case expand.Indexed:
		return len(v.List)
	case expand.Associative:
		return len(v.Map)
	}
	if v.Set {
		return 1
	}
	return 0
}

func (v *Var) toExpand() expand.Variable {
	ev := expand.Variable{
		Set:      v.Set,
		Exported: v.Attr&attrExport != 0,
		ReadOnly: v.Attr&attrReadonly != 0,
		Kind:     v.Kind,
		Str:      v.Str,
		List:     v.List,
		Indexes:  v.Idx,
		Map:      v.Map,
	}
	if v.Attr&attrNameref != 0 {
		ev.Kind = expand.NameRef
	}
	if !v.Set && ev.Kind == expand.String {
		ev.Kind = expand.Unknown
	}
	return ev
}

// scope is one level of dynamic scoping: the globals or a function call's
// locals (or a temporary binding frame for `x=1 f`).
type scope struct {
	vars   map[string]*Var
	parent *scope
	temp   bool // prefix-assignment frame
	// savedOpts: the set -o options when a function ran `local -`, put
	// back when it returns
	savedOpts *[numOpts]bool
}

func (s *scope) cloneChain() *scope {
	if s == nil {
		return nil
	}
	n := &scope{vars: make(map[string]*Var, len(s.vars)), parent: s.parent.cloneChain(), temp: s.temp}
	for k, v := range s.vars {
		n.vars[k] = v.clone()
	}
	return n
}

// attrFlags renders attributes as declare -p does.
func (v *Var) attrFlags() string {
	var b strings.Builder
	if v.Kind == expand.Indexed || v.Attr&attrArray != 0 {
		b.WriteByte('a')
	}
	if v.Kind == expand.Associative || v.Attr&attrAssoc != 0 {
		b.WriteByte('A')
	}
	if v.Attr&attrInteger != 0 {
		b.WriteByte('i')
	}
	if v.Attr&attrLower != 0 {
		b.WriteByte('l')
	}
	if v.Attr&attrNameref != 0 {
		b.WriteByte('n')
	}
	if v.Attr&attrReadonly != 0 {
		b.WriteByte('r')
	}
	if v.Attr&attrUpper != 0 {
		b.WriteByte('u')
	}
	if v.Attr&attrExport != 0 {
		b.WriteByte('x')
	}
	if b.Len() == 0 {
		return "--"
	}
	return "-" + b.String()
}
