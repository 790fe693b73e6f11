package native

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/warren-sandbox/warren/native/imagemount"
	"github.com/warren-sandbox/warren/vfs"
	"golang.org/x/sys/unix"
)

// ErrWorkspaceLost means the workspace's init died (killed from outside, or
// by the kernel's OOM killer under the workspace memory limit): every
// process of the workspace is gone and it must be closed and recreated.
var ErrWorkspaceLost = errors.New("native: workspace lost its init")

// Workspace is one sandbox's native environment: overlay, namespaces and
// cgroup, alive until Close.
type Workspace struct {
	r     *Runtime
	id    string
	dir   string // RunDir/ws/N
	tmp   string // tmpfs holding upper/ and work/
	root  string // overlay mount
	upper string
	cgRel string // workspace cgroup, relative to warren's parent (cgroup.go)
	lim   Limits
	sec   Security
	img   *imagemount.Mount
	ip    *initProc // the namespace init
	ctl   int       // host end of its control socket
	ctlMu sync.Mutex

	sy *syncState // vfs <-> upper bookkeeping (sync.go)
	// The sandbox's volumes (volumes.go): the mount table read at start,
	// each mount's tmpfs and sync state, and what the init binds.
	mounts    []vfs.MountInfo
	vols      []*volume
	volMounts []volMount

	mu      sync.Mutex
	closed  bool
	execSeq int
	execs   sync.WaitGroup
}

// Cmd is one native command.
type Cmd struct {
	Path string   // absolute path inside the sandbox, or a name looked up in PATH
	Args []string // argv, including argv[0]; empty means {Path}
	Env  []string // the whole environment, KEY=value
	Dir  string   // working directory inside the sandbox; "" is "/"
	// Streams; nil means /dev/null. An *os.File is passed to the process as
	// is; anything else is copied through a pipe.
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	Limits         Limits // per exec; zero fields inherit the workspace's
}

// Result is how a native command ended.
type Result struct {
	Status    int           // exit status, 128+signal when killed
	CPU       time.Duration // user+system CPU time, from the exec's cgroup
	Wall      time.Duration
	OOMKilled bool // the kernel killed a process for exceeding the memory limit
	TimedOut  bool // killed at the wall-clock timeout
	ForkBomb  bool // killed for forking on against the pids limit (forkStorm)
	// PidsRefused counts forks the pids limit refused during the exec
	// (sandbox-wide: a concurrent exec's refusals count too).
	PidsRefused int64
	// QuotaRefused lists what the harvest did not keep because a quota
	// (a volume's, the delta's) refused it; Status is then at least 1.
	QuotaRefused *QuotaRefusal
	Message      string // why warren killed it, could not start it or did not keep its writes ("" otherwise)
}

// Workspace creates the native environment of sandbox id over the EROFS
// image at imagePath, with fs as the sandbox's files (nil: the image alone).
// Its processes run under SecurityDefault unless an option says otherwise.
func (r *Runtime) Workspace(ctx context.Context, id string, imagePath string, fs *vfs.FS, lim Limits, opts ...WorkspaceOption) (*Workspace, error) {
	if err := r.Available(); err != nil {
		return nil, err
	}
	if id == "" || len(id) > 64 || strings.ContainsAny(id, "\x00/") {
		return nil, fmt.Errorf("native: sandbox id %q must be 1-64 bytes without '/' or NUL (it becomes the hostname)", id)
	}
	var o workspaceOpts
	for _, opt := range opts {
		opt(&o)
	}
	if o.security != SecurityDefault && o.security != SecurityRelaxed {
		return nil, fmt.Errorf("native: unknown security mode %d", o.security)
	}
	lim = lim.or(r.cfg.Defaults)
	if lim.Memory < 0 || lim.CPUs < 0 || lim.Pids < 0 || lim.Disk < 0 || lim.Timeout < 0 {
		return nil, fmt.Errorf("native: negative limit in %+v", lim)
	}
	r.mu.Lock()
	r.seq++
	n := r.seq
	r.mu.Unlock()
	w := &Workspace{
		r: r, id: id, lim: lim, sec: o.security, ctl: -1,
		dir:   filepath.Join(r.cfg.RunDir, "ws", strconv.FormatUint(n, 10)),
		cgRel: "w" + strconv.FormatUint(n, 10),
	}
	w.tmp, w.root = filepath.Join(w.dir, "tmp"), filepath.Join(w.dir, "root")
	w.upper = filepath.Join(w.tmp, "upper")
	w.sy = newSyncState(fs, w.root, w.upper, skipTop)
	if err := w.setup(ctx, imagePath, fs); err != nil {
		w.teardown()
		return nil, fmt.Errorf("native: workspace %s: %w", id, err)
	}
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		w.teardown()
		return nil, errors.New("native: runtime closed")
	}
	r.spaces[w] = struct{}{}
	r.mu.Unlock()
	return w, nil
}

