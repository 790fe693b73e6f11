// Package store is warren's blob store: a flat namespace of whole objects
// (written at once, never edited in place) named by slash-separated keys, with one interface in storage words
// and one backend per place the bytes live (store/dir on a local directory,
// store/mem in memory, store/s3 in an S3-compatible bucket).
//
// # Keys
//
// A key is a relative, slash-separated name such as "chunks/ab/abcdef...".
// Valid keys:
//
//   - are 1..MaxKeyLen (960) bytes long: S3's 1024-byte object names less
//     room for a backend's prefix (store/s3 takes prefixes of up to 62 bytes);
//   - have segments of 1..MaxSegmentLen (200) bytes, so every segment fits a
//     Linux file name together with the temporary suffixes a backend adds;
//   - use only the characters A-Z a-z 0-9 and . _ - + = , @ (so no NUL, no
//     backslash, no space, no "~", which store/dir reserves for its own
//     directories, and nothing that needs escaping in an S3 URL);
//   - have no leading or trailing "/", no empty segment ("a//b") and no "."
//     or ".." segment.
//
// Anything else is refused with an *InvalidKeyError naming the key and the
// reason (errors.Is(err, ErrInvalidKey)). Keys are compared as byte strings;
// List returns them in that order.
//
// # Guarantees every backend gives
//
//   - Put is atomic: a concurrent or later reader sees the whole new object or
//     the whole old one (or none), never a prefix. If the reader passed to Put
//     fails, or ctx is cancelled, Put returns that error and the key keeps its
//     previous state; no partial or temporary object is ever visible to Get,
//     Has or List.
//   - Put overwrites. Concurrent Puts of one key are safe; one of them wins.
//   - Get of a missing key returns an error matching both ErrNotFound and
//     fs.ErrNotExist. Delete of a missing key returns nil.
//   - List calls fn in ascending key order. Objects put or deleted while List
//     runs may or may not be reported. An error from fn stops List and is
//     returned as is.
//   - Errors carry the operation and the key (*Error) and wrap the cause with
//     %w, so errors.Is works on ErrNotFound, ErrInvalidKey, context errors and
//     the reader's own error.
//   - A reader from Get fails with ctx's error once ctx ends.
//   - Objects "a" and "a/b" can coexist (as on S3): a key is a name, not a
//     path that needs its parent.
//
// Left out, on purpose, until a caller needs it: object metadata, delimiter
// listing. Retries are a wrapper (store/retry).
//
// Ranged reads use the optional RangeGetter interface (S3's Range header);
// GetRange falls back to Get for stores without it.
//
// Conditional writes use the optional Conditional interface, with S3 ETag
// semantics (If-None-Match: *, If-Match: etag). store/s3 does not offer it:
// heads and fencing live in the metadata store, which can make them atomic
// on every deployment, whereas S3 servers differ on conditional PUTs.
//
// Wrappers add one behaviour each, as restic's backend wrappers do:
// WithSHA256 checks content-addressed keys on Put and Get (VerifySHA256 is
// the bare reader), WithMaxObjectSize bounds Put. Wrappers return a plain
// Store that also implements RangeGetter when the wrapped one does; other
// optional interfaces of the backend (Conditional, dir's Path and File) are
// reached through the unwrapped backend.
package store

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"
)

// Store is a blob store. All methods are safe for concurrent use.
type Store interface {
	// Put stores the bytes of r under key, replacing any existing object.
	// It is atomic: readers see the whole object or the previous state. If r
	// fails or ctx ends, Put returns that error and stores nothing.
	Put(ctx context.Context, key string, r io.Reader) error
	// Get opens the object for streaming. The caller must Close it.
	// Missing object: an error matching ErrNotFound and fs.ErrNotExist.
	Get(ctx context.Context, key string) (io.ReadCloser, error)
	// Has reports whether the object exists. Missing object: false, nil.
	Has(ctx context.Context, key string) (bool, error)
	// Delete removes the object. Missing object: nil.
	Delete(ctx context.Context, key string) error
	// List calls fn for every object whose key starts with prefix (a plain
	// string prefix, not necessarily ending in "/"), in ascending key order,
	// with the object's size in bytes. No objects: fn is never called, nil.
	List(ctx context.Context, prefix string, fn func(key string, size int64) error) error
}

