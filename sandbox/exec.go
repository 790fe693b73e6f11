package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/containerd/errdefs"
	"github.com/warren-sandbox/warren/api"
	"github.com/warren-sandbox/warren/shell"
	"github.com/warren-sandbox/warren/terminal"
)

// Exit statuses warren gives an exec stopped by a limit (the shell uses
// the same two for its own limits).
const (
	StatusTimeout = 124
	StatusLimit   = 125
)

// Causes of an exec's cancellation.
var (
	errTimeout     = errors.New("exec timed out")
	errOutputLimit = errors.New("exec output over the limit")
	errGone        = errors.New("sandbox deleted or shutting down")
)

type signalCause struct {
	name string
	num  int
}

func (s signalCause) Error() string { return "killed by SIG" + s.name }

var signals = map[string]int{"HUP": 1, "INT": 2, "QUIT": 3, "KILL": 9, "USR1": 10, "USR2": 12, "TERM": 15}

// parseSignal accepts TERM, SIGTERM, sigterm or 15.
func parseSignal(s string) (signalCause, error) {
	u := strings.TrimPrefix(strings.ToUpper(strings.TrimSpace(s)), "SIG")
	if n, ok := signals[u]; ok {
		return signalCause{u, n}, nil
	}
	if n, err := strconv.Atoi(u); err == nil {
		for name, v := range signals {
			if v == n {
				return signalCause{name, n}, nil
			}
		}
	}
	return signalCause{}, api.Errorf(api.ErrUnprocessable, "unknown signal %q (want one of HUP INT QUIT KILL USR1 USR2 TERM)", s)
}

const maxScriptBytes = 1 << 20

// checkExec validates an exec request.
func checkExec(req *api.ExecRequest) error {
	if (req.Script == "") == (len(req.Argv) == 0) {
		return api.Errorf(api.ErrUnprocessable, "exec needs exactly one of script and argv")
	}
	if len(req.Script) > maxScriptBytes {
		return api.Errorf(api.ErrTooLarge, "script is %d bytes; the limit is %d", len(req.Script), maxScriptBytes)
	}
	n := 0
	for _, a := range req.Argv {
		n += len(a)
	}
	if n > maxScriptBytes {
		return api.Errorf(api.ErrTooLarge, "argv is %d bytes; the limit is %d", n, maxScriptBytes)
	}
	if req.Session == "" {
		req.Session = "main"
	}
	if !nameRE.MatchString(req.Session) {
		return api.Errorf(api.ErrUnprocessable, "bad session name %q: want 1-64 of [A-Za-z0-9._-]", req.Session)
	}
	if req.Cwd != "" {
		if err := checkPath(req.Cwd); err != nil {
			return fmt.Errorf("cwd: %w", err)
		}
	}
	for k, v := range req.Env {
		if !envKeyRE.MatchString(k) {
			return api.Errorf(api.ErrUnprocessable, "bad env name %q", k)
		}
		if len(v) > 64<<10 {
			return api.Errorf(api.ErrUnprocessable, "env %q: value longer than 64 KiB", k)
		}
	}
	if req.Timeout < 0 {
		return api.Errorf(api.ErrUnprocessable, "timeout must not be negative")
	}
	if req.MaxOutputBytes < 0 {
		return api.Errorf(api.ErrUnprocessable, "max_output_bytes must not be negative")
	}
	if _, err := CommandsPolicy(req.Commands); err != nil {
		return err
	}
	return nil
}

