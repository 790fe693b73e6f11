package wasm

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/warren-sandbox/warren/commands"
)

// Ruby: the npm package @ruby/3.4-wasm-wasi ships ruby+stdlib.wasm, a
// WASI reactor (it exports _initialize, not _start) with the standard
// library packed inside it (wasi-vfs) and a component-model interface for
// its JavaScript host: ruby-init(args), rb-eval-string-protect(code), and
// imports for JS interop (rb-js-abi-host) and resource handles
// (canonical_abi). Without JavaScript, the glue here is enough to run
// scripts: JS interop traps with a message naming it, a resource handle is
// its representation, and the command line is turned into one Ruby
// program that runs the script and ends the module with exit!(status).
// at_exit handlers do not run (Ruby's cleanup is not exported).

// rubyHostModules are the non-WASI modules a Ruby reactor imports.
var rubyHostModules = map[string]bool{"rb-js-abi-host": true, "canonical_abi": true}

// isRuby reports whether mod is a ruby.wasm reactor.
func isRuby(mod wazero.CompiledModule) bool {
	ex := mod.ExportedFunctions()
	for _, n := range []string{"_initialize", "cabi_realloc", rubyInit, rubyEval} {
		if ex[n] == nil {
			return false
		}
	}
	return true
}

// The exports' names carry their component-model types.
const (
	rubyInit = "ruby-init: func(args: list<string>) -> ()"
	rubyEval = "rb-eval-string-protect: func(str: string) -> tuple<handle<rb-abi-value>, s32>"
)

// provideRubyHost instantiates the host modules mod imports, once per
// runtime, with functions of the signatures it declares. r.mu is held.
func (r *Runtime) provideRubyHost(ctx context.Context, rt wazero.Runtime, mod wazero.CompiledModule) error {
	need := map[string][]api.FunctionDefinition{}
	for _, f := range mod.ImportedFunctions() {
		m, _, _ := f.Import()
		if rubyHostModules[m] {
			need[m] = append(need[m], f)
		}
	}
	if r.hosted == nil {
		r.hosted = map[string]map[string]bool{}
	}
	for m, fns := range need {
		if have := r.hosted[m]; have != nil {
			for _, f := range fns {
				if _, n, _ := f.Import(); !have[n] {
					return fmt.Errorf("imports %s.%s, which this node's Ruby glue (instantiated for another ruby.wasm) lacks", m, n)
				}
			}
			continue
		}
		b := rt.NewHostModuleBuilder(m)
		names := map[string]bool{}
		for _, f := range fns {
			_, n, _ := f.Import()
			names[n] = true
			b.NewFunctionBuilder().WithGoModuleFunction(rubyHostFunc(m, n), f.ParamTypes(), f.ResultTypes()).Export(n)
		}
		if _, err := b.Instantiate(ctx); err != nil {
			return fmt.Errorf("cannot provide %s: %w", m, err)
		}
		r.hosted[m] = names
	}
	return nil
}

// rubyHostFunc is one imported function: resource handles are their
// representation; everything else is JavaScript interop, which traps.
func rubyHostFunc(module, name string) api.GoModuleFunc {
	switch {
	case module == "canonical_abi" && strings.HasPrefix(name, "resource_new_"),
		module == "canonical_abi" && strings.HasPrefix(name, "resource_get_"):
		return func(_ context.Context, _ api.Module, stack []uint64) {} // the result is the argument, in place
	case module == "canonical_abi" && strings.HasPrefix(name, "resource_drop_"):
		return func(context.Context, api.Module, []uint64) {}
	case name == "rb_wasm_throw_prohibit_rewind_exception":
		return func(_ context.Context, m api.Module, stack []uint64) {
			msg, _ := m.Memory().Read(uint32(stack[0]), uint32(stack[1]))
			panic(fmt.Errorf("ruby: %s", msg))
		}
	}
	fn, _, _ := strings.Cut(name, ":")
	return func(context.Context, api.Module, []uint64) {
		panic(fmt.Errorf("ruby: JavaScript interop (%s) is not available in warren", fn))
	}
}

// rubyArgs is a ruby command line: what to run and with what.
type rubyArgs struct {
	code     []string // -e, in order
	script   string   // a file, or "-" for stdin
	requires []string // -r
	includes []string // -I
	version  bool
	rest     []string // ARGV
}

func parseRubyArgs(args []string) (rubyArgs, error) {
	var a rubyArgs
	i := 0
	for ; i < len(args); i++ {
		s := args[i]
		if s == "--" {
			i++
			break
		}
		if !strings.HasPrefix(s, "-") || s == "-" {
			break
		}
		value := func(flag string) (string, error) {
			if v := strings.TrimPrefix(s, flag); v != "" {
				return v, nil
			}
			if i+1 >= len(args) {
				return "", fmt.Errorf("no code specified for %s", flag)
			}
			i++
			return args[i], nil
		}
		switch {
		case s == "-v" || s == "--version":
			a.version = true
		case s == "-w" || s == "-W" || strings.HasPrefix(s, "-W") || s == "--disable-gems" || strings.HasPrefix(s, "--disable="):
		case strings.HasPrefix(s, "-e"):
			v, err := value("-e")
			if err != nil {
				return a, err
			}
			a.code = append(a.code, v)
		case strings.HasPrefix(s, "-r"):
			v, err := value("-r")
			if err != nil {
				return a, err
			}
			a.requires = append(a.requires, v)
		case strings.HasPrefix(s, "-I"):
			v, err := value("-I")
			if err != nil {
				return a, err
			}
			a.includes = append(a.includes, v)
		default:
			return a, fmt.Errorf("invalid option %s (warren's ruby takes -e, -r, -I, -w, -v)", s)
		}
	}
	rest := args[i:]
	if len(a.code) == 0 {
		if len(rest) > 0 {
			a.script, rest = rest[0], rest[1:]
		} else if !a.version {
			a.script = "-"
		}
	}
	a.rest = rest
	return a, nil
}

