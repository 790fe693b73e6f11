package store

import (
	"context"
	"errors"
	"fmt"
	"io"
)

// ErrTooLarge: an object exceeds the size limit set with WithMaxObjectSize.
var ErrTooLarge = errors.New("object too large")

// WithMaxObjectSize wraps s so that Put refuses objects longer than maxSize
// bytes (a negative maxSize means 0), storing nothing: Put's atomicity
// discards the partial upload. It bounds what an untrusted upload can cost
// before anything else looks at it. Other methods pass through, GetRange
// too when s is a RangeGetter.
func WithMaxObjectSize(s Store, maxSize int64) Store {
	l := limitStore{Store: s, max: max(maxSize, 0)}
	if rg, ok := s.(RangeGetter); ok {
		return &limitRangeStore{l, rg}
	}
	return &l
}

type limitRangeStore struct {
	limitStore
	RangeGetter
}

type limitStore struct {
	Store
	max int64
}

func (s *limitStore) Put(ctx context.Context, key string, r io.Reader) error {
	return s.Store.Put(ctx, key, &limitReader{r: r, left: s.max, max: s.max})
}

// limitReader fails once more than max bytes arrive. It reads one byte past
// the limit to tell "exactly max" from "more".
type limitReader struct {
	r    io.Reader
	left int64
	max  int64
}

func (l *limitReader) Read(p []byte) (int, error) {
	if int64(len(p)) > l.left { // written so that left+1 cannot overflow
		p = p[:l.left+1]
	}
	n, err := l.r.Read(p)
	l.left -= int64(n)
	if l.left < 0 {
		return 0, fmt.Errorf("%w: more than %d bytes", ErrTooLarge, l.max)
	}
	return n, err
}
