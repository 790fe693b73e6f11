package jq

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"math/big"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/itchyny/gojq"

	"github.com/warren-sandbox/warren/commands"
)

// maxDepth bounds nesting like jq's parser does (and keeps recursion sane).
const maxDepth = 10000

// maxTracked bounds how many objects' key orders are remembered; past it,
// objects print with sorted keys (gojq's order) instead of growing memory.
const maxTracked = 1 << 20

// keyOrder remembers the key order of objects decoded from the input.
// gojq keeps objects as Go maps, which lose it; jq prints input objects in
// their original order, and gojq never mutates a map in place, so an
// output map that is an input map prints in the input's order. (Objects
// jq builds or changes still print with sorted keys.)
//
// Objects the filter builds or changes are new maps. For those: if an
// object literal of the filter names all their keys, its order is used
// ({name: .n, id: .i} prints name first, as in jq); otherwise keys seen in
// the input come first in input order (so . + {z: 1} and del(.x) keep the
// input's order), then literal keys in filter order, then the rest sorted.
type keyOrder struct {
	keys      map[uintptr]ordered
	inputRank map[string]int // first appearance of a key name in the input
	literals  [][]string     // static keys of each object literal in the filter
	litRank   map[string]int
}

const maxRanked = 1 << 16

func (k *keyOrder) seen(key string) {
	if k.inputRank == nil {
		k.inputRank = map[string]int{}
	}
	if _, ok := k.inputRank[key]; !ok && len(k.inputRank) < maxRanked {
		k.inputRank[key] = len(k.inputRank)
	}
}

// addLiterals records the object literals of a parsed filter.
func (k *keyOrder) addLiterals(q *gojq.Query) {
	k.litRank = map[string]int{}
	visit(reflect.ValueOf(q), func(o *gojq.Object) {
		var keys []string
		for _, kv := range o.KeyVals {
			switch {
			case kv.Key != "":
				keys = append(keys, strings.TrimPrefix(kv.Key, "$"))
			case kv.KeyString != nil && len(kv.KeyString.Queries) == 0:
				keys = append(keys, kv.KeyString.Str)
			default:
				return // a computed key: this literal says nothing static
			}
		}
		if len(keys) > 1 {
			k.literals = append(k.literals, keys)
		}
		for _, key := range keys {
			if _, ok := k.litRank[key]; !ok {
				k.litRank[key] = len(k.litRank)
			}
		}
	})
}

// visit walks the filter's syntax tree and calls fn for each object literal.
func visit(v reflect.Value, fn func(*gojq.Object)) {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return
		}
		if o, ok := v.Interface().(*gojq.Object); ok {
			fn(o)
		}
		visit(v.Elem(), fn)
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			if v.Type().Field(i).IsExported() {
				visit(v.Field(i), fn)
			}
		}
	case reflect.Slice:
		for i := 0; i < v.Len(); i++ {
			visit(v.Index(i), fn)
		}
	}
}

type ordered struct {
	m    map[string]any // keeps the map alive so its address is not reused
	keys []string
}

func (k *keyOrder) remember(m map[string]any, keys []string) {
	if k.keys == nil {
		k.keys = map[uintptr]ordered{}
	}
	if len(k.keys) >= maxTracked || len(keys) < 2 {
		return
	}
	k.keys[reflect.ValueOf(m).Pointer()] = ordered{m: m, keys: keys}
}

// of returns the order to print m's keys in (see keyOrder).
func (k *keyOrder) of(m map[string]any) []string {
	if k != nil && k.keys != nil {
		if o, ok := k.keys[reflect.ValueOf(m).Pointer()]; ok && len(o.keys) == len(m) {
			return o.keys
		}
	}
	keys := make([]string, 0, len(m))
	for key := range m {
		keys = append(keys, key)
	}
	if k == nil || len(keys) < 2 {
		sort.Strings(keys)
		return keys
	}
	for _, lit := range k.literals {
		if len(lit) < len(m) {
			continue
		}
		covered := 0
		for _, key := range lit {
			if _, ok := m[key]; ok {
				covered++
			}
		}
		if covered == len(m) {
			out := keys[:0]
			for _, key := range lit {
				if _, ok := m[key]; ok {
					out = append(out, key)
				}
			}
			return out
		}
	}
	rank := func(key string) (int, int) {
		if r, ok := k.inputRank[key]; ok {
			return 0, r
		}
		if r, ok := k.litRank[key]; ok {
			return 1, r
		}
		return 2, 0
	}
	sort.Slice(keys, func(i, j int) bool {
		ci, ri := rank(keys[i])
		cj, rj := rank(keys[j])
		if ci != cj {
			return ci < cj
		}
		if ri != rj {
			return ri < rj
		}
		return keys[i] < keys[j]
	})
	return keys
}

