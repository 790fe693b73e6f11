package native

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// The host and a workspace's init talk over a SOCK_SEQPACKET control socket
// (fd 3 of the init): one message per setup or exec, carrying file
// descriptors. Each exec also gets its own stream socket on which the host
// writes an execRequest and the init answers execStarted, then execExited.

// initArg0 is argv[0] of the re-executed warren binary acting as a
// workspace's init; MaybeInit recognises it.
const initArg0 = "warren-native-init"

// holdArg0 is argv[0] of a process that only holds a user namespace open
// until its stdin closes (used to get a userns fd for idmapped mounts).
const holdArg0 = "warren-native-userns"

type setupMsg struct {
	Root     string // overlay root, a host path visible in the init's mount ns
	Hostname string
	Devices  []string // host device nodes bound into /dev
	Security Security
	Landlock int        // Landlock ABI for the default security mode; 0: none
	Volumes  []volMount // bound over the overlay before pivot_root (volumes.go)
}

type execRequest struct {
	Path string
	Args []string
	Env  []string
	Dir  string
}

type execStarted struct {
	Pid    int    // pid inside the sandbox
	Err    string // exec failure (path not found, not executable ...)
	Status int    // the status a shell reports for Err (126 or 127)
}

type execExited struct {
	WaitStatus uint32
}

// sendFds sends payload with fds as one message.
func sendFds(sock int, payload []byte, fds []int) error {
	var oob []byte
	if len(fds) > 0 {
		oob = unix.UnixRights(fds...)
	}
	if err := unix.Sendmsg(sock, payload, oob, nil, 0); err != nil {
		return fmt.Errorf("sendmsg: %w", err)
	}
	return nil
}

// recvFds reads one message and the fds it carries (at most maxFds).
func recvFds(sock int, maxFds int) ([]byte, []*os.File, error) {
	buf := make([]byte, 64<<10)
	oob := make([]byte, unix.CmsgSpace(maxFds*4))
	for {
		n, oobn, _, _, err := unix.Recvmsg(sock, buf, oob, unix.MSG_CMSG_CLOEXEC)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, nil, err
		}
		if n == 0 && oobn == 0 {
			return nil, nil, fmt.Errorf("control socket closed")
		}
		var files []*os.File
		msgs, err := unix.ParseSocketControlMessage(oob[:oobn])
		if err != nil {
			return nil, nil, err
		}
		for _, m := range msgs {
			fds, err := unix.ParseUnixRights(&m)
			if err != nil {
				continue
			}
			for _, fd := range fds {
				files = append(files, os.NewFile(uintptr(fd), "fd"))
			}
		}
		return buf[:n], files, nil
	}
}
