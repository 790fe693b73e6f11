package sandbox_test

import (
	"os"
	"testing"

	"github.com/warren-sandbox/warren/native"
)

func TestMain(m *testing.M) {
	native.MaybeInit() // a native workspace's init is this binary re-executed
	code := m.Run()
	closeNativeRuntime()
	os.Exit(code)
}
