// Package wasm is the execution ladder's WebAssembly rung: a WASI
// (preview 1) module found in a sandbox runs inside the warren process on
// wazero, with the sandbox's vfs as its whole filesystem, the shell's
// streams as its stdio, and no network (WASI preview 1 has no sockets, and
// no other host module is offered). It never touches the host: no os, no
// host files, no host clock beyond time itself.
//
// Compiled modules are cached by content hash in memory (LRU, bounded
// bytes) and, when the node gives one, in a wazero compilation cache on
// disk; instances are per exec.
//
// The working directory reaches modules as $PWD: Go's wasip1 runtime starts
// in $PWD; wasi-libc has no host-settable cwd and resolves relative paths
// from "/" (a C module should chdir($PWD) itself or use absolute paths).
package wasm

import (
	"bytes"
	"container/list"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/experimental"
	"github.com/tetratelabs/wazero/experimental/sysfs"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"
	"github.com/tetratelabs/wazero/sys"
	"github.com/warren-sandbox/warren/commands"
)

// Magic is the first four bytes of every WebAssembly binary module.
var Magic = []byte("\x00asm")

// IsModule reports whether head starts like a WebAssembly binary.
func IsModule(head []byte) bool { return bytes.HasPrefix(head, Magic) }

// Exit statuses, as the shell reports them.
const (
	StatusTimeout    = 124 // the exec's deadline passed
	StatusCannotExec = 126 // not a valid module, or it imports what warren does not provide
	StatusMemory     = 137 // grew past its memory limit (as the native tier's OOM kill)
	StatusCanceled   = 130
)

const pageSize = 64 << 10

// Config configures a Runtime.
type Config struct {
	// MaxMemoryBytes bounds one instance's linear memory when the sandbox
	// sets no smaller limit (default 1 GiB; WASI's ceiling is 4 GiB).
	MaxMemoryBytes int64
	// MaxCacheBytes bounds the in-memory cache of compiled modules,
	// counted in module bytes (default 256 MiB).
	MaxCacheBytes int64
	// CacheDir keeps compiled code on disk across restarts (wazero's
	// compilation cache; the node uses DATA/cache/wasm); "" keeps it in
	// memory only. Cache, when set, is used instead.
	CacheDir string
	Cache    wazero.CompilationCache
}

// Runtime runs modules for every sandbox of a node. It is safe for
// concurrent use.
type Runtime struct {
	cfg Config

	mu       sync.Mutex
	rt       wazero.Runtime
	lru      *list.List // of *entry, most recent first
	byKey    map[cacheKey]*list.Element
	held     int64
	compiles int // modules compiled (not found in memory), for tests and metrics
	closed   bool
	hosted   map[string]map[string]bool // Ruby's host modules: module → functions provided

	baseFiles baseFiles
	reads     atomic.Int64 // module files read by Exec, for tests
}

type cacheKey = [sha256.Size]byte

type entry struct {
	key  cacheKey
	mod  wazero.CompiledModule
	size int64
}

// New returns a Runtime. A CacheDir that cannot be used falls back to the
// in-memory cache (compiles are then not kept across restarts).
func New(cfg Config) *Runtime {
	if cfg.MaxMemoryBytes <= 0 {
		cfg.MaxMemoryBytes = 1 << 30
	}
	if cfg.MaxCacheBytes <= 0 {
		cfg.MaxCacheBytes = 256 << 20
	}
	if cfg.Cache == nil && cfg.CacheDir != "" {
		if c, err := wazero.NewCompilationCacheWithDir(cfg.CacheDir); err == nil {
			cfg.Cache = c
		}
	}
	if cfg.Cache == nil {
		cfg.Cache = wazero.NewCompilationCache()
	}
	return &Runtime{cfg: cfg, lru: list.New(), byKey: map[cacheKey]*list.Element{}}
}

// Compiles is how many modules were compiled so far (cache misses).
func (r *Runtime) Compiles() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.compiles
}

// Close releases every runtime and compiled module.
func (r *Runtime) Close(ctx context.Context) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.closed = true
	var err error
	if r.rt != nil {
		err = r.rt.Close(ctx)
	}
	r.rt, r.byKey, r.held, r.hosted = nil, map[cacheKey]*list.Element{}, 0, nil
	r.lru.Init()
	return err
}

// runtime returns the node's wazero runtime. Memory limits are per
// instance (the allocator in memory.go), so one runtime and one compiled
// copy of each module serve every sandbox whatever its limit.
func (r *Runtime) runtime(ctx context.Context) (wazero.Runtime, error) {
	if r.rt != nil {
		return r.rt, nil
	}
	rc := wazero.NewRuntimeConfig().
		WithMemoryLimitPages(65536). // WASI's 4 GiB; the allocator enforces the instance's limit
		WithCloseOnContextDone(true).
		WithCompilationCache(r.cfg.Cache)
	rt := wazero.NewRuntimeWithConfig(ctx, rc)
	if _, err := wasi_snapshot_preview1.Instantiate(ctx, rt); err != nil {
		rt.Close(ctx)
		return nil, fmt.Errorf("wasm: cannot provide WASI: %w", err)
	}
	r.rt = rt
	return rt, nil
}

