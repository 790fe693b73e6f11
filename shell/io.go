package shell

import (
	"context"
	"crypto/rand"
	"errors"
	"io"
	"io/fs"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"github.com/warren-sandbox/warren/commands"
	"github.com/warren-sandbox/warren/vfs"
	"mvdan.cc/sh/v3/syntax"
)

// pipe is an in-process pipe: a bounded buffer with blocking reads and
// writes. A write after the reader closed fails with EPIPE, as SIGPIPE
// would end a writer in bash.
type pipe struct {
	mu      sync.Mutex
	rcond   sync.Cond
	wcond   sync.Cond
	buf     []byte
	rclosed bool
	wclosed bool
	dead    bool // the Run was cancelled
	epipe   bool // a write failed because the reader was gone
	id      int
	rs      *runState
	slot    int // index in rs.pipes; -1 once forgotten (guarded by rs.pipesMu)
	// ahead is the pipeline running ahead whose stage writes here: a
	// full pipe starts its readers (pipeRun.release).
	ahead *pipeRun
	// ends are a pipeline's descriptors of the pipe (read, write): in the
	// pipe, one allocation for the three.
	ends [2]fdesc
}

const pipeCap = 64 << 10

var pipeIDs struct {
	sync.Mutex
	n int
}

func (r *runner) newPipe() *pipe {
	p := &pipe{rs: r.rs}
	p.rcond.L = &p.mu
	p.wcond.L = &p.mu
	p.id = r.newPid() + 1000
	rs := r.rs
	rs.pipesMu.Lock()
	p.slot = len(rs.pipes)
	rs.pipes = append(rs.pipes, p)
	if rs.unpipe == nil {
		// Registered with the first pipe: a Run without pipes pays for
		// no AfterFunc. A top-level Run's own deadline kills its pipes
		// itself (runClock), so only a caller's context that can end
		// needs watching.
		switch {
		case rs.parent == nil:
			rs.unpipe = context.AfterFunc(rs.ctx, rs.closePipes)
		case rs.parent.Done() != nil:
			rs.unpipe = context.AfterFunc(rs.parent, rs.closePipes)
		default:
			rs.unpipe = noUnpipe
		}
	}
	rs.pipesMu.Unlock()
	if r.rs.ctx.Err() != nil {
		p.kill()
	}
	return p
}

// noUnpipe stands for an AfterFunc never registered: true, the Run's end
// kills the pipes itself.
func noUnpipe() bool { return true }

func (rs *runState) closePipes() {
	rs.pipesMu.Lock()
	ps := slices.Clone(rs.pipes)
	rs.pipesMu.Unlock()
	for _, p := range ps {
		p.kill()
	}
}

func (p *pipe) kill() {
	p.mu.Lock()
	p.dead = true
	p.mu.Unlock()
	p.rcond.Broadcast()
	p.wcond.Broadcast()
}

func (p *pipe) forget() {
	if p.rs != nil {
		rs := p.rs
		rs.pipesMu.Lock()
		if i := p.slot; i >= 0 && i < len(rs.pipes) && rs.pipes[i] == p {
			last := len(rs.pipes) - 1
			rs.pipes[i] = rs.pipes[last]
			rs.pipes[i].slot = i
			rs.pipes[last] = nil
			rs.pipes = rs.pipes[:last]
			p.slot = -1
		}
		rs.pipesMu.Unlock()
	}
}

func (p *pipe) Read(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for len(p.buf) == 0 {
		if p.wclosed || p.dead {
			return 0, io.EOF
		}
		if p.rclosed {
			return 0, io.EOF
		}
		p.rcond.Wait()
	}
	n := copy(b, p.buf)
	p.buf = p.buf[n:]
	if len(p.buf) == 0 {
		p.buf = p.buf[:0:0]
	}
	p.wcond.Broadcast()
	return n, nil
}

var errEPIPE = &fs.PathError{Op: "write", Path: "pipe", Err: syscall.EPIPE}

func (p *pipe) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	written := 0
	for len(b) > 0 {
		if p.rclosed || p.dead {
			p.epipe = true
			return written, errEPIPE
		}
		space := pipeCap - len(p.buf)
		if space <= 0 {
			if pr := p.ahead; pr != nil {
				p.ahead = nil
				p.mu.Unlock()
				pr.release()
				p.mu.Lock()
				continue
			}
			p.wcond.Wait()
			continue
		}
		n := min(space, len(b))
		p.buf = append(p.buf, b[:n]...)
		b = b[n:]
		written += n
		p.rcond.Broadcast()
	}
	return written, nil
}