// decoder reads a stream of JSON values into gojq's representation (int,
// float64, *big.Int, string, []any, map[string]any, bool, nil).
type decoder struct {
	r     *bufio.Reader
	order *keyOrder
	line  int
	col   int
	buf   []byte
	// limit bounds the input bytes one value may take (its decoded form is
	// of the same order); 0 = unlimited. consumed counts the current value.
	limit    int64
	consumed int64
	// cost estimates the decoded value's memory as the meter would walk
	// it (the Go form is ~2-17x the text), so the meter need not walk
	// an input it is told the size of.
	cost       int64
	costLimit  int64 // the shared budget (0 = none)
	overBudget bool  // errTooBig came from costLimit
}

// errTooBig is returned when one input value exceeds the memory limit.
var errTooBig = errors.New("input value exceeds the sandbox memory limit")

type syntaxError struct {
	msg       string
	line, col int
}

func (e *syntaxError) Error() string {
	return fmt.Sprintf("%s at line %d, column %d", e.msg, e.line, e.col)
}

func (d *decoder) fail(msg string) error { return &syntaxError{msg, d.line + 1, d.col} }

func (d *decoder) next() (byte, error) {
	c, err := d.r.ReadByte()
	if err != nil {
		return 0, err
	}
	d.consumed++
	if c == '\n' {
		d.line++
		d.col = 0
	} else {
		d.col++
	}
	return c, nil
}

func (d *decoder) unread() {
	d.r.UnreadByte()
	d.col--
}

func (d *decoder) skipSpace() (byte, error) {
	for {
		c, err := d.next()
		if err != nil {
			return 0, err
		}
		if c != ' ' && c != '\t' && c != '\n' && c != '\r' {
			return c, nil
		}
	}
}

// Decode returns the next value, or io.EOF at the end of the stream.
func (d *decoder) Decode() (any, error) {
	d.consumed, d.cost = 0, 0
	c, err := d.skipSpace()
	if err != nil {
		if err == io.EOF {
			return nil, io.EOF
		}
		return nil, err
	}
	return d.value(c, 0)
}

func (d *decoder) unexpected(err error, what string) error {
	if err == io.EOF {
		return d.fail("Unfinished JSON term at EOF")
	}
	if err != nil {
		return err
	}
	return d.fail(what)
}

func (d *decoder) value(c byte, depth int) (any, error) {
	if depth > maxDepth {
		return nil, d.fail("Exceeds depth limit for parsing")
	}
	if d.limit > 0 && d.consumed > d.limit {
		return nil, errTooBig
	}
	if d.costLimit > 0 && d.cost > d.costLimit {
		d.overBudget = true
		return nil, errTooBig
	}
	d.cost += nodeCost
	switch {
	case c == '{':
		m := map[string]any{}
		d.cost += 48
		var keys []string
		c, err := d.skipSpace()
		if err != nil {
			return nil, d.unexpected(err, "")
		}
		if c == '}' {
			return m, nil
		}
		for {
			if c != '"' {
				return nil, d.fail("Object keys must be strings")
			}
			k, err := d.str()
			if err != nil {
				return nil, err
			}
			if c, err = d.skipSpace(); err != nil || c != ':' {
				return nil, d.unexpected(err, "Objects must consist of key:value pairs")
			}
			if c, err = d.skipSpace(); err != nil {
				return nil, d.unexpected(err, "")
			}
			v, err := d.value(c, depth+1)
			if err != nil {
				return nil, err
			}
			if _, dup := m[k]; !dup {
				keys = append(keys, k)
				d.order.seen(k)
				d.cost += mapEntryCost + int64(len(k)) + 16 // and its key in the order
			}
			m[k] = v
			if c, err = d.skipSpace(); err != nil {
				return nil, d.unexpected(err, "")
			}
			if c == '}' {
				d.order.remember(m, keys)
				return m, nil
			}
			if c != ',' {
				return nil, d.fail("Expected separator between values")
			}
			if c, err = d.skipSpace(); err != nil {
				return nil, d.unexpected(err, "")
			}
		}
	case c == '[':
		a := []any{}
		c, err := d.skipSpace()
		if err != nil {
			return nil, d.unexpected(err, "")
		}
		if c == ']' {
			return a, nil
		}
		for {
			v, err := d.value(c, depth+1)
			if err != nil {
				return nil, err
			}
			a = append(a, v)
			if c, err = d.skipSpace(); err != nil {
				return nil, d.unexpected(err, "")
			}
			if c == ']' {
				d.cost += 24 + int64(cap(a))*nodeCost
				return a, nil
			}
			if c != ',' {
				return nil, d.fail("Expected separator between values")
			}
			if c, err = d.skipSpace(); err != nil {
				return nil, d.unexpected(err, "")
			}
		}
	case c == '"':
		s, err := d.str()
		d.cost += int64(len(s))
		return s, err
	case c == '-' || c >= '0' && c <= '9':
		return d.number(c)
	case c >= 'a' && c <= 'z':
		word := []byte{c}
		for {
			c, err := d.next()
			if err != nil {
				break
			}
			if c < 'a' || c > 'z' {
				d.unread()
				break
			}
			word = append(word, c)
		}
		switch string(word) {
		case "true":
			return true, nil
		case "false":
			return false, nil
		case "null":
			return nil, nil
		case "nan":
			return math.NaN(), nil
		}
		return nil, d.fail("Invalid literal")
	}
	return nil, d.fail("Invalid numeric literal")
}