func (w *Workspace) setup(ctx context.Context, imagePath string, fs *vfs.FS) error {
	r := w.r
	// The init runs as the mapped uid: it must be able to reach root/.
	for _, d := range []string{w.dir, w.tmp, w.root} {
		if err := os.Mkdir(d, 0o711); err != nil {
			return err
		}
	}
	if err := unix.Mount("tmpfs", w.tmp, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV,
		fmt.Sprintf("size=%d,mode=0700", w.lim.Disk)); err != nil {
		return fmt.Errorf("cannot mount tmpfs: %w", err)
	}
	work := filepath.Join(w.tmp, "work")
	for _, d := range []string{w.upper, work} {
		if err := os.Mkdir(d, 0o755); err != nil {
			return err
		}
		if err := os.Chown(d, int(r.cfg.UIDBase), int(r.cfg.UIDBase)); err != nil {
			return err
		}
	}
	img, err := r.images.Acquire(imagePath)
	if err != nil {
		return err
	}
	w.img = img
	lower, err := img.IDMapped(r.mapKey, r.usernsFD)
	if err != nil {
		return err
	}
	if err := mountOverlay(lower, w.upper, work, w.root); err != nil {
		return err
	}
	// Volumes: their tmpfs mounts exist before the init's mount namespace
	// is made, and the first sync runs before it binds them, so the mount
	// points are in the overlay and each volume is filled (volumes.go).
	if err := w.prepareVolumes(fs); err != nil {
		return err
	}
	if len(w.vols) > 0 {
		if err := w.syncAll(); err != nil {
			return fmt.Errorf("first sync: %w", err)
		}
	}
	// The workspace's cgroups (cgroup.go has the layout): the init in a
	// sibling of the limited sandbox cgroup, so it is charged nothing of
	// the sandbox's memory and pids and is never the OOM killer's victim.
	if err := r.cg.create(w.cgRel, true); err != nil {
		return err
	}
	if err := r.cg.create(w.sbRel(), true); err != nil {
		return err
	}
	if err := r.cg.setLimits(w.sbRel(), Limits{Memory: w.lim.Memory, CPUs: w.lim.CPUs, Pids: w.lim.Pids}); err != nil {
		return err
	}
	if err := r.cg.create(w.sharedRel(), false); err != nil {
		return err
	}
	initRel := w.cgRel + "/init"
	if err := r.cg.create(initRel, false); err != nil {
		return err
	}
	return w.startInit(ctx, initRel)
}

// sbRel is the sandbox cgroup, which carries the workspace's limits; every
// sandbox process lives below it.
func (w *Workspace) sbRel() string { return w.cgRel + "/sb" }

// sharedRel is the leaf below sbRel where an exec's processes live in the
// hierarchies it has no cgroup of its own in.
func (w *Workspace) sharedRel() string { return w.cgRel + "/sb/s" }

