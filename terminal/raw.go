package terminal

// A native program can run on a real pseudo-terminal instead of this
// one's line discipline (the kernel's then echoes and edits): Raw hands
// it the keyboard and the window size for as long as it runs.

// Raw sends keyboard input to sink unprocessed (sink reports whether the
// bytes were an interrupt the program does not take itself, which then
// interrupts the command as ^C does) and window sizes to onResize, until
// the returned stop is called. It is for the command now running.
func (t *Term) Raw(sink func(p []byte) (interrupt bool), onResize func(cols, rows int)) (stop func()) {
	t.mu.Lock()
	t.sink, t.onResize = sink, onResize
	t.mu.Unlock()
	return func() {
		t.mu.Lock()
		t.sink, t.onResize = nil, nil
		t.mu.Unlock()
	}
}

// Display writes a program's output as it is (a real pty already turned
// its \n into \r\n).
func (t *Term) Display(p []byte) { t.writeRaw(p) }

// TerminalOf returns the Term behind a command's stream (its stdin,
// stdout or stderr), or nil when the stream is not this package's.
func TerminalOf(x any) *Term {
	if s, ok := x.(stream); ok {
		return s.t
	}
	return nil
}