func (d *decoder) number(first byte) (any, error) {
	d.buf = append(d.buf[:0], first)
	isFloat := false
	for {
		c, err := d.next()
		if err != nil {
			break
		}
		if c >= '0' && c <= '9' || c == '-' || c == '+' {
			d.buf = append(d.buf, c)
			continue
		}
		if c == '.' || c == 'e' || c == 'E' {
			isFloat = true
			d.buf = append(d.buf, c)
			continue
		}
		d.unread()
		break
	}
	s := string(d.buf)
	if !isFloat {
		if n, err := strconv.ParseInt(s, 10, 64); err == nil {
			if n >= math.MinInt && n <= math.MaxInt {
				return int(n), nil
			}
		}
		if b, ok := new(big.Int).SetString(s, 10); ok {
			return b, nil
		}
		return nil, d.fail("Invalid numeric literal")
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		var ne *strconv.NumError
		if errors.As(err, &ne) && ne.Err == strconv.ErrRange {
			return f, nil // ±Inf or 0, as jq clamps
		}
		return nil, d.fail("Invalid numeric literal")
	}
	return f, nil
}

func (d *decoder) str() (string, error) {
	d.buf = d.buf[:0]
	for {
		if d.limit > 0 && d.consumed > d.limit || d.costLimit > 0 && d.consumed > d.costLimit {
			d.overBudget = d.limit == 0 || d.consumed <= d.limit
			return "", errTooBig // one string can be the whole input
		}
		c, err := d.next()
		if err != nil {
			return "", d.unexpected(err, "")
		}
		switch {
		case c == '"':
			return string(d.buf), nil
		case c == '\\':
			e, err := d.next()
			if err != nil {
				return "", d.unexpected(err, "")
			}
			switch e {
			case '"', '\\', '/':
				d.buf = append(d.buf, e)
			case 'b':
				d.buf = append(d.buf, '\b')
			case 'f':
				d.buf = append(d.buf, '\f')
			case 'n':
				d.buf = append(d.buf, '\n')
			case 'r':
				d.buf = append(d.buf, '\r')
			case 't':
				d.buf = append(d.buf, '\t')
			case 'u':
				r, err := d.hex4()
				if err != nil {
					return "", err
				}
				if utf16.IsSurrogate(r) {
					// A high surrogate must pair with a following \uDC00..
					if c1, _ := d.next(); c1 == '\\' {
						if c2, _ := d.next(); c2 == 'u' {
							r2, err := d.hex4()
							if err != nil {
								return "", err
							}
							r = utf16.DecodeRune(r, r2)
						} else {
							return "", d.fail("Invalid escape")
						}
					} else {
						d.unread()
						r = utf8.RuneError
					}
				}
				d.buf = utf8.AppendRune(d.buf, r)
			default:
				return "", d.fail("Invalid escape")
			}
		default:
			d.buf = append(d.buf, c)
		}
	}
}

