package retry

import (
	"errors"
	"fmt"
	"io"

	"github.com/warren-sandbox/warren/store"
)

// replay is a Put body that can be read again from its start: by seeking
// when the source is an io.Seeker, else from a copy of the first max bytes.
// It records the source's own errors (srcErr), which end the retries.
type replay struct {
	src    io.Reader
	seeker io.Seeker
	start  int64 // the seeker's offset at the first read

	buf  []byte // copy of the bytes read from src so far (non-seekers)
	max  int64
	over bool // more than max bytes were read: no replay
	pos  int  // read position in buf during a replay

	srcErr error
}

var errNoReplay = errors.New("the body was read past the replay buffer and cannot seek")

func newReplay(r io.Reader, max int64) *replay {
	b := &replay{src: r, max: max, start: -1}
	if s, ok := r.(io.Seeker); ok {
		if off, err := s.Seek(0, io.SeekCurrent); err == nil {
			b.seeker, b.start = s, off
		}
	}
	return b
}

func (b *replay) Read(p []byte) (int, error) {
	if b.pos < len(b.buf) {
		n := copy(p, b.buf[b.pos:])
		b.pos += n
		return n, nil
	}
	n, err := b.src.Read(p)
	if b.seeker == nil && n > 0 && !b.over {
		if int64(len(b.buf)+n) > b.max {
			b.over, b.buf = true, nil
		} else {
			b.buf = append(b.buf, p[:n]...)
		}
		b.pos = len(b.buf)
	}
	if err != nil && err != io.EOF {
		b.srcErr = err
	}
	return n, err
}

// rewind prepares the next attempt's read from the start.
func (b *replay) rewind() error {
	if b.seeker != nil {
		if _, err := b.seeker.Seek(b.start, io.SeekStart); err != nil {
			return fmt.Errorf("seek back: %w", err)
		}
		return nil
	}
	if b.over {
		return errNoReplay
	}
	b.pos = 0
	return nil
}

// Size reports the bytes left in the body when its source can seek (a
// store that buffers a Put can then allocate exactly).
func (b *replay) Size() (int64, bool) { return store.BodySize(b.src) }