// mountOverlay mounts overlay(lower fd, upper, work) at target. The lower
// layer is passed as a detached idmapped mount (lowerdir+ by fd), so it is
// never attached on the host. redirect_dir and metacopy stay off: the
// harvest reads upper/ as plain files, whiteouts and opaque markers.
func mountOverlay(lowerFD int, upper, work, target string) error {
	fd, err := unix.Fsopen("overlay", unix.FSOPEN_CLOEXEC)
	if err != nil {
		return fmt.Errorf("fsopen overlay: %w", err)
	}
	defer unix.Close(fd)
	fail := func(what string, err error) error {
		msg := make([]byte, 512)
		if n, rerr := unix.Read(fd, msg); rerr == nil && n > 0 {
			return fmt.Errorf("overlay %s: %w (%s)", what, err, strings.TrimSpace(string(msg[:n])))
		}
		return fmt.Errorf("overlay %s: %w", what, err)
	}
	if err := unix.FsconfigSetString(fd, "source", "warren"); err != nil {
		return fail("source", err)
	}
	if err := unix.FsconfigSetFd(fd, "lowerdir+", lowerFD); err != nil {
		return fail("lowerdir+", err)
	}
	for _, kv := range [][2]string{{"upperdir", upper}, {"workdir", work}, {"redirect_dir", "off"}, {"metacopy", "off"}, {"index", "off"}} {
		if err := unix.FsconfigSetString(fd, kv[0], kv[1]); err != nil {
			return fail(kv[0], err)
		}
	}
	if err := unix.FsconfigCreate(fd); err != nil {
		return fail("create", err)
	}
	mfd, err := unix.Fsmount(fd, unix.FSMOUNT_CLOEXEC, unix.MOUNT_ATTR_NOSUID|unix.MOUNT_ATTR_NODEV)
	if err != nil {
		return fail("fsmount", err)
	}
	defer unix.Close(mfd)
	if err := unix.MoveMount(mfd, "", unix.AT_FDCWD, target, unix.MOVE_MOUNT_F_EMPTY_PATH); err != nil {
		return fmt.Errorf("overlay move_mount: %w", err)
	}
	return nil
}

// startInit starts the workspace's namespace init, moves it into the
// workspace's cgroup and waits until it has pivoted into the overlay.
func (w *Workspace) startInit(ctx context.Context, initRel string) error {
	r := w.r
	ip, err := r.spawnInit()
	if err != nil {
		return err
	}
	w.ip = ip
	w.ctl = ip.ctl
	if err := r.cg.addPid(initRel, ip.cmd.Process.Pid); err != nil {
		return err
	}
	// Under host-wide memory pressure sandbox processes go first (the OOM
	// killer would otherwise pick the largest process on the node, often
	// warren itself, and every sandbox with it). Written by a holder of
	// CAP_SYS_RESOURCE, the value is also the floor: the init's children
	// inherit both and cannot lower theirs.
	if err := os.WriteFile(fmt.Sprintf("/proc/%d/oom_score_adj", ip.cmd.Process.Pid), []byte(sandboxOOMScoreAdj), 0); err != nil {
		return fmt.Errorf("init oom_score_adj: %w", err)
	}
	setup, _ := json.Marshal(setupMsg{Root: w.root, Hostname: w.id, Devices: r.devices, Security: w.sec, Landlock: r.landlock, Volumes: w.volMounts})
	if err := sendFds(w.ctl, setup, nil); err != nil {
		return fmt.Errorf("init setup: %w", err)
	}
	for _, want := range []string{"ready", "ok"} {
		reply, err := recvCtl(ctx, w.ctl, 10*time.Second)
		if err != nil {
			return fmt.Errorf("init setup (waiting for %q): %w (init said: %s)", want, err, strings.TrimSpace(ip.stderr.String()))
		}
		if string(reply) != want {
			return fmt.Errorf("init: %s", reply)
		}
	}
	return nil
}

// sandboxOOMScoreAdj is the oom_score_adj of a workspace's init and so of
// every sandbox process (the memory cgroup's own OOM kills are unaffected:
// they only ever see the sandbox's processes).
const sandboxOOMScoreAdj = "500"

// recvCtl waits for one control message from an init.
func recvCtl(ctx context.Context, ctl int, d time.Duration) ([]byte, error) {
	deadline := time.Now().Add(d)
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		pfd := []unix.PollFd{{Fd: int32(ctl), Events: unix.POLLIN}}
		n, err := unix.Poll(pfd, 50)
		if err != nil && !errors.Is(err, unix.EINTR) {
			return nil, err
		}
		if n > 0 {
			b, fs, err := recvFds(ctl, 1)
			closeAll(fs)
			return b, err
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("no answer from init within %v", d)
		}
	}
}

