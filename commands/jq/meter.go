package jq

import (
	"context"
	"math/big"
	"reflect"
	"time"

	"github.com/warren-sandbox/warren/commands"
)

// gojq has no allocation hook, but its VM selects on ctx.Done() before
// every instruction, calling Done on its own goroutine. The meter is that
// context: every so many calls, Done walks the values the VM holds (its
// value stack, variables, path stack and call arguments, read with reflect
// on the same goroutine, so without a race), resizes the invocation's
// Reservation to their size, and checks their nesting depth. Over budget
// or too deep, Done returns a closed channel and Err the limit's error;
// gojq stops and yields it, and jq exits 125.
//
// The walk counts each shared container once (gojq values are immutable
// and shared freely, so a tree walk of [., .] | [., .] ... would be
// exponential) and is paced: the next walk comes after max(minOps,
// 4 x nodes) instructions, so walking costs at most about a quarter of the
// run, and growth between walks is bounded by what that many instructions
// can build (one element or level per few instructions; [range(1e9)]
// overshoots the budget by at most ~1.5x). Instructions that make big
// values in one step (. + ., tojson, @base64, string interpolation) are
// caught by time instead: copying megabytes takes milliseconds, so every
// 16 instructions Done reads the clock and walks when more than a
// millisecond has passed since the last walk. The depth bound is what keeps
// gojq's own Go-recursive builtins (tojson, ==, sort, contains, the
// encoder) from overflowing the Go stack, which is fatal to every tenant:
// a value gains one level per few instructions, so between walks it cannot
// get far past maxValueDepth.
//
// One instruction's own allocation is not seen before it happens; string
// and number multiplication, the cheap way to make one huge value, go
// through mul (see rewrite.go), which charges first.
type meter struct {
	parent context.Context
	res    *commands.Reservation
	max    int64         // the whole budget: a walk stops once past it
	env    reflect.Value // gojq's *env behind the Iter
	ops    int
	next   int
	err    error
	root   uintptr // the input value's container, walked once
	rootSz int64
	rootN  int
	seen   map[uintptr]struct{}
	// walkEnd and walkTook pace the walks that time asks for.
	walkEnd  time.Time
	walkTook time.Duration
	work     []walkItem
}

type walkItem struct {
	v     reflect.Value
	depth int
}

const (
	minOps     = 4096
	clockEvery = 16
	slowGap    = time.Millisecond
	// maxValueDepth bounds nesting of values a filter builds: above the
	// input decoder's maxDepth, far below what overflows gojq's recursion.
	maxValueDepth = 2 * maxDepth
	nodeCost      = 16 // an interface slot
	mapEntryCost  = 64 // key header, interface value, hash-table overhead
)

var closed = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

var bigIntType = reflect.TypeOf((*big.Int)(nil))

func newMeter(parent context.Context, mem *commands.Memory, res *commands.Reservation) *meter {
	return &meter{parent: parent, res: res, max: mem.Max(), next: minOps, seen: map[uintptr]struct{}{}}
}

// attach points the meter at the VM of iter (the *env RunWithContext
// returned). The input v is counted at cost, the decoder's estimate, or
// when that is 0 walked once; either way it is not walked again.
func (m *meter) attach(iter any, v any, cost int64) {
	m.env = reflect.Value{}
	rv := reflect.ValueOf(iter)
	if rv.Kind() == reflect.Pointer && rv.Elem().Kind() == reflect.Struct && rv.Elem().Type().Name() == "env" {
		m.env = rv.Elem()
	}
	m.root, m.rootSz, m.rootN = 0, 0, 0
	if k, ok := containerKey(reflect.ValueOf(v)); ok && cost > 0 {
		m.root, m.rootSz = k, cost
	} else if ok {
		clear(m.seen)
		sz, n, err := m.walk([]reflect.Value{reflect.ValueOf(v)})
		if err != nil {
			m.err = err
			return
		}
		m.root, m.rootSz, m.rootN = k, sz, n
	}
	m.ops = 0
	m.walkEnd = time.Now()
}

func (m *meter) Deadline() (time.Time, bool) { return m.parent.Deadline() }
func (m *meter) Value(key any) any           { return m.parent.Value(key) }

func (m *meter) Done() <-chan struct{} {
	if m.err != nil {
		return closed
	}
	m.ops++
	due := m.ops >= m.next
	if !due && m.ops%clockEvery == 0 {
		// Growing one value fast means big copies, which take time: a
		// long stretch since the last walk asks for one now, but at most
		// one per ten of the walk's own durations.
		since := time.Since(m.walkEnd)
		due = since > slowGap && since > 10*m.walkTook
	}
	if due {
		m.ops = 0
		began := time.Now()
		err := m.check()
		m.walkEnd = time.Now()
		m.walkTook = m.walkEnd.Sub(began)
		if err != nil {
			m.err = err
			return closed
		}
	}
	return m.parent.Done()
}

