package store

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"hash"
	"io"
)

// SHA256Digest returns the lowercase hex sha256 digest named by key's last
// segment, and false if that segment is not 64 lowercase hex digits (the key
// is not content-addressed).
func SHA256Digest(key string) (string, bool) {
	d := LastSegment(key)
	if len(d) != 2*sha256.Size {
		return "", false
	}
	for i := 0; i < len(d); i++ {
		c := d[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return "", false
		}
	}
	return d, true
}

// VerifySHA256 wraps r, the content of the object under key, so that reading
// it to the end fails with a *CorruptError (errors.Is(err, ErrCorrupt))
// instead of io.EOF when the bytes do not hash to the digest in key's last
// segment. Callers must read to io.EOF before trusting any byte: the check
// can only happen at the end. A key without a digest is an *InvalidKeyError.
func VerifySHA256(key string, r io.ReadCloser) (io.ReadCloser, error) {
	want, ok := SHA256Digest(key)
	if !ok {
		return nil, &InvalidKeyError{Key: key, Reason: "last segment is not a 64-digit lowercase hex sha256 digest"}
	}
	return &verifyReader{key: key, want: want, r: r, h: sha256.New()}, nil
}

type verifyReader struct {
	key, want string
	r         io.ReadCloser
	h         hash.Hash
	err       error // sticky result once the end is reached
}

func (v *verifyReader) Read(p []byte) (int, error) {
	if v.err != nil {
		return 0, v.err
	}
	n, err := v.r.Read(p)
	v.h.Write(p[:n])
	if err == io.EOF {
		if got := hex.EncodeToString(v.h.Sum(nil)); got != v.want {
			v.err = &CorruptError{Key: v.key, Want: v.want, Got: got}
			// The bytes of this last read are part of corrupt content: drop
			// them so no caller acts on them.
			return 0, v.err
		}
		v.err = io.EOF
	} else if err != nil {
		v.err = err
	}
	return n, err
}

func (v *verifyReader) Close() error { return v.r.Close() }

// WithSHA256 wraps s so that every content-addressed key (last segment 64
// lowercase hex digits, see SHA256Digest) is checked in both directions:
// Get's reader ends in a *CorruptError if the stored bytes do not match, and
// Put refuses content that does not match its key, storing nothing (it relies
// on Put's atomicity: the wrapped reader fails at its end). Other keys (heads,
// manifests) pass through unchanged. Conditional methods of s are not
// forwarded: heads are not content-addressed.
//
// If s is a RangeGetter, so is the result, but its GetRange is NOT verified:
// a range cannot be checked against the digest of the whole object. Callers
// of ranged reads verify what they read by their own means (the vfs checks
// each blob it reads against the blob's own sha256).
func WithSHA256(s Store) Store {
	if rg, ok := s.(RangeGetter); ok {
		return &sha256RangeStore{sha256Store{s}, rg}
	}
	return &sha256Store{Store: s}
}

type sha256Store struct{ Store }

// sha256RangeStore forwards GetRange unverified (see WithSHA256).
type sha256RangeStore struct {
	sha256Store
	RangeGetter
}

func (s *sha256Store) Get(ctx context.Context, key string) (io.ReadCloser, error) {
	rc, err := s.Store.Get(ctx, key)
	if err != nil {
		return nil, err
	}
	if _, ok := SHA256Digest(key); !ok {
		return rc, nil
	}
	v, err := VerifySHA256(key, rc)
	if err != nil {
		rc.Close()
		return nil, err
	}
	return v, nil
}

func (s *sha256Store) Put(ctx context.Context, key string, r io.Reader) error {
	if _, ok := SHA256Digest(key); !ok {
		return s.Store.Put(ctx, key, r)
	}
	v, err := VerifySHA256(key, io.NopCloser(r))
	if err != nil {
		return err
	}
	return s.Store.Put(ctx, key, v)
}
