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
		r.unsetVar("OPTARG")
		r.setVar("OPTIND", strconv.Itoa(optind))
		r.goptInd = optind
		r.optind = 0
		return 1
	}
	if optind-1 > len(params) {
		optind = 1
	}
	if optind-1 >= len(params) {
		return done()
	}
	arg := params[optind-1]
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
			fmt.Fprintf(r.stderr(), "%s: illegal option -- %c\n", r.arg0, c)
			r.unsetVar("OPTARG")
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
				fmt.Fprintf(r.stderr(), "%s: option requires an argument -- %c\n", r.arg0, c)
				r.setVar(name, "?")
				r.unsetVar("OPTARG")
			}
			optind++
			r.optind = 0
		}
	} else {
		r.setVar(name, string(c))
		r.unsetVar("OPTARG")
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
