// Package optparse is the compact front end of the resident commands' one
// GNU option parser (commands/internal/getopt): a getopt string plus long
// names in one list ("mode=:m"), for the commands written against it
// (archive, fileutils, sysinfo, net, bc, numfmt). Parsing, permutation,
// abbreviations and GNU's error texts are getopt's.
package optparse

import (
	"strings"

	"github.com/warren-sandbox/warren/commands/internal/getopt"
)

// Set describes a command's options getopt_long style.
type Set struct{ spec getopt.Spec }

// Opt is one parsed option.
type Opt struct {
	Key string
	Val string
}

// UsageError is a bad option; its text is what GNU getopt prints, and
// Unknown (the option as typed, when the set does not know it) lets
// Invocation.BadUsage refuse it (commands.UnknownOption).
type UsageError = getopt.Error

// New builds a Set. short is a getopt string ("rfm:": a colon marks an
// argument). Each long spec is "name", "name=" (argument), "name?"
// (optional argument) or any of these followed by ":k" to alias the
// option to key k (usually its short letter).
func New(short string, longs ...string) *Set {
	s := &Set{spec: getopt.Spec{Short: short}}
	for _, l := range longs {
		key := ""
		if i := strings.Index(l, ":"); i >= 0 {
			l, key = l[:i], l[i+1:]
		}
		lo := getopt.Long{Key: key}
		switch {
		case strings.HasSuffix(l, "="):
			l, lo.Arg = l[:len(l)-1], getopt.Required
		case strings.HasSuffix(l, "?"):
			l, lo.Arg = l[:len(l)-1], getopt.Optional
		}
		lo.Name = l
		s.spec.Long = append(s.spec.Long, lo)
	}
	return s
}

// Parse splits args (without argv[0]) into options and operands, permuting
// like GNU getopt: options may follow operands until "--".
func (s *Set) Parse(args []string) ([]Opt, []string, error) {
	opts, operands, err := s.spec.Parse(args)
	if err != nil {
		return nil, nil, err
	}
	var out []Opt
	for _, o := range opts {
		out = append(out, Opt{Key: o.Key, Val: o.Arg})
	}
	return out, operands, nil
}
