package shell

// Classification without running (warren classify): which rung each
// command of a script would take under the session's policy and PATH.

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/warren-sandbox/warren/commands"
	"github.com/warren-sandbox/warren/vfs"
	"mvdan.cc/sh/v3/syntax"
)

// Classified is one command of a script and the rung it would take.
type Classified struct {
	Line int      `json:"line"`
	Argv []string `json:"argv"` // the literal words; a computed one is "…"
	Rung Rung     `json:"rung"` // resident, wasm, native, missing or dynamic
	Why  string   `json:"why"`
}

// RungDynamic is a command whose name is computed at run time.
const RungDynamic Rung = "dynamic"

// probeTimeout bounds a resident command's dry probe (see Classify).
const probeTimeout = 200 * time.Millisecond

// ClassifyScript parses src (bash) without running it and classifies
// every simple command in it, nested ones ($(...), pipelines, functions'
// bodies) included, in source order.
func (s *Shell) ClassifyScript(src string) ([]Classified, error) {
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(src), "")
	if err != nil {
		return nil, err
	}
	funcs := map[string]bool{}
	syntax.Walk(f, func(n syntax.Node) bool {
		if fd, ok := n.(*syntax.FuncDecl); ok {
			funcs[fd.Name.Value] = true
		}
		return true
	})
	var out []Classified
	syntax.Walk(f, func(n syntax.Node) bool {
		ce, ok := n.(*syntax.CallExpr)
		if !ok || len(ce.Args) == 0 {
			return true
		}
		argv := make([]string, len(ce.Args))
		for i, w := range ce.Args {
			argv[i] = literal(w)
		}
		c := Classified{Line: int(ce.Pos().Line()), Argv: argv}
		switch {
		case argv[0] == "…":
			c.Rung, c.Why = RungDynamic, "the command name is computed at run time"
		case funcs[argv[0]]:
			c.Rung, c.Why = RungResident, "shell function"
		default:
			c.Rung, c.Why = s.Classify(argv)
		}
		out = append(out, c)
		return true
	})
	return out, nil
}

// literal is w's text when it has no expansion that needs running (quotes
// resolved), "…" otherwise.
func literal(w *syntax.Word) string {
	var b strings.Builder
	var add func(parts []syntax.WordPart) bool
	add = func(parts []syntax.WordPart) bool {
		for _, p := range parts {
			switch p := p.(type) {
			case *syntax.Lit:
				b.WriteString(p.Value)
			case *syntax.SglQuoted:
				b.WriteString(p.Value)
			case *syntax.DblQuoted:
				if !add(p.Parts) {
					return false
				}
			default:
				return false
			}
		}
		return true
	}
	if !add(w.Parts) {
		return "…"
	}
	return b.String()
}

// Classify says which rung argv would take in this session, and why. A
// command with a resident implementation is probed dry: it runs over an
// empty throwaway filesystem with empty input, discarded output and no
// way to start other commands, for at most probeTimeout, only to see
// whether it refuses the invocation (refusals come from argv alone,
// before any effect); nothing of the sandbox is touched.
func (s *Shell) Classify(argv []string) (Rung, string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.st
	name := argv[0]
	if slices.Contains(keywords, name) {
		return RungResident, "shell keyword"
	}
	if _, ok := builtins[name]; ok {
		return RungResident, "shell builtin"
	}
	if _, ok := r.funcs[name]; ok {
		return RungResident, "shell function"
	}
	if name == "bash" || name == "sh" {
		return RungResident, "warren's shell (nested)"
	}
	if strings.Contains(name, "/") {
		return r.classifyFile(name, name[strings.LastIndexByte(name, '/')+1:])
	}
	fn, resident := s.cfg.Commands[name]
	if !resident {
		if p, ok := r.pathLookup(name); ok {
			return r.classifyFile(p, name)
		}
		return RungMissing, "command not found"
	}
	mode := s.cfg.Policy.For(name)
	hits := r.fileRungs(name)
	if mode == NativeFirst {
		for _, h := range hits {
			if h.off == "" {
				return h.rung, "native-first: " + h.path
			}
		}
	}
	ref, read := probe(fn, argv, s.cfg.Dir)
	if ref == nil {
		return RungResident, "warren's resident " + name
	}
	refused := fmt.Sprintf("the resident %s refuses %q", name, ref.What)
	if read {
		return RungMissing, refused + " after reading its input (not run again)"
	}
	if mode == ResidentOnly {
		return RungMissing, refused + "; commands policy resident-only"
	}
	next, why := r.nextRung(name)
	if next.path == "" {
		return RungMissing, refused + "; " + why
	}
	return next.rung, refused + "; falls back to " + next.path
}

// classifyFile is the rung of an explicit path (or a PATH hit of a name
// with no resident implementation).
func (r *runner) classifyFile(p, base string) (Rung, string) {
	f, err := r.sh.cfg.FS.Open(r.abs(p))
	if err != nil {
		if _, ok := r.sh.cfg.Commands[base]; ok && (strings.HasPrefix(p, "/bin/") || strings.HasPrefix(p, "/usr/bin/")) {
			return RungResident, "warren's resident " + base + " (as " + p + ")"
		}
		return RungMissing, p + ": no such file"
	}
	var head [4]byte
	n, _ := io.ReadFull(f, head[:])
	f.Close()
	switch {
	case n == 4 && string(head[:]) == "\x7fELF":
		if r.sh.cfg.Native == nil {
			return RungMissing, p + ": ELF binary, the native tier is off"
		}
		return RungNative, p
	case n == 4 && string(head[:]) == "\x00asm":
		if r.sh.cfg.WASM == nil {
			return RungMissing, p + ": WebAssembly module, the wasm tier is off"
		}
		return RungWASM, p
	case n == 0:
		if _, ok := r.sh.cfg.Commands[base]; ok {
			return RungResident, "warren's resident " + base + " (placeholder " + p + ")"
		}
	}
	return RungResident, "script " + p + " (warren's shell)"
}

// probe runs fn dry (see Classify) and returns its refusal, if any.
func probe(fn commands.Func, argv []string, dir string) (ref *commands.UnsupportedError, read bool) {
	defer func() {
		if recover() != nil {
			ref = nil // a crash is no refusal; the run would report it
		}
	}()
	fsys := vfs.New(vfs.Options{})
	if dir == "" {
		dir = "/"
	}
	fsys.MkdirAll(dir, 0o755)
	ctx, cancel := context.WithTimeout(context.Background(), probeTimeout)
	defer cancel()
	guard := &readGuard{r: strings.NewReader("")}
	inv := &commands.Invocation{Args: argv, Stdin: guard, Stdout: io.Discard, Stderr: io.Discard,
		Dir: dir, FS: fsys, FallBack: &commands.Refusals{}, Sys: &commands.System{Memory: commands.NewMemory(64 << 20), MaxMemoryBytes: 64 << 20}}
	fn(ctx, inv)
	return inv.Refusal(), guard.read
}