// Conditional is implemented by backends that can write conditionally, the
// way S3 does with If-None-Match: * and If-Match: <etag>. Heads use it: a
// writer reads the head and its ETag, then swaps it only if nobody moved it.
//
// An ETag is an opaque string that changes whenever the object's content
// changes; callers compare it for equality only. Keys written through these
// methods may also be written with Put (which overwrites unconditionally, as
// an S3 PUT without headers does), but fencing then no longer holds.
type Conditional interface {
	// GetWithETag is Get that also returns the object's current ETag.
	// Missing object: an error matching ErrNotFound and fs.ErrNotExist.
	GetWithETag(ctx context.Context, key string) (io.ReadCloser, string, error)
	// PutIfAbsent stores the object only if the key has no object.
	// Existing object: an error matching ErrPreconditionFailed and fs.ErrExist.
	PutIfAbsent(ctx context.Context, key string, r io.Reader) (etag string, err error)
	// CompareAndSwap replaces the object only if its current ETag is ifMatch.
	// Different ETag or missing object: an error matching ErrPreconditionFailed.
	CompareAndSwap(ctx context.Context, key, ifMatch string, r io.Reader) (etag string, err error)
}

// RangeGetter is implemented by stores that can read part of an object, the
// way S3 does with a Range header. GetRange returns the n bytes of the object
// under key that start at offset off (fewer if the object ends first; n < 0
// means to the end). An off at or beyond the end gives an empty reader, not
// an error; a negative off is an error matching ErrInvalidRange. Missing
// object: an error matching ErrNotFound and fs.ErrNotExist. The reader fails
// with ctx's error once ctx ends, as Get's does. A range is never checked
// against a content address (not even through WithSHA256, which cannot hash
// part of an object): the caller verifies what it reads.
type RangeGetter interface {
	GetRange(ctx context.Context, key string, off, n int64) (io.ReadCloser, error)
}

// GetRange reads a range of the object under key (see RangeGetter): through
// s's own GetRange if it has one, else by Get, skipping the first off bytes.
func GetRange(ctx context.Context, s Store, key string, off, n int64) (io.ReadCloser, error) {
	if rg, ok := s.(RangeGetter); ok {
		return rg.GetRange(ctx, key, off, n)
	}
	if err := CheckRange(off); err != nil {
		return nil, &Error{Op: "get-range", Key: key, Err: err}
	}
	rc, err := s.Get(ctx, key)
	if err != nil {
		return nil, err
	}
	if _, err := io.CopyN(io.Discard, rc, off); err != nil && err != io.EOF {
		rc.Close()
		return nil, &Error{Op: "get-range", Key: key, Err: err}
	}
	if n < 0 {
		return rc, nil
	}
	return struct {
		io.Reader
		io.Closer
	}{io.LimitReader(rc, n), rc}, nil
}

// CheckRange returns an error matching ErrInvalidRange if off cannot start
// a range (it is negative).
func CheckRange(off int64) error {
	if off < 0 {
		return fmt.Errorf("%w: negative offset %d", ErrInvalidRange, off)
	}
	return nil
}

var (
	// ErrInvalidRange: a ranged read with a negative offset.
	ErrInvalidRange = errors.New("invalid range")
	// ErrNotFound: the object does not exist. Errors matching it also match
	// fs.ErrNotExist, so os.IsNotExist-style callers keep working.
	ErrNotFound error = notFound{}
	// ErrInvalidKey: the key breaks the key rules (see the package doc).
	ErrInvalidKey = errors.New("invalid key")
	// ErrPreconditionFailed: a conditional write lost (ETag mismatch, or the
	// object exists for PutIfAbsent).
	ErrPreconditionFailed = errors.New("precondition failed")
	// ErrCorrupt: stored content does not match its content address.
	ErrCorrupt = errors.New("corrupt object")
)

type notFound struct{}

