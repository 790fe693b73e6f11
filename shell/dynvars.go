package shell

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"
)

// bash's dynamic variables: their value is computed on each read and an
// assignment to one does what the manual says (sets $0, restarts the
// SECONDS count, seeds RANDOM, or is ignored). Unset, each loses its
// special meaning for good and is an ordinary variable after.

// dynState is the part of that state the runner does not otherwise hold.
// It is replaced, never changed, so a subshell's copy of the pointer
// keeps its own. It is not part of the saved session: a restored session
// starts with every dynamic variable special and SECONDS counting from
// the restore, as it counts from a new shell's start.
type dynState struct {
	lost        map[string]bool // unset: no longer special
	secondsBase int64           // the value SECONDS was given
	secondsFrom time.Time       // when it was given; zero: the shell's start
}

// isDynName reports whether name is one of the variables dynvars.go keeps.
func isDynName(name string) bool {
	switch name {
	case "SECONDS", "RANDOM", "SRANDOM", "EPOCHSECONDS", "EPOCHREALTIME", "BASH_ARGV0", "DIRSTACK":
		return true
	}
	return false
}

// dynamic reports whether name is a dynamic variable still special here.
func (r *runner) dynamic(name string) bool {
	if !isDynName(name) {
		return false
	}
	if r.dyn != nil && r.dyn.lost[name] {
		return false
	}
	// a function's local of the name is an ordinary variable to bash
	// (local RANDOM reads empty, then RANDOM=3 reads 3)
	for s := r.vars; s != nil && s != r.global; s = s.parent {
		if _, ok := s.vars[name]; ok && !s.temp {
			return false
		}
	}
	return true
}

// dynValue is the value of a dynamic variable still special; ok is false
// for any other name.
func (r *runner) dynValue(name string) (val string, ok bool) {
	if !r.dynamic(name) {
		return "", false
	}
	switch name {
	case "SECONDS":
		var base int64
		from := r.start
		if r.dyn != nil && !r.dyn.secondsFrom.IsZero() {
			base, from = r.dyn.secondsBase, r.dyn.secondsFrom
		}
		return strconv.FormatInt(base+int64(r.now().Sub(from)/time.Second), 10), true
	case "RANDOM":
		return strconv.Itoa(r.random()), true
	case "SRANDOM":
		// bash reads the system's random source and cannot be seeded
		return strconv.FormatUint(uint64(rand.Uint32()), 10), true
	case "EPOCHSECONDS":
		return strconv.FormatInt(r.now().Unix(), 10), true
	case "EPOCHREALTIME":
		t := r.now()
		return fmt.Sprintf("%d.%06d", t.Unix(), t.Nanosecond()/1000), true
	case "BASH_ARGV0":
		return r.arg0, true
	}
	return "", false
}

// specialAssign is what an assignment to name does beyond storing the
// value; it reports true when the value is not to be stored. OPTIND
// assigned by the script (not by getopts, which notes its own value after)
// restarts getopts' scan, as bash's does on every such assignment.
func (r *runner) specialAssign(name, val string) bool {
	if name == "OPTIND" {
		r.goptInd = -1
		return false
	}
	return r.dynAssign(name, val)
}

// dynAssign performs an assignment to a dynamic variable still special;
// it reports false for any other name, which the caller assigns as usual.
func (r *runner) dynAssign(name, val string) bool {
	if !r.dynamic(name) {
		return false
	}
	switch name {
	case "SECONDS":
		d := r.dynCopy()
		d.secondsBase, d.secondsFrom = dynNumber(val), r.now()
		r.dyn = d
	case "RANDOM":
		r.seed = uint64(uint32(dynNumber(val)))
	case "BASH_ARGV0":
		r.arg0 = val
	}
	// SRANDOM, EPOCHSECONDS and EPOCHREALTIME ignore assignments, and
	// DIRSTACK one to its element 0 (the working directory)
	return true
}

// dynUnset records that name, if dynamic, is no longer special.
func (r *runner) dynUnset(name string) {
	if !isDynName(name) || r.dyn != nil && r.dyn.lost[name] {
		return
	}
	d := r.dynCopy()
	d.lost[name] = true
	r.dyn = d
}

func (r *runner) dynCopy() *dynState {
	d := &dynState{lost: map[string]bool{}}
	if r.dyn != nil {
		*d = *r.dyn
		d.lost = maps.Clone(r.dyn.lost)
		if d.lost == nil {
			d.lost = map[string]bool{}
		}
	}
	return d
}

// dynNumber reads an assigned value as bash does for SECONDS and RANDOM:
// a decimal integer with optional blanks around it, anything else 0.
func dynNumber(s string) int64 {
	n, err := strconv.ParseInt(strings.Trim(s, " \t\n"), 10, 64)
	if err != nil {
		return 0
	}
	return n
}

// random is bash 5.2's $RANDOM: the Park-Miller minimal standard
// generator on a 32-bit seed, its two halves folded together into 15
// bits, never the same value twice in a row; so RANDOM=N gives the
// sequence bash gives.
func (r *runner) random() int {
	last := r.seed >> 32 // the last value returned, kept above the seed
	for {
		s := uint32(r.seed)
		if s == 0 {
			s = 123459876 // the generator's fixed point; bash starts here
		}
		s = uint32(uint64(s) * 16807 % 0x7fffffff)
		v := uint64((s>>16)^(s&0xffff)) & 0x7fff
		r.seed = uint64(s)
		if v != last {
			r.seed |= v << 32
			return int(v)
		}
	}
}
