package bashfmt

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/warren-sandbox/warren/commands"
)

// A width of a billion goes through Charge in small pieces: a 1 MiB
// budget refuses it after about 1 MiB, having allocated no more.
func TestPrintfHugeWidth(t *testing.T) {
	for _, c := range []struct {
		format string
		args   []string
	}{
		{"%*d", []string{"1000000000", "1"}},
		{"%1000000000d", []string{"1"}},
		{"%.1000000000d", []string{"1"}},
		{"%.1000000000f", []string{"1"}},
		{"%.1000000000e", []string{"1"}},
		{"%*s", []string{"-1000000000", "x"}},
		{"%*b", []string{"1000000000", "x"}},
		{"%*d", []string{"3000000000", "1"}}, // bash clamps it to INT_MAX
	} {
		mem := commands.NewMemory(1 << 20)
		res := mem.Reserve()
		var out bytes.Buffer
		p := Printer{Charge: func(n int) error { return res.Grow(int64(n)) }}
		_, err := p.Printf(context.Background(), &out, c.format, c.args)
		if !errors.Is(err, commands.ErrMemoryLimit) {
			t.Errorf("%q %q: err %v, want the memory limit", c.format, c.args, err)
		}
		if out.Len() > 1<<20 || out.Len() < 1<<19 {
			t.Errorf("%q %q: wrote %d bytes under a 1 MiB budget", c.format, c.args, out.Len())
		}
		res.Close()
	}
}

// Without a budget, a cancelled context stops the padding.
func TestPrintfCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	w := &cancelAfter{n: 1 << 16, cancel: cancel}
	var p Printer
	_, err := p.Printf(ctx, w, "%*d", []string{"2000000000", "1"})
	if !errors.Is(err, context.Canceled) || w.total > 1<<17 {
		t.Errorf("err %v after %d bytes, want context.Canceled soon after 64 KiB", err, w.total)
	}
}

type cancelAfter struct {
	n, total int
	cancel   func()
}

func (w *cancelAfter) Write(b []byte) (int, error) {
	w.total += len(b)
	if w.total >= w.n {
		w.cancel()
	}
	return len(b), nil
}

// A failing writer ends printf with its error.
func TestPrintfWriteError(t *testing.T) {
	var p Printer
	_, err := p.Printf(context.Background(), failWriter{}, "%s\n", []string{"x"})
	if !errors.Is(err, io.ErrClosedPipe) {
		t.Errorf("err %v, want io.ErrClosedPipe", err)
	}
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, io.ErrClosedPipe }

// Unescape's styles, against echo in both references.
func TestUnescapeReferences(t *testing.T) {
	words := []string{`\0101`, `\101`, `\c`, `a\cb`, `\x41`, `\x`, `\xg`, `\u00e9`, `\U0001F600`, `\ud800`,
		`\e`, `\E`, `\N`, `\01234`, `\-`, `\"`, `\'`, `\?`, `\x4`, `\u`, `\0`, `\08`, `\0400`, `\777`, `\\`, `a\`,
		`\a\b\f\v\r\t\n`, `\U00110000`, `\u0041`}
	for _, w := range words {
		want := reference(t, bashPath, "-c", `echo -e "$1"`, "bash", w).stdout
		got, stop := Unescape(w, EchoEscapes)
		if !stop {
			got += "\n"
		}
		if got != want {
			t.Errorf("bash echo -e %q: got %q, want %q", w, got, want)
		}
		want = reference(t, gnuEcho, "-e", w).stdout
		got, stop = Unescape(w, GNUEchoEscapes)
		if !stop {
			got += "\n"
		}
		if got != want {
			t.Errorf("GNU echo -e %q: got %q, want %q", w, got, want)
		}
		if strings.Contains(w, `\x`) || strings.Contains(w, `\u`) && w != `\u0041` && w != `\u00e9` || w == `\U` {
			continue // bash's %b complains there; TestPrintfReferences covers it
		}
		want = reference(t, bashPath, "-c", `printf %b "$1"`, "bash", w).stdout
		if got, _ = Unescape(w, PercentB); got != want {
			t.Errorf("bash %%b %q: got %q, want %q", w, got, want)
		}
	}
}

// DollarQuote against bash's own $'...' (each word in the source of a
// bash -c script; bash's word ends at a NUL, so ours is cut there too).
func TestUnescapeDollarQuoteReference(t *testing.T) {
	words := []string{`\0101`, `\101`, `\1`, `\18`, `\400`, `\777`, `\c`, `a\c`, `\cA`, `\ca`, `\c?`, `\c[`,
		`\c\\`, `\c\d`, `\c1`, `\x41`, `\x4`, `\xg`, `\x414`, `\u00e9`, `\u`, `\u4`, `\u12345`, `\U0001F600`,
		`\U`, `\uD800`, `\U110000`, `\U7FFFFFFF`, `\'`, `\"`, `\?`, `\e`, `\E`, `\a\b\f\v\r\t\n`, `\q`, `\\`,
		`\z`, `a\0b`, `\N`, `\-`}
	for _, w := range words {
		want := reference(t, bashPath, "-c", `printf '%s' $'`+w+`'`).stdout
		got, stop := Unescape(w, DollarQuote)
		if i := strings.IndexByte(got, 0); i >= 0 {
			got = got[:i]
		}
		if got != want || stop {
			t.Errorf("bash $'%s': got %q (stop %v), want %q", w, got, stop, want)
		}
	}
}
