package api

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/containerd/errdefs"
)

// Error classes that errdefs lacks but the HTTP API distinguishes. Like the
// errdefs classes they are matched with errors.Is on both sides of the wire.
var (
	// ErrTooLarge: a request body or an argument is over its size limit (413).
	ErrTooLarge = errors.New("too large")
	// ErrUnprocessable: the request is well formed but names something that
	// cannot be done as asked (422), e.g. a relative path or a count of 0.
	ErrUnprocessable = errors.New("unprocessable")
	// ErrInsufficientStorage: a sandbox's disk quota is full (507).
	ErrInsufficientStorage = errors.New("insufficient storage")
	// ErrOverloaded: the node sheds load (memory pressure) and refuses new
	// work for now (503 with Retry-After); the same request later, or on
	// another node, succeeds. Distinct from errdefs.ErrUnavailable (the
	// node is going away) so a client can tell "retry soon" from "gone".
	ErrOverloaded = errors.New("overloaded")
	// ErrWriteBudget: the sandbox or node holds as many bytes not yet
	// committed to the blob store as its budget allows, and a commit did
	// not free room within the bounded wait (507 with Retry-After). The
	// write was refused and changed nothing; retried once the commit
	// lands, it succeeds. It is also an ErrInsufficientStorage.
	ErrWriteBudget = fmt.Errorf("write budget exhausted: %w", ErrInsufficientStorage)
)

// RetryAfter is what an error that says when to try again implements
// (the server sends it as Retry-After, in whole seconds).
type RetryAfter interface {
	RetryAfter() time.Duration
}

// RetryAfterSeconds returns the Retry-After of err in whole seconds (at
// least 1), or 0 when err does not say.
func RetryAfterSeconds(err error) int {
	var ra RetryAfter
	if !errors.As(err, &ra) {
		return 0
	}
	return max(1, int((ra.RetryAfter()+time.Second-1)/time.Second))
}

// codes is the one table mapping error classes to wire codes and HTTP
// statuses; ToHTTP and ToNative both read it, so the mapping lives in one
// place (the containerd errdefs/pkg/http idea). Order matters: the first
// class an error matches wins.
var codes = []struct {
	class  error
	code   string
	status int
}{
	{ErrTooLarge, "too_large", http.StatusRequestEntityTooLarge},
	{ErrUnprocessable, "unprocessable", http.StatusUnprocessableEntity},
	{ErrWriteBudget, "write_budget_exhausted", http.StatusInsufficientStorage},
	{ErrInsufficientStorage, "insufficient_storage", http.StatusInsufficientStorage},
	{errdefs.ErrInvalidArgument, "invalid_argument", http.StatusBadRequest},
	{errdefs.ErrUnauthenticated, "unauthenticated", http.StatusUnauthorized},
	{errdefs.ErrPermissionDenied, "permission_denied", http.StatusForbidden},
	{errdefs.ErrNotFound, "not_found", http.StatusNotFound},
	{errdefs.ErrAlreadyExists, "already_exists", http.StatusConflict},
	{errdefs.ErrConflict, "conflict", http.StatusConflict},
	{errdefs.ErrFailedPrecondition, "failed_precondition", http.StatusConflict},
	{errdefs.ErrResourceExhausted, "resource_exhausted", http.StatusTooManyRequests},
	{errdefs.ErrNotImplemented, "not_implemented", http.StatusNotImplemented},
	{errdefs.ErrUnavailable, "unavailable", http.StatusServiceUnavailable},
	// After ErrUnavailable: an unknown code with a bare 503 means "gone".
	{ErrOverloaded, "overloaded", http.StatusServiceUnavailable},
	{context.DeadlineExceeded, "deadline_exceeded", http.StatusGatewayTimeout},
	{context.Canceled, "canceled", 499},
}

// ErrorBody is the JSON body of every error response:
// {"error":{"code":"not_found","message":"..."}}.
type ErrorBody struct {
	Error ErrorDetail `json:"error"`
}

// ErrorDetail names the class (code) and says what went wrong (message).
type ErrorDetail struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// ToHTTP returns the status and wire code for err; unclassified errors are
// bugs and map to 500 "internal".
func ToHTTP(err error) (status int, code string) {
	for _, c := range codes {
		if errors.Is(err, c.class) {
			return c.status, c.code
		}
	}
	return http.StatusInternalServerError, "internal"
}

// ToNative turns a wire error back into an error of its class, so
// errors.Is(err, errdefs.ErrNotFound) holds on the client as on the server.
// Its text is the server's message (which already names the class).
func ToNative(status int, code, message string) error {
	for _, c := range codes {
		if c.code == code {
			return &wireError{c.class, message}
		}
	}
	for _, c := range codes { // an unknown code: fall back on the status
		if c.status == status {
			return &wireError{c.class, message}
		}
	}
	return fmt.Errorf("%w: %s (HTTP %d %s)", errdefs.ErrUnknown, message, status, code)
}

// wireError is an error received from the server.
type wireError struct {
	class error
	msg   string
}

func (e *wireError) Error() string { return e.msg }
func (e *wireError) Unwrap() error { return e.class }

// Errorf returns an error of class with a formatted message, e.g.
// Errorf(errdefs.ErrNotFound, "sandbox %q", id).
func Errorf(class error, format string, args ...any) error {
	return fmt.Errorf("%w: %s", class, fmt.Sprintf(format, args...))
}
