package shell

import (
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

// Session state encoding, version 1. Deterministic: maps are written in
// sorted key order. Layout (all integers uvarint, strings uvarint length +
// bytes):
//
//	"WSH" 0x01
//	cwd, arg0, status, umask, seed, pidNext, lastBg
//	opts bitmask, shopts: count + names that are on
//	params: count + strings
//	dirs: count + strings
//	vars: count + {name, attr, kind, set, str, list(count+strings), idx(count+uvarints), map(count+k,v sorted)}
//	funcs: count + {name, source}
//	aliases: count + {name, value}
//	traps: count + {signal, action}
const stateMagic = "WSH\x01"

// ErrBadState is returned by Restore for bytes that are not a valid state.
var ErrBadState = errors.New("shell: invalid session state")

type enc struct{ b []byte }

func (e *enc) u(n uint64) { e.b = binary.AppendUvarint(e.b, n) }
func (e *enc) i(n int)    { e.b = binary.AppendVarint(e.b, int64(n)) }
func (e *enc) s(s string) { e.u(uint64(len(s))); e.b = append(e.b, s...) }
func (e *enc) strs(ss []string) {
	e.u(uint64(len(ss)))
	for _, s := range ss {
		e.s(s)
	}
}

type dec struct {
	b   []byte
	err error
}

func (d *dec) u() uint64 {
	if d.err != nil {
		return 0
	}
	n, k := binary.Uvarint(d.b)
	if k <= 0 {
		d.err = ErrBadState
		return 0
	}
	d.b = d.b[k:]
	return n
}

func (d *dec) i() int {
	if d.err != nil {
		return 0
	}
	n, k := binary.Varint(d.b)
	if k <= 0 {
		d.err = ErrBadState
		return 0
	}
	d.b = d.b[k:]
	return int(n)
}

func (d *dec) count() int {
	n := d.u()
	if n > uint64(len(d.b)) {
		d.err = ErrBadState
		return 0
	}
	return int(n)
}

func (d *dec) s() string {
	n := d.count()
	if d.err != nil {
		return ""
	}
	s := string(d.b[:n])
	d.b = d.b[n:]
	return s
}

func (d *dec) strs() []string {
	n := d.count()
	if n == 0 {
		return nil
	}
	out := make([]string, 0, n)
	for range n {
		out = append(out, d.s())
	}
	return out
}

// MarshalState serialises the session (not the filesystem).
func (s *Shell) MarshalState() ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.st
	e := &enc{b: []byte(stateMagic)}
	e.s(r.cwd)
	e.s(r.arg0)
	e.i(r.status)
	e.u(uint64(r.umask))
	e.u(r.seed)
	e.u(uint64(r.pidNext.Load()))
	e.i(r.lastBg)
	var mask uint64
	for i, on := range r.opts {
		if on {
			mask |= 1 << i
		}
	}
	e.u(mask)
	var on []string
	for k, v := range r.shopts {
		if v {
			on = append(on, k)
		}
	}
	slices.Sort(on)
	e.strs(on)
	e.strs(r.params)
	e.strs(r.dirs)
	g := r.global
	names := slices.Sorted(maps.Keys(g.vars))
	e.u(uint64(len(names)))
	for _, n := range names {
		v := g.vars[n]
		e.s(n)
		e.u(uint64(v.Attr))
		e.u(uint64(v.Kind))
		if v.Set {
			e.u(1)
		} else {
			e.u(0)
		}
		e.s(v.Str)
		e.strs(v.List)
		e.u(uint64(len(v.Idx)))
		for _, i := range v.Idx {
			e.u(uint64(i))
		}
		// in insertion order: restoring inserts them again, which keeps
		// the order bash lists them in (assocorder.go)
		keys := v.insertionOrder()
		e.u(uint64(len(keys)))
		for _, k := range keys {
			e.s(k)
			e.s(v.Map[k])
		}
	}
	fnames := slices.Sorted(maps.Keys(r.funcs))
	e.u(uint64(len(fnames)))
	pr := syntax.NewPrinter()
	for _, n := range fnames {
		var b strings.Builder
		if err := pr.Print(&b, r.funcs[n]); err != nil {
			return nil, fmt.Errorf("cannot print function %s: %w", n, err)
		}
		e.s(n)
		e.s(b.String())
	}
	for _, m := range []map[string]string{r.aliases, r.traps} {
		keys := slices.Sorted(maps.Keys(m))
		e.u(uint64(len(keys)))
		for _, k := range keys {
			e.s(k)
			e.s(m[k])
		}
	}
	return e.b, nil
}

// Restore builds a Shell for cfg from MarshalState's bytes.
func Restore(cfg Config, state []byte) (*Shell, error) {
	if !strings.HasPrefix(string(state), stateMagic) {
		return nil, fmt.Errorf("%w: bad magic or version", ErrBadState)
	}
	s, err := New(cfg)
	if err != nil {
		return nil, err
	}
	r := s.st
	d := &dec{b: state[len(stateMagic):]}
	r.cwd = d.s()
	r.arg0 = d.s()
	r.status = d.i()
	r.umask = uint32(d.u())
	r.seed = d.u()
	r.pidNext.Store(int64(d.u()))
	r.lastBg = d.i()
	mask := d.u()
	for i := range r.opts {
		r.opts[i] = mask&(1<<i) != 0
	}
	r.shopts = map[string]bool{}
	r.shoptsOwned = true
	for _, k := range d.strs() {
		r.shopts[k] = true
	}
	r.params = d.strs()
	r.dirs = d.strs()
	r.global.vars = map[string]*Var{}
	nv := d.count()
	for range nv {
		n := d.s()
		v := &Var{Attr: uint16(d.u()), Kind: expand.ValueKind(d.u()), Set: d.u() == 1}
		v.Str = d.s()
		v.List = d.strs()
		if k := d.count(); k > 0 {
			v.Idx = make([]int, k)
			for i := range v.Idx {
				v.Idx[i] = int(d.u())
			}
		}
		if k := d.count(); k > 0 || v.Kind == expand.Associative {
			v.Map = make(map[string]string, k)
			for range k {
				key := d.s()
				v.Map[key] = d.s()
				if v.Kind == expand.Associative {
					v.noteKey(key)
				}
			}
		}
		if v.Kind == expand.Indexed && v.List == nil {
			v.List = []string{}
		}
		r.global.vars[n] = v
	}
	// Fresh private maps: New's may be nil or shared defaults.
	r.funcs, r.aliases, r.traps = map[string]*syntax.Stmt{}, map[string]string{}, map[string]string{}
	nf := d.count()
	for range nf {
		n := d.s()
		src := d.s()
		if d.err != nil {
			break
		}
		f, err := r.parse(src)
		if err != nil || len(f.Stmts) != 1 {
			return nil, fmt.Errorf("%w: function %s does not parse", ErrBadState, n)
		}
		r.funcs[n] = f.Stmts[0]
	}
	for _, m := range []map[string]string{r.aliases, r.traps} {
		k := d.count()
		for range k {
			key := d.s()
			m[key] = d.s()
		}
	}
	if d.err != nil {
		return nil, fmt.Errorf("%w: truncated", ErrBadState)
	}
	if len(d.b) != 0 {
		return nil, fmt.Errorf("%w: %d trailing bytes", ErrBadState, len(d.b))
	}
	r.vars = r.global
	return s, nil
}