// quote makes s one shell word.
func quote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// script turns req into bash source. Overrides of env or cwd run the exec
// in a subshell so they apply to this exec only.
func script(req api.ExecRequest) string {
	src := req.Script
	if len(req.Argv) > 0 {
		words := make([]string, len(req.Argv))
		for i, a := range req.Argv {
			words[i] = quote(a)
		}
		src = strings.Join(words, " ")
	}
	if req.Cwd == "" && len(req.Env) == 0 {
		return src
	}
	var sb strings.Builder
	sb.WriteString("(\n")
	if req.Cwd != "" {
		sb.WriteString("cd -- " + quote(req.Cwd) + " || exit 1\n")
	}
	keys := make([]string, 0, len(req.Env))
	for k := range req.Env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		sb.WriteString("export " + k + "=" + quote(req.Env[k]) + "\n")
	}
	sb.WriteString(src)
	sb.WriteString("\n)")
	return sb.String()
}

// outputs serialises the two streams into the caller's writers and holds
// the output limit: past it the rest is dropped and the exec cancelled.
type outputs struct {
	mu        sync.Mutex
	w         [2]io.Writer
	left      int64
	truncated bool
	cancel    context.CancelCauseFunc
}

type stream struct {
	o *outputs
	i int
}

func (s stream) Write(p []byte) (int, error) {
	o := s.o
	o.mu.Lock()
	defer o.mu.Unlock()
	n := len(p)
	if o.truncated {
		return n, nil
	}
	q := p
	if int64(len(q)) > o.left {
		q = q[:o.left]
		o.truncated = true
		o.cancel(errOutputLimit)
	}
	o.left -= int64(len(q))
	if w := o.w[s.i]; w != nil && len(q) > 0 {
		if _, err := w.Write(q); err != nil {
			// The reader went away (client disconnected): stop the exec.
			o.cancel(fmt.Errorf("output: %w", err))
			return 0, err
		}
	}
	return n, nil
}

// run executes req in b and returns its result. stop, when set, receives
// the cancel function (background processes deliver signals through it).
func (m *Manager) run(ctx context.Context, b *box, req api.ExecRequest, stdin io.Reader, stdout, stderr io.Writer, started func(cancel context.CancelCauseFunc)) (api.ExecResult, error) {
	level, err := m.levelFor(b, req.Durability)
	if err != nil {
		return api.ExecResult{}, err
	}
	s, fsys, err := b.session(req.Session)
	if err != nil {
		return api.ExecResult{}, err
	}
	if err := s.acquire(ctx); err != nil {
		return api.ExecResult{}, err
	}
	locked := true
	defer func() {
		if locked {
			s.unlock()
		}
	}()
	in, err := b.interp(ctx, s, fsys)
	if err != nil {
		return api.ExecResult{}, err
	}
	if req.Isolated {
		in = in.Fork(fsys)
		s.unlock()
		locked = false
	}

	timeout := b.cfg.Limits.Timeout.Std()
	if req.Timeout > 0 && req.Timeout.Std() < timeout {
		timeout = req.Timeout.Std()
	}
	if err := b.harvestNative(ctx); err != nil {
		return api.ExecResult{}, err
	}
	ri := &runInfo{b: b, session: req.Session}
	lctx, lstats, err := execLadder(ctx, req)
	if err != nil {
		return api.ExecResult{}, err
	}
	rctx, cancel := context.WithCancelCause(withRunInfo(lctx, ri))
	defer cancel(nil)
	stopGone := context.AfterFunc(b.runCtx, func() { cancel(errGone) })
	defer stopGone()
	tctx, tcancel := context.WithTimeoutCause(rctx, timeout, errTimeout)
	defer tcancel()
	if started != nil {
		started(cancel)
	}
	if p, ok := stdin.(*stdinPipe); ok {
		// A command blocked reading stdin cannot see the context; closing
		// the pipe when the exec ends (timeout, signal) unblocks it.
		stopStdin := context.AfterFunc(tctx, func() { p.Close() })
		defer stopStdin()
	}
	left := b.cfg.Limits.MaxOutputBytes
	if req.MaxOutputBytes > 0 && req.MaxOutputBytes < left {
		left = req.MaxOutputBytes
	}
	out := &outputs{w: [2]io.Writer{stdout, stderr}, left: left, cancel: cancel}
	if stdin == nil {
		stdin = strings.NewReader(req.Stdin)
	}
	t0 := time.Now()
	status, err := in.Run(tctx, script(req), stdin, stream{out, 0}, stream{out, 1})
	res := api.ExecResult{Exit: status, DurationMS: float64(time.Since(t0).Microseconds()) / 1000,
		CPUSeconds: time.Duration(ri.cpu.Load()).Seconds()}
	m.execs.Add(1)
	m.ladder.record(lstats, &res)
	out.mu.Lock()
	res.Truncated = out.truncated
	out.mu.Unlock()
	cause := context.Cause(tctx)
	var sig signalCause
	switch {
	case errors.Is(cause, errTimeout):
		res.Exit, res.Limit = StatusTimeout, "timeout"
	case errors.Is(cause, errOutputLimit):
		res.Exit, res.Limit = StatusLimit, "output"
	case cause == nil && ri.oom.Load():
		// A native process was killed for exceeding the memory limit
		// (its message is on stderr; the status is the script's).
		res.Limit = "memory"
	case errors.As(cause, &sig):
		res.Exit, res.Limit = 128+sig.num, "signal:"+sig.name
	case errors.Is(cause, errGone):
		m.execErrors.Add(1)
		b.mu.Lock()
		deleted := b.state == api.StateDeleted
		b.mu.Unlock()
		if deleted {
			return res, api.Errorf(errdefs.ErrNotFound, "sandbox %s was deleted during the exec", b.id)
		}
		return res, api.Errorf(errdefs.ErrUnavailable, "warren is shutting down; the exec in %s was stopped", b.id)
	case cause != nil && ctx.Err() != nil:
		m.execErrors.Add(1)
		return res, fmt.Errorf("exec cancelled: %w", context.Cause(ctx))
	case err != nil:
		m.execErrors.Add(1)
		return res, fmt.Errorf("exec failed: %w", err)
	}
	sess := s
	if !locked {
		sess = nil // isolated: the session's state is not this exec's
	}
	ack, err := m.ack(ctx, b, level, sess)
	res.Durability, res.Generation = ack.Durability, ack.Generation
	if err != nil {
		m.execErrors.Add(1)
		return res, err
	}
	return res, nil
}