func (notFound) Error() string        { return "object not found" }
func (notFound) Is(target error) bool { return target == fs.ErrNotExist }

// exists marks a PutIfAbsent that found an object: it matches both
// ErrPreconditionFailed and fs.ErrExist.
type exists struct{}

func (exists) Error() string { return "precondition failed: object exists" }
func (exists) Is(target error) bool {
	return target == ErrPreconditionFailed || target == fs.ErrExist
}

// ErrExists is returned (wrapped) by PutIfAbsent when the key has an object.
var ErrExists error = exists{}

// Error records a failed operation on one key.
type Error struct {
	Op  string // "put", "get", "has", "delete", "list", "cas", ...
	Key string // the key, or the prefix for list
	Err error
}

func (e *Error) Error() string {
	return "store: cannot " + e.Op + " " + quote(e.Key) + ": " + e.Err.Error()
}
func (e *Error) Unwrap() error { return e.Err }

// InvalidKeyError names a refused key and why it was refused.
type InvalidKeyError struct {
	Key    string
	Reason string
}

func (e *InvalidKeyError) Error() string {
	return "invalid key " + quote(e.Key) + ": " + e.Reason
}
func (e *InvalidKeyError) Is(target error) bool { return target == ErrInvalidKey }

// CorruptError says an object's content does not hash to its name.
type CorruptError struct {
	Key  string
	Want string // hex digest named by the key
	Got  string // hex digest of the bytes read
}

func (e *CorruptError) Error() string {
	return "corrupt object " + quote(e.Key) + ": content hashes to sha256 " + e.Got + ", key names " + e.Want
}
func (e *CorruptError) Is(target error) bool { return target == ErrCorrupt }

// quote bounds and escapes a key for an error message: keys come from
// untrusted scripts and may be huge or hold control bytes.
func quote(s string) string {
	const max = 200
	if len(s) > max {
		return fmt.Sprintf("%q...(%d bytes)", s[:max], len(s))
	}
	return fmt.Sprintf("%q", s)
}

// Key limits. MaxKeyLen is S3's limit (1024) less room for a prefix and
// the mark store/s3 adds; MaxSegmentLen leaves room in a 255-byte Linux
// file name for the suffixes store/dir adds.
const (
	MaxKeyLen     = 960
	MaxSegmentLen = 200
)

// keyChar reports whether c may appear in a key segment.
func keyChar(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	}
	switch c {
	case '.', '_', '-', '+', '=', ',', '@':
		return true
	}
	return false
}

// ValidateKey returns nil if key is a valid key, else an *InvalidKeyError.
func ValidateKey(key string) error {
	if reason := checkKey(key); reason != "" {
		return &InvalidKeyError{Key: key, Reason: reason}
	}
	return nil
}

func checkKey(key string) string {
	switch {
	case key == "":
		return "empty"
	case len(key) > MaxKeyLen:
		return fmt.Sprintf("longer than %d bytes (%d)", MaxKeyLen, len(key))
	case key[0] == '/':
		return "starts with \"/\" (keys are relative)"
	case key[len(key)-1] == '/':
		return "ends with \"/\""
	}
	start := 0
	for i := 0; i <= len(key); i++ {
		if i < len(key) && key[i] != '/' {
			c := key[i]
			if c == 0 {
				return fmt.Sprintf("contains a NUL byte at offset %d", i)
			}
			if !keyChar(c) {
				return fmt.Sprintf("contains %q at offset %d (allowed: A-Z a-z 0-9 . _ - + = , @ and / between segments)", c, i)
			}
			continue
		}
		seg := key[start:i]
		switch {
		case seg == "":
			return fmt.Sprintf("has an empty segment at offset %d", start)
		case seg == "." || seg == "..":
			return fmt.Sprintf("has a %q segment", seg)
		case len(seg) > MaxSegmentLen:
			return fmt.Sprintf("has a segment longer than %d bytes (%d)", MaxSegmentLen, len(seg))
		}
		start = i + 1
	}
	return ""
}

