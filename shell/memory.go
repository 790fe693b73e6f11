package shell

import (
	"errors"
	"strings"
	"sync"

	"github.com/warren-sandbox/warren/commands"
	"mvdan.cc/sh/v3/expand"
)

// The shell's share of the sandbox's memory budget (commands.Memory, from
// Config.Sys.Memory; nil means unlimited). What the shell keeps because a
// script said so is charged: variable values and array elements (per Var,
// so that overwriting or unsetting gives it back), and, while they live,
// the fields of one expansion, command substitution output and here-docs.
// Each runner charges its own Reservation: a subshell's (pipeline stage,
// $(...), background job) is given back when it ends, the session's lives
// with the session. Pipes need no charge (64 KiB each, bounded by
// MaxJobs). MaxStringBytes still bounds one string.

// fieldsFree is how many bytes of one expansion's fields are not charged.
const fieldsFree = 64 << 10

// strCost is what storing s costs: its bytes plus a string header.
func strCost(s string) int64 { return int64(len(s)) + 16 }

// memory is the sandbox's budget (nil: unlimited).
func (s *Shell) memory() *commands.Memory {
	if s.cfg.Sys != nil {
		return s.cfg.Sys.Memory
	}
	return nil
}

// memGrow charges n bytes (n < 0 gives -n back) to the runner's
// reservation. Over the budget, the Run ends with StatusLimit and the
// budget's message.
func (r *runner) memGrow(n int64) bool {
	if n <= 0 {
		if n < 0 && r.mem != nil {
			r.mem.Shrink(-n)
		}
		return true
	}
	if r.mem == nil {
		r.mem = r.sh.memory().Reserve()
	}
	if err := r.mem.Grow(n); err != nil {
		r.memFail(err)
		return false
	}
	return true
}

// memFits checks that n more bytes fit in the budget now, without keeping
// them (for buffers that live only while one command runs).
func (r *runner) memFits(n int64) bool {
	if !r.memGrow(n) {
		return false
	}
	r.memGrow(-n)
	return true
}

func (r *runner) memFail(err error) {
	what := strings.TrimPrefix(err.Error(), "warren: ")
	var me *commands.MemoryLimitError
	if !errors.As(err, &me) {
		what = "memory limit exceeded"
	}
	if r.rs != nil {
		r.rs.fail(&limitError{what: what, status: StatusLimit})
	}
	r.exiting = true
}

// chargeVar changes v's charge by delta (a store replaced old with new).
func (r *runner) chargeVar(v *Var, delta int64) bool {
	if delta < 0 {
		delta = -min(-delta, v.mem)
	}
	if !r.memGrow(delta) {
		return false
	}
	v.mem += delta
	return true
}

// releaseVar gives back everything v holds (unset, a scope ending).
func (r *runner) releaseVar(v *Var) {
	if v != nil && v.mem > 0 {
		r.memGrow(-v.mem)
		v.mem = 0
	}
}

// varCost is the whole cost of v's value (O(size): for whole-array stores).
func varCost(v *Var) int64 {
	switch v.Kind {
	case expand.Indexed:
		n := int64(len(v.Idx)) * 8
		for _, s := range v.List {
			n += strCost(s)
		}
		return n
	case expand.Associative:
		var n int64
		for k, s := range v.Map {
			n += strCost(k) + strCost(s) + 16
		}
		return n
	}
	return strCost(v.Str)
}

// recharge sets v's charge to its whole cost; on failure v is emptied.
func (r *runner) recharge(v *Var) bool {
	if r.chargeVar(v, varCost(v)-v.mem) {
		return true
	}
	v.Str, v.List, v.Idx, v.Map, v.ord = "", nil, nil, nil, nil
	r.releaseVar(v)
	return false
}

// storeIndex is v.setIndex(i, s) with its charge.
func (r *runner) storeIndex(v *Var, i int, s string) bool {
	old, had := v.index(i)
	delta := strCost(s)
	if had {
		delta -= strCost(old)
	} else if v.Idx != nil || i > len(v.List) {
		delta += 8
	}
	if !r.chargeVar(v, delta) {
		return false
	}
	v.setIndex(i, s)
	return true
}

// releaseScope gives back the charges of a function's locals.
func (r *runner) releaseScope(s *scope) {
	for _, v := range s.vars {
		r.releaseVar(v)
	}
}

// closeMem gives back everything a subshell runner charged.
func (r *runner) closeMem() {
	if r.mem != nil {
		r.mem.Close()
	}
}

// memWriter charges what a command substitution buffers; its writers may
// be concurrent (background jobs inside $(...)).
type memWriter struct {
	mu  sync.Mutex
	m   *commands.Memory
	n   int64
	err error
}

func (w *memWriter) grow(n int) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return w.err
	}
	if err := w.m.Charge(int64(n)); err != nil {
		w.err = err
		return err
	}
	w.n += int64(n)
	return nil
}

func (w *memWriter) release() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.m.Release(w.n)
	w.n = 0
}

// storeKey is v.Map[k] = s with its charge.
func (r *runner) storeKey(v *Var, k, s string) bool {
	old, had := v.Map[k]
	delta := strCost(s)
	if had {
		delta -= strCost(old)
	} else {
		delta += strCost(k) + 16
	}
	if !r.chargeVar(v, delta) {
		return false
	}
	v.Map[k] = s
	if !had {
		v.noteKey(k)
	}
	return true
}