// compiled returns the module whose bytes hash to key, compiled, from the
// cache when it was seen before; bin is the bytes (nil: call load for
// them, only on a miss).
func (r *Runtime) compiled(ctx context.Context, key cacheKey, bin []byte, load func() ([]byte, error)) (wazero.Runtime, wazero.CompiledModule, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil, nil, errors.New("wasm: runtime closed")
	}
	rt, err := r.runtime(ctx)
	if err != nil {
		return nil, nil, err
	}
	if el, ok := r.byKey[key]; ok {
		r.lru.MoveToFront(el)
		return rt, el.Value.(*entry).mod, nil
	}
	if bin == nil {
		var err error
		if bin, err = load(); err != nil {
			return nil, nil, err
		}
	}
	// Compiling under the lock keeps two execs of a new module from
	// compiling it twice; other modules wait, which is rare and bounded.
	mod, err := rt.CompileModule(ctx, bin)
	if err != nil {
		return nil, nil, err
	}
	r.compiles++
	e := &entry{key: key, mod: mod, size: int64(len(bin))}
	r.byKey[key] = r.lru.PushFront(e)
	r.held += e.size
	for r.held > r.cfg.MaxCacheBytes && r.lru.Len() > 1 {
		old := r.lru.Remove(r.lru.Back()).(*entry)
		delete(r.byKey, old.key)
		r.held -= old.size
		// A running instance keeps what it needs; closing the compiled
		// module only drops it from the runtime's table.
		old.mod.Close(ctx)
	}
	return rt, mod, nil
}

// Run executes the module at path (already read as bin) for inv: args,
// env, cwd ($PWD), stdio, the vfs at "/". It returns the exit status and
// writes warren's own diagnostics to inv.Stderr.
func (r *Runtime) Run(ctx context.Context, inv *commands.Invocation, path string, bin []byte) int {
	return r.run(ctx, inv, path, cacheKey(sha256.Sum256(bin)), bin, nil)
}

func (r *Runtime) run(ctx context.Context, inv *commands.Invocation, path string, key cacheKey, bin []byte, load func() ([]byte, error)) int {
	name := path
	if len(inv.Args) > 0 {
		name = inv.Args[0]
	}
	limit := r.cfg.MaxMemoryBytes
	if inv.Sys != nil && inv.Sys.MaxMemoryBytes > 0 && inv.Sys.MaxMemoryBytes < limit {
		limit = inv.Sys.MaxMemoryBytes
	}
	limit = max(min(limit, 65536*pageSize), pageSize)
	rt, mod, err := r.compiled(ctx, key, bin, load)
	if err != nil {
		var re *readError
		if errors.As(err, &re) {
			fmt.Fprintf(inv.Stderr, "warren: %s: %v\n", name, re.err)
			return StatusCannotExec
		}
		fmt.Fprintf(inv.Stderr, "warren: %s: not a valid WebAssembly module: %v\n", name, err)
		return StatusCannotExec
	}
	ruby := isRuby(mod)
	if ruby {
		r.mu.Lock()
		err := r.provideRubyHost(ctx, rt, mod)
		r.mu.Unlock()
		if err != nil {
			fmt.Fprintf(inv.Stderr, "warren: %s: %v\n", name, err)
			return StatusCannotExec
		}
	}
	if st, ok := r.checkImports(inv, name, mod, ruby); !ok {
		return st
	}
	// The instance's memory is charged to the sandbox's budget as it
	// grows, and refused past the limit.
	var mem *commands.Memory
	if inv.Sys != nil {
		mem = inv.Sys.Memory
	}
	res := mem.Reserve()
	defer res.Close()
	alloc, made := allocator(uint64(limit), res)
	ctx = experimental.WithMemoryAllocator(ctx, alloc)
	refused := func() error {
		if *made == nil {
			return nil
		}
		return (*made).refused
	}

	mc := wazero.NewModuleConfig().
		WithName(""). // anonymous: many instances of one module at once
		WithArgs(append([]string{name}, inv.Args[min(1, len(inv.Args)):]...)...).
		WithStdin(inv.Stdin).WithStdout(inv.Stdout).WithStderr(inv.Stderr).
		WithFSConfig(wazero.NewFSConfig().(sysfs.FSConfig).WithSysFSMount(&vfsFS{fs: inv.FS}, "/")).
		WithSysWalltime().WithSysNanotime().WithSysNanosleep().WithRandSource(randReader{}).
		WithStartFunctions() // _start is called below, so the instance outlives its exit
	hasPWD := false
	for _, kv := range inv.Env {
		k, v, _ := strings.Cut(kv, "=")
		hasPWD = hasPWD || k == "PWD"
		mc = mc.WithEnv(k, v)
	}
	if !hasPWD && inv.Dir != "" {
		mc = mc.WithEnv("PWD", inv.Dir)
	}
	inst, err := rt.InstantiateModule(ctx, mod, mc)
	if err != nil {
		return status(ctx, inv, name, limit, refused(), err)
	}
	defer inst.Close(context.WithoutCancel(ctx))
	if ruby {
		st, err := startRuby(ctx, inst, inv, name)
		if err != nil {
			return status(ctx, inv, name, limit, refused(), err)
		}
		return st
	}
	start := inst.ExportedFunction("_start")
	if start == nil {
		fmt.Fprintf(inv.Stderr, "warren: %s: the module exports no _start function (a WASI command is needed)\n", name)
		return StatusCannotExec
	}
	_, err = start.Call(ctx)
	return status(ctx, inv, name, limit, refused(), err)
}

