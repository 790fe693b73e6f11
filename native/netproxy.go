package native

import (
	"errors"
	"fmt"
	"net"
	"runtime"

	"golang.org/x/sys/unix"
)

// Listen opens a TCP listener inside the workspace's network namespace
// (which has only loopback), served by the host process: the way the
// sandbox's egress proxy reaches native processes without giving them a
// route out. The socket is made on a locked OS thread switched into the
// namespace with setns, then the thread switches back; a thread that cannot
// switch back is never unlocked, so Go retires it instead of reusing it.
// The listener is closed when the workspace's init ends (Close or loss),
// so it never keeps a dead namespace alive.
func (w *Workspace) Listen(addr string) (net.Listener, error) {
	w.mu.Lock()
	closed, ip := w.closed, w.ip
	w.mu.Unlock()
	if closed || ip == nil || ip.cmd == nil || ip.cmd.Process == nil {
		return nil, fmt.Errorf("native: workspace %s is closed", w.id)
	}
	type result struct {
		ln  net.Listener
		err error
	}
	ch := make(chan result, 1)
	go func() {
		runtime.LockOSThread()
		ln, back, err := listenInNetns(ip.cmd.Process.Pid, addr)
		if back {
			runtime.UnlockOSThread()
		}
		ch <- result{ln, err}
	}()
	r := <-ch
	if r.err != nil {
		return nil, fmt.Errorf("native: listen in the network namespace of %s: %w", w.id, r.err)
	}
	go func() {
		<-ip.dead
		r.ln.Close()
	}()
	return r.ln, nil
}

// listenInNetns runs on a locked thread; back reports whether the thread
// is in its own namespace again.
func listenInNetns(pid int, addr string) (ln net.Listener, back bool, err error) {
	self, err := unix.Open("/proc/thread-self/ns/net", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, true, err
	}
	defer unix.Close(self)
	target, err := unix.Open(fmt.Sprintf("/proc/%d/ns/net", pid), unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, true, err
	}
	defer unix.Close(target)
	if err := unix.Setns(target, unix.CLONE_NEWNET); err != nil {
		return nil, true, fmt.Errorf("setns: %w", err)
	}
	ln, err = net.Listen("tcp", addr)
	if serr := unix.Setns(self, unix.CLONE_NEWNET); serr != nil {
		if ln != nil {
			ln.Close()
		}
		return nil, false, errors.Join(err, fmt.Errorf("setns back: %w", serr))
	}
	return ln, true, err
}
