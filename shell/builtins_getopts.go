package shell

// The getopts builtin: POSIX option parsing for scripts.

import (
	"fmt"
	"strconv"
	"strings"
)

// biGetopts is POSIX getopts: each call sets NAME (and OPTARG) to the next
// option and advances OPTIND, keeping its place inside a grouped -abc word
// in r.optind (reset when the script changes OPTIND itself); status 1 at
// the end of the options. A leading ":" in optstring selects silent error
// reporting (no messages; the bad option goes to OPTARG).
func biGetopts(r *runner, args []string) int {
	if len(args) > 1 && len(args[1]) > 1 && args[1][0] == '-' {
		// getopts takes no options of its own; -- ends them
		if args[1] != "--" {
			r.errf("getopts: %s: invalid option", args[1][:2])
			r.usage("getopts: usage: getopts optstring name [arg ...]")
			return 2
		}
		args = append([]string{args[0]}, args[2:]...)
	}
	if len(args) >= 3 && !validRef(args[2]) {
		// still advance OPTIND/OPTARG, as bash does, but assign to a scratch name
		fixed := append([]string{args[0], args[1], "_warren_getopts_scratch"}, args[3:]...)
		biGetopts(r, fixed)
		r.unsetVar("_warren_getopts_scratch")
		r.errf("getopts: `%s': not a valid identifier", args[2])
		return 1
	}
	if len(args) < 3 {
		r.usage("getopts: usage: getopts optstring name [arg ...]")
		return 2
	}
	optstr, name := args[1], args[2]
	params := r.params
	if len(args) > 3 {
		params = args[3:]
	}
	silent := strings.HasPrefix(optstr, ":")
	if silent {
		optstr = optstr[1:]
	}
	// OPTERR=0 keeps the messages back as a leading colon does, without
	// its other effects
	quiet := silent
	if v := r.lookup("OPTERR"); v != nil && v.Set && strings.TrimSpace(v.str()) == "0" {
		quiet = true
	}
	optind := 1
	if v := r.lookup("OPTIND"); v != nil {
		if n, err := strconv.Atoi(v.str()); err == nil && n > 0 {
			optind = n
		}
	}
	if optind != r.goptInd {
		r.optind = 0
	}
	done := func() int {
		r.setVar(name, "?")
		r.unsetOptarg()
		r.setVar("OPTIND", strconv.Itoa(optind))
		r.goptInd = optind
		r.optind = 0
		return 1
	}
	if optind > len(params) {
		// past the words (a script's OPTIND=9, or a function's second
		// call without local OPTIND): bash ends at once, OPTIND one past
		optind = len(params) + 1
		return done()
	}
	arg := params[optind-1]
	if r.optind >= len(arg) {
		r.optind = 0 // a place kept in another word than this one
	}
	if r.optind == 0 {
		if arg == "--" {
			optind++
			return done()
		}
		if len(arg) < 2 || arg[0] != '-' {
			return done()
		}
		r.optind = 1
	}
	c := arg[r.optind]
	r.optind++
	advance := func() {
		if r.optind >= len(arg) {
			optind++
			r.optind = 0
		}
	}
	i := strings.IndexByte(optstr, c)
	st := 0
	if i < 0 || c == ':' {
		if silent {
			r.setVar("OPTARG", string(c))
		} else {
			if !quiet {
				fmt.Fprintf(r.stderr(), "%s: illegal option -- %c\n", r.arg0, c)
			}
			r.unsetOptarg()
		}
		r.setVar(name, "?")
		advance()
	} else if i+1 < len(optstr) && optstr[i+1] == ':' {
		switch {
		case r.optind < len(arg):
			r.setVar("OPTARG", arg[r.optind:])
			optind++
			r.optind = 0
			r.setVar(name, string(c))
		case optind < len(params):
			r.setVar("OPTARG", params[optind])
			optind += 2
			r.optind = 0
			r.setVar(name, string(c))
		default:
			if silent {
				r.setVar(name, ":")
				r.setVar("OPTARG", string(c))
			} else {
				if !quiet {
					fmt.Fprintf(r.stderr(), "%s: option requires an argument -- %c\n", r.arg0, c)
				}
				r.setVar(name, "?")
				r.unsetOptarg()
			}
			optind++
			r.optind = 0
		}
	} else {
		r.setVar(name, string(c))
		r.unsetOptarg()
		advance()
	}
	r.setVar("OPTIND", strconv.Itoa(optind))
	r.goptInd = optind
	if !validRef(name) {
		r.errf("getopts: `%s': not a valid identifier", name)
		return 1
	}
	return st
}

// unsetOptarg unsets OPTARG as bash's getopts does: a readonly OPTARG
// stays, without a message.
func (r *runner) unsetOptarg() {
	if v := r.lookupRef("OPTARG"); v != nil && v.Attr&attrReadonly != 0 {
		return
	}
	r.unsetVar("OPTARG")
}
