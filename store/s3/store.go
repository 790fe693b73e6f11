// Package s3 is a store.Store on an S3-compatible object store (AWS S3,
// versitygw, MinIO, Ceph RGW, ...), reached through minio-go.
//
// minio-go rather than aws-sdk-go-v2: it is one module made for
// S3-compatible servers (custom endpoints and path-style addressing are
// first-class), its low-level Core API exposes exactly the calls this
// backend needs (single PUT, multipart parts, ranged GET) without a
// middleware stack, and its own retries can be switched off
// (MaxRetries: 1) so store/retry is the only retry policy.
//
// # Object names
//
// A store key k lives in the bucket as the object PREFIX/k! (PREFIX/ left
// out with no prefix). The trailing "!" is not a key character, so no
// object name is ever a directory of another: "a" and "a/b" are the objects
// "a!" and "a/b!", and file-backed servers (versitygw's posix backend,
// MinIO in filesystem mode), which keep "a/b" as a file in a directory "a",
// can hold both, as the store contract requires. "!" sorts before every key
// character, so the bucket's listing order is the store's key order.
// Objects without the mark (not written by this package) are ignored by
// List. S3 limits object names to 1024 bytes; store.MaxKeyLen leaves room
// for the mark and a prefix of up to MaxPrefixLen bytes.
//
// # Writes
//
// Put reads up to PartSize bytes (default 16 MiB) into memory first. An
// object that fits is sent as one PUT carrying its sha256 as the signed
// x-amz-content-sha256, so the server refuses a body damaged in transit.
// A larger one is a multipart upload of PartSize parts (each with its own
// sha256), completed only when the reader reached its end; on any failure
// the upload is aborted. Either way S3 makes the object visible only when
// the PUT or the CompleteMultipartUpload succeeds, so a failed or cancelled
// Put leaves the key as it was. PartSize bounds a Put's memory, and with
// S3's 10,000 parts it bounds the object size (160 GiB at 16 MiB).
//
// # Reads
//
// Get and GetRange are one GET each (GetRange with a Range header); a body
// that ends before its Content-Length is an error, never a short object. A
// 404 NoSuchKey is store.ErrNotFound; a missing bucket is not (it is a
// configuration error, and must not make callers believe data is gone).
//
// # What is not here
//
// Retries: wrap the store with store/retry; errors say whether a retry may
// help (ResponseError.Transient, and transport failures). Config.PartRetry
// retries the steps of a multipart upload in place. No conditional
// writes (store.Conditional): heads and fencing live in the metadata store,
// because S3 servers have disagreed (and had bugs) on If-Match and
// If-None-Match for PUT, and content-addressed objects need no condition.
package s3

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
	"github.com/warren-sandbox/warren/store"
	"github.com/warren-sandbox/warren/store/retry"
)

var (
	_ store.Store       = (*Store)(nil)
	_ store.RangeGetter = (*Store)(nil)
)

// leafMark ends every object name (see the package doc).
const leafMark = "!"

// Part sizes: S3 wants at least 5 MiB per part but the last; the default
// keeps a pack in one PUT and a Put's memory at 16 MiB.
const (
	DefaultPartSize = 16 << 20
	MinPartSize     = 5 << 20
	MaxPartSize     = 1 << 30
)

// MaxPrefixLen is the longest Prefix: with "/", the longest key and the
// mark it fills S3's 1024-byte object name.
const MaxPrefixLen = 1024 - store.MaxKeyLen - 2

