// Package optparse parses command-line options the way GNU getopt_long
// does (permutation, unique long-option prefixes, GNU's error texts), for
// the resident commands that describe their options as a getopt string plus
// long names.
package optparse

import (
	"fmt"
	"strings"
)

// Set describes a command's options getopt_long style: short is a getopt
// string ("rfm:" — a colon marks an argument), long maps names to whether
// they take an argument ("=" suffix in the spec) and to the short letter or
// name they stand for.
type Set struct {
	short string
	long  map[string]longOpt
}

type longOpt struct {
	key    string // the option as the command sees it (a short letter or the long name)
	hasArg bool   // required argument
	optArg bool   // optional argument (--color[=WHEN])
}

// Opt is one parsed option.
type Opt struct {
	Key string
	Val string
}

// New builds an Set. Each long spec is "name", "name=" (argument),
// "name?" (optional argument) or any of these followed by ":k" to alias
// the option to key k (usually its short letter).
func New(short string, longs ...string) *Set {
	s := &Set{short: short, long: map[string]longOpt{}}
	for _, l := range longs {
		key := ""
		if i := strings.Index(l, ":"); i >= 0 {
			l, key = l[:i], l[i+1:]
		}
		lo := longOpt{}
		switch {
		case strings.HasSuffix(l, "="):
			l, lo.hasArg = l[:len(l)-1], true
		case strings.HasSuffix(l, "?"):
			l, lo.optArg = l[:len(l)-1], true
		}
		if key == "" {
			key = l
		}
		lo.key = key
		s.long[l] = lo
	}
	return s
}

// UsageError is a bad option; its text is what GNU getopt prints.
// Unknown is the option as typed when the set does not know it, so that
// Invocation.BadUsage can refuse it (commands.UnknownOption).
type UsageError struct{ Msg, Unknown string }

func (e *UsageError) Error() string { return e.Msg }

// UnknownOption implements commands.UnknownOption.
func (e *UsageError) UnknownOption() string { return e.Unknown }

// Parse splits args (without argv[0]) into options and operands, permuting
// like GNU getopt: options may follow operands until "--".
func (s *Set) Parse(args []string) ([]Opt, []string, error) {
	var opts []Opt
	var operands []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			operands = append(operands, args[i+1:]...)
			return opts, operands, nil
		case strings.HasPrefix(a, "--"):
			name, val, hasVal := strings.Cut(a[2:], "=")
			lo, ok := s.long[name]
			if !ok {
				// unique prefix match, as getopt_long allows
				var match []string
				for n := range s.long {
					if strings.HasPrefix(n, name) {
						match = append(match, n)
					}
				}
				if len(match) == 1 {
					lo, ok = s.long[match[0]], true
				} else if len(match) > 1 {
					return nil, nil, &UsageError{Msg: fmt.Sprintf("option '%s' is ambiguous", a)}
				}
			}
			if !ok {
				return nil, nil, &UsageError{Msg: fmt.Sprintf("unrecognized option '%s'", a), Unknown: a}
			}
			switch {
			case lo.hasArg && !hasVal:
				if i+1 >= len(args) {
					return nil, nil, &UsageError{Msg: fmt.Sprintf("option '--%s' requires an argument", name)}
				}
				i++
				val = args[i]
			case !lo.hasArg && !lo.optArg && hasVal:
				return nil, nil, &UsageError{Msg: fmt.Sprintf("option '--%s' doesn't allow an argument", name)}
			}
			opts = append(opts, Opt{lo.key, val})
		case len(a) > 1 && a[0] == '-':
			for j := 1; j < len(a); j++ {
				c := a[j]
				k := strings.IndexByte(s.short, c)
				if k < 0 || c == ':' {
					return nil, nil, &UsageError{Msg: fmt.Sprintf("invalid option -- '%c'", c), Unknown: "-" + string(c)}
				}
				if k+1 < len(s.short) && s.short[k+1] == ':' {
					val := a[j+1:]
					if val == "" {
						if i+1 >= len(args) {
							return nil, nil, &UsageError{Msg: fmt.Sprintf("option requires an argument -- '%c'", c)}
						}
						i++
						val = args[i]
					}
					opts = append(opts, Opt{string(c), val})
					break
				}
				opts = append(opts, Opt{string(c), ""})
			}
		default:
			operands = append(operands, a)
		}
	}
	return opts, operands, nil
}
