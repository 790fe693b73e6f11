package sandbox_test

import (
	"os"
	"testing"

	"github.com/warren-sandbox/warren/internal/pgtest"
	"github.com/warren-sandbox/warren/meta/postgres"
	"github.com/warren-sandbox/warren/native"
)

func TestMain(m *testing.M) {
	native.MaybeInit() // a native workspace's init is this binary re-executed
	code := pgtest.Run(m, postgres.Migrate)
	closeNativeRuntime()
	os.Exit(code)
}
