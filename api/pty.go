package api

import "context"

// PTYSize is a terminal's window size (POST .../processes with "pty",
// POST .../processes/{pid}/resize).
type PTYSize struct {
	Cols int `json:"cols"`
	Rows int `json:"rows"`
}

// Terminals is implemented by Services that run processes on a
// pseudo-terminal (the manager and the client): a process started with
// ExecRequest.PTY reads keyboard input from WriteStdin, writes the
// terminal's display to its stdout (AttachProcess), and is resized here.
type Terminals interface {
	ResizeProcess(ctx context.Context, id string, pid int, size PTYSize) error
}

// The PTY WebSocket (GET .../processes/{pid}/pty): binary frames carry
// keyboard input to the server and display output from it; text frames
// carry PTYControl JSON. The server's first frame is a "hello" control
// frame; a client may send "resize" frames; the server ends with an
// "exit" frame and a close frame of code PTYCloseBase+exit status
// (reason: the status in decimal).
const (
	// PTYSubprotocol is the WebSocket subprotocol the server selects.
	PTYSubprotocol = "warren.pty"
	// PTYKeyProtocol prefixes the API key offered as a subprotocol by
	// clients that cannot set an Authorization header (browsers):
	// Sec-WebSocket-Protocol: warren.pty, bearer.KEY. The server never
	// echoes it.
	PTYKeyProtocol = "bearer."
	// PTYCloseBase + the exit status (0-255) is the close code.
	PTYCloseBase = 4000
)

// PTYControl is a text frame of the PTY WebSocket.
type PTYControl struct {
	// Type is "hello" (server, first), "resize" (client), "exit"
	// (server, last) or "error" (server).
	Type  string       `json:"type"`
	PID   int          `json:"pid,omitempty"`
	Cols  int          `json:"cols,omitempty"`
	Rows  int          `json:"rows,omitempty"`
	Exit  *int         `json:"exit,omitempty"`
	Error *ErrorDetail `json:"error,omitempty"`
}
