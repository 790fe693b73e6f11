package postgres

import (
	"context"
	"errors"
	"testing"

	"github.com/warren-sandbox/warren/internal/pgtest"
	"github.com/warren-sandbox/warren/sandbox"
)

// TestLockGC: one collector at a time across connections (as two nodes
// are); released, the next one gets it.
func TestLockGC(t *testing.T) {
	url := pgtest.New(t)
	a, b := open(t, url), open(t, url)
	ctx := context.Background()
	unlock, err := a.LockGC(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.LockGC(ctx); !errors.Is(err, sandbox.ErrGCBusy) {
		t.Fatalf("a second collector: %v, want ErrGCBusy", err)
	}
	unlock()
	unlock2, err := b.LockGC(ctx)
	if err != nil {
		t.Fatalf("after release: %v", err)
	}
	unlock2()
}