// rubyQuote is s as a Ruby string literal that holds its bytes exactly.
func rubyQuote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == ' ' || c == '/' || c == '.' || c == '_' || c == '-' {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, `\x%02x`, c)
		}
	}
	b.WriteString(`".b.force_encoding(Encoding::UTF_8)`)
	return b.String()
}

// rubyProgram is the one Ruby program a command line becomes: it runs
// the script as ruby would, prints an uncaught exception as ruby does,
// and ends the module with the status.
func rubyProgram(a rubyArgs) string {
	var b strings.Builder
	b.WriteString("__warren_status = begin\n")
	for _, d := range a.includes {
		fmt.Fprintf(&b, "  $LOAD_PATH.unshift(File.expand_path(%s))\n", rubyQuote(d))
	}
	for _, l := range a.requires {
		fmt.Fprintf(&b, "  require %s\n", rubyQuote(l))
	}
	if a.version {
		b.WriteString("  puts RUBY_DESCRIPTION\n")
	}
	switch {
	case len(a.code) > 0:
		fmt.Fprintf(&b, "  $0 = \"-e\"\n  TOPLEVEL_BINDING.eval(%s, \"-e\", 1)\n", rubyQuote(strings.Join(a.code, "\n")))
	case a.script == "":
	case a.script == "-":
		b.WriteString("  $0 = \"-\"\n  TOPLEVEL_BINDING.eval($stdin.read, \"-\", 1)\n")
	default:
		fmt.Fprintf(&b, "  $0 = %s\n  load($0)\n", rubyQuote(a.script))
	}
	b.WriteString(`  0
rescue SystemExit => e
  e.status
rescue Exception => e
  $stderr.print(e.full_message(highlight: false))
  1
end
begin
  $stdout.flush
  $stderr.flush
rescue Exception
end
exit!(__warren_status)
`)
	return b.String()
}

// startRuby runs a Ruby reactor for inv: _initialize, ruby-init with
// ARGV, then the program.
func startRuby(ctx context.Context, inst api.Module, inv *commands.Invocation, name string) (int, error) {
	a, err := parseRubyArgs(inv.Args[min(1, len(inv.Args)):])
	if err != nil {
		fmt.Fprintf(inv.Stderr, "%s: %v\n", name, err)
		return 1, nil
	}
	if _, err := inst.ExportedFunction("_initialize").Call(ctx); err != nil {
		return 0, err
	}
	// ruby's own option parsing gets a no-op script; "--" keeps the
	// script's arguments (ARGV) away from it.
	argv := append([]string{name, "-EUTF-8", "-e_=0", "--"}, a.rest...)
	list, err := lowerStrings(ctx, inst, argv)
	if err != nil {
		return 0, err
	}
	if _, err := inst.ExportedFunction(rubyInit).Call(ctx, uint64(list), uint64(len(argv))); err != nil {
		return 0, err
	}
	prog := rubyProgram(a)
	p, err := lowerString(ctx, inst, prog, false)
	if err != nil {
		return 0, err
	}
	res, err := inst.ExportedFunction(rubyEval).Call(ctx, uint64(p), uint64(len(prog)))
	if err != nil {
		return 0, err
	}
	// The program ends with exit!; returning means it failed before
	// (a syntax error in the glue would be warren's bug).
	state, _ := inst.Memory().ReadUint32Le(uint32(res[0]) + 4)
	fmt.Fprintf(inv.Stderr, "warren: %s: the Ruby program did not exit (state %d)\n", name, state)
	return 1, nil
}

// alloc is the guest's cabi_realloc(0, 0, align, size).
func alloc(ctx context.Context, inst api.Module, align, size uint32) (uint32, error) {
	res, err := inst.ExportedFunction("cabi_realloc").Call(ctx, 0, 0, uint64(align), uint64(size))
	if err != nil {
		return 0, err
	}
	if res[0] == 0 && size > 0 {
		return 0, errors.New("ruby: cabi_realloc failed")
	}
	return uint32(res[0]), nil
}

// lowerString copies s into the guest (NUL-terminated when nul, as
// ruby-init's C strings are).
func lowerString(ctx context.Context, inst api.Module, s string, nul bool) (uint32, error) {
	b := []byte(s)
	if nul {
		b = append(b, 0)
	}
	p, err := alloc(ctx, inst, 1, uint32(len(b)))
	if err != nil {
		return 0, err
	}
	if !inst.Memory().Write(p, b) {
		return 0, errors.New("ruby: string out of the guest's memory")
	}
	return p, nil
}

// lowerStrings is a list<string> in the canonical ABI: an array of
// (pointer, length) pairs.
func lowerStrings(ctx context.Context, inst api.Module, ss []string) (uint32, error) {
	arr, err := alloc(ctx, inst, 4, uint32(8*len(ss)))
	if err != nil {
		return 0, err
	}
	for i, s := range ss {
		p, err := lowerString(ctx, inst, s, true)
		if err != nil {
			return 0, err
		}
		mem := inst.Memory()
		if !mem.WriteUint32Le(arr+uint32(8*i), p) || !mem.WriteUint32Le(arr+uint32(8*i)+4, uint32(len(s)+1)) {
			return 0, errors.New("ruby: argument list out of the guest's memory")
		}
	}
	return arr, nil
}