func (m *meter) Err() error {
	if m.err != nil {
		return m.err
	}
	return m.parent.Err()
}

// check walks what the VM holds now.
func (m *meter) check() error {
	if !m.env.IsValid() {
		return nil
	}
	var roots []reflect.Value
	var slots int64
	if st := m.env.FieldByName("stack"); st.IsValid() && !st.IsNil() {
		data := st.Elem().FieldByName("data")
		slots += sliceBytes(data)
		for i := range data.Len() {
			roots = append(roots, data.Index(i).Field(0))
		}
	}
	if vs := m.env.FieldByName("values"); vs.IsValid() {
		slots += sliceBytes(vs)
		for i := range vs.Len() {
			roots = append(roots, vs.Index(i))
		}
	}
	if ps := m.env.FieldByName("paths"); ps.IsValid() && !ps.IsNil() {
		data := ps.Elem().FieldByName("data")
		slots += sliceBytes(data)
		for i := range data.Len() {
			pv := data.Index(i).Field(0)
			roots = append(roots, pv.Field(0), pv.Field(1))
		}
	}
	for _, name := range []string{"scopes", "forks"} {
		if f := m.env.FieldByName(name); f.IsValid() {
			if f.Kind() == reflect.Pointer && !f.IsNil() {
				f = f.Elem().FieldByName("data")
			}
			if f.Kind() == reflect.Slice {
				slots += sliceBytes(f)
			}
		}
	}
	clear(m.seen)
	if m.root != 0 {
		m.seen[m.root] = struct{}{}
	}
	sz, nodes, err := m.walk(roots)
	if err != nil {
		return err
	}
	if m.root != 0 {
		sz += m.rootSz
	}
	m.next = max(minOps, 4*(nodes+len(roots)))
	return m.res.Resize(sz + slots)
}

// walk sums the bytes of the values under roots, each container once,
// and fails past maxValueDepth or as soon as the sum passes the budget.
func (m *meter) walk(roots []reflect.Value) (int64, int, error) {
	var sz int64
	nodes := 0
	limit := m.max
	w := m.work[:0]
	for _, r := range roots {
		w = append(w, walkItem{r, 0})
	}
	defer func() { m.work = w[:0] }()
	for len(w) > 0 {
		it := w[len(w)-1]
		w = w[:len(w)-1]
		v := it.v
		for v.Kind() == reflect.Interface && !v.IsNil() {
			v = v.Elem()
		}
		nodes++
		switch v.Kind() {
		case reflect.String:
			sz += int64(v.Len()) + nodeCost
		case reflect.Slice, reflect.Map:
			k, ok := containerKey(v)
			if !ok {
				continue
			}
			if _, dup := m.seen[k]; dup {
				continue
			}
			m.seen[k] = struct{}{}
			if it.depth >= maxValueDepth {
				return 0, 0, &commands.DepthError{Limit: maxValueDepth}
			}
			if v.Kind() == reflect.Slice {
				if v.Type().Elem().Kind() == reflect.Uint8 {
					sz += int64(v.Cap())
					continue
				}
				sz += int64(v.Cap())*nodeCost + 24
				for i := range v.Len() {
					w = append(w, walkItem{v.Index(i), it.depth + 1})
				}
			} else {
				sz += int64(v.Len())*mapEntryCost + 48
				iter := v.MapRange()
				strKeys := v.Type().Key().Kind() == reflect.String
				for iter.Next() {
					if strKeys {
						sz += int64(iter.Key().Len())
					}
					w = append(w, walkItem{iter.Value(), it.depth + 1})
				}
			}
		case reflect.Pointer:
			if v.Type() == bigIntType && !v.IsNil() {
				sz += int64(v.Elem().FieldByName("abs").Len())*8 + 32
			}
		default:
			sz += nodeCost
		}
		if limit > 0 && sz > limit {
			break // over budget already: Resize reports it
		}
	}
	return sz, nodes, nil
}

// sliceBytes is the backing array of a VM slice.
func sliceBytes(s reflect.Value) int64 {
	return int64(s.Cap()) * int64(s.Type().Elem().Size())
}

// containerKey identifies a map or a non-empty slice by its storage.
func containerKey(v reflect.Value) (uintptr, bool) {
	for v.Kind() == reflect.Interface && !v.IsNil() {
		v = v.Elem()
	}
	switch v.Kind() {
	case reflect.Map:
		if v.IsNil() {
			return 0, false
		}
		return v.Pointer(), true
	case reflect.Slice:
		if v.Len() == 0 {
			return 0, false
		}
		return v.Pointer() ^ uintptr(v.Len())<<48, true
	}
	return 0, false
}