// Config says where the store lives and how to reach it.
type Config struct {
	// Endpoint is the server's URL, http:// or https://, with no path
	// (e.g. http://127.0.0.1:7070, https://s3.eu-west-1.amazonaws.com).
	Endpoint string
	// Bucket must exist; New checks it.
	Bucket string
	// Prefix, if set, is a valid store key under which every object lives.
	Prefix string
	// Region signs requests (default us-east-1).
	Region string
	// PathStyle puts the bucket in the URL path (http://host/bucket/key)
	// instead of the host name; most servers other than AWS need it.
	PathStyle bool
	// Credentials. Both keys empty means anonymous requests.
	AccessKey, SecretKey, SessionToken string
	// PartSize is the multipart threshold and part size (default
	// DefaultPartSize, between MinPartSize and MaxPartSize).
	PartSize int64
	// Transport carries the requests (nil: one with dial, TLS and
	// response-header timeouts).
	Transport http.RoundTripper
	// IdleTimeout aborts a request that makes no progress (no body bytes
	// sent or received, no answer) for this long, as a transient
	// *TransportError, so a stalled server (or a paused one) cannot hang a
	// caller without a deadline (default 30 s). A Get reader left unread
	// that long fails the same way (store/retry resumes such reads of
	// content-addressed keys).
	IdleTimeout time.Duration
	// PartRetry, if set, retries each request of a multipart upload in
	// place (the part is in memory), so a failure late in a large upload
	// does not restart it from its first byte or, for a body that cannot
	// be replayed, fail it. Whole operations are store/retry's job.
	PartRetry *retry.Policy
}

// ParseURL splits s3://BUCKET/PREFIX into its bucket and prefix (the
// prefix may be empty).
func ParseURL(s string) (bucket, prefix string, err error) {
	rest, ok := strings.CutPrefix(s, "s3://")
	if !ok {
		return "", "", fmt.Errorf("blob store URL %q: want s3://BUCKET[/PREFIX]", s)
	}
	bucket, prefix, _ = strings.Cut(rest, "/")
	prefix = strings.TrimSuffix(prefix, "/")
	if err := checkBucket(bucket); err != nil {
		return "", "", fmt.Errorf("blob store URL %q: %w", s, err)
	}
	if err := checkPrefix(prefix); err != nil {
		return "", "", fmt.Errorf("blob store URL %q: %w", s, err)
	}
	return bucket, prefix, nil
}

func checkPrefix(p string) error {
	if p == "" {
		return nil
	}
	if len(p) > MaxPrefixLen {
		return fmt.Errorf("prefix %q: longer than %d bytes", p, MaxPrefixLen)
	}
	if err := store.ValidateKey(p); err != nil {
		return fmt.Errorf("prefix: %w", err)
	}
	return nil
}

// checkBucket applies S3's bucket naming rules (3-63 characters of a-z,
// 0-9, "." and "-", starting and ending with a letter or digit).
func checkBucket(b string) error {
	if len(b) < 3 || len(b) > 63 {
		return fmt.Errorf("bucket name %q: want 3 to 63 characters", b)
	}
	for i := 0; i < len(b); i++ {
		c := b[i]
		alnum := 'a' <= c && c <= 'z' || '0' <= c && c <= '9'
		if !alnum && (c != '.' && c != '-' || i == 0 || i == len(b)-1) {
			return fmt.Errorf("bucket name %q: only a-z, 0-9, '.' and '-' (not at the ends)", b)
		}
	}
	return nil
}

// Store is a blob store in one bucket under one prefix. Safe for
// concurrent use.
type Store struct {
	client    *minio.Client
	core      minio.Core
	bucket    string
	root      string // Prefix + "/", or ""
	partSize  int64
	bufs      sync.Pool // *[]byte of partSize
	partRetry *retry.Policy
	idle      time.Duration
	closeIdle func()
}

