package shell

import (
	"errors"
	"io/fs"
	"math"
	"path"
	"slices"
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

// Word expansion is done here rather than by expand.Fields: bash's rules
// for "$@" inside words, IFS splitting, indirection, namerefs to arrays and
// the ${x@op} transformations need more than expand offers. expand still
// does brace expansion (expand.Braces) and pattern compiles via pattern.

// seg is a piece of a field; quoted pieces are not globbed.
type seg struct {
	s      string
	quoted bool
}

type field struct {
	segs  []seg
	valid bool // holds quoted (possibly empty) content
}

func (f *field) str() string {
	if len(f.segs) == 1 {
		return f.segs[0].s
	}
	var b strings.Builder
	for _, s := range f.segs {
		b.WriteString(s.s)
	}
	return b.String()
}

func (f *field) hasGlob(ext bool) bool {
	for _, s := range f.segs {
		if !s.quoted && (strings.ContainsAny(s.s, "*?[") || ext && strings.ContainsAny(s.s, "(")) {
			return true
		}
	}
	return false
}

// globPattern renders the field as a pattern with quoted parts escaped.
func (f *field) pattern() string {
	var b strings.Builder
	for _, s := range f.segs {
		if s.quoted {
			b.WriteString(quoteMeta(s.s))
		} else {
			b.WriteString(s.s)
		}
	}
	return b.String()
}

type wmode int

const (
	modeFields  wmode = iota // split and glob
	modeLiteral              // one string (assignments, redirections)
	modePattern              // one string, quoted parts escaped for pattern use
	modeDoc                  // here-document body
)

// wexp is the state of one word's expansion.
type wexp struct {
	r         *runner
	mode      wmode
	fields    []field
	cur       field
	ifs       string
	assign    bool // assignment value: tilde after ':' too
	splitLits bool // literal text is split too (the word of ${x:-word} unquoted)
	tildeOK   bool
}

func (w *wexp) add(s string, quoted bool) {
	if s == "" {
		if quoted {
			w.cur.valid = true
		}
		return
	}
	if n := len(w.cur.segs); n > 0 && w.cur.segs[n-1].quoted == quoted {
		w.cur.segs[n-1].s += s
	} else {
		w.cur.segs = append(w.cur.segs, seg{s, quoted})
	}
	if quoted {
		w.cur.valid = true
	}
}

func (w *wexp) endField(force bool) {
	if len(w.cur.segs) > 0 || w.cur.valid || force {
		w.fields = append(w.fields, w.cur)
	}
	w.cur = field{}
}

// addSplit appends an unquoted expansion result, splitting on IFS.
func (w *wexp) addSplit(s string) {
	if w.mode != modeFields {
		w.add(s, w.mode == modePattern && false)
		return
	}
	ifs := w.ifs
	if ifs == "" {
		w.add(s, false)
		if s != "" {
			w.cur.valid = true
		}
		return
	}
	isWS := func(c rune) bool { return (c == ' ' || c == '\t' || c == '\n') && strings.ContainsRune(ifs, c) }
	isIFS := func(c rune) bool { return strings.ContainsRune(ifs, c) }
	start := 0
	i := 0
	for i < len(s) {
		c, sz := utf8.DecodeRuneInString(s[i:])
		if !isIFS(c) {
			i += sz
			continue
		}
		if i > start {
			w.add(s[start:i], false)
			w.cur.valid = true
		}
		j := i
		for j < len(s) {
			c, sz := utf8.DecodeRuneInString(s[j:])
			if !isWS(c) {
				break
			}
			j += sz
		}
		nonws := false
		if j < len(s) {
			c, sz := utf8.DecodeRuneInString(s[j:])
			if isIFS(c) && !isWS(c) {
				nonws = true
				j += sz
				for j < len(s) {
					c, sz := utf8.DecodeRuneInString(s[j:])
					if !isWS(c) {
						break
					}
					j += sz
				}
			}
		}
		w.endField(nonws)
		i = j
		start = j
	}
	if start < len(s) {
		w.add(s[start:], false)
		w.cur.valid = true
	}
}

func (r *runner) ifsValue() string {
	v := r.lookup("IFS")
	if v == nil || !v.Set {
		return " \t\n"
	}
	return v.str()
}

// fields expands words into argument fields.
func (r *runner) fields(words ...*syntax.Word) ([]string, bool) {
	// usually a field a word: one allocation, not one per doubling
	out := make([]string, 0, len(words))
	// The fields are charged while they are being expanded (their peak:
	// `echo $x $x $x ...` must not hold many MaxStringBytes at once),
	// beyond fieldsFree bytes, so that a session whose budget is full can
	// still run `unset big`.
	var held, total int64
	defer func() { r.memGrow(-held) }()
	charged := 0
	for _, w := range words {
		ws := []*syntax.Word{w}
		if r.opts[optBraceexpand] && hasBraceLit(w) {
			if d := braceDepth(w); d > maxBraceNesting {
				r.rs.fail(limitf("brace nesting too deep (%d levels, limit %d)", d, maxBraceNesting))
				r.exiting = true
				return nil, false
			}
			cp := *w
			if syntax.SplitBraces(&cp) {
				if n := braceCount(&cp); n > int64(r.rs.lim.MaxExpansion) {
					r.rs.fail(limitf("brace expansion limit exceeded (%d fields, max %d)", n, r.rs.lim.MaxExpansion))
					r.exiting = true
					return nil, false
				}
				safeSequences(&cp)
				ws = expand.Braces(&cp)
				for i, bw := range ws {
					ws[i] = rejoinNames(bw)
				}
				if len(ws) > r.rs.lim.MaxExpansion {
					r.rs.fail(limitf("brace expansion limit exceeded (%d fields, max %d)", len(ws), r.rs.lim.MaxExpansion))
					r.exiting = true
					return nil, false
				}
			}
		}
		for _, bw := range ws {
			var fs []field
			if s, ok := plainLit(bw); ok {
				out = append(out, s) // nothing to expand (wc, -l, /log)
			} else {
				var err error
				if fs, err = r.expandWord(bw, modeFields); err != nil {
					r.expandErr(err)
					return nil, false
				}
			}
			for _, f := range fs {
				if !r.opts[optNoglob] && f.hasGlob(r.shopts["extglob"]) {
					matches, err := r.glob(f.pattern())
					if err != nil {
						r.expandErr(err)
						return nil, false
					}
					if len(matches) > 0 {
						out = append(out, matches...)
						continue
					}
					if r.shopts["failglob"] {
						// bash abandons the command line being run
						// (up to the top level) and reads the next
						r.errf("no match: %s", f.str())
						r.status = 1
						r.abandonLine = true
						r.exiting = true
						return nil, false
					}
					if r.shopts["nullglob"] {
						continue
					}
				}
				out = append(out, f.str())
			}
			if len(out) > r.rs.lim.MaxExpansion {
				r.rs.fail(limitf("expansion limit exceeded (%d fields, max %d)", len(out), r.rs.lim.MaxExpansion))
				r.exiting = true
				return nil, false
			}
			var n int64
			for _, f := range out[charged:] {
				n += strCost(f)
			}
			charged = len(out)
			total += n
			if n = total - fieldsFree - held; n > 0 {
				if !r.memGrow(n) {
					return nil, false
				}
				held += n
			}
		}
	}
	return out, true
}

// plainLit returns the text of a word that expands to itself: one literal
// with no escapes, tilde, glob or extglob characters or braces (brace
// expansion has run, but a '{' left over is literal anyway).
func plainLit(w *syntax.Word) (string, bool) {
	if len(w.Parts) != 1 {
		return "", false
	}
	l, ok := w.Parts[0].(*syntax.Lit)
	if !ok || l.Value == "" || l.Value[0] == '~' || strings.ContainsAny(l.Value, "\\*?[({~") {
		return "", false
	}
	return l.Value, true
}

func hasBraceLit(w *syntax.Word) bool {
	for _, p := range w.Parts {
		if l, ok := p.(*syntax.Lit); ok && strings.IndexByte(l.Value, '{') >= 0 {
			return true
		}
	}
	return false
}

func (r *runner) literal(w *syntax.Word) (string, bool) {
	if w == nil {
		return "", true
	}
	if len(w.Parts) == 1 {
		if l, ok := w.Parts[0].(*syntax.Lit); ok && !strings.ContainsAny(l.Value, "~\\") {
			return l.Value, true
		}
	}
	fs, err := r.expandWord(w, modeLiteral)
	if err != nil {
		r.expandErr(err)
		return "", false
	}
	s := ""
	if len(fs) > 0 {
		s = fs[0].str()
	}
	if len(s) > r.rs.lim.MaxStringBytes {
		r.rs.fail(limitf("string size limit exceeded (%d bytes, max %d)", len(s), r.rs.lim.MaxStringBytes))
		r.exiting = true
		return "", false
	}
	return s, true
}

// assignLiteral expands an assignment value: tildes after '=' and ':'.
func (r *runner) assignLiteral(w *syntax.Word) (string, bool) {
	if w == nil {
		return "", true
	}
	x := &wexp{r: r, mode: modeLiteral, assign: true}
	if err := x.parts(w.Parts, false, true); err != nil {
		r.expandErr(err)
		return "", false
	}
	var all field
	for _, f := range x.fields {
		all.segs = append(all.segs, f.segs...)
	}
	all.segs = append(all.segs, x.cur.segs...)
	return all.str(), true
}

// assignTilde expands ~ at the start of s and after each ':' (assignment
// values), leaving the rest to litUnquoted.
func (x *wexp) assignTilde(s string, first bool) {
	if first && x.mode == modeFields {
		// NAME=value in an argument: tildes apply after the '='
		if i := strings.IndexByte(s, '='); i > 0 {
			x.litUnquoted(s[:i+1])
			s = s[i+1:]
		}
	}
	parts := strings.Split(s, ":")
	for i, p := range parts {
		if i > 0 {
			x.add(":", false)
		}
		if (i > 0 || first) && strings.HasPrefix(p, "~") {
			name := p[1:]
			rest := ""
			if j := strings.IndexByte(name, '/'); j >= 0 {
				name, rest = name[:j], name[j:]
			}
			if i == len(parts)-1 && !x.tildeOK {
				x.litUnquoted(p)
				continue
			}
			if home, ok := x.r.homeOf(name); ok {
				x.add(home, true)
				x.litUnquoted(rest)
				continue
			}
		}
		x.litUnquoted(p)
	}
}

func (r *runner) homeOf(name string) (string, bool) {
	switch name {
	case "":
		if v := r.lookup("HOME"); v != nil && v.Set {
			return v.str(), true
		}
		return r.sh.cfg.Home, true
	case r.sh.cfg.User:
		return r.sh.cfg.Home, true
	case "root":
		return "/root", true
	}
	return "", false
}

func (r *runner) pattern(w *syntax.Word) (string, bool) {
	if w == nil {
		return "", true
	}
	fs, err := r.expandWord(w, modePattern)
	if err != nil {
		r.expandErr(err)
		return "", false
	}
	if len(fs) == 0 {
		return "", true
	}
	return fs[0].pattern(), true
}

func (r *runner) document(w *syntax.Word) (string, bool) {
	if w == nil {
		return "", true
	}
	fs, err := r.expandWord(w, modeDoc)
	if err != nil {
		r.expandErr(err)
		return "", false
	}
	if len(fs) == 0 {
		return "", true
	}
	return fs[0].str(), true
}

// expandWord expands one word (after brace expansion).
func (r *runner) expandWord(w *syntax.Word, mode wmode) ([]field, error) {
	x := &wexp{r: r, mode: mode}
	if mode == modeFields {
		x.ifs = r.ifsValue()
		// bash expands tildes in arguments that look like assignments
		if l, ok := w.Parts[0].(*syntax.Lit); ok {
			if i := strings.IndexByte(l.Value, '='); i > 0 && syntax.ValidName(l.Value[:i]) && strings.Contains(l.Value, "~") {
				x.assign = true
			}
		}
	}
	parts := w.Parts
	if len(parts) > 1 {
		parts = mergeLits(parts)
	}
	if err := x.parts(parts, false, true); err != nil {
		return nil, err
	}
	if mode != modeFields {
		// one field, whatever happened
		var all field
		for _, f := range x.fields {
			all.segs = append(all.segs, f.segs...)
		}
		all.segs = append(all.segs, x.cur.segs...)
		return []field{all}, nil
	}
	x.endField(false)
	return x.fields, nil
}

func (x *wexp) parts(ps []syntax.WordPart, quoted bool, wordStart bool) error {
	r := x.r
	for i, p := range ps {
		switch p := p.(type) {
		case *syntax.Lit:
			s := p.Value
			if quoted {
				x.add(dqUnescape(s), true)
				continue
			}
			if x.mode == modeDoc {
				x.add(docUnescape(s), true)
				continue
			}
			if x.assign && strings.Contains(s, "~") {
				// the tilde must end the literal or be followed by '/' or ':'
				x.tildeOK = i == len(ps)-1
				x.assignTilde(s, i == 0 && wordStart)
				continue
			}
			if i == 0 && wordStart && strings.HasPrefix(s, "~") {
				s = x.tilde(s, len(ps) == 1)
			}
			if x.splitLits && x.mode == modeFields {
				x.addSplit(unbackslash(s))
				continue
			}
			x.litUnquoted(s)
		case *syntax.SglQuoted:
			s := p.Value
			if p.Dollar {
				s = ansiC(s)
			} else if quoted {
				// '...' inside "${x:-...}" is literal text, quotes included
				s = "'" + s + "'"
			}
			if x.mode == modeDoc {
				// inside a here-doc quotes are literal characters
				if p.Dollar {
					x.add("$'"+p.Value+"'", true)
				} else {
					x.add("'"+p.Value+"'", true)
				}
				continue
			}
			x.add(s, true)
		case *syntax.DblQuoted:
			if x.mode == modeDoc {
				x.add("\"", true)
				if err := x.parts(p.Parts, false, false); err != nil {
					return err
				}
				x.add("\"", true)
				continue
			}
			if len(p.Parts) == 0 {
				x.cur.valid = true
			}
			if err := x.parts(p.Parts, true, false); err != nil {
				return err
			}
		case *syntax.ParamExp:
			if err := x.param(p, quoted); err != nil {
				return err
			}
		case *syntax.CmdSubst:
			s, err := r.cmdSubstString(p)
			if err != nil {
				return err
			}
			if quoted || x.mode == modeDoc {
				x.add(s, true)
			} else {
				x.addSplit(s)
			}
		case *syntax.ArithmExp:
			n, err := r.arithWhole(p.X, p.Right)
			if err != nil {
				return err
			}
			s := strconv.FormatInt(n, 10)
			if quoted || x.mode == modeDoc {
				x.add(s, true)
			} else {
				x.addSplit(s)
			}
		case *syntax.ProcSubst:
			s, err := r.procSubst(p)
			if err != nil {
				return err
			}
			x.add(s, true)
		case *syntax.ExtGlob:
			x.add(p.Op.String()+p.Pattern.Value+")", quoted)
		case *syntax.BraceExp:
			x.add(wordText(&syntax.Word{Parts: []syntax.WordPart{p}}), quoted)
		default:
			return errors.New("unsupported word part")
		}
	}
	return nil
}

// litUnquoted adds unquoted literal source text: backslash quotes the next
// character.
func (x *wexp) litUnquoted(s string) {
	if strings.IndexByte(s, '\\') < 0 {
		x.add(s, false)
		return
	}
	start := 0
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' {
			continue
		}
		if i > start {
			x.add(s[start:i], false)
		}
		if i+1 < len(s) {
			if s[i+1] == '\n' {
				i++
				start = i + 1
				continue
			}
			_, sz := utf8.DecodeRuneInString(s[i+1:])
			x.add(s[i+1:i+1+sz], true)
			i += sz
			start = i + 1
		} else {
			// a backslash that ends the word quotes nothing but still
			// quotes: bash keeps the (empty) field ({Z..a} has one)
			x.add("", true)
			start = i + 1
		}
	}
	if start < len(s) {
		x.add(s[start:], false)
	}
}