// ValidatePrefix checks a List prefix: "" (everything), or a string that
// some valid key could start with, such as "chunks/" or "chunks/ab".
func ValidatePrefix(prefix string) error {
	if prefix == "" {
		return nil
	}
	bad := func(reason string) error {
		return &InvalidKeyError{Key: prefix, Reason: "as a prefix: " + reason}
	}
	if len(prefix) > MaxKeyLen {
		return bad(fmt.Sprintf("longer than %d bytes (%d)", MaxKeyLen, len(prefix)))
	}
	// Whole segments follow the key rules; the last, partial one may be
	// empty, "." or ".." (the start of ".x" or "..x").
	i := strings.LastIndexByte(prefix, '/')
	if i >= 0 {
		if i == 0 {
			return bad("starts with \"/\" (keys are relative)")
		}
		if reason := checkKey(prefix[:i]); reason != "" {
			return bad(reason)
		}
	}
	tail := prefix[i+1:]
	if tail == "" && len(prefix) >= MaxKeyLen {
		return bad(fmt.Sprintf("no key longer than %d bytes can follow it", MaxKeyLen))
	}
	if len(tail) > MaxSegmentLen {
		return bad(fmt.Sprintf("has a segment longer than %d bytes (%d)", MaxSegmentLen, len(tail)))
	}
	for j := 0; j < len(tail); j++ {
		if !keyChar(tail[j]) {
			return bad(fmt.Sprintf("contains %q at offset %d", tail[j], i+1+j))
		}
	}
	return nil
}

// ReadAll reads the whole object under key.
func ReadAll(ctx context.Context, s Store, key string) ([]byte, error) {
	rc, err := s.Get(ctx, key)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	if err != nil {
		return nil, &Error{Op: "read", Key: key, Err: err}
	}
	return b, nil
}

// PutBytes stores b under key.
func PutBytes(ctx context.Context, s Store, key string, b []byte) error {
	return s.Put(ctx, key, bytes.NewReader(b))
}

// ContextReader returns a reader that fails with ctx's error once ctx ends,
// so a long copy stops between reads. Backends wrap Put's input with it.
func ContextReader(ctx context.Context, r io.Reader) io.Reader {
	if ctx.Done() == nil {
		return r
	}
	return &ctxReader{ctx: ctx, r: r}
}

type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c *ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

// ContextReadCloser is ContextReader for a ReadCloser (Get's result). If rc
// is also an io.ReaderAt (an *os.File), so is the result, and its ReadAt
// checks ctx too.
func ContextReadCloser(ctx context.Context, rc io.ReadCloser) io.ReadCloser {
	if ctx.Done() == nil {
		return rc
	}
	c := ctxReadCloser{ctxReader{ctx: ctx, r: rc}, rc}
	if ra, ok := rc.(io.ReaderAt); ok {
		return &ctxReadCloserAt{c, ra}
	}
	return &c
}

type ctxReadCloserAt struct {
	ctxReadCloser
	ra io.ReaderAt
}

func (c *ctxReadCloserAt) ReadAt(p []byte, off int64) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.ra.ReadAt(p, off)
}

type ctxReadCloser struct {
	ctxReader
	c io.Closer
}

func (c *ctxReadCloser) Close() error { return c.c.Close() }

// LastSegment returns the part of key after its last "/".
func LastSegment(key string) string {
	return key[strings.LastIndexByte(key, '/')+1:]
}

// BodySize reports how many bytes are left in a Put body without reading
// it: from a Size() (int64, bool) method (a wrapper passing its source's
// on) or by seeking to the end and back. ok is false when neither works.
func BodySize(r io.Reader) (n int64, ok bool) {
	if s, is := r.(interface{ Size() (int64, bool) }); is {
		return s.Size()
	}
	sk, is := r.(io.Seeker)
	if !is {
		return 0, false
	}
	cur, err := sk.Seek(0, io.SeekCurrent)
	if err != nil {
		return 0, false
	}
	end, err := sk.Seek(0, io.SeekEnd)
	if _, err2 := sk.Seek(cur, io.SeekStart); err != nil || err2 != nil {
		return 0, false
	}
	return end - cur, true
}