// New connects to the server and checks that the bucket exists and the
// credentials may read it.
func New(ctx context.Context, cfg Config) (*Store, error) {
	u, err := url.Parse(cfg.Endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("s3 endpoint %q: want http://HOST[:PORT] or https://HOST[:PORT]", cfg.Endpoint)
	}
	if u.Path != "" && u.Path != "/" || u.RawQuery != "" || u.User != nil {
		return nil, fmt.Errorf("s3 endpoint %q: no path, query or user info allowed", cfg.Endpoint)
	}
	if err := checkBucket(cfg.Bucket); err != nil {
		return nil, err
	}
	if err := checkPrefix(cfg.Prefix); err != nil {
		return nil, err
	}
	if (cfg.AccessKey == "") != (cfg.SecretKey == "") {
		return nil, errors.New("s3 credentials: set both the access key and the secret key (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY), or neither")
	}
	if cfg.Region == "" {
		cfg.Region = "us-east-1"
	}
	switch {
	case cfg.PartSize == 0:
		cfg.PartSize = DefaultPartSize
	case cfg.PartSize < MinPartSize || cfg.PartSize > MaxPartSize:
		return nil, fmt.Errorf("s3 part size %d: want %d to %d bytes", cfg.PartSize, MinPartSize, MaxPartSize)
	}
	if cfg.IdleTimeout <= 0 {
		cfg.IdleTimeout = 30 * time.Second
	}
	s := &Store{bucket: cfg.Bucket, partSize: cfg.PartSize, partRetry: cfg.PartRetry, idle: cfg.IdleTimeout, closeIdle: func() {}}
	if cfg.Prefix != "" {
		s.root = cfg.Prefix + "/"
	}
	if cfg.Transport == nil {
		t := defaultTransport()
		cfg.Transport = t
		s.closeIdle = t.CloseIdleConnections
	}
	lookup := minio.BucketLookupDNS
	if cfg.PathStyle {
		lookup = minio.BucketLookupPath
	}
	s.client, err = minio.New(u.Host, &minio.Options{
		Creds:        credentials.NewStaticV4(cfg.AccessKey, cfg.SecretKey, cfg.SessionToken),
		Secure:       u.Scheme == "https",
		Transport:    cfg.Transport,
		Region:       cfg.Region,
		BucketLookup: lookup,
		MaxRetries:   1, // store/retry decides
	})
	if err != nil {
		return nil, fmt.Errorf("s3 endpoint %q: %w", cfg.Endpoint, err)
	}
	s.core = minio.Core{Client: s.client}
	var ok bool
	err = s.timed(ctx, func(rctx context.Context, _ *watchdog) (err error) {
		ok, err = s.client.BucketExists(rctx, s.bucket)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("s3 bucket %q at %s: %w", s.bucket, cfg.Endpoint, err)
	}
	if !ok {
		return nil, fmt.Errorf("s3 bucket %q does not exist at %s", s.bucket, cfg.Endpoint)
	}
	return s, nil
}

func defaultTransport() *http.Transport {
	return &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:          256,
		MaxIdleConnsPerHost:   64,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ResponseHeaderTimeout: 60 * time.Second,
		// Bodies arrive as stored, so Content-Length checks a GET's length.
		DisableCompression: true,
	}
}

// Close releases idle connections. The store must not be used afterwards.
func (s *Store) Close() error { s.closeIdle(); return nil }

func (s *Store) object(key string) string { return s.root + key + leafMark }

// Put implements store.Store (see the package doc for single and
// multipart uploads).
func (s *Store) Put(ctx context.Context, key string, r io.Reader) error {
	if err := store.ValidateKey(key); err != nil {
		return &store.Error{Op: "put", Key: key, Err: err}
	}
	if err := ctx.Err(); err != nil {
		return &store.Error{Op: "put", Key: key, Err: err}
	}
	size, sized := store.BodySize(r)
	r = store.ContextReader(ctx, r)
	if sized && size < s.partSize {
		// A body of known size below a part (every vfs pack): read it
		// into exactly its size, not a pooled part buffer, so a node's
		// uploads in flight cost what they carry.
		buf := make([]byte, size)
		if _, err := io.ReadFull(r, buf); err != nil {
			return &store.Error{Op: "put", Key: key, Err: err}
		}
		var one [1]byte
		if m, _ := r.Read(one[:]); m != 0 {
			return &store.Error{Op: "put", Key: key, Err: errors.New("the body is longer than it said")}
		}
		return s.putOnce(ctx, key, buf)
	}
	bp := s.buf()
	defer s.bufs.Put(bp)
	buf := *bp
	n, err := io.ReadFull(r, buf)
	switch err {
	case io.EOF, io.ErrUnexpectedEOF:
		return s.putOnce(ctx, key, buf[:n])
	case nil:
		// Exactly one part's worth, or more: peek to tell.
		var one [1]byte
		m, err := io.ReadFull(r, one[:])
		switch {
		case err == io.EOF:
			return s.putOnce(ctx, key, buf)
		case err != nil:
			return &store.Error{Op: "put", Key: key, Err: err}
		}
		return s.putMultipart(ctx, key, buf, io.MultiReader(bytes.NewReader(one[:m]), r))
	default:
		return &store.Error{Op: "put", Key: key, Err: err}
	}
}

