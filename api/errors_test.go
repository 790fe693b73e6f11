package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/containerd/errdefs"
)

// TestErrors_RoundTrip: every class survives ToHTTP then ToNative, so
// errors.Is works the same on both sides of the wire.
func TestErrors_RoundTrip(t *testing.T) {
	for _, c := range codes {
		err := fmt.Errorf("doing x: %w", Errorf(c.class, "thing %q", "y"))
		status, code := ToHTTP(err)
		if status != c.status || code != c.code {
			t.Fatalf("%v: ToHTTP = %d %s, want %d %s", c.class, status, code, c.status, c.code)
		}
		back := ToNative(status, code, err.Error())
		if !errors.Is(back, c.class) || back.Error() != err.Error() {
			t.Fatalf("%v: ToNative = %v (class lost or text changed)", c.class, back)
		}
		if firstWithStatus(c.status) == c.class && !errors.Is(ToNative(status, "unknown_code", "m"), c.class) {
			t.Fatalf("%v: an unknown code does not fall back on the status %d", c.class, status)
		}
	}
	if s, code := ToHTTP(errors.New("bug")); s != 500 || code != "internal" {
		t.Fatalf("unclassified error: %d %s", s, code)
	}
	if s, _ := ToHTTP(fmt.Errorf("wrapped: %w", context.DeadlineExceeded)); s != 504 {
		t.Fatalf("deadline: %d", s)
	}
	if !errors.Is(ToNative(418, "", "teapot"), errdefs.ErrUnknown) {
		t.Fatal("an unknown status is not ErrUnknown")
	}
}

func TestDuration_JSON(t *testing.T) {
	cases := []struct {
		in   string
		want time.Duration
		bad  bool
	}{
		{`"15s"`, 15 * time.Second, false},
		{`"250ms"`, 250 * time.Millisecond, false},
		{`2`, 2 * time.Second, false},
		{`0.5`, 500 * time.Millisecond, false},
		{`"soon"`, 0, true},
		{`true`, 0, true},
	}
	for _, c := range cases {
		var d Duration
		err := json.Unmarshal([]byte(c.in), &d)
		if (err != nil) != c.bad || (!c.bad && d.Std() != c.want) {
			t.Fatalf("%s: %v %v", c.in, d.Std(), err)
		}
	}
	b, _ := json.Marshal(Duration(1500 * time.Millisecond))
	if string(b) != `"1.5s"` {
		t.Fatalf("marshal: %s", b)
	}
}

// firstWithStatus is the class an unknown code with this status falls
// back on (several classes share 409 and 503).
func firstWithStatus(status int) error {
	for _, c := range codes {
		if c.status == status {
			return c.class
		}
	}
	return nil
}

func TestLimits_WithDefaults(t *testing.T) {
	off := false
	got := Limits{Timeout: Duration(time.Second), Native: &off, Pids: 7}.WithDefaults(DefaultLimits)
	want := DefaultLimits
	want.Timeout, want.Native, want.Pids = Duration(time.Second), &off, 7
	if got.Timeout != want.Timeout || got.Pids != 7 || got.Native != &off || got.MaxMemoryBytes != want.MaxMemoryBytes ||
		got.DiskBytes != want.DiskBytes || got.Jobs != want.Jobs || got.CPUs != want.CPUs || got.MaxOutputBytes != want.MaxOutputBytes {
		t.Fatalf("WithDefaults = %+v, want %+v", got, want)
	}
	// Every limit has a default: a zero field in DefaultLimits would be
	// a limit that is off unless asked for (issue 12).
	z := Limits{}.WithDefaults(DefaultLimits)
	if z.Timeout == 0 || z.MaxOutputBytes == 0 || z.MaxMemoryBytes == 0 || z.DiskBytes == 0 || z.DiskInodes == 0 ||
		z.Jobs == 0 || z.CPUs == 0 || z.Pids == 0 {
		t.Fatalf("a limit without a default: %+v", z)
	}
}

type retryErr struct{ d time.Duration }

func (e retryErr) Error() string             { return "later" }
func (e retryErr) RetryAfter() time.Duration { return e.d }
func (e retryErr) Unwrap() error             { return ErrWriteBudget }

func TestRetryAfterSeconds(t *testing.T) {
	cases := []struct {
		err  error
		want int
	}{
		{errors.New("plain"), 0},
		{fmt.Errorf("wrapped: %w", retryErr{2500 * time.Millisecond}), 3},
		{retryErr{time.Millisecond}, 1},
	}
	for _, c := range cases {
		if got := RetryAfterSeconds(c.err); got != c.want {
			t.Errorf("RetryAfterSeconds(%v) = %d, want %d", c.err, got, c.want)
		}
	}
	if s, code := ToHTTP(retryErr{time.Second}); s != 507 || code != "write_budget_exhausted" {
		t.Errorf("a budget error maps to %d %s, want 507 write_budget_exhausted", s, code)
	}
	if !errors.Is(retryErr{}, ErrInsufficientStorage) {
		t.Error("a budget error is not an ErrInsufficientStorage")
	}
}
