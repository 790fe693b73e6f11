package awk

import (
	"reflect"
	"unicode"
	"unicode/utf8"
	"unsafe"

	"github.com/benhoyt/goawk/interp"
)

// GoAWK splits records with the default FS (" ") by strings.Fields, on
// every Unicode space; POSIX awks (gawk, mawk) split on blanks and
// newlines only, so a CRLF record's last field keeps its \r ($NF == "x\r",
// NF counts a lone "\r"), and \v, \f and NBSP are field text. GoAWK's
// splitting is not reachable through its API, so the program is given a
// first main rule whose pattern calls splitFunc when the record has a \r
// (index($0, "\r"): a builtin, cheaper than a native call per record):
// for a record that is to be split on " ", it splits the record the POSIX
// way and stores the fields in GoAWK's interpreter state (found by name
// with reflect, as the meter does; written on GoAWK's own goroutine, in a
// native function call, so without a race), marked as split. Records
// without one are left to GoAWK's own lazy split.
//
// Plain getline is rewritten (compat.go) to call it too. What it does not
// reach: $0 assigned in an action or read by getline < "-" (GoAWK splits
// those itself), and records whose only odd
// space is \v, \f or a Unicode one (strings.Fields splits on them).
const splitFunc = "__warren_fields"

var fieldLayout = func() (l struct {
	ok                                                          bool
	line, fieldSep, fields, trueStr, numFields, have, inputMode int
	nr, fnr                                                     int
}) {
	t := reflect.TypeOf(interp.Interpreter{})
	if t.NumField() != 1 || t.Field(0).Type.Kind() != reflect.Pointer {
		return
	}
	it := t.Field(0).Type.Elem()
	field := func(name string, typ reflect.Type) (int, bool) {
		f, ok := it.FieldByName(name)
		if !ok || f.Type.Kind() != typ.Kind() || f.Type.Size() != typ.Size() {
			return 0, false
		}
		if typ.Kind() == reflect.Slice && f.Type.Elem().Kind() != typ.Elem().Kind() {
			return 0, false
		}
		return int(f.Offset), true
	}
	var ok [9]bool
	l.line, ok[0] = field("line", reflect.TypeOf(""))
	l.fieldSep, ok[1] = field("fieldSep", reflect.TypeOf(""))
	l.fields, ok[2] = field("fields", reflect.TypeOf([]string{}))
	l.trueStr, ok[3] = field("fieldsIsTrueStr", reflect.TypeOf([]bool{}))
	l.numFields, ok[4] = field("numFields", reflect.TypeOf(0))
	l.have, ok[5] = field("haveFields", reflect.TypeOf(false))
	l.inputMode, ok[6] = field("inputMode", reflect.TypeOf(interp.DefaultMode))
	l.nr, ok[7] = field("lineNum", reflect.TypeOf(0))
	l.fnr, ok[8] = field("fileLineNum", reflect.TypeOf(0))
	l.ok = ok == [9]bool{true, true, true, true, true, true, true, true, true}
	return
}()

// splitter re-splits records for one interpreter.
type splitter struct {
	base unsafe.Pointer // GoAWK's *interp; nil when the layout is unknown
}

// position is NR and FNR, read on GoAWK's goroutine (in a native
// function, or after the run) for diagnostics; ok is false when the
// layout is unknown.
func (s *splitter) position() (nr, fnr int, ok bool) {
	if s == nil || s.base == nil {
		return 0, 0, false
	}
	return *(*int)(unsafe.Add(s.base, fieldLayout.nr)), *(*int)(unsafe.Add(s.base, fieldLayout.fnr)), true
}

func newSplitter(it *interp.Interpreter) *splitter {
	if !fieldLayout.ok {
		return &splitter{}
	}
	return &splitter{base: reflect.ValueOf(it).Elem().Field(0).UnsafePointer()}
}

// split is splitFunc: it returns 0, so the rule it is the pattern of
// never runs an action.
func (s *splitter) split() int {
	if s.base == nil {
		return 0
	}
	l := &fieldLayout
	if *(*string)(unsafe.Add(s.base, l.fieldSep)) != " " || *(*interp.IOMode)(unsafe.Add(s.base, l.inputMode)) != interp.DefaultMode {
		return 0
	}
	line := *(*string)(unsafe.Add(s.base, l.line))
	if !otherSpace(line) {
		return 0
	}
	fp := (*[]string)(unsafe.Add(s.base, l.fields))
	fields := blankFields((*fp)[:0], line)
	*fp = fields
	ts := (*[]bool)(unsafe.Add(s.base, l.trueStr))
	*ts = (*ts)[:0]
	for range fields {
		*ts = append(*ts, false) // fields are strnums
	}
	*(*int)(unsafe.Add(s.base, l.numFields)) = len(fields)
	*(*bool)(unsafe.Add(s.base, l.have)) = true
	return 0
}

// otherSpace reports whether line has a character strings.Fields splits on
// that awk's default splitting does not.
func otherSpace(line string) bool {
	for i := 0; i < len(line); i++ {
		switch c := line[i]; {
		case c == '\r' || c == '\v' || c == '\f':
			return true
		case c >= utf8.RuneSelf:
			r, n := utf8.DecodeRuneInString(line[i:])
			if unicode.IsSpace(r) {
				return true
			}
			i += n - 1
		}
	}
	return false
}

// blankFields splits line on runs of spaces, tabs and newlines, ignoring
// them at both ends.
func blankFields(dst []string, line string) []string {
	i := 0
	for {
		for i < len(line) && isBlank(line[i]) {
			i++
		}
		if i == len(line) {
			return dst
		}
		j := i
		for j < len(line) && !isBlank(line[j]) {
			j++
		}
		dst = append(dst, line[i:j])
		i = j
	}
}

func isBlank(c byte) bool { return c == ' ' || c == '\t' || c == '\n' }