// Exec runs cmd in the workspace and waits for it. The sandbox's files are
// synced into the overlay first and the command's changes harvested back
// after it. The returned error is for failures of warren, not of the
// command: a command that cannot start has Status 127 or 126 and Message.
func (w *Workspace) Exec(ctx context.Context, cmd Cmd) (Result, error) {
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return Result{}, fmt.Errorf("native: workspace %s is closed", w.id)
	}
	w.execSeq++
	rel := fmt.Sprintf("%s/e%d", w.sbRel(), w.execSeq)
	w.execs.Add(1)
	w.mu.Unlock()
	defer w.execs.Done()

	if err := w.syncAll(); err != nil {
		if errors.Is(err, ErrMountsChanged) {
			return Result{}, err
		}
		return Result{}, fmt.Errorf("native: sync before exec: %w", err)
	}
	res, err := w.run(ctx, rel, cmd)
	herr := w.harvestAll()
	var qr *QuotaRefusal
	if errors.As(herr, &qr) {
		// The command ran, but part of what it wrote is not kept: say so
		// where a write error would show, and fail it as cp would.
		res.Message = "warren: native: " + qr.Error()
		if cmd.Stderr != nil {
			fmt.Fprintln(cmd.Stderr, res.Message)
		}
		if res.Status == 0 {
			res.Status = 1
		}
		res.QuotaRefused = qr
	} else if herr != nil && err == nil {
		err = fmt.Errorf("native: harvest after exec: %w", herr)
	}
	return res, err
}

// Security reports the workspace's security mode.
func (w *Workspace) Security() Security { return w.sec }

// Harvest brings what native processes wrote since the last exec (e.g. a
// background server) into the sandbox's vfs. Exec does it after every
// command; callers use it before resident reads that must see such writes.
func (w *Workspace) Harvest(ctx context.Context) error {
	w.mu.Lock()
	closed := w.closed
	w.mu.Unlock()
	if closed {
		return fmt.Errorf("native: workspace %s is closed", w.id)
	}
	return w.harvestAll()
}