func (p *pipe) CloseWrite() {
	p.mu.Lock()
	p.wclosed = true
	done := p.rclosed
	p.mu.Unlock()
	p.rcond.Broadcast()
	if done {
		p.forget()
	}
}

func (p *pipe) CloseRead() {
	p.mu.Lock()
	p.rclosed = true
	p.buf = nil
	done := p.wclosed
	p.mu.Unlock()
	p.wcond.Broadcast()
	if done {
		p.forget()
	}
}

// ---- opening files ----

// openFile opens a sandbox path, honouring the virtual /dev and /proc.
// The result is an io.Reader and/or io.Writer, maybe an io.Closer.
func (r *runner) openFile(name string, flag int, perm fs.FileMode) (any, error) {
	p := r.abs(name)
	if f, handled, err := r.openSpecial(p, flag); handled {
		return f, err
	}
	if flag&(vfs.O_CREATE) != 0 {
		perm &^= fs.FileMode(r.umask)
	}
	f, fifo, err := r.openVFS(p, flag, perm)
	switch {
	case fifo:
		return r.openFifo(p, flag)
	case err != nil:
		return nil, err
	}
	return f, nil
}

type nullRW struct{}

func (nullRW) Read([]byte) (int, error)    { return 0, io.EOF }
func (nullRW) Write(b []byte) (int, error) { return len(b), nil }

// zeroR and randR are endless; they stop when the Run ends so that a
// command reading them without checking its context cannot outlive it.
type zeroR struct{ ctx context.Context }

func (z zeroR) Read(b []byte) (int, error) {
	if err := z.ctx.Err(); err != nil {
		return 0, err
	}
	clear(b)
	return len(b), nil
}
func (zeroR) Write(b []byte) (int, error) { return len(b), nil }

type fullW struct{ ctx context.Context }

func (f fullW) Read(b []byte) (int, error) { return zeroR(f).Read(b) }
func (fullW) Write([]byte) (int, error) {
	return 0, &fs.PathError{Op: "write", Path: "/dev/full", Err: syscall.ENOSPC}
}

type randR struct{ ctx context.Context }

func (z randR) Read(b []byte) (int, error) {
	if err := z.ctx.Err(); err != nil {
		return 0, err
	}
	return rand.Read(b)
}
func (randR) Write(b []byte) (int, error) { return len(b), nil }

// openSpecial serves /dev and /proc/self paths from the shell's own state.
func (r *runner) openSpecial(p string, flag int) (any, bool, error) {
	if !strings.HasPrefix(p, "/dev/") && !strings.HasPrefix(p, "/proc/") {
		return nil, false, nil
	}
	switch p {
	case "/dev/null":
		return nullRW{}, true, nil
	case "/dev/zero":
		return zeroR{r.context()}, true, nil
	case "/dev/full":
		return fullW{r.context()}, true, nil
	case "/dev/random", "/dev/urandom":
		return randR{r.context()}, true, nil
	case "/dev/stdin":
		return r.fdFile(0, flag)
	case "/dev/stdout":
		return r.fdFile(1, flag)
	case "/dev/stderr":
		return r.fdFile(2, flag)
	case "/dev/tty":
		return nil, true, &fs.PathError{Op: "open", Path: p, Err: syscall.ENXIO}
	}
	for _, pre := range []string{"/dev/fd/", "/proc/self/fd/", "/proc/" + strconv.Itoa(r.bashpid) + "/fd/"} {
		if s, ok := strings.CutPrefix(p, pre); ok {
			n, err := strconv.Atoi(s)
			if err != nil {
				return nil, true, &fs.PathError{Op: "open", Path: p, Err: syscall.ENOENT}
			}
			return r.fdFile(n, flag)
		}
	}
	if strings.HasPrefix(p, "/proc/") {
		return r.procFile(p)
	}
	return nil, false, nil
}

