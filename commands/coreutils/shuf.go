package coreutils

// shuf: random permutations within the memory budget.

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"

	"github.com/warren-sandbox/warren/commands"
	"github.com/warren-sandbox/warren/commands/internal/getopt"
	"github.com/warren-sandbox/warren/vfs"
)

var shufSpec = getopt.Spec{Short: "ei:n:o:rz", Long: []getopt.Long{
	{Name: "echo", Key: "e"}, {Name: "input-range", Arg: getopt.Required, Key: "i"},
	{Name: "head-count", Arg: getopt.Required, Key: "n"}, {Name: "output", Arg: getopt.Required, Key: "o"},
	{Name: "repeat", Key: "r"}, {Name: "zero-terminated", Key: "z"}, {Name: "random-source", Arg: getopt.Required}}}

// Shuf is shuf(1); input lines are buffered within the memory budget.
func Shuf(ctx context.Context, inv *commands.Invocation) int {
	r := begin(ctx, inv)
	opts, operands, code, ok := r.parse(&shufSpec)
	if !ok {
		return code
	}
	echo, repeat := false, false
	count := int64(-1)
	rangeSpec, output := "", ""
	delim := byte('\n')
	for _, o := range opts {
		switch o.Key {
		case "e":
			echo = true
		case "i":
			rangeSpec = o.Arg
		case "n":
			n, err := strconv.ParseInt(o.Arg, 10, 64)
			if err != nil || n < 0 {
				return r.fail(1, "invalid line count: %s", quoteGNU(o.Arg))
			}
			count = n
		case "o":
			output = o.Arg
		case "r":
			repeat = true
		case "z":
			delim = 0
		case "random-source":
			return r.fail(1, "--random-source is not supported")
		}
	}
	var items []string
	switch {
	case echo:
		items = operands
	case rangeSpec != "":
		lo, hi, ok := strings.Cut(rangeSpec, "-")
		a, err1 := strconv.ParseInt(lo, 10, 64)
		b, err2 := strconv.ParseInt(hi, 10, 64)
		if !ok || err1 != nil || err2 != nil || b < a-1 {
			return r.fail(1, "invalid input range: %s", quoteGNU(rangeSpec))
		}
		if b-a > 1<<24 && !repeat && count < 0 {
			return r.fail(1, "input range too large")
		}
		if repeat {
			if count < 0 {
				count = math.MaxInt64
			}
			for i := int64(0); i < count && !r.stopped(); i++ {
				fmt.Fprintf(r.out, "%d%c", a+rand.Int64N(b-a+1), delim)
			}
			return r.done()
		}
		for v := a; v <= b; v++ {
			items = append(items, strconv.FormatInt(v, 10))
		}
	default:
		if len(operands) > 1 {
			return r.usage(fmt.Errorf("extra operand %s", quoteGNU(operands[1])), 1)
		}
		lines, ok := r.readLines(firstOr(operands, "-"), delim, r.budget())
		if !ok {
			if r.status == 0 {
				r.status = 1
			}
			return r.done()
		}
		items = lines
	}
	if output != "" {
		f, err := inv.OpenFile(output, vfs.O_WRONLY|vfs.O_CREATE|vfs.O_TRUNC, 0o666)
		if err != nil {
			return r.fail(1, "%s", commands.Describe(err))
		}
		defer f.Close()
		r.out.Flush()
		r.out.Reset(f)
	}
	if repeat {
		if len(items) == 0 {
			if count != 0 {
				return r.fail(1, "no lines to repeat")
			}
			return r.done()
		}
		if count < 0 {
			count = math.MaxInt64
		}
		for i := int64(0); i < count && !r.stopped(); i++ {
			r.out.WriteString(items[rand.IntN(len(items))])
			r.out.WriteByte(delim)
		}
		return r.done()
	}
	rand.Shuffle(len(items), func(i, j int) { items[i], items[j] = items[j], items[i] })
	if count >= 0 && count < int64(len(items)) {
		items = items[:count]
	}
	for _, it := range items {
		r.out.WriteString(it)
		r.out.WriteByte(delim)
	}
	return r.done()
}

func firstOr(s []string, def string) string {
	if len(s) > 0 {
		return s[0]
	}
	return def
}