func (s *Store) buf() *[]byte {
	if bp, ok := s.bufs.Get().(*[]byte); ok {
		return bp
	}
	b := make([]byte, s.partSize)
	return &b
}

func sha256Hex(b []byte) string { h := sha256.Sum256(b); return hex.EncodeToString(h[:]) }

func (s *Store) putOnce(ctx context.Context, key string, b []byte) error {
	sum := sha256Hex(b)
	err := s.timed(ctx, func(rctx context.Context, w *watchdog) error {
		_, err := s.core.PutObject(rctx, s.bucket, s.object(key), w.reader(bytes.NewReader(b)), int64(len(b)), "", sum,
			minio.PutObjectOptions{DisableContentSha256: true, ContentType: "application/octet-stream"})
		return err
	})
	if err != nil {
		return &store.Error{Op: "put", Key: key, Err: err}
	}
	return nil
}

// putMultipart uploads first (a full part) and the rest of r as parts,
// reusing first's buffer; it aborts the upload on any failure.
func (s *Store) putMultipart(ctx context.Context, key string, first []byte, r io.Reader) (err error) {
	obj := s.object(key)
	step := func(fn func() error) error {
		if s.partRetry == nil {
			return fn()
		}
		return retry.Do(ctx, *s.partRetry, "put", key, fn)
	}
	var id string
	err = step(func() (err error) {
		// A lost answer here leaves an upload nobody completes; a bucket
		// lifecycle rule (AbortIncompleteMultipartUpload) reclaims it.
		return s.timed(ctx, func(rctx context.Context, _ *watchdog) (err error) {
			id, err = s.core.NewMultipartUpload(rctx, s.bucket, obj, minio.PutObjectOptions{ContentType: "application/octet-stream"})
			return err
		})
	})
	if err != nil {
		return &store.Error{Op: "put", Key: key, Err: err}
	}
	defer func() {
		if err != nil {
			// Best effort, on a fresh context: the caller's may be gone.
			actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
			s.core.AbortMultipartUpload(actx, s.bucket, obj, id)
			cancel()
		}
	}()
	var parts []minio.CompletePart
	var total int64
	part := first
	for num := 1; ; num++ {
		sum := sha256Hex(part)
		var p minio.ObjectPart
		err := step(func() error {
			return s.timed(ctx, func(rctx context.Context, w *watchdog) (err error) {
				p, err = s.core.PutObjectPart(rctx, s.bucket, obj, id, num, w.reader(bytes.NewReader(part)), int64(len(part)),
					minio.PutObjectPartOptions{Sha256Hex: sum, DisableContentSha256: true})
				return err
			})
		})
		if err != nil {
			return &store.Error{Op: "put", Key: key, Err: err}
		}
		parts = append(parts, minio.CompletePart{PartNumber: num, ETag: p.ETag})
		total += int64(len(part))
		n, rerr := io.ReadFull(r, first[:cap(first)])
		if rerr != nil && rerr != io.EOF && rerr != io.ErrUnexpectedEOF {
			return &store.Error{Op: "put", Key: key, Err: rerr}
		}
		if n == 0 {
			break
		}
		if num == 10000 {
			return &store.Error{Op: "put", Key: key, Err: fmt.Errorf("%w: more than 10000 parts of %d bytes", store.ErrTooLarge, s.partSize)}
		}
		part = first[:n]
	}
	if err := ctx.Err(); err != nil {
		return &store.Error{Op: "put", Key: key, Err: err}
	}
	tries := 0
	err = step(func() error {
		tries++
		err := s.timed(ctx, func(rctx context.Context, _ *watchdog) error {
			_, err := s.core.CompleteMultipartUpload(rctx, s.bucket, obj, id, parts, minio.PutObjectOptions{})
			return err
		})
		if err == nil {
			return nil
		}
		if tries > 1 && errors.Is(err, store.ErrNotFound) {
			// NoSuchUpload on a retry: the earlier Complete landed and its
			// answer was lost. The object of that size is ours (or a
			// concurrent Put's, which the contract lets win).
			if info, serr := s.stat(ctx, "put", key); serr == nil && info.Size == total {
				return nil
			}
		}
		return err
	})
	if err != nil {
		return &store.Error{Op: "put", Key: key, Err: err}
	}
	return nil
}

