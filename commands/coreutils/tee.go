package coreutils

// tee: copies of standard input, unbuffered.

import (
	"context"
	"io"

	"github.com/warren-sandbox/warren/commands"
	"github.com/warren-sandbox/warren/commands/internal/getopt"
	"github.com/warren-sandbox/warren/commands/internal/textio"
	"github.com/warren-sandbox/warren/vfs"
)

var teeSpec = getopt.Spec{Short: "aip", Long: []getopt.Long{
	{Name: "append", Key: "a"}, {Name: "ignore-interrupts", Key: "i"}, {Name: "output-error", Arg: getopt.Optional, Key: "p"}}}

// Tee is tee(1): unbuffered copies, as the real one, so pipelines see data promptly.
func Tee(ctx context.Context, inv *commands.Invocation) int {
	r := begin(ctx, inv)
	opts, files, code, ok := r.parse(&teeSpec)
	if !ok {
		return code
	}
	flag := vfs.O_WRONLY | vfs.O_CREATE | vfs.O_TRUNC
	for _, o := range opts {
		if o.Key == "a" {
			flag = vfs.O_WRONLY | vfs.O_CREATE | vfs.O_APPEND
		}
	}
	type sink struct {
		name string
		w    io.Writer
	}
	sinks := []sink{{"standard output", inv.Stdout}}
	for _, name := range files {
		if name == "-" {
			sinks = append(sinks, sink{"standard output", inv.Stdout})
			continue
		}
		f, err := inv.OpenFile(name, flag, 0o666)
		if err != nil {
			r.errorf("%s", commands.Describe(err))
			continue
		}
		defer f.Close()
		sinks = append(sinks, sink{name, f})
	}
	bufp := textio.GetChunk()
	defer textio.PutChunk(bufp)
	buf := *bufp
	in := textio.WithContext(ctx, inv.Stdin)
	for {
		n, err := in.Read(buf)
		if n > 0 {
			for i := range sinks {
				if sinks[i].w == nil {
					continue
				}
				if _, werr := sinks[i].w.Write(buf[:n]); werr != nil {
					if i > 0 {
						r.errorf("%s: %s", sinks[i].name, commands.Strerror(werr))
					} else {
						r.status = 1
					}
					sinks[i].w = nil
				}
			}
		}
		if err != nil {
			if err != io.EOF && ctx.Err() == nil {
				r.errorf("read error: %s", commands.Strerror(err))
			}
			break
		}
	}
	return r.done()
}
