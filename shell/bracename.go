package shell

import "mvdan.cc/sh/v3/syntax"

// rejoinNames gives a word produced by brace expansion the parameter names
// bash would read in it. Bash expands braces on the word's text and parses
// the results again, so in `$a{1,2}` the names are a1 and a2; the parser
// has already ended the name at the brace, leaving $a followed by the
// literal "1". A short $name followed by a literal that starts with a name
// character can only come from a brace (the parser would otherwise have
// read the character into the name), so they are merged here. Positional
// and special parameters ($1, $@) are one character in bash too and stay.
func rejoinNames(w *syntax.Word) *syntax.Word {
	var parts []syntax.WordPart
	for i := 0; i < len(w.Parts); i++ {
		pe, ok := w.Parts[i].(*syntax.ParamExp)
		if !ok || !pe.Short || pe.Param == nil || !syntax.ValidName(pe.Param.Value) || i+1 >= len(w.Parts) {
			if parts != nil {
				parts = append(parts, w.Parts[i])
			}
			continue
		}
		name := pe.Param.Value
		j := i + 1
		rest := ""
		for ; j < len(w.Parts); j++ {
			lit, ok := w.Parts[j].(*syntax.Lit)
			if !ok {
				break
			}
			n := nameCharsPrefix(lit.Value)
			name += lit.Value[:n]
			if n < len(lit.Value) {
				rest = lit.Value[n:]
				j++
				break
			}
		}
		if name == pe.Param.Value {
			if parts != nil {
				parts = append(parts, w.Parts[i])
			}
			continue
		}
		if parts == nil {
			parts = append(make([]syntax.WordPart, 0, len(w.Parts)), w.Parts[:i]...)
		}
		parts = append(parts, &syntax.ParamExp{Dollar: pe.Dollar, Short: true, Param: &syntax.Lit{ValuePos: pe.Param.ValuePos, Value: name}})
		if rest != "" {
			parts = append(parts, &syntax.Lit{Value: rest})
		}
		i = j - 1
	}
	if parts == nil {
		return w
	}
	return &syntax.Word{Parts: parts}
}

// nameCharsPrefix is the length of s's leading run of characters that
// continue a variable name (letters, digits, underscore).
func nameCharsPrefix(s string) int {
	for i := 0; i < len(s); i++ {
		if !isNameByte(s[i]) {
			return i
		}
	}
	return len(s)
}