// Get implements store.Store.
func (s *Store) Get(ctx context.Context, key string) (io.ReadCloser, error) {
	return s.get(ctx, "get", key, minio.GetObjectOptions{})
}

func (s *Store) get(ctx context.Context, op, key string, opts minio.GetObjectOptions) (io.ReadCloser, error) {
	if err := store.ValidateKey(key); err != nil {
		return nil, &store.Error{Op: op, Key: key, Err: err}
	}
	if err := ctx.Err(); err != nil {
		return nil, &store.Error{Op: op, Key: key, Err: err}
	}
	rctx, w := s.watch(ctx)
	body, info, _, err := s.core.GetObject(rctx, s.bucket, s.object(key), opts)
	if err != nil {
		w.stop()
		return nil, &store.Error{Op: op, Key: key, Err: s.mapErrW(ctx, w, err)}
	}
	return &reader{ctx: ctx, w: w, key: key, body: body, left: info.Size}, nil
}

// GetRange implements store.RangeGetter with one ranged GET.
func (s *Store) GetRange(ctx context.Context, key string, off, n int64) (io.ReadCloser, error) {
	const op = "get-range"
	if err := store.CheckRange(off); err != nil {
		return nil, &store.Error{Op: op, Key: key, Err: err}
	}
	if err := store.ValidateKey(key); err != nil {
		return nil, &store.Error{Op: op, Key: key, Err: err}
	}
	if n == 0 {
		// No bytes to fetch, but a missing object is still an error.
		if _, err := s.stat(ctx, op, key); err != nil {
			return nil, err
		}
		return io.NopCloser(strings.NewReader("")), nil
	}
	var opts minio.GetObjectOptions
	switch {
	case n > 0 && n <= math.MaxInt64-off:
		opts.SetRange(off, off+n-1)
	case off > 0:
		opts.SetRange(off, 0) // bytes=off-
	}
	rc, err := s.get(ctx, op, key, opts)
	var re *ResponseError
	if errors.As(err, &re) && re.StatusCode == http.StatusRequestedRangeNotSatisfiable {
		// The range starts at or past the end (an empty object has no
		// satisfiable range at all): an empty read, as the contract says.
		return io.NopCloser(strings.NewReader("")), nil
	}
	return rc, err
}

// reader checks ctx before each read and that the body is as long as its
// Content-Length said.
type reader struct {
	ctx  context.Context
	w    *watchdog // stopped by Close
	key  string
	body io.ReadCloser
	left int64
}

func (r *reader) Read(p []byte) (int, error) {
	if err := r.ctx.Err(); err != nil {
		return 0, err
	}
	n, err := r.body.Read(p)
	if n > 0 {
		r.w.kick()
	}
	r.left -= int64(n)
	switch {
	case err == io.EOF && r.left > 0:
		err = io.ErrUnexpectedEOF
	case err == nil || err == io.EOF:
		return n, err
	}
	if cerr := r.ctx.Err(); cerr != nil {
		return n, cerr
	}
	if r.w.fired.Load() {
		return n, &store.Error{Op: "read", Key: r.key, Err: r.w.timeout()}
	}
	return n, &store.Error{Op: "read", Key: r.key, Err: &TransportError{Err: err}}
}