// process is a background exec.
type process struct {
	pid     int
	session string
	command string
	started time.Time
	stdin   *stdinPipe
	out     *outLog
	tty     *terminal.Term // set for a process on a terminal (pty.go)
	job     *shell.Job     // set for a script's background job (jobs.go); no stdin

	mu     sync.Mutex
	cancel context.CancelCauseFunc
	sig    *signalCause // delivered before the exec started
	done   chan struct{}
	result api.ExecResult
	err    error
}

func (p *process) info() api.Process {
	p.mu.Lock()
	defer p.mu.Unlock()
	ap := api.Process{PID: p.pid, Session: p.session, Command: p.command, StartedAt: p.started, Running: true}
	if p.tty != nil {
		c, r := p.tty.Size()
		ap.PTY = &api.PTYSize{Cols: c, Rows: r}
	}
	if p.job != nil {
		ap.Job, ap.ShellPID = p.job.ID(), p.job.PID()
	}
	select {
	case <-p.done:
		r := p.result
		ap.Running, ap.Result = false, &r
	default:
	}
	return ap
}

func (p *process) signal(sig signalCause) error {
	select {
	case <-p.done:
		return api.Errorf(errdefs.ErrFailedPrecondition, "process %d has exited", p.pid)
	default:
	}
	if p.job != nil {
		if err := p.job.Signal(sig.name); err != nil {
			return api.Errorf(errdefs.ErrFailedPrecondition, "process %d has exited", p.pid)
		}
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cancel == nil {
		p.sig = &sig
		return nil
	}
	p.cancel(sig)
	return nil
}

// Bounds on background processes per sandbox: each keeps up to
// ReplayBytes of output, so these bound a sandbox's memory for them.
const (
	maxFinishedProcs = 32
	maxRunningProcs  = 64
)

// start runs req in the background.
func (m *Manager) start(ctx context.Context, b *box, req api.ExecRequest) (api.Process, error) {
	if req.PTY != nil {
		return m.startPTY(ctx, b, req)
	}
	if err := checkExec(&req); err != nil {
		return api.Process{}, err
	}
	release, err := b.use(ctx)
	if err != nil {
		return api.Process{}, err
	}
	cmd := req.Script
	if len(req.Argv) > 0 {
		cmd = strings.Join(req.Argv, " ")
	}
	if len(cmd) > 200 {
		cmd = cmd[:200]
	}
	p := &process{
		session: req.Session, command: cmd, started: m.now(),
		stdin: newStdinPipe(1 << 20), out: newOutLog(m.cfg.ReplayBytes), done: make(chan struct{}),
	}
	if req.Stdin != "" {
		p.stdin.Write([]byte(req.Stdin))
	}
	if err := b.addProc(p, nil); err != nil {
		release()
		return api.Process{}, err
	}
	go func() {
		// Released before done is closed: a waiter that then hibernates
		// must find the sandbox idle.
		defer close(p.done)
		defer release()
		defer p.out.close()
		defer p.stdin.Close()
		pctx, cancel := context.WithCancelCause(context.Background())
		defer cancel(nil)
		res, err := m.run(pctx, b, req, p.stdin, p.out.writer(0), p.out.writer(1), func(c context.CancelCauseFunc) {
			p.mu.Lock()
			p.cancel = c
			if p.sig != nil {
				c(*p.sig)
			}
			p.mu.Unlock()
		})
		p.mu.Lock()
		p.result, p.err = res, err
		p.mu.Unlock()
	}()
	return p.info(), nil
}

// pruneProcsLocked forgets the oldest finished processes beyond
// maxFinishedProcs.
func (b *box) pruneProcsLocked() {
	pids := make([]int, 0, len(b.procs))
	for pid, p := range b.procs {
		select {
		case <-p.done:
			pids = append(pids, pid)
		default:
		}
	}
	if len(pids) <= maxFinishedProcs {
		return
	}
	sort.Ints(pids)
	for _, pid := range pids[:len(pids)-maxFinishedProcs] {
		delete(b.procs, pid)
	}
}

func (b *box) proc(pid int) (*process, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.state == api.StateDeleted {
		return nil, notFound(b.id)
	}
	p := b.procs[pid]
	if p == nil {
		return nil, api.Errorf(errdefs.ErrNotFound, "process %d not found in sandbox %s", pid, b.id)
	}
	return p, nil
}

func (b *box) listProcs() []api.Process {
	b.mu.Lock()
	ps := make([]*process, 0, len(b.procs))
	for _, p := range b.procs {
		ps = append(ps, p)
	}
	b.mu.Unlock()
	out := make([]api.Process, len(ps))
	for i, p := range ps {
		out[i] = p.info()
	}
	sort.Slice(out, func(i, j int) bool { return out[i].PID < out[j].PID })
	return out
}

func (p *process) wait(ctx context.Context) (api.ExecResult, error) {
	select {
	case <-p.done:
	case <-ctx.Done():
		return api.ExecResult{}, fmt.Errorf("waiting for process %d: %w", p.pid, ctx.Err())
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.result, p.err
}

// stdinPipe is a process's stdin: writes never block (bounded buffer),
// reads block until data or close. It is an in-process pipe, no OS pipe.
type stdinPipe struct {
	mu     sync.Mutex
	buf    []byte
	closed bool
	notify chan struct{}
	max    int
}

func newStdinPipe(max int) *stdinPipe { return &stdinPipe{notify: make(chan struct{}), max: max} }

func (s *stdinPipe) Read(p []byte) (int, error) {
	for {
		s.mu.Lock()
		if len(s.buf) > 0 {
			n := copy(p, s.buf)
			s.buf = s.buf[n:]
			s.mu.Unlock()
			return n, nil
		}
		if s.closed {
			s.mu.Unlock()
			return 0, io.EOF
		}
		ch := s.notify
		s.mu.Unlock()
		<-ch
	}
}

func (s *stdinPipe) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return 0, api.Errorf(errdefs.ErrFailedPrecondition, "stdin is closed")
	}
	if len(s.buf)+len(p) > s.max {
		return 0, api.Errorf(errdefs.ErrResourceExhausted, "stdin buffer full (%d bytes unread; the limit is %d)", len(s.buf), s.max)
	}
	s.buf = append(s.buf, p...)
	close(s.notify)
	s.notify = make(chan struct{})
	return len(p), nil
}

