package coreutils

// basename and dirname.

import (
	"context"
	"fmt"
	"strings"

	"github.com/warren-sandbox/warren/commands"
	"github.com/warren-sandbox/warren/commands/internal/getopt"
)

var basenameSpec = getopt.Spec{Short: "as:z", Long: []getopt.Long{
	{Name: "multiple", Key: "a"}, {Name: "suffix", Arg: getopt.Required, Key: "s"}, {Name: "zero", Key: "z"}}}

func baseName(s, suffix string) string {
	if s == "" {
		return ""
	}
	t := strings.TrimRight(s, "/")
	if t == "" {
		return "/"
	}
	if i := strings.LastIndexByte(t, '/'); i >= 0 {
		t = t[i+1:]
	}
	if suffix != "" && t != suffix && strings.HasSuffix(t, suffix) {
		t = strings.TrimSuffix(t, suffix)
	}
	return t
}

// Basename is basename(1).
func Basename(ctx context.Context, inv *commands.Invocation) int {
	r := begin(ctx, inv)
	opts, names, code, ok := r.parse(&basenameSpec)
	if !ok {
		return code
	}
	multiple, suffix := false, ""
	term := byte('\n')
	for _, o := range opts {
		switch o.Key {
		case "a":
			multiple = true
		case "s":
			suffix, multiple = o.Arg, true
		case "z":
			term = 0
		}
	}
	if len(names) == 0 {
		return r.usage(fmt.Errorf("missing operand"), 1)
	}
	if !multiple {
		if len(names) > 2 {
			return r.usage(fmt.Errorf("extra operand %s", quoteGNU(names[2])), 1)
		}
		if len(names) == 2 {
			suffix = names[1]
		}
		names = names[:1]
	}
	for _, n := range names {
		r.out.WriteString(baseName(n, suffix))
		r.out.WriteByte(term)
	}
	return r.done()
}

// Dirname is dirname(1).
func Dirname(ctx context.Context, inv *commands.Invocation) int {
	r := begin(ctx, inv)
	opts, names, code, ok := r.parse(&getopt.Spec{Short: "z", Long: []getopt.Long{{Name: "zero", Key: "z"}}})
	if !ok {
		return code
	}
	term := byte('\n')
	if len(opts) > 0 {
		term = 0
	}
	if len(names) == 0 {
		return r.usage(fmt.Errorf("missing operand"), 1)
	}
	for _, n := range names {
		r.out.WriteString(dirName(n))
		r.out.WriteByte(term)
	}
	return r.done()
}

func dirName(s string) string {
	t := strings.TrimRight(s, "/")
	if t == "" {
		if strings.HasPrefix(s, "/") {
			return "/"
		}
		return "."
	}
	i := strings.LastIndexByte(t, '/')
	if i < 0 {
		return "."
	}
	d := strings.TrimRight(t[:i], "/")
	if d == "" {
		return "/"
	}
	return d
}