func (r *reader) Close() error { r.w.stop(); return r.body.Close() }

func (s *Store) stat(ctx context.Context, op, key string) (minio.ObjectInfo, error) {
	if err := ctx.Err(); err != nil {
		return minio.ObjectInfo{}, &store.Error{Op: op, Key: key, Err: err}
	}
	var info minio.ObjectInfo
	err := s.timed(ctx, func(rctx context.Context, _ *watchdog) (err error) {
		info, err = s.client.StatObject(rctx, s.bucket, s.object(key), minio.StatObjectOptions{})
		return err
	})
	if err != nil {
		return info, &store.Error{Op: op, Key: key, Err: err}
	}
	return info, nil
}

// Has implements store.Store with a HEAD request.
func (s *Store) Has(ctx context.Context, key string) (bool, error) {
	if err := store.ValidateKey(key); err != nil {
		return false, &store.Error{Op: "has", Key: key, Err: err}
	}
	_, err := s.stat(ctx, "has", key)
	if errors.Is(err, store.ErrNotFound) {
		return false, nil
	}
	return err == nil, err
}

// Delete implements store.Store (S3 answers a DELETE of a missing object
// with success).
func (s *Store) Delete(ctx context.Context, key string) error {
	if err := store.ValidateKey(key); err != nil {
		return &store.Error{Op: "delete", Key: key, Err: err}
	}
	if err := ctx.Err(); err != nil {
		return &store.Error{Op: "delete", Key: key, Err: err}
	}
	err := s.timed(ctx, func(rctx context.Context, _ *watchdog) error {
		return s.client.RemoveObject(rctx, s.bucket, s.object(key), minio.RemoveObjectOptions{})
	})
	if err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return nil
		}
		return &store.Error{Op: "delete", Key: key, Err: err}
	}
	return nil
}

// List implements store.Store with ListObjectsV2 pages (1000 keys each);
// fn runs between page requests, so it may call the store.
func (s *Store) List(ctx context.Context, prefix string, fn func(key string, size int64) error) error {
	if err := store.ValidatePrefix(prefix); err != nil {
		return &store.Error{Op: "list", Key: prefix, Err: err}
	}
	if err := ctx.Err(); err != nil {
		return &store.Error{Op: "list", Key: prefix, Err: err}
	}
	owner := false
	rctx, w := s.watch(ctx)
	defer w.stop()
	for obj := range s.client.ListObjectsIter(rctx, s.bucket, minio.ListObjectsOptions{
		Prefix: s.root + prefix, Recursive: true, FetchOwner: &owner,
	}) {
		if obj.Err != nil {
			return &store.Error{Op: "list", Key: prefix, Err: s.mapErrW(ctx, w, obj.Err)}
		}
		key, ok := strings.CutSuffix(strings.TrimPrefix(obj.Key, s.root), leafMark)
		if !ok || store.ValidateKey(key) != nil {
			continue // not an object of this store
		}
		w.pause() // fn's time is not the server's
		if err := fn(key, obj.Size); err != nil {
			return err
		}
		w.kick()
	}
	// The iterator ends silently when ctx ends, or the watchdog fires.
	if err := ctx.Err(); err != nil {
		return &store.Error{Op: "list", Key: prefix, Err: err}
	}
	if w.fired.Load() {
		return &store.Error{Op: "list", Key: prefix, Err: w.timeout()}
	}
	return nil
}

func init() {
	// minio-go's request loop sleeps up to DefaultRetryUnit after its last
	// attempt too, even with MaxRetries 1 (newRetryTimer in its retry.go):
	// 100 ms on average added to every transient failure. store/retry owns
	// the backoff here, so minio-go's is zeroed. Set before any request, so
	// no reader races with this write.
	minio.DefaultRetryUnit = 0
}