func (r *runner) procFile(p string) (any, bool, error) {
	self := "/proc/self/"
	if s, ok := strings.CutPrefix(p, "/proc/"+strconv.Itoa(r.bashpid)+"/"); ok {
		p = self + s
	}
	switch p {
	case "/proc/self/environ":
		var b strings.Builder
		for _, kv := range r.environ() {
			b.WriteString(kv)
			b.WriteByte(0)
		}
		return strings.NewReader(b.String()), true, nil
	case "/proc/self/cmdline":
		return strings.NewReader("bash\x00"), true, nil
	case "/proc/self/comm":
		return strings.NewReader("bash\n"), true, nil
	case "/proc/self/status":
		return strings.NewReader("Name:\tbash\nPid:\t" + strconv.Itoa(r.bashpid) + "\nPPid:\t" + strconv.Itoa(r.ppid) + "\nUid:\t" + strconv.Itoa(r.sh.cfg.Uid) + "\n"), true, nil
	}
	return nil, true, &fs.PathError{Op: "open", Path: p, Err: syscall.ENOENT}
}

// fdFile opens a dup of one of the shell's descriptors.
func (r *runner) fdFile(n int, flag int) (any, bool, error) {
	if n < 0 || n >= len(r.fds) || r.fds[n] == nil {
		return nil, true, &fs.PathError{Op: "open", Path: "/dev/fd/" + strconv.Itoa(n), Err: syscall.ENOENT}
	}
	f := r.fds[n]
	if f.w != nil && f.r == nil {
		return noClose{w: f.w}, true, nil
	}
	if f.r != nil && f.w == nil {
		return noCloseR{r: f.r}, true, nil
	}
	return rwNoClose{r: f.r, w: f.w}, true, nil
}

type noClose struct{ w io.Writer }

func (n noClose) Write(b []byte) (int, error) { return n.w.Write(b) }

type noCloseR struct{ r io.Reader }

func (n noCloseR) Read(b []byte) (int, error) { return n.r.Read(b) }

type rwNoClose struct {
	r io.Reader
	w io.Writer
}

func (n rwNoClose) Read(b []byte) (int, error)  { return n.r.Read(b) }
func (n rwNoClose) Write(b []byte) (int, error) { return n.w.Write(b) }

// fileAdapter gives commands.File to whatever openSpecial returned.
type fileAdapter struct {
	r io.Reader
	w io.Writer
	c io.Closer
}

func (f fileAdapter) Read(b []byte) (int, error) {
	if f.r == nil {
		return 0, &fs.PathError{Op: "read", Err: syscall.EBADF}
	}
	return f.r.Read(b)
}
func (f fileAdapter) Write(b []byte) (int, error) {
	if f.w == nil {
		return 0, &fs.PathError{Op: "write", Err: syscall.EBADF}
	}
	return f.w.Write(b)
}
func (f fileAdapter) Close() error {
	if f.c != nil {
		return f.c.Close()
	}
	return nil
}

func asFile(x any) commands.File {
	var fa fileAdapter
	fa.r, _ = x.(io.Reader)
	fa.w, _ = x.(io.Writer)
	fa.c, _ = x.(io.Closer)
	return fa
}

// ---- redirections ----

// redirects applies a statement's redirections; it returns the previous
// descriptor table to restore and whether the command may run.
func (r *runner) redirects(rds []*syntax.Redirect) ([]*fdesc, bool) {
	saved := r.fds
	r.fds = append([]*fdesc(nil), r.fds...)
	for _, rd := range rds {
		if !r.redirect(rd, false) {
			r.status = 1
			return saved, false
		}
	}
	return saved, true
}

// restoreFds closes descriptors the redirections opened and puts back the
// previous table.
func (r *runner) restoreFds(saved []*fdesc) {
	for i, f := range r.fds {
		if f == nil {
			continue
		}
		if i < len(saved) && saved[i] == f {
			continue
		}
		// Each descriptor slot holds one reference (a dup like >&3
		// took its own), so a slot the redirections changed gives its
		// reference back even when the file stays open elsewhere; a
		// file dup'ed to a command's stdout was never closed before.
		r.release(f)
	}
	r.fds = saved
}

func (r *runner) release(f *fdesc) {
	if f.c == nil {
		return
	}
	if f.refs != nil {
		*f.refs--
		if *f.refs > 0 {
			return
		}
	}
	if err := f.c.Close(); err != nil && f.w != nil {
		// A close can fail where every write went through (a drive
		// commits at close: its quota, its store): say so, and fail
		// the command, rather than lose the file silently.
		r.errf("%s: %s", f.name(), errText(err))
		if r.status == 0 {
			r.status = 1
		}
	}
}

