// Package textio holds the streaming plumbing the text commands share:
// pooled 64 KiB readers and writers (so a pipeline of resident commands
// allocates almost nothing per invocation), a line reader that handles lines
// longer than the buffer, a memory budget for commands that must buffer
// their whole input (sort, tac, shuf), and a context check for long loops.
package textio

import (
	"bufio"
	"context"
	"errors"
	"io"
	"strings"
	"sync"
	"syscall"

	"github.com/warren-sandbox/warren/commands"
)

// BufSize is the buffer size for readers and writers: large enough that a
// pipe stage moves data in few calls, small enough to pool per command.
const BufSize = 64 << 10

var (
	readers = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, BufSize) }}
	writers = sync.Pool{New: func() any { return bufio.NewWriterSize(nil, BufSize) }}
)

// NewReader returns a pooled buffered reader over r; give it back with PutReader.
func NewReader(r io.Reader) *bufio.Reader {
	br := readers.Get().(*bufio.Reader)
	br.Reset(r)
	return br
}

// PutReader returns br to the pool.
func PutReader(br *bufio.Reader) {
	br.Reset(nil)
	readers.Put(br)
}

// NewWriter returns a pooled buffered writer over w; Flush, then PutWriter.
func NewWriter(w io.Writer) *bufio.Writer {
	bw := writers.Get().(*bufio.Writer)
	bw.Reset(w)
	return bw
}

// PutWriter returns bw to the pool (it does not flush).
func PutWriter(bw *bufio.Writer) {
	bw.Reset(nil)
	writers.Put(bw)
}

// ChunkSize is the size of the pooled scratch buffers of GetChunk.
const ChunkSize = 32 << 10

var chunks = sync.Pool{New: func() any {
	b := make([]byte, ChunkSize)
	return &b
}}

// GetChunk returns a pooled ChunkSize scratch buffer (contents undefined);
// give it back with PutChunk. A pointer, so the pool stores it without
// allocating.
func GetChunk() *[]byte { return chunks.Get().(*[]byte) }

// PutChunk returns b to the pool; b must come from GetChunk and not be used
// afterwards.
func PutChunk(b *[]byte) {
	if cap(*b) < ChunkSize {
		return // resliced by the caller: not worth keeping
	}
	*b = (*b)[:ChunkSize]
	chunks.Put(b)
}

// LineReader yields lines (without the delimiter) from a buffered reader.
// The returned slice is valid until the next call.
type LineReader struct {
	R     *bufio.Reader
	Delim byte
	// Limit bounds one line's length (a line longer than the buffer is
	// assembled in memory); 0 = unlimited. Past it Next fails with a
	// *MemoryError.
	Limit int64
	// Res is charged for the long-line buffer's growth (the sandbox's
	// shared budget; nil: unlimited). The charge is held until Res closes.
	Res  *commands.Reservation
	long []byte
}

// Next returns the next line, whether it ended with Delim, and io.EOF once
// the input is exhausted (a final unterminated line is returned first).
func (l *LineReader) Next() (line []byte, terminated bool, err error) {
	b, err := l.R.ReadSlice(l.Delim)
	if err == bufio.ErrBufferFull {
		l.long = append(l.long[:0], b...)
		for err == bufio.ErrBufferFull {
			if l.Limit > 0 && int64(len(l.long)) > l.Limit {
				return nil, false, &MemoryError{Max: l.Limit}
			}
			b, err = l.R.ReadSlice(l.Delim)
			if c := cap(l.long); len(l.long)+len(b) > c {
				// Charge the doubling before append makes it.
				if gerr := l.Res.Grow(int64(max(2*c, len(l.long)+len(b)) - c)); gerr != nil {
					return nil, false, gerr
				}
			}
			l.long = append(l.long, b...)
		}
		b = l.long
	}
	if err != nil && err != io.EOF {
		return nil, false, err
	}
	if len(b) == 0 && err == io.EOF {
		return nil, false, io.EOF
	}
	if n := len(b); n > 0 && b[n-1] == l.Delim {
		return b[:n-1], true, nil
	}
	return b, false, nil
}

// ErrMemory reports that a buffering command exceeded a memory limit: its
// own (Budget.Max) or the sandbox's shared budget (Budget.Res).
var ErrMemory = commands.ErrMemoryLimit

// MemoryError says which limit a buffering command ran into; it is the
// sandbox budget's error, so every limit reads the same.
type MemoryError = commands.MemoryLimitError

// Budget accounts the bytes a command keeps in memory, against the
// command's own limit and the sandbox's shared budget together.
type Budget struct {
	Max  int64 // the command's own limit, 0 = unlimited
	Used int64
	Res  *commands.Reservation // the sandbox's budget (nil: unlimited)
}

// Add charges n bytes and fails once a limit is passed.
func (b *Budget) Add(n int) error {
	b.Used += int64(n)
	if b.Max > 0 && b.Used > b.Max {
		return &MemoryError{Max: b.Max}
	}
	return b.Res.Grow(int64(n))
}

// Release gives back n bytes the command no longer keeps.
func (b *Budget) Release(n int) {
	b.Used -= int64(n)
	b.Res.Shrink(int64(n))
}

// Canceled reports whether ctx is done, cheaply enough to call per line.
func Canceled(ctx context.Context) bool {
	select {
	case <-ctx.Done():
		return true
	default:
		return false
	}
}

// ctxReader stops reading once its context is done, so a command looping
// over an endless stream returns promptly.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

// WithContext wraps r so reads fail with ctx.Err() after cancellation.
func WithContext(ctx context.Context, r io.Reader) io.Reader { return ctxReader{ctx, r} }

// ContextReader is WithContext as a value a command can keep in its own
// state, so wrapping each input does not allocate.
type ContextReader struct {
	Ctx context.Context
	R   io.Reader
	// Flush, when set, is the command's output, flushed before each read:
	// what a filter has made of its input so far leaves before it waits
	// for more, so a stream through it (a build log, tail -f) is not held
	// back until its end or a full buffer.
	Flush *bufio.Writer
}

func (c *ContextReader) Read(p []byte) (int, error) {
	if err := c.Ctx.Err(); err != nil {
		return 0, err
	}
	if c.Flush != nil && c.Flush.Buffered() > 0 {
		// a write error surfaces at the command's next write
		_ = c.Flush.Flush()
	}
	return c.R.Read(p)
}

// ErrWriter remembers the first write error, so a command can stop
// reading as soon as its reader has gone (cat big | head -1).
type ErrWriter struct {
	W   io.Writer
	Err error
}

func (e *ErrWriter) Write(p []byte) (int, error) {
	if e.Err != nil {
		return 0, e.Err
	}
	n, err := e.W.Write(p)
	if err != nil {
		e.Err = err
	}
	return n, err
}

// BrokenPipe reports whether err means the reading end of a pipe is gone;
// GNU tools die of SIGPIPE then, silently, with status 141.
func BrokenPipe(err error) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, syscall.EPIPE) || errors.Is(err, io.ErrClosedPipe) {
		return true
	}
	return strings.Contains(err.Error(), "broken pipe")
}