func (w *Workspace) run(ctx context.Context, rel string, cmd Cmd) (Result, error) {
	r := w.r
	lim := cmd.Limits.or(w.lim)
	// Limits the exec sets for itself; the rest it shares with the workspace.
	var own Limits
	if cmd.Limits.Memory > 0 && cmd.Limits.Memory != w.lim.Memory {
		own.Memory = cmd.Limits.Memory
	}
	if cmd.Limits.CPUs > 0 && cmd.Limits.CPUs != w.lim.CPUs {
		own.CPUs = cmd.Limits.CPUs
	}
	if cmd.Limits.Pids > 0 && cmd.Limits.Pids != w.lim.Pids {
		own.Pids = cmd.Limits.Pids
	}
	hs := r.cg.execHierarchies(own)
	if err := r.cg.createIn(rel, hs, false); err != nil {
		r.cg.remove(rel)
		return Result{}, err
	}
	if err := r.cg.setLimits(rel, own); err != nil {
		r.cg.remove(rel)
		return Result{}, err
	}
	defer func() {
		// An exec cgroup that still holds background processes stays until
		// they exit or the workspace closes (Close removes the whole tree).
		if len(r.cg.pidsOf(rel)) == 0 {
			r.cg.remove(rel)
		}
	}()
	procs, err := r.cg.execProcsFiles(rel, w.sharedRel(), hs)
	if err != nil {
		return Result{}, err
	}
	defer closeAll(procs)
	st, err := newStdio(cmd)
	if err != nil {
		return Result{}, err
	}
	defer st.closeParent()
	pair, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return Result{}, fmt.Errorf("socketpair: %w", err)
	}
	hostF, childF := os.NewFile(uintptr(pair[0]), "exec"), os.NewFile(uintptr(pair[1]), "exec")
	conn, err := net.FileConn(hostF)
	hostF.Close()
	if err != nil {
		childF.Close()
		return Result{}, err
	}
	defer conn.Close()
	fds := []int{int(st.child[0].Fd()), int(st.child[1].Fd()), int(st.child[2].Fd()), int(childF.Fd())}
	for _, f := range procs {
		fds = append(fds, int(f.Fd()))
	}
	oom0 := r.cg.oomKills(w.sbRel()) // before the spawn: a fast OOM must not be missed
	// Forks refused in the sandbox, counted from before the spawn too (a
	// concurrent exec's bomb is seen by every exec of the workspace:
	// attribution is per sandbox).
	storm := forkStorm{refused: r.cg.pidsRefused(w.sbRel())}
	w.ctlMu.Lock()
	if w.ctl < 0 {
		err = errors.New("workspace closed")
	} else {
		err = sendFds(w.ctl, []byte("x"), fds)
	}
	w.ctlMu.Unlock()
	childF.Close()
	st.closeChild()
	if err != nil {
		return Result{}, fmt.Errorf("%w (%s): %v", ErrWorkspaceLost, w.id, err)
	}
	args := cmd.Args
	if len(args) == 0 {
		args = []string{cmd.Path}
	}
	start := time.Now()
	enc, dec := json.NewEncoder(conn), json.NewDecoder(conn)
	if err := enc.Encode(execRequest{Path: cmd.Path, Args: args, Env: cmd.Env, Dir: cmd.Dir}); err != nil {
		return Result{}, fmt.Errorf("native: exec request: %w", err)
	}
	var started execStarted
	if err := dec.Decode(&started); err != nil {
		return Result{}, fmt.Errorf("%w (%s): no answer to exec: %v", ErrWorkspaceLost, w.id, err)
	}
	if started.Err != "" {
		st.wait()
		msg := "warren: native: " + started.Err
		if cmd.Stderr != nil {
			fmt.Fprintln(cmd.Stderr, msg)
		}
		return Result{Status: started.Status, Message: msg, Wall: time.Since(start)}, nil
	}

	exited := make(chan execExited, 1)
	decErr := make(chan error, 1)
	go func() {
		var ex execExited
		if err := dec.Decode(&ex); err != nil {
			decErr <- err
			return
		}
		exited <- ex
	}()
	var timeout <-chan time.Time
	if lim.Timeout > 0 {
		t := time.NewTimer(lim.Timeout)
		defer t.Stop()
		timeout = t.C
	}
	res := Result{}
	var ctxErr, cause error
	var ex execExited
	kill := func() { r.cg.kill(rel) }
	tick := time.NewTicker(forkStormTick)
	defer tick.Stop()
	watch := func() {
		if !res.ForkBomb && storm.observe(r.cg.pidsRefused(w.sbRel())) {
			res.ForkBomb = true
			kill()
		}
	}