func (r *runner) setFd(n int, f *fdesc) {
	for len(r.fds) <= n {
		r.fds = append(r.fds, nil)
	}
	r.fds[n] = f
}

// redirect applies one redirection; permanent is for exec (no restore).
func (r *runner) redirect(rd *syntax.Redirect, permanent bool) bool {
	fd := -1
	varName := ""
	if rd.N != nil {
		if strings.HasPrefix(rd.N.Value, "{") {
			varName = strings.Trim(rd.N.Value, "{}")
		} else {
			n, err := strconv.Atoi(rd.N.Value)
			if err != nil {
				r.errf("%s: bad file descriptor", rd.N.Value)
				return false
			}
			fd = n
		}
	}
	defFd := 1
	switch rd.Op {
	case syntax.RdrIn, syntax.RdrInOut, syntax.DplIn, syntax.Hdoc, syntax.DashHdoc, syntax.WordHdoc:
		defFd = 0
	}
	if fd < 0 {
		fd = defFd
	}
	if varName != "" {
		if rd.Op == syntax.DplOut || rd.Op == syntax.DplIn {
			if w, _ := r.literal(rd.Word); w == "-" {
				// {v}>&- closes the descriptor v holds; as for N>&-,
				// its reference goes back with the table (keepFds,
				// restoreFds), not here
				v := r.lookup(varName)
				if v == nil || !v.Set {
					r.errf("%s: ambiguous redirect", varName)
					return false
				}
				// (a value that is no number closes nothing, quietly)
				if n, err := strconv.Atoi(v.str()); err == nil && n >= 0 && n < len(r.fds) && r.fds[n] != nil {
					if permanent {
						r.release(r.fds[n])
					}
					r.fds[n] = nil
				}
				return true
			}
		}
		fd = 10
		for fd < len(r.fds) && r.fds[fd] != nil {
			fd++
		}
		if fd >= r.openFilesLimit() {
			io.WriteString(r.stderr(), r.arg0+": redirection error: cannot duplicate fd: Invalid argument\n")
			r.errf("%s: Invalid argument", wordText(rd.Word))
			return false
		}
		r.setVar(varName, strconv.Itoa(fd))
	}
	// A file is opened (and created) before bash finds the descriptor
	// past the limit: openRedirect checks after the open.
	if fd >= r.openFilesLimit() && !opensFile(rd.Op) {
		r.errf("%d: Bad file descriptor", fd)
		return false
	}
	switch rd.Op {
	case syntax.Hdoc, syntax.DashHdoc:
		body, ok := "", true
		if rd.Hdoc != nil {
			if quotedHdoc(rd.Word) {
				body = hdocLit(rd.Hdoc)
			} else {
				body, ok = r.document(rd.Hdoc)
			}
		}
		if !ok {
			return false
		}
		if rd.Op == syntax.DashHdoc {
			body = stripTabs(body)
		}
		if len(body) > r.rs.lim.MaxHeredoc {
			r.rs.fail(limitf("here-document size limit exceeded (%d bytes)", r.rs.lim.MaxHeredoc))
			r.exiting = true
			return false
		}
		if !r.memFits(int64(len(body))) {
			return false
		}
		r.setFd(fd, &fdesc{r: strings.NewReader(body), path: "pipe:[hdoc]"})
		return true
	case syntax.WordHdoc:
		s, ok := r.literal(rd.Word)
		if !ok {
			return false
		}
		if len(s) > r.rs.lim.MaxHeredoc {
			r.rs.fail(limitf("here-string size limit exceeded (%d bytes)", r.rs.lim.MaxHeredoc))
			r.exiting = true
			return false
		}
		if !r.memFits(int64(len(s))) {
			return false
		}
		r.setFd(fd, &fdesc{r: strings.NewReader(s + "\n"), path: "pipe:[hstr]"})
		return true
	}
	var target string
	if l := rd.Word.Lit(); l != "" && !strings.ContainsAny(l, "*?[~\\{") {
		target = l
	} else {
		// Redirection words are split and globbed; anything but one field
		// is an "ambiguous redirect", as in bash.
		fs, ok := r.fields(rd.Word)
		if !ok {
			return false
		}
		if len(fs) != 1 {
			r.errf("%s: ambiguous redirect", wordText(rd.Word))
			return false
		}
		target = fs[0]
	}
	switch rd.Op {
	case syntax.DplIn, syntax.DplOut:
		if target == "-" {
			if fd < len(r.fds) && r.fds[fd] != nil {
				if permanent {
					r.release(r.fds[fd])
				}
				r.fds[fd] = nil
			}
			return true
		}
		move := strings.HasSuffix(target, "-")
		src, err := strconv.Atoi(strings.TrimSuffix(target, "-"))
		if err != nil {
			if rd.Op == syntax.DplOut && (fd == 1 || rd.N == nil) {
				// >&file is &>file
				return r.openRedirect(1, target, vfs.O_WRONLY|vfs.O_CREATE|vfs.O_TRUNC, true)
			}
			r.errf("%s: ambiguous redirect", target)
			return false
		}
		if src >= len(r.fds) || r.fds[src] == nil {
			r.errf("%d: Bad file descriptor", src)
			return false
		}
		f := r.fds[src]
		if f.refs != nil {
			*f.refs++
		}
		r.setFd(fd, f)
		if move {
			r.fds[src] = nil
		}
		return true
	case syntax.RdrIn:
		return r.openRedirect(fd, target, vfs.O_RDONLY, false)
	case syntax.RdrInOut:
		return r.openRedirect(fd, target, vfs.O_RDWR|vfs.O_CREATE, false)
	case syntax.RdrOut, syntax.RdrClob:
		flag := vfs.O_WRONLY | vfs.O_CREATE | vfs.O_TRUNC
		if rd.Op == syntax.RdrOut && r.opts[optNoclobber] {
			if fi, err := r.sh.cfg.FS.Stat(r.abs(target)); err == nil && fi.Mode().IsRegular() {
				r.errf("%s: cannot overwrite existing file", target)
				return false
			}
		}
		return r.openRedirect(fd, target, flag, false)
	case syntax.AppOut:
		return r.openRedirect(fd, target, vfs.O_WRONLY|vfs.O_CREATE|vfs.O_APPEND, false)
	case syntax.RdrAll, syntax.RdrAllClob:
		if rd.Op == syntax.RdrAll && r.opts[optNoclobber] {
			if fi, err := r.sh.cfg.FS.Stat(r.abs(target)); err == nil && fi.Mode().IsRegular() {
				r.errf("%s: cannot overwrite existing file", target)
				return false
			}
		}
		return r.openRedirect(1, target, vfs.O_WRONLY|vfs.O_CREATE|vfs.O_TRUNC, true)
	case syntax.AppAll, syntax.AppAllClob:
		return r.openRedirect(1, target, vfs.O_WRONLY|vfs.O_CREATE|vfs.O_APPEND, true)
	}
	r.errf("unsupported redirection %v", rd.Op)
	return false
}

