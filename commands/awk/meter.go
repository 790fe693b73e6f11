package awk

import (
	"context"
	"reflect"
	"time"
	"unsafe"

	"github.com/benhoyt/goawk/interp"

	"github.com/warren-sandbox/warren/commands"
)

// GoAWK has no allocation hook, and an awk program that grows an array or
// doubles a string allocates inside the interpreter's own loop, where no
// reader or writer of ours is called. What GoAWK does call on its own
// goroutine, every checkContextOps VM instructions, is its context: it
// selects on Done() and, when Done is ready, returns Err(). The meter is
// that context. Its Done is always ready, so Err runs every time GoAWK
// checks; Err re-estimates the interpreter's live data from its state
// (read with reflect and unsafe on the same goroutine, so without a race),
// resizes the invocation's Reservation to it, and returns the
// *MemoryLimitError when the budget is passed; GoAWK then stops and
// returns it. A nil error lets the program go on.
//
// GoAWK checks every 1000 instructions, and concatenation can double a
// string every 4 instructions, so the meter also rewinds GoAWK's
// instruction counter (the unexported ctxOps) so that the next check comes
// after window instructions: 24 while every scalar is under 16 KiB, 16
// under 256 KiB, 4 past that. Between two checks a value can grow by at
// most about 1.3^window (ConcatMulti of four copies per six instructions
// is the fastest), so a scalar reaches at most ~8 MiB (16 KiB x 540) or
// ~16 MiB (256 KiB x 66) unseen, and past that overshoots the budget by
// at most ~3x.
//
// What the estimate covers: every array's element count (each element
// costs its map slot and key, about elemCost bytes, plus its string, from
// the last full walk of the arrays), and the strings of the globals, the
// locals and the operand stack, $0 and the fields, at every check. Array
// element strings are summed by a full walk, paced so that it costs a
// fraction of the run: after max(minWalkChecks, elements) checks, or at
// once when a check finds that the interpreter spent long since the last
// one (a long gap is a big copy or allocation: what a growing string
// costs). Not covered: one instruction's own transient (sprintf("%*d")
// with a huge width, gsub with a long replacement) before the next check
// sees it; the node's structural backstop is there for that.
type meter struct {
	parent context.Context
	res    *commands.Reservation
	base   unsafe.Pointer // GoAWK's *interp
	arrays reflect.Value  // its []map[string]value, for the full walk

	checks     int // since the last full walk
	elemsAt    int // element count at the last full walk
	elemBytes  int64
	walkEvery  int
	ticks      int
	last       time.Time // when the clock was last read
	walkEnd    time.Time
	walkTook   time.Duration
	err        error
	windowSize int
}

const (
	elemCost      = 96 // map slot (key and value headers), hash-table overhead, key bytes rounded
	valueCost     = 40 // an awk value: type, string header, float64
	smallScalar   = 16 << 10
	bigScalar     = 256 << 10
	widestWindow  = 24 // instructions between checks while every scalar is under smallScalar
	wideWindow    = 16 // ... under bigScalar
	narrowWindow  = 4  // once a scalar is big enough to matter
	minWalkChecks = 64 // checks between full walks of small arrays
	slowGap       = 200 * time.Microsecond
	clockEvery    = 4
)

// layout is where GoAWK keeps what the meter reads, found once by name
// with reflect; ok is false if GoAWK's internals no longer match (a test
// asserts ok, so an upgrade that breaks it fails CI rather than running
// unmetered).
var layout = func() (l struct {
	ok                                        bool
	globals, stack, sp, frame, arrays, fields int
	numFields, line, ctxOps                   int
	checkOps                                  int
}) {
	t := reflect.TypeOf(interp.Interpreter{})
	if t.NumField() != 1 || t.Field(0).Type.Kind() != reflect.Pointer {
		return
	}
	it := t.Field(0).Type.Elem()
	field := func(name string, kind reflect.Kind) (int, bool) {
		f, ok := it.FieldByName(name)
		if !ok || f.Type.Kind() != kind {
			return 0, false
		}
		return int(f.Offset), true
	}
	vt, ok := it.FieldByName("globals")
	if !ok || vt.Type.Kind() != reflect.Slice || !sameValue(vt.Type.Elem()) {
		return
	}
	var ok1, ok2, ok3, ok4, ok5, ok6, ok7, ok8, ok9 bool
	l.globals, ok1 = field("globals", reflect.Slice)
	l.stack, ok2 = field("stack", reflect.Slice)
	l.sp, ok3 = field("sp", reflect.Int)
	l.frame, ok4 = field("frame", reflect.Slice)
	l.arrays, ok5 = field("arrays", reflect.Slice)
	l.fields, ok6 = field("fields", reflect.Slice)
	l.numFields, ok7 = field("numFields", reflect.Int)
	l.line, ok8 = field("line", reflect.String)
	l.ctxOps, ok9 = field("ctxOps", reflect.Int)
	l.checkOps = 1000 // GoAWK's checkContextOps
	l.ok = ok1 && ok2 && ok3 && ok4 && ok5 && ok6 && ok7 && ok8 && ok9
	return
}()

// awkValue mirrors GoAWK's value; sameValue checks the mirror.
type awkValue struct {
	typ uint8
	s   string
	n   float64
}

