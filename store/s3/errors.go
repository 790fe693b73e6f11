package s3

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"syscall"

	"github.com/minio/minio-go/v7"
	"github.com/warren-sandbox/warren/store"
)

// ResponseError is an error answer from the server.
type ResponseError struct {
	StatusCode int    // HTTP status
	Code       string // S3 error code, e.g. "SlowDown", "AccessDenied"
	Message    string
	RequestID  string
}

func (e *ResponseError) Error() string {
	msg := fmt.Sprintf("S3 error %d", e.StatusCode)
	if e.Code != "" {
		msg += " " + e.Code
	}
	if e.Message != "" {
		msg += ": " + e.Message
	}
	if e.RequestID != "" {
		msg += " (request " + e.RequestID + ")"
	}
	return msg
}

// Transient reports whether the same request may succeed later: server
// errors (5xx), throttling (429, SlowDown) and request timeouts. Client
// errors (auth, bad request, missing bucket) are not.
func (e *ResponseError) Transient() bool {
	switch e.Code {
	case "SlowDown", "RequestTimeout", "InternalError", "ServiceUnavailable":
		return true
	}
	return e.StatusCode >= 500 || e.StatusCode == http.StatusTooManyRequests || e.StatusCode == http.StatusRequestTimeout
}

// TransportError is a failure to talk to the server at all, or a
// connection lost mid-response: refused or reset connections, timeouts,
// truncated bodies. A retry may cure it.
type TransportError struct{ Err error }

func (e *TransportError) Error() string   { return "S3 transport: " + e.Err.Error() }
func (e *TransportError) Unwrap() error   { return e.Err }
func (e *TransportError) Transient() bool { return true }

// ErrNoSuchBucket: the bucket is gone (a configuration error, not a
// missing object).
var ErrNoSuchBucket = errors.New("no such bucket")

// mapErr turns a minio-go error into the store's terms: ctx's own error
// when ctx ended, store.ErrNotFound for a missing key, *ResponseError for
// other answers, *TransportError for failed exchanges.
func (s *Store) mapErr(ctx context.Context, err error) error {
	if cerr := ctx.Err(); cerr != nil {
		return cerr
	}
	var er minio.ErrorResponse
	if errors.As(err, &er) && er.StatusCode != 0 {
		switch {
		case er.Code == "NoSuchBucket":
			return fmt.Errorf("%w %q", ErrNoSuchBucket, s.bucket)
		case er.StatusCode == http.StatusNotFound:
			return store.ErrNotFound
		}
		return &ResponseError{StatusCode: er.StatusCode, Code: er.Code, Message: er.Message, RequestID: er.RequestID}
	}
	var ue *url.Error
	var ne net.Error
	if errors.As(err, &ue) || errors.As(err, &ne) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET) {
		if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			return err
		}
		return &TransportError{Err: err}
	}
	return err // refused by minio-go before sending
}