// opensFile reports whether op opens its word as a file.
func opensFile(op syntax.RedirOperator) bool {
	switch op {
	case syntax.RdrIn, syntax.RdrInOut, syntax.RdrOut, syntax.RdrClob, syntax.AppOut,
		syntax.RdrAll, syntax.RdrAllClob, syntax.AppAll, syntax.AppAllClob:
		return true
	}
	return false
}

func quotedHdoc(w *syntax.Word) bool {
	if w == nil {
		return false
	}
	for _, p := range w.Parts {
		switch p := p.(type) {
		case *syntax.SglQuoted, *syntax.DblQuoted:
			return true
		case *syntax.Lit:
			if strings.Contains(p.Value, "\\") {
				return true
			}
		}
	}
	return false
}

func hdocLit(w *syntax.Word) string {
	var b strings.Builder
	for _, p := range w.Parts {
		if l, ok := p.(*syntax.Lit); ok {
			b.WriteString(l.Value)
		} else {
			syntax.NewPrinter().Print(&b, &syntax.Word{Parts: []syntax.WordPart{p}})
		}
	}
	return b.String()
}

func (r *runner) openRedirect(fd int, target string, flag int, both bool) bool {
	f, err := r.openFile(target, flag, 0o666)
	if err != nil {
		r.errf("%s: %s", target, errText(err))
		return false
	}
	if fd >= r.openFilesLimit() {
		if c, ok := f.(io.Closer); ok {
			c.Close()
		}
		r.errf("%d: Bad file descriptor", fd)
		return false
	}
	// the descriptor and its reference count in one allocation
	dn := &struct {
		d fdesc
		n int32
	}{d: fdesc{path: r.abs(target)}}
	d := &dn.d
	d.r, _ = f.(io.Reader)
	d.w, _ = f.(io.Writer)
	if flag&vfs.O_ACCMODE == vfs.O_RDONLY {
		d.w = nil
	} else if flag&vfs.O_ACCMODE == vfs.O_WRONLY {
		d.r = nil
	}
	d.w = r.limitWrites(d.w, f, flag)
	if c, ok := f.(io.Closer); ok {
		d.c = c
		dn.n = 1
		d.refs = &dn.n
	}
	r.setFd(fd, d)
	if both {
		if d.refs != nil {
			*d.refs++
		}
		r.setFd(2, d)
	}
	return true
}