func sameValue(t reflect.Type) bool {
	m := reflect.TypeOf(awkValue{})
	if t.Kind() != reflect.Struct || t.NumField() != m.NumField() || t.Size() != m.Size() {
		return false
	}
	for i := range m.NumField() {
		a, b := t.Field(i), m.Field(i)
		if a.Name != b.Name || a.Type.Kind() != b.Type.Kind() || a.Offset != b.Offset {
			return false
		}
	}
	return true
}

// newMeter meters it's state against res; nil when GoAWK's layout is not
// the one the meter knows (then the program runs with GoAWK's own checks).
func newMeter(parent context.Context, it *interp.Interpreter, res *commands.Reservation) *meter {
	if !layout.ok || res == nil {
		return nil
	}
	p := reflect.ValueOf(it).Elem().Field(0) // *interp
	m := &meter{parent: parent, res: res, base: p.UnsafePointer(), windowSize: widestWindow, walkEvery: minWalkChecks}
	m.arrays = p.Elem().FieldByName("arrays")
	m.last = time.Now()
	return m
}

var ready = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

func (m *meter) Deadline() (time.Time, bool) { return m.parent.Deadline() }
func (m *meter) Value(key any) any           { return m.parent.Value(key) }
func (m *meter) Done() <-chan struct{}       { return ready }

// Err is called by GoAWK on its goroutine at every check.
func (m *meter) Err() error {
	select {
	case <-m.parent.Done():
		return m.parent.Err()
	default:
	}
	if m.err != nil {
		return m.err
	}
	if err := m.check(); err != nil {
		m.err = err
		return err
	}
	return nil
}

// start is called from the BEGIN action the program is given first, so
// that the first check comes after window instructions, not GoAWK's 1000.
func (m *meter) start() int {
	m.rewind()
	return 0
}

func (m *meter) rewind() {
	*(*int)(unsafe.Add(m.base, layout.ctxOps)) = layout.checkOps - m.windowSize
}

func (m *meter) check() error {
	// The clock is read every clockEvery checks: it costs more than the
	// rest of a check.
	m.ticks++
	var now time.Time
	var gap time.Duration
	if m.ticks%clockEvery == 0 {
		now = time.Now()
		gap = now.Sub(m.last)
		m.last = now
	}
	var scalars int64
	biggest := 0
	sum := func(vs []awkValue) {
		for i := range vs {
			n := len(vs[i].s)
			scalars += int64(n)
			biggest = max(biggest, n)
		}
		scalars += int64(len(vs)) * valueCost
	}
	sum(*(*[]awkValue)(unsafe.Add(m.base, layout.globals)))
	stack := *(*[]awkValue)(unsafe.Add(m.base, layout.stack))
	sp := *(*int)(unsafe.Add(m.base, layout.sp))
	scalars += int64(len(stack)) * valueCost
	if sp >= 0 && sp <= len(stack) {
		sum(stack[:sp])
	}
	fields := *(*[]string)(unsafe.Add(m.base, layout.fields))
	nf := *(*int)(unsafe.Add(m.base, layout.numFields))
	if nf >= 0 && nf <= len(fields) {
		for _, f := range fields[:nf] {
			scalars += int64(len(f)) + 16
			biggest = max(biggest, len(f))
		}
	}
	line := len(*(*string)(unsafe.Add(m.base, layout.line)))
	scalars += int64(line)
	biggest = max(biggest, line)

	elems := 0
	// len of a map reads its count, whatever its element type.
	for _, a := range *(*[]map[string]awkValue)(unsafe.Add(m.base, layout.arrays)) {
		elems += len(a)
	}
	m.checks++
	// A long gap since the last check (a big copy) asks for a walk, but
	// no more often than one walk per ten of its own durations, so input
	// stalls do not turn a big array's walks quadratic.
	slow := gap > slowGap && now.Sub(m.walkEnd) > 10*m.walkTook
	if slow {
		defer func() { m.last = time.Now() }()
	}
	if m.checks >= m.walkEvery || slow || elems > 2*m.elemsAt+1024 {
		m.walk()
		elems = m.elemsAt
	}
	arrays := int64(elems) * elemCost
	if m.elemsAt > 0 {
		arrays += m.elemBytes * int64(elems) / int64(m.elemsAt)
	}
	if err := m.res.Resize(scalars + arrays); err != nil {
		return err
	}
	switch {
	case biggest < smallScalar:
		m.windowSize = widestWindow
	case biggest < bigScalar:
		m.windowSize = wideWindow
	default:
		m.windowSize = narrowWindow
	}
	m.rewind()
	return nil
}

// walk sums the string bytes of every array element.
func (m *meter) walk() {
	began := time.Now()
	defer func() { m.walkEnd = time.Now(); m.walkTook = m.walkEnd.Sub(began) }()
	var bytes int64
	elems := 0
	for i := range m.arrays.Len() {
		it := m.arrays.Index(i).MapRange()
		for it.Next() {
			bytes += int64(it.Key().Len() + it.Value().Field(1).Len())
			elems++
		}
	}
	m.elemsAt, m.elemBytes, m.checks = elems, bytes, 0
	m.walkEvery = max(minWalkChecks, elems)
}