wait:
	for {
		select {
		case ex = <-exited:
			break wait
		case <-tick.C:
			watch()
		case err := <-decErr:
			// The init died under us: the workspace was closed or killed.
			return Result{Status: 137, Wall: time.Since(start), Message: "warren: native: killed: workspace closed"},
				fmt.Errorf("%w (%s): %v", ErrWorkspaceLost, w.id, err)
		case <-timeout:
			res.TimedOut = true
			timeout = nil
			kill()
		case <-ctx.Done():
			ctxErr, cause = ctx.Err(), context.Cause(ctx)
			kill()
			ctx = context.Background()
		}
	}
	// Output still held open by a background descendant keeps us reading, as
	// bash's $(...) would; the timeout and ctx still end it.
	outDone := make(chan struct{})
	go func() { st.wait(); close(outDone) }()
	for waiting := true; waiting; {
		select {
		case <-outDone:
			waiting = false
		case <-tick.C:
			watch()
		case <-timeout:
			res.TimedOut = true
			timeout = nil
			kill()
		case <-ctx.Done():
			ctxErr, cause = ctx.Err(), context.Cause(ctx)
			kill()
			ctx = context.Background()
		}
	}
	res.Wall = time.Since(start)
	wsStatus := syscall.WaitStatus(ex.WaitStatus)
	switch {
	case wsStatus.Exited():
		res.Status = wsStatus.ExitStatus()
	case wsStatus.Signaled():
		res.Status = 128 + int(wsStatus.Signal())
	}
	if res.ForkBomb {
		res.Status = 137 // warren killed the exec, whether or not its first process had ended
	}
	res.CPU = r.cg.cpuTime(rel)
	storm.observe(r.cg.pidsRefused(w.sbRel()))
	res.PidsRefused = storm.total
	// The victim may be the command or one of its children (whose parent
	// then usually exits 137); with an OOM kill counted in the workspace
	// meanwhile, either is reported as one.
	if res.Status == 137 && r.cg.oomKills(w.sbRel()) > oom0 {
		res.OOMKilled = true
	}
	switch {
	case res.OOMKilled:
		res.Message = fmt.Sprintf("warren: native: %s: killed: out of memory (limit %s)", cmd.Path, formatBytes(lim.Memory))
	case res.ForkBomb:
		res.Message = fmt.Sprintf("warren: native: %s: killed: fork bomb (%d process creations refused at the limit of %d processes)",
			cmd.Path, storm.total, lim.Pids)
	case res.TimedOut:
		res.Message = fmt.Sprintf("warren: native: %s: killed: timeout of %v exceeded", cmd.Path, lim.Timeout)
	case ctxErr != nil:
		res.Message = fmt.Sprintf("warren: native: %s: killed: %s", cmd.Path, killReason(ctxErr, cause))
	case res.PidsRefused > 0:
		// Not killed, but the program saw fork fail: say why.
		res.Message = fmt.Sprintf("warren: native: %s: %d process creations refused at the limit of %d processes",
			cmd.Path, res.PidsRefused, lim.Pids)
	}
	if res.Message != "" && cmd.Stderr != nil {
		fmt.Fprintln(cmd.Stderr, res.Message)
	}
	return res, ctxErr
}

// A fork bomb at the pids limit does not end by itself: its processes die
// when fork fails and the survivors fork again. A program that meets the
// limit once gets EAGAIN and copes (or fails). One that forks on against it
// is a bomb and is killed: fast, at least forkStormMin refusals in each of
// forkStormTicks ticks in a row; or slow (a shell bomb on a busy machine
// forks at a fraction of the fast rate, and once took 12 s to burn out), at
// least forkStormSlowMin refusals over the last forkStormWindow ticks with
// refusals in at least forkStormSlowHot of them. A program retrying one fork now
// and then stays below both.
const (
	forkStormTick    = 100 * time.Millisecond
	forkStormTicks   = 5
	forkStormMin     = 20
	forkStormWindow  = 20 // 2 s
	forkStormSlowHot = 10
	forkStormSlowMin = 150
)

type forkStorm struct {
	refused int64 // the pids.events "max" count at the last tick
	hot     int   // consecutive ticks with at least forkStormMin refusals
	total   int64 // refusals seen during the exec
	window  [forkStormWindow]int64
	ticks   int // ticks observed, indexing window
}

// observe takes the refusal count at a tick and reports a bomb.
func (s *forkStorm) observe(refused int64) bool {
	d := refused - s.refused
	s.refused = refused
	if d < 0 {
		d = 0
	}
	s.total += d
	if d >= forkStormMin {
		s.hot++
	} else {
		s.hot = 0
	}
	s.window[s.ticks%forkStormWindow] = d
	s.ticks++
	var sum int64
	hotTicks := 0
	for _, w := range s.window {
		sum += w
		if w > 0 {
			hotTicks++
		}
	}
	return s.hot >= forkStormTicks || (hotTicks >= forkStormSlowHot && sum >= forkStormSlowMin)
}

// lockedBuffer collects the init's stderr for error messages.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func formatBytes(n int64) string {
	switch {
	case n <= 0:
		return "none"
	case n%(1<<30) == 0:
		return fmt.Sprintf("%dGiB", n>>30)
	case n%(1<<20) == 0:
		return fmt.Sprintf("%dMiB", n>>20)
	case n%(1<<10) == 0:
		return fmt.Sprintf("%dKiB", n>>10)
	}
	return fmt.Sprintf("%dB", n)
}

// stdio holds the three descriptors handed to the process and the copy
// goroutines that feed them from Go readers and writers.
type stdio struct {
	child  [3]*os.File
	own    [3]bool // child[i] was opened here and must be closed here
	parent []*os.File
	outs   sync.WaitGroup
}

