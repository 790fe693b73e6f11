package bench

import (
	"bytes"
	"fmt"
	"strconv"
)

// The workload, mirrored exactly from shared/peers/justbash/bench.mjs.
const (
	CmdFirst     = "echo hello > /tmp/a; cat /tmp/a"        // "hello\n"
	CmdRTT       = "echo hi"                                // "hi\n"
	CmdPipe      = "cat /etc/passwd | grep root | wc -l"    // "1" trimmed
	CmdHeartbeat = "echo $RANDOM >> /log; cat /log | wc -l" // a line count
	CmdForkRead  = "cat /tmp/a"                             // "hello\n" in a fork
	SandboxCwd   = "/home/user"
	blobPath     = "/home/user/blob.bin"
)

// SandboxEnv is the environment every benchmark sandbox starts with.
var SandboxEnv = []string{"HOME=/home/user", "USER=user"}

// CmdWrite1K writes a 1024-byte file (the mem workload's write).
func CmdWrite1K(i int) string { return fmt.Sprintf(`printf "%%01024d" %d > %s`, i, blobPath) }

// Check is an expected result: status 0 and stdout accepted by OK.
type Check struct {
	Want string // for messages
	OK   func(stdout []byte) bool
}

var (
	isHello = Check{`"hello\n"`, func(b []byte) bool { return string(b) == "hello\n" }}
	isHi    = Check{`"hi\n"`, func(b []byte) bool { return string(b) == "hi\n" }}
	isOne   = Check{`"1" (trimmed)`, func(b []byte) bool { return string(bytes.TrimSpace(b)) == "1" }}
	isCount = Check{"a line count", func(b []byte) bool {
		_, err := strconv.ParseUint(string(bytes.TrimSpace(b)), 10, 64)
		return err == nil
	}}
	isEmpty = Check{`""`, func(b []byte) bool { return len(b) == 0 }}
)

// verify fails unless the command exited 0 with the expected stdout: a
// broken shell must fail the bench, not produce a fast figure.
func verify(script string, status int, err error, stdout, stderr []byte, c Check) error {
	if err != nil {
		return fmt.Errorf("%q failed: %w", script, err)
	}
	if status != 0 || !c.OK(stdout) {
		return fmt.Errorf("unexpected result for %q: exit=%d stdout=%q stderr=%q, want exit 0 and stdout %s",
			script, status, stdout, stderr, c.Want)
	}
	return nil
}