func (s *stdinPipe) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.closed {
		s.closed = true
		close(s.notify)
	}
	return nil
}

// outLog buffers a background process's output for attach: the newest
// bytes up to a bound are kept; older ones are dropped (and attach says so).
type outLog struct {
	mu     sync.Mutex
	chunks []outChunk
	first  int // absolute index of chunks[0]
	size   int
	bound  int
	closed bool
	notify chan struct{}
}

type outChunk struct {
	stream int
	data   []byte
}

func newOutLog(bound int) *outLog { return &outLog{bound: bound, notify: make(chan struct{})} }

type logWriter struct {
	l *outLog
	i int
}

func (l *outLog) writer(i int) io.Writer { return logWriter{l, i} }

func (w logWriter) Write(p []byte) (int, error) {
	l := w.l
	l.mu.Lock()
	defer l.mu.Unlock()
	data := append([]byte(nil), p...)
	if len(data) > l.bound {
		data = data[len(data)-l.bound:]
	}
	l.chunks = append(l.chunks, outChunk{w.i, data})
	l.size += len(data)
	for l.size > l.bound && len(l.chunks) > 1 {
		l.size -= len(l.chunks[0].data)
		l.chunks[0] = outChunk{}
		l.chunks = l.chunks[1:]
		l.first++
	}
	close(l.notify)
	l.notify = make(chan struct{})
	return len(p), nil
}

