package shell

import (
	"errors"
	"io"
	"io/fs"
	"sync"
	"sync/atomic"

	"github.com/warren-sandbox/warren/vfs"
)

// ulimit -f: a redirection's file takes writes up to the soft limit (in
// 1024-byte blocks, as bash counts them); the write that would pass it
// stores what fits and fails, and the writer dies as of SIGXFSZ: status
// 153, no EXIT trap. The shell running a builtin is the writer, so it (or
// the subshell) ends; a resident command's status is 153 whatever it
// said of the failed write. Files commands open themselves are not
// limited (the kernel would limit those too; see docs/shell.md).

// errFileSize is what a write past the limit returns (EFBIG's text).
var errFileSize = errors.New("File too large")

// xfszStatus is 128+SIGXFSZ, a process killed by it.
const xfszStatus = 153

// sizeLimited caps what goes through w at max bytes past the file's size
// when it was opened.
type sizeLimited struct {
	w     io.Writer
	mu    sync.Mutex
	off   int64
	max   int64
	trips atomic.Int32 // writes refused; a command's caller compares before and after
}

func (s *sizeLimited) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.off+int64(len(p)) <= s.max {
		n, err := s.w.Write(p)
		s.off += int64(n)
		return n, err
	}
	room := max(s.max-s.off, 0)
	n, err := s.w.Write(p[:room])
	s.off += int64(n)
	s.trips.Add(1)
	if err == nil {
		err = errFileSize
	}
	return n, err
}

// fileSizeLimit is ulimit -f's soft value in bytes, or -1.
func (r *runner) fileSizeLimit() int64 {
	if r.ulimits == nil {
		return -1
	}
	for i, res := range ulimitTable {
		if res.flag == 'f' {
			if v := r.ulimits.soft[i]; v >= 0 && v < 1<<53 {
				return v * 1024
			}
		}
	}
	return -1
}

// limitWrites wraps a redirection's writer when ulimit -f is set. off is
// where writes start (the file's size for an append).
func (r *runner) limitWrites(w io.Writer, f any, flag int) io.Writer {
	lim := r.fileSizeLimit()
	if lim < 0 || w == nil {
		return w
	}
	off := int64(0)
	if flag&vfs.O_APPEND != 0 {
		if st, ok := f.(interface{ Stat() (fs.FileInfo, error) }); ok {
			if fi, err := st.Stat(); err == nil {
				off = fi.Size()
			}
		}
	}
	return &sizeLimited{w: w, off: off, max: lim}
}

// fileTrips counts the refused writes of the limited writers among ws.
func fileTrips(ws ...io.Writer) int32 {
	var n int32
	for _, w := range ws {
		if s, ok := w.(*sizeLimited); ok {
			n += s.trips.Load()
		}
	}
	return n
}

// sizeNotice is what bash says when a command it waited for died of
// SIGXFSZ: "line N: PID File size limit exceeded" and the command.
func (r *runner) sizeNotice() {
	r.errf("%d File size limit exceeded%s", r.newPid(), r.bashCommand())
}

// quietAfterTrip is a resident command's stderr under ulimit -f: once a
// write of the command's has passed the limit it takes nothing more (the
// process would be dead).
type quietAfterTrip struct {
	w, out io.Writer
	trips  int32
}

func (q *quietAfterTrip) Write(p []byte) (int, error) {
	if fileTrips(q.out, q.w) != q.trips {
		return len(p), nil
	}
	return q.w.Write(p)
}