// dqUnescape removes the backslashes that are special inside "...".
func dqUnescape(s string) string {
	if strings.IndexByte(s, '\\') < 0 {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			switch s[i+1] {
			case '$', '`', '"', '\\':
				b.WriteByte(s[i+1])
				i++
				continue
			case '\n':
				i++
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func docUnescape(s string) string {
	if strings.IndexByte(s, '\\') < 0 {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			switch s[i+1] {
			case '$', '`', '\\':
				b.WriteByte(s[i+1])
				i++
				continue
			case '\n':
				i++
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// ansiC decodes $'...' escapes (and ${x@E}'s). Like bash (C strings), a
// NUL ends the value.
func ansiC(s string) string {
	out, _ := bashfmt.Unescape(s, bashfmt.DollarQuote)
	if i := strings.IndexByte(out, 0); i >= 0 {
		out = out[:i]
	}
	return out
}

// tilde expands a leading ~ or ~user.
func (x *wexp) tilde(s string, whole bool) string {
	name := s[1:]
	rest := ""
	if i := strings.IndexByte(name, '/'); i >= 0 {
		name, rest = name[:i], name[i:]
	} else if !whole {
		// ~ followed by a quoted part: not a tilde prefix unless name is complete
		return s
	}
	home := ""
	switch name {
	case "":
		if v := x.r.lookup("HOME"); v != nil && v.Set {
			home = v.str()
		} else {
			home = x.r.sh.cfg.Home
		}
	case "+":
		home = x.r.cwd
	case "-":
		if v := x.r.lookup("OLDPWD"); v != nil && v.Set {
			home = v.str()
		} else {
			return s
		}
	default:
		switch name {
		case x.r.sh.cfg.User:
			home = x.r.sh.cfg.Home
		case "root":
			home = "/root"
		default:
			return s
		}
	}
	x.add(home, true)
	return rest
}

// cmdSubstString runs $(...) and returns its output minus trailing newlines.
func (r *runner) cmdSubstString(cs *syntax.CmdSubst) (string, error) {
	var b strings.Builder
	if err := r.cmdSubst(&b, cs); err != nil {
		return "", err
	}
	s := strings.TrimRight(b.String(), "\n")
	if strings.IndexByte(s, 0) >= 0 {
		s = strings.ReplaceAll(s, "\x00", "")
	}
	return s, nil
}

// glob expands a pattern against the vfs.
func (r *runner) glob(pat string) ([]string, error) {
	abs := strings.HasPrefix(pat, "/")
	parts := strings.Split(pat, "/")
	var bases []string
	if abs {
		bases = []string{"/"}
		parts = parts[1:]
	} else {
		bases = []string{""}
	}
	mode := pattern.Filenames | pattern.EntireString
	if !r.shopts["globstar"] {
		mode |= pattern.NoGlobStar
	}
	if r.shopts["extglob"] {
		mode |= pattern.ExtendedOperators
	}
	if r.shopts["nocaseglob"] {
		mode |= pattern.NoGlobCase
	}
	// A GLOBIGNORE set and not empty turns dotglob on, as in bash (its
	// patterns then take the dot files out if the user wants).
	dotglob := r.shopts["dotglob"] || r.globIgnoreSet()
	if dotglob {
		mode |= pattern.GlobLeadingDot
	}
	for i, part := range parts {
		last := i == len(parts)-1
		if part == "" {
			// a/b keeps its slash; so does a trailing one (*/ lists
			// directories as d/, as bash does)
			if last {
				// ** matched the empty path too: **/ does not list it
				bases = slices.DeleteFunc(bases, func(b string) bool { return b == "" })
			}
			for k := range bases {
				bases[k] += "/"
			}
			continue
		}
		if !globMeta(part, mode) {
			lit := unescapePat(part)
			var next []string
			for _, b := range bases {
				p := joinGlob(b, lit)
				if last {
					if _, err := r.sh.cfg.FS.Lstat(r.abs(p)); err == nil {
						next = append(next, p)
					}
				} else {
					next = append(next, p)
				}
			}
			bases = next
			continue
		}
		if part == "**" && r.shopts["globstar"] {
			var next []string
			for _, b := range bases {
				next = append(next, r.globStar(b, last, dotglob)...)
			}
			bases = next
			continue
		}
		match, err := r.patternMatcher(part, mode)
		if err != nil {
			return nil, nil
		}
		explicitDot := strings.HasPrefix(part, ".") || strings.HasPrefix(part, "\\.")
		var next []string
		for _, b := range bases {
			dir := b
			if dir == "" {
				dir = "."
			}
			ents, err := r.sh.cfg.FS.ReadDir(r.abs(dir))
			if err != nil {
				continue
			}
			names := make([]string, 0, len(ents)+2)
			if explicitDot && !r.shopts["globskipdots"] {
				names = append(names, ".", "..")
			}
			for _, e := range ents {
				names = append(names, e.Name())
			}
			for _, n := range names {
				if strings.HasPrefix(n, ".") && !explicitDot && !dotglob {
					continue
				}
				if (n == "." || n == "..") && (!explicitDot || r.shopts["globskipdots"]) {
					continue
				}
				if !match(n) {
					continue
				}
				p := joinGlob(b, n)
				if !last {
					fi, err := r.sh.cfg.FS.Stat(r.abs(p))
					if err != nil || !fi.IsDir() {
						continue
					}
				}
				next = append(next, p)
			}
		}
		bases = next
		if len(bases) > r.rs.lim.MaxExpansion {
			return nil, limitf("glob expansion limit exceeded (max %d)", r.rs.lim.MaxExpansion)
		}
	}
	if strings.HasSuffix(pat, "/") {
		var keep []string
		for _, b := range bases {
			if fi, err := r.sh.cfg.FS.Stat(r.abs(b)); err == nil && fi.IsDir() {
				keep = append(keep, b)
			}
		}
		bases = keep
	}
	bases = r.globIgnore(bases)
	sort.Strings(bases)
	return bases, nil
}

// globMeta is pattern.HasMeta that also sees extglob groups (@(a|b),
// !(x), ...) when mode has ExtendedOperators.
func globMeta(part string, mode pattern.Mode) bool {
	if pattern.HasMeta(part, mode) {
		return true
	}
	if mode&pattern.ExtendedOperators == 0 {
		return false
	}
	for i := 1; i < len(part); i++ {
		if part[i] == '(' && strings.IndexByte("@!+*?", part[i-1]) >= 0 && (i < 2 || part[i-2] != '\\') {
			return true
		}
	}
	return false
}

func (r *runner) globStar(base string, last, dotglob bool) []string {
	// ** last matches everything below base (files and directories); a **
	// followed by more of the pattern matches base and its directories.
	var out []string
	var walk func(dir string, depth int)
	if last && base != "" && !strings.HasSuffix(base, "/") {
		// d/** lists d itself as "d/", as bash does
		out = append(out, base+"/")
	} else {
		out = append(out, base)
	}
	walk = func(dir string, depth int) {
		if depth > 64 || len(out) > r.rs.lim.MaxExpansion {
			return
		}
		d := dir
		if d == "" {
			d = "."
		}
		ents, err := r.sh.cfg.FS.ReadDir(r.abs(d))
		if err != nil {
			return
		}
		for _, e := range ents {
			if strings.HasPrefix(e.Name(), ".") && !dotglob {
				continue
			}
			p := joinGlob(dir, e.Name())
			isDir := e.IsDir()
			if e.Type()&fs.ModeSymlink != 0 {
				// bash 5.2 does not descend into a symlinked directory,
				// but ** names it for the rest of the pattern (g/**/x
				// finds g/ln/x)
				isDir = false
				if !last {
					if fi, err := r.sh.cfg.FS.Stat(r.abs(p)); err == nil && fi.IsDir() {
						out = append(out, p)
					}
				}
			}
			if last || isDir {
				out = append(out, p)
			}
			if isDir {
				walk(p, depth+1)
			}
		}
	}
	walk(base, 0)
	if last && len(out) > 0 && out[0] == "" {
		out = out[1:] // ** alone does not list the current directory
	}
	return out
}

func joinGlob(base, name string) string {
	switch {
	case base == "":
		return name
	case strings.HasSuffix(base, "/"):
		return base + name
	}
	return base + "/" + name
}

func unescapePat(s string) string {
	if strings.IndexByte(s, '\\') < 0 {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			i++
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func (r *runner) globIgnoreSet() bool {
	v := r.lookup("GLOBIGNORE")
	return v != nil && v.Set && v.str() != ""
}

// globIgnore applies GLOBIGNORE as bash 5.2 does (strmatch with
// FNM_PATHNAME, measured against /usr/bin/bash): . and .. always go; each
// colon-separated pattern is matched against the whole result, `*` and `?`
// do not cross a slash except a trailing `*`, which takes the rest (so `*`
// and `g*` ignore g/B, `*B` does not), and dots are not special.
func (r *runner) globIgnore(ms []string) []string {
	if !r.globIgnoreSet() {
		return ms
	}
	pats := strings.Split(r.lookup("GLOBIGNORE").str(), ":")
	const mode = pattern.Filenames | pattern.EntireString | pattern.GlobLeadingDot | pattern.NoGlobStar
	var out []string
	for _, m := range ms {
		base := path.Base(strings.TrimSuffix(m, "/"))
		if base == "." || base == ".." {
			continue
		}
		ign := false
		for _, p := range pats {
			if p == "" {
				continue
			}
			if head, ok := trailingStar(p); ok {
				for k := 0; k <= len(m) && !ign; k++ {
					ign = r.matchPatternMode(head, m[:k], mode)
				}
			} else {
				ign = r.matchPatternMode(p, m, mode)
			}
			if ign {
				break
			}
		}
		if !ign {
			out = append(out, m)
		}
	}
	return out
}

// trailingStar: p ends in an unescaped `*` outside brackets and extglob
// groups; head is p without its trailing stars.
func trailingStar(p string) (head string, ok bool) {
	if !strings.HasSuffix(p, "*") {
		return p, false
	}
	head = strings.TrimRight(p, "*")
	if n := len(p) - len(head); strings.HasSuffix(head, "\\") && (len(head)-len(strings.TrimRight(head, "\\")))%2 == 1 {
		if n == 1 {
			return p, false // a literal star
		}
		head += "*"
	}
	if strings.ContainsAny(head, "[(") {
		return p, false // brackets or extglob: leave to the whole match
	}
	return head, true
}

func (r *runner) matchPatternMode(pat, s string, mode pattern.Mode) bool {
	if r.shopts["extglob"] {
		mode |= pattern.ExtendedOperators
	}
	if mode&pattern.EntireString == 0 {
		expr, err := r.patternRegexp(pat, mode)
		if err != nil {
			return pat == s
		}
		rx, err := compileRx(expr)
		if err != nil {
			return false
		}
		return rx.MatchString(s)
	}
	match, err := r.patternMatcher(pat, mode)
	if err != nil {
		return pat == s
	}
	return match(s)
}

var _ = unicode.IsUpper
var _ = slices.Contains[[]string]

// braceCount estimates how many words a brace expansion produces, so that
// {1..100000000} is refused before anything is allocated.
func braceCount(w *syntax.Word) int64 {
	total := int64(1)
	for _, p := range w.Parts {
		b, ok := p.(*syntax.BraceExp)
		if !ok {
			continue
		}
		var n int64
		if b.Sequence && len(b.Elems) >= 2 {
			x, err1 := strconv.ParseInt(b.Elems[0].Lit(), 10, 64)
			y, err2 := strconv.ParseInt(b.Elems[1].Lit(), 10, 64)
			if err1 == nil && err2 == nil {
				n = y - x
				if n < 0 {
					n = -n
				}
				n++
				if len(b.Elems) > 2 {
					if inc, err := strconv.ParseInt(b.Elems[2].Lit(), 10, 64); err == nil && inc != 0 {
						if inc < 0 {
							inc = -inc
						}
						n = n/inc + 1
					}
				}
			} else {
				n = 128
			}
		} else {
			for _, e := range b.Elems {
				n += braceCount(e)
			}
		}
		if n <= 0 {
			n = 1
		}
		total *= n
		if total > 1<<40 {
			return 1 << 40
		}
	}
	return total
}

// quoteMeta escapes every character special in patterns (pattern.QuoteMeta
// leaves parentheses alone, which extglob then misreads).
func quoteMeta(s string) string {
	if !strings.ContainsAny(s, "*?[]\\()|+@!{}-^") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if strings.IndexByte("*?[]\\()|+@!{}-^", s[i]) >= 0 {
			b.WriteByte('\\')
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// mergeLits joins adjacent literal parts (brace expansion leaves them
// split), so that a tilde prefix is seen whole.
func mergeLits(ps []syntax.WordPart) []syntax.WordPart {
	merge := false
	for i := 1; i < len(ps); i++ {
		_, a := ps[i-1].(*syntax.Lit)
		_, b := ps[i].(*syntax.Lit)
		if a && b {
			merge = true
			break
		}
	}
	if !merge {
		return ps
	}
	out := make([]syntax.WordPart, 0, len(ps))
	for _, p := range ps {
		if l, ok := p.(*syntax.Lit); ok && len(out) > 0 {
			if prev, ok := out[len(out)-1].(*syntax.Lit); ok {
				out[len(out)-1] = &syntax.Lit{ValuePos: prev.ValuePos, ValueEnd: l.ValueEnd, Value: prev.Value + l.Value}
				continue
			}
		}
		out = append(out, p)
	}
	return out
}

// safeSequences rewrites w's numeric brace sequences whose last step would
// pass an int64 limit ({9223372036854775805..9223372036854775807}) into
// the list of their values: expand.Braces counts on past the end there,
// wraps around and never stops (found by bash 5.2's tests/arith: it took
// 24 GB before the kernel ended warren).
func safeSequences(w *syntax.Word) {
	cloned := false
	for i, p := range w.Parts {
		b, ok := p.(*syntax.BraceExp)
		if !ok {
			continue
		}
		if !b.Sequence {
			for _, e := range b.Elems {
				safeSequences(e)
			}
			continue
		}
		vals, risky := wrappingSequence(b)
		if !risky {
			continue
		}
		if !cloned {
			w.Parts, cloned = slices.Clone(w.Parts), true
		}
		if len(vals) == 1 {
			w.Parts[i] = &syntax.Lit{Value: vals[0]}
			continue
		}
		elems := make([]*syntax.Word, len(vals))
		for j, v := range vals {
			elems[j] = &syntax.Word{Parts: []syntax.WordPart{&syntax.Lit{Value: v}}}
		}
		w.Parts[i] = &syntax.BraceExp{Elems: elems}
	}
}

// wrappingSequence reports whether the numeric sequence b ends within one
// step of an int64 limit, and if so its values (braceCount has bounded how
// many there are).
func wrappingSequence(b *syntax.BraceExp) ([]string, bool) {
	if len(b.Elems) < 2 {
		return nil, false
	}
	from, err1 := strconv.ParseInt(b.Elems[0].Lit(), 10, 64)
	to, err2 := strconv.ParseInt(b.Elems[1].Lit(), 10, 64)
	if err1 != nil || err2 != nil {
		return nil, false
	}
	incr := int64(1)
	if len(b.Elems) > 2 {
		if n, _ := strconv.ParseInt(b.Elems[2].Lit(), 10, 64); n != 0 {
			if n < 0 {
				n = -n
			}
			if n > 0 { // -MinInt64 stays negative
				incr = n
			} else {
				incr = math.MaxInt64
			}
		}
	}
	up := from <= to
	if up && to <= math.MaxInt64-incr || !up && to >= math.MinInt64+incr {
		return nil, false
	}
	var vals []string
	for n := from; ; {
		vals = append(vals, strconv.FormatInt(n, 10))
		if up && n > to-incr || !up && n < to+incr {
			break // the next step passes the end (computed without overflow)
		}
		if up {
			n += incr
		} else {
			n -= incr
		}
	}
	return vals, true
}