func (l *outLog) close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.closed {
		l.closed = true
		close(l.notify)
	}
}

// attach replays what is buffered, then streams until the process ends.
// It reports whether output was dropped before the replay started.
func (l *outLog) attach(ctx context.Context, w [2]io.Writer) (truncated bool, err error) {
	l.mu.Lock()
	idx := l.first
	truncated = l.first > 0
	l.mu.Unlock()
	for {
		l.mu.Lock()
		if idx < l.first {
			idx, truncated = l.first, true
		}
		pending := append([]outChunk(nil), l.chunks[idx-l.first:]...)
		idx = l.first + len(l.chunks)
		closed, ch := l.closed, l.notify
		l.mu.Unlock()
		for _, c := range pending {
			if w[c.stream] != nil {
				if _, err := w[c.stream].Write(c.data); err != nil {
					return truncated, err
				}
			}
		}
		if closed && len(pending) == 0 {
			return truncated, nil
		}
		if closed {
			continue
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return truncated, ctx.Err()
		}
	}
}

// addProc gives p the next pid (named, if set, sees it under b.mu) and
// lists it, unless maxRunningProcs of b's processes are still running.
func (b *box) addProc(p *process, named func(pid int)) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	running := 0
	for _, q := range b.procs {
		select {
		case <-q.done:
		default:
			running++
		}
	}
	if running >= maxRunningProcs {
		return api.Errorf(errdefs.ErrResourceExhausted, "sandbox %s has %d background processes running; the limit is %d", b.id, running, maxRunningProcs)
	}
	b.nextPID++
	p.pid = b.nextPID
	if named != nil {
		named(p.pid)
	}
	b.procs[p.pid] = p
	b.pruneProcsLocked()
	return nil
}
