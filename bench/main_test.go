package bench

import (
	"os"
	"testing"

	"github.com/warren-sandbox/warren/native"
)

func TestMain(m *testing.M) {
	native.MaybeInit() // native_exec's workspace init is this test binary re-executed
	os.Exit(m.Run())
}