// procSubst implements <(cmd) and >(cmd) with an in-process pipe visible
// as /dev/fd/N.
func (r *runner) procSubst(ps *syntax.ProcSubst) (string, error) {
	if !r.startJob() {
		return "", errSilent
	}
	p := r.newPipe()
	fd := 63
	for fd < len(r.fds) && r.fds[fd] != nil {
		fd--
	}
	sub := r.subshellRunner()
	if ps.Op == syntax.CmdIn {
		sub.fds[1] = &fdesc{w: p, path: "pipe:[" + strconv.Itoa(p.id) + "]"}
		r.setFd(fd, &fdesc{r: p, path: "pipe:[" + strconv.Itoa(p.id) + "]"})
	} else {
		sub.fds[0] = &fdesc{r: p, path: "pipe:[" + strconv.Itoa(p.id) + "]"}
		r.setFd(fd, &fdesc{w: &closeOnWrite{p: p}, path: "pipe:[" + strconv.Itoa(p.id) + "]"})
	}
	r.procFds = append(r.procFds, procEnt{fd: fd, p: p, out: ps.Op != syntax.CmdIn})
	rs := r.rs
	rs.wg.Add(1)
	// The goroutine must not keep r: it may be a pipeline stage's runner,
	// recycled when the stage ends (stagePool).
	goWork(func() {
		defer rs.wg.Done()
		defer rs.jobs.Add(-1) // endJob
		defer sub.closeMem()
		defer sub.recoverPanic()
		sub.stmts(sub.substAliases(ps.Stmts))
		if ps.Op == syntax.CmdIn {
			p.CloseWrite()
		} else {
			p.CloseRead()
		}
	})
	return "/dev/fd/" + strconv.Itoa(fd), nil
}

type closeOnWrite struct{ p *pipe }

func (c *closeOnWrite) Write(b []byte) (int, error) { return c.p.Write(b) }
func (c *closeOnWrite) Close() error                { c.p.CloseWrite(); return nil }

var _ = errors.New

// keepFds makes the current table permanent (exec redirections), closing
// descriptors that were replaced and are no longer referenced.
func (r *runner) keepFds(saved []*fdesc) {
	for i, f := range saved {
		if f == nil || (i < len(r.fds) && r.fds[i] == f) {
			continue
		}
		used := false
		for _, g := range r.fds {
			if g == f {
				used = true
				break
			}
		}
		if !used {
			r.release(f)
		}
	}
}

// procEnt is a process substitution of the current command.
type procEnt struct {
	fd  int
	p   *pipe
	out bool // >(...)
}

// closeProcFds ends process substitutions started since mark: the command
// that used them is done.
func (r *runner) closeProcFds(mark int) {
	for _, e := range r.procFds[mark:] {
		if e.out {
			e.p.CloseWrite()
		} else {
			e.p.CloseRead()
		}
		if e.fd < len(r.fds) && r.fds[e.fd] != nil {
			r.fds[e.fd] = nil
		}
	}
	r.procFds = r.procFds[:mark]
}

func (p *pipe) broken() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.epipe
}

// stripTabs removes leading tabs from every line (<<-).
func stripTabs(s string) string {
	lines := strings.SplitAfter(s, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimLeft(l, "\t")
	}
	return strings.Join(lines, "")
}
