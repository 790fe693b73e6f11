package terminal

import (
	"fmt"
	"io"
	"strconv"
	"strings"
)

// flags are the stty settings this terminal honours, in -a order.
var flags = []struct {
	name string
	get  func(*mode) *bool
}{
	{"icrnl", func(m *mode) *bool { return &m.icrnl }},
	{"opost", func(m *mode) *bool { return &m.opost }},
	{"onlcr", func(m *mode) *bool { return &m.onlcr }},
	{"isig", func(m *mode) *bool { return &m.isig }},
	{"icanon", func(m *mode) *bool { return &m.icanon }},
	{"echo", func(m *mode) *bool { return &m.echo }},
}

// stty is the stty command on this terminal: size, -a, -g, raw, -raw,
// cooked, sane, [-]FLAG for the flags above, rows N, cols/columns N, and
// a setting saved by -g.
func (t *Term) stty(args []string, stdout, stderr io.Writer) int {
	t.mu.Lock()
	m, cols, rows := t.mode, t.cols, t.rows
	t.mu.Unlock()
	if len(args) == 0 {
		fmt.Fprintf(stdout, "speed 38400 baud; line = 0;\n%s\n", m.diff(sane))
		return 0
	}
	switch args[0] {
	case "size":
		fmt.Fprintf(stdout, "%d %d\n", rows, cols)
		return 0
	case "-a", "--all":
		fmt.Fprintf(stdout, "speed 38400 baud; rows %d; columns %d; line = 0;\nintr = ^C; eof = ^D; erase = ^?; kill = ^U; werase = ^W;\n%s\n", rows, cols, m.all())
		return 0
	case "-g", "--save":
		fmt.Fprintln(stdout, m.save())
		return 0
	}
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch a {
		case "raw", "-cooked":
			m.icanon, m.isig, m.icrnl, m.opost = false, false, false, false
			continue
		case "-raw", "cooked":
			m.icanon, m.isig, m.icrnl, m.opost = true, true, true, true
			continue
		case "sane":
			m = sane
			continue
		case "rows", "cols", "columns":
			if i+1 >= len(args) {
				fmt.Fprintf(stderr, "stty: missing argument to '%s'\n", a)
				return 1
			}
			n, err := strconv.Atoi(args[i+1])
			if err != nil || n < 1 || n > 10000 {
				fmt.Fprintf(stderr, "stty: invalid integer argument: '%s'\n", args[i+1])
				return 1
			}
			if a == "rows" {
				rows = n
			} else {
				cols = n
			}
			i++
			continue
		}
		if saved, ok := restore(a); ok {
			m = saved
			continue
		}
		name, on := strings.TrimPrefix(a, "-"), !strings.HasPrefix(a, "-")
		found := false
		for _, f := range flags {
			if f.name == name {
				*f.get(&m) = on
				found = true
			}
		}
		if !found {
			fmt.Fprintf(stderr, "stty: invalid argument '%s'\n", a)
			return 1
		}
	}
	t.mu.Lock()
	t.mode, t.cols, t.rows = m, cols, rows
	t.wake()
	t.mu.Unlock()
	return 0
}

func (m mode) all() string {
	var b []string
	for _, f := range flags {
		if *f.get(&m) {
			b = append(b, f.name)
		} else {
			b = append(b, "-"+f.name)
		}
	}
	return strings.Join(b, " ")
}

// diff lists the flags that differ from d (stty with no arguments).
func (m mode) diff(d mode) string {
	var b []string
	for _, f := range flags {
		if on := *f.get(&m); on != *f.get(&d) {
			if on {
				b = append(b, f.name)
			} else {
				b = append(b, "-"+f.name)
			}
		}
	}
	return strings.Join(b, " ")
}

// save is -g's form: "warren:" and one 0/1 per flag, which restore reads.
func (m mode) save() string {
	var b strings.Builder
	b.WriteString("warren")
	for _, f := range flags {
		if *f.get(&m) {
			b.WriteString(":1")
		} else {
			b.WriteString(":0")
		}
	}
	return b.String()
}

func restore(s string) (mode, bool) {
	parts := strings.Split(s, ":")
	if len(parts) != len(flags)+1 || parts[0] != "warren" {
		return mode{}, false
	}
	var m mode
	for i, f := range flags {
		switch parts[i+1] {
		case "1":
			*f.get(&m) = true
		case "0":
		default:
			return mode{}, false
		}
	}
	return m, true
}