// status maps how the module ended to a shell status and a message. A
// module that failed after a refused memory growth ran out of memory,
// whatever it printed about it.
func status(ctx context.Context, inv *commands.Invocation, name string, limit int64, refused, err error) int {
	if err == nil {
		return 0
	}
	var exit *sys.ExitError
	if errors.As(err, &exit) {
		switch exit.ExitCode() {
		case sys.ExitCodeDeadlineExceeded:
			return StatusTimeout
		case sys.ExitCodeContextCanceled:
			return StatusCanceled
		}
		if exit.ExitCode() == 0 {
			return 0
		}
	} else if ctx.Err() != nil {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return StatusTimeout
		}
		return StatusCanceled
	}
	switch {
	case errors.Is(refused, errLimit):
		fmt.Fprintf(inv.Stderr, "warren: wasm: memory limit (%d MiB) reached by %s\n", limit>>20, name)
		return StatusMemory
	case refused != nil:
		fmt.Fprintf(inv.Stderr, "%v\n", refused) // the sandbox's budget names itself
		return 125
	case exit != nil:
		return int(exit.ExitCode()) & 0xff
	}
	// A trap (unreachable, out-of-bounds access, stack exhaustion).
	fmt.Fprintf(inv.Stderr, "warren: %s: %v\n", name, firstLine(err))
	return 134
}

func firstLine(err error) string {
	s, _, _ := strings.Cut(err.Error(), "\n")
	return s
}

// checkImports refuses a module that imports anything but WASI preview 1
// (and, for a ruby.wasm reactor, the glue in ruby.go), naming the import,
// before it runs.
func (r *Runtime) checkImports(inv *commands.Invocation, name string, mod wazero.CompiledModule, ruby bool) (int, bool) {
	for _, f := range mod.ImportedFunctions() {
		m, n, _ := f.Import()
		if m != wasi_snapshot_preview1.ModuleName && !(ruby && rubyHostModules[m]) {
			fmt.Fprintf(inv.Stderr, "warren: %s: imports %s.%s, which warren does not provide (only %s)\n", name, m, n, wasi_snapshot_preview1.ModuleName)
			return StatusCannotExec, false
		}
	}
	for _, m := range mod.ImportedMemories() {
		mn, n, _ := m.Import()
		fmt.Fprintf(inv.Stderr, "warren: %s: imports memory %s.%s, which warren does not provide\n", name, mn, n)
		return StatusCannotExec, false
	}
	return 0, true
}

// MaxModuleBytes bounds the module file Exec reads (a larger file is
// refused before it is read whole).
const MaxModuleBytes = 256 << 20

// Exec runs the module at path in inv.FS: the shell's hook for files that
// start with Magic.
func (r *Runtime) Exec(ctx context.Context, inv *commands.Invocation, path string) int {
	name := path
	if len(inv.Args) > 0 {
		name = inv.Args[0]
	}
	fi, err := inv.FS.Stat(path)
	if err != nil {
		fmt.Fprintf(inv.Stderr, "warren: %s: %v\n", name, err)
		return StatusCannotExec
	}
	if fi.Size() > MaxModuleBytes {
		fmt.Fprintf(inv.Stderr, "warren: %s: module of %d bytes is over the %d MiB limit\n", name, fi.Size(), MaxModuleBytes>>20)
		return StatusCannotExec
	}
	read := func() ([]byte, error) {
		r.reads.Add(1)
		bin, err := inv.FS.ReadFile(path)
		if err != nil {
			return nil, &readError{err}
		}
		return bin, nil
	}
	// A file of the image (not in the delta) cannot change: its hash is
	// remembered, and a cached module runs without reading it again (a
	// 30 MB ruby.wasm costs ~20 ms to hash).
	base := r.baseFiles.lookup(inv.FS, path, fi)
	if base != nil {
		return r.run(ctx, inv, path, *base, nil, read)
	}
	bin, err := read()
	if err != nil {
		fmt.Fprintf(inv.Stderr, "warren: %s: %v\n", name, err.(*readError).err)
		return StatusCannotExec
	}
	key := cacheKey(sha256.Sum256(bin))
	r.baseFiles.remember(inv.FS, path, fi, key)
	return r.run(ctx, inv, path, key, bin, nil)
}

// readError is a module file that could not be read.
type readError struct{ err error }

func (e *readError) Error() string { return e.err.Error() }