func (d *decoder) hex4() (rune, error) {
	var r rune
	for i := 0; i < 4; i++ {
		c, err := d.next()
		if err != nil {
			return 0, d.unexpected(err, "")
		}
		var v byte
		switch {
		case c >= '0' && c <= '9':
			v = c - '0'
		case c >= 'a' && c <= 'f':
			v = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			v = c - 'A' + 10
		default:
			return 0, d.fail("Invalid escape")
		}
		r = r<<4 | rune(v)
	}
	return r, nil
}

// orderedFuncs re-implements the builtins whose output exposes key order,
// so they follow keyOrder instead of gojq's sorted maps.
var orderedFuncs = map[string]string{
	"keys_unsorted": "_warren_keys_unsorted",
	"to_entries":    "_warren_to_entries",
	"tojson":        "_warren_tojson",
	"tostring":      "_warren_tostring",
}

// renameOrdered points calls of those builtins at the replacements.
func renameOrdered(q *gojq.Query) {
	var walk func(v reflect.Value)
	walk = func(v reflect.Value) {
		switch v.Kind() {
		case reflect.Pointer, reflect.Interface:
			if v.IsNil() {
				return
			}
			if f, ok := v.Interface().(*gojq.Func); ok && len(f.Args) == 0 {
				if to, ok := orderedFuncs[f.Name]; ok {
					f.Name = to
				}
			}
			walk(v.Elem())
		case reflect.Struct:
			for i := 0; i < v.NumField(); i++ {
				if v.Type().Field(i).IsExported() {
					walk(v.Field(i))
				}
			}
		case reflect.Slice:
			for i := 0; i < v.Len(); i++ {
				walk(v.Index(i))
			}
		}
	}
	walk(reflect.ValueOf(q))
}

func typeName(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case int, float64, *big.Int:
		return "number"
	case string:
		return "string"
	case []any:
		return "array"
	}
	return "object"
}

// orderedOptions returns the compiler options defining the replacements.
func orderedOptions(order *keyOrder, opts *options, ctx context.Context, res *commands.Reservation) []gojq.CompilerOption {
	// compact is tojson and tostring: the text is charged as it grows,
	// and cancellation is heeded, since it runs inside one instruction.
	compactErr := func(v any) (string, error) {
		var b strings.Builder
		e := &encoder{w: &b, opts: &options{compact: true, ascii: false}, order: order}
		e.guard = func() error {
			if err := ctx.Err(); err != nil {
				return err
			}
			return fits(res, int64(b.Len()))
		}
		e.value(v)
		return b.String(), e.err
	}
	compact := func(v any) string {
		s, _ := compactErr(v)
		return s
	}
	compactValue := func(v any) any {
		s, err := compactErr(v)
		if err != nil {
			return err
		}
		return s
	}
	noKeys := func(v any) error {
		return fmt.Errorf("%s (%s) has no keys", typeName(v), compact(v))
	}
	return []gojq.CompilerOption{
		gojq.WithFunction("_warren_keys_unsorted", 0, 0, func(v any, _ []any) any {
			switch x := v.(type) {
			case map[string]any:
				keys := order.of(x)
				out := make([]any, len(keys))
				for i, k := range keys {
					out[i] = k
				}
				return out
			case []any:
				out := make([]any, len(x))
				for i := range x {
					out[i] = i
				}
				return out
			}
			return noKeys(v)
		}),
		gojq.WithFunction("_warren_to_entries", 0, 0, func(v any, _ []any) any {
			entry := func(k, val any) any {
				m := map[string]any{"key": k, "value": val}
				order.remember(m, []string{"key", "value"})
				return m
			}
			switch x := v.(type) {
			case map[string]any:
				keys := order.of(x)
				out := make([]any, len(keys))
				for i, k := range keys {
					out[i] = entry(k, x[k])
				}
				return out
			case []any:
				out := make([]any, len(x))
				for i, val := range x {
					out[i] = entry(i, val)
				}
				return out
			}
			return noKeys(v)
		}),
		gojq.WithFunction("_warren_tojson", 0, 0, func(v any, _ []any) any { return compactValue(v) }),
		gojq.WithFunction("_warren_tostring", 0, 0, func(v any, _ []any) any {
			if s, ok := v.(string); ok {
				return s
			}
			return compactValue(v)
		}),
	}
}