func newStdio(cmd Cmd) (*stdio, error) {
	s := &stdio{}
	devnull := func(i int, flag int) error {
		f, err := os.OpenFile(os.DevNull, flag, 0)
		if err != nil {
			return err
		}
		s.child[i], s.own[i] = f, true
		return nil
	}
	switch in := cmd.Stdin.(type) {
	case nil:
		if err := devnull(0, os.O_RDONLY); err != nil {
			return nil, err
		}
	case *os.File:
		s.child[0] = in
	default:
		pr, pw, err := os.Pipe()
		if err != nil {
			return nil, err
		}
		s.child[0], s.own[0] = pr, true
		s.parent = append(s.parent, pw)
		go func() {
			io.Copy(pw, in)
			pw.Close()
		}()
	}
	for i, out := range []io.Writer{cmd.Stdout, cmd.Stderr} {
		switch o := out.(type) {
		case nil:
			if err := devnull(i+1, os.O_WRONLY); err != nil {
				s.closeChild()
				return nil, err
			}
		case *os.File:
			s.child[i+1] = o
		default:
			pr, pw, err := os.Pipe()
			if err != nil {
				s.closeChild()
				return nil, err
			}
			s.child[i+1], s.own[i+1] = pw, true
			s.outs.Add(1)
			go func() {
				defer s.outs.Done()
				io.Copy(o, pr)
				pr.Close()
			}()
		}
	}
	return s, nil
}

func (s *stdio) closeChild() {
	for i, f := range s.child {
		if s.own[i] && f != nil {
			f.Close()
			s.own[i] = false
		}
	}
}

// wait returns when the process side of stdout and stderr is closed and
// everything was copied.
func (s *stdio) wait() { s.outs.Wait() }

// closeParent stops feeding stdin (a reader that never ends must not keep
// the copy goroutine writing into a process that is gone).
func (s *stdio) closeParent() {
	for _, f := range s.parent {
		f.Close()
	}
}

// Close kills every process of the workspace and removes its overlay, tmpfs
// and cgroups. It is safe to call more than once.
func (w *Workspace) Close() error {
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return nil
	}
	w.closed = true
	w.mu.Unlock()
	err := w.teardown()
	w.execs.Wait()
	w.r.mu.Lock()
	delete(w.r.spaces, w)
	w.r.mu.Unlock()
	return err
}

func (w *Workspace) teardown() error {
	r := w.r
	var errs []error
	if w.ip != nil {
		// pid 1 of the namespace: its death kills every process in it.
		w.ip.cmd.Process.Kill()
	}
	// No exec may send on the socket once ip.stop below closes it (the fd
	// number could be reused).
	w.ctlMu.Lock()
	w.ctl = -1
	w.ctlMu.Unlock()
	if r.cg != nil {
		if err := r.cg.kill(w.cgRel); err != nil {
			errs = append(errs, err)
		}
	}
	if w.ip != nil {
		if err := w.ip.stop(); err != nil {
			errs = append(errs, fmt.Errorf("native: init of %s: %w", w.id, err))
		}
	}
	if r.cg != nil {
		if err := r.cg.remove(w.cgRel); err != nil {
			errs = append(errs, err)
		}
	}
	if err := imagemount.UnmountUnder(w.dir, false); err != nil {
		errs = append(errs, err)
	}
	if w.img != nil {
		if err := w.img.Release(); err != nil {
			errs = append(errs, err)
		}
		w.img = nil
	}
	if err := imagemount.CleanDir(w.dir); err == nil {
		os.Remove(w.dir)
	} else {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// killReason says why a cancelled exec was killed: the caller's cause when
// it gave one (context.WithTimeoutCause, WithCancelCause), else whether its
// deadline passed or it was cancelled.
func killReason(ctxErr, cause error) string {
	if cause != nil && cause != ctxErr {
		return cause.Error()
	}
	if errors.Is(ctxErr, context.DeadlineExceeded) {
		return "the exec's time limit was reached"
	}
	return "the exec was cancelled"
}
