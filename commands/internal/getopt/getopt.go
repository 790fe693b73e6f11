// Package getopt parses command lines the way GNU getopt_long does: clustered
// short options, "--long[=arg]" with unique-prefix abbreviation, options and
// operands in any order until "--", and GNU's diagnostic texts, because agents
// parse those messages.
package getopt

import (
	"fmt"
	"io"
	"sort"
	"strings"
)

// Arg says whether an option takes an argument.
type Arg int

const (
	NoArg Arg = iota
	Required
	Optional // only "--name=value" or "-xVALUE" attach an optional argument
)

// Long describes one long option. Key is what Parse reports for it: the
// equivalent short option ("n") or, when empty, the long name itself.
type Long struct {
	Name string
	Arg  Arg
	Key  string
}

// Spec is a command's option grammar. Short uses getopt's notation:
// "nf:k::" = -n, -f ARG, -k[ARG].
type Spec struct {
	Short string
	Long  []Long
	// InOrder stops at the first operand (POSIX mode, "+" in getopt), for
	// commands whose operands may look like options (expr, printf-like).
	InOrder bool
}

// Opt is one parsed option.
type Opt struct {
	Key    string // short letter or long name (see Long.Key)
	Arg    string
	HasArg bool
	Raw    string // as written, for diagnostics
}

// Error is a usage error carrying GNU's message text.
type Error struct{ Msg, Unknown string }

func (e *Error) Error() string { return e.Msg }

// UnknownOption is the option as typed when the spec does not know it
// ("" for other errors): commands.Invocation.BadUsage refuses those, so
// the execution ladder can run a fuller implementation.
func (e *Error) UnknownOption() string { return e.Unknown }

func (s *Spec) short(c byte) (Arg, bool) {
	i := strings.IndexByte(s.Short, c)
	if i < 0 || c == ':' {
		return NoArg, false
	}
	if i+1 < len(s.Short) && s.Short[i+1] == ':' {
		if i+2 < len(s.Short) && s.Short[i+2] == ':' {
			return Optional, true
		}
		return Required, true
	}
	return NoArg, true
}

func (s *Spec) long(name string) (*Long, error) {
	var cands []*Long
	for i := range s.Long {
		l := &s.Long[i]
		if l.Name == name {
			return l, nil
		}
		if strings.HasPrefix(l.Name, name) {
			cands = append(cands, l)
		}
	}
	if len(cands) == 1 {
		return cands[0], nil
	}
	if len(cands) > 1 {
		// Abbreviations of aliases for the same option are not ambiguous.
		same := true
		for _, c := range cands[1:] {
			if c.key() != cands[0].key() || c.Arg != cands[0].Arg {
				same = false
			}
		}
		if same {
			return cands[0], nil
		}
		var names []string
		for _, c := range cands {
			names = append(names, "'--"+c.Name+"'")
		}
		sort.Strings(names)
		return nil, &Error{Msg: fmt.Sprintf("option '--%s' is ambiguous; possibilities: %s", name, strings.Join(names, " "))}
	}
	return nil, &Error{Msg: fmt.Sprintf("unrecognized option '--%s'", name)}
}

func (l *Long) key() string {
	if l.Key != "" {
		return l.Key
	}
	return l.Name
}

// Parse splits args (without the command name) into options and operands.
// dashed[c] is "-" + string(c), built once: Parse runs on every command
// invocation and the concatenation allocated for each short option.
var dashed = func() (t [256]string) {
	for c := range t {
		t[c] = "-" + string(rune(c))
	}
	return t
}()

func (s *Spec) Parse(args []string) ([]Opt, []string, error) {
	var opts []Opt
	var operands []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			operands = append(operands, args[i+1:]...)
			break
		}
		if len(a) < 2 || a[0] != '-' {
			if s.InOrder {
				operands = append(operands, args[i:]...)
				break
			}
			operands = append(operands, a)
			continue
		}
		if strings.HasPrefix(a, "--") {
			name, val, hasVal := strings.Cut(a[2:], "=")
			l, err := s.long(name)
			if err != nil {
				if e, ok := err.(*Error); ok && strings.HasPrefix(e.Msg, "unrecognized") {
					e.Msg, e.Unknown = fmt.Sprintf("unrecognized option '%s'", a), a
				}
				return nil, nil, err
			}
			o := Opt{Key: l.key(), Raw: "--" + l.Name}
			switch l.Arg {
			case NoArg:
				if hasVal {
					return nil, nil, &Error{Msg: fmt.Sprintf("option '--%s' doesn't allow an argument", l.Name)}
				}
			case Required:
				if !hasVal {
					if i+1 >= len(args) {
						return nil, nil, &Error{Msg: fmt.Sprintf("option '--%s' requires an argument", l.Name)}
					}
					i++
					val = args[i]
				}
				o.Arg, o.HasArg = val, true
			case Optional:
				o.Arg, o.HasArg = val, hasVal
			}
			opts = append(opts, o)
			continue
		}
		for j := 1; j < len(a); j++ {
			c := a[j]
			kind, ok := s.short(c)
			if !ok {
				return nil, nil, &Error{Msg: fmt.Sprintf("invalid option -- '%c'", c), Unknown: dashed[c]}
			}
			o := Opt{Key: string(c), Raw: dashed[c]}
			if kind == NoArg {
				opts = append(opts, o)
				continue
			}
			if j+1 < len(a) {
				o.Arg, o.HasArg = a[j+1:], true
			} else if kind == Required {
				if i+1 >= len(args) {
					return nil, nil, &Error{Msg: fmt.Sprintf("option requires an argument -- '%c'", c)}
				}
				i++
				o.Arg, o.HasArg = args[i], true
			}
			opts = append(opts, o)
			break
		}
	}
	return opts, operands, nil
}

// Usage prints a GNU usage diagnostic ("NAME: MSG" then the --help hint)
// and returns the status the command should exit with.
func Usage(stderr io.Writer, name string, err error, status int) int {
	io.WriteString(stderr, UsageText(name, err))
	return status
}

// UsageText is what Usage prints.
func UsageText(name string, err error) string {
	return fmt.Sprintf("%s: %s\nTry '%s --help' for more information.\n", name, err.Error(), name)
}
