package sandbox_test

import (
	"testing"

	"github.com/warren-sandbox/warren/sandbox"
	"github.com/warren-sandbox/warren/sandbox/metatest"
)

func TestMemMeta_Conformance(t *testing.T) {
	metatest.RunSuite(t, func(t *testing.T) metatest.Fixture {
		return metatest.Fixture{Meta: sandbox.NewMemMeta()}
	})
}

func BenchmarkMemMeta(b *testing.B) {
	metatest.RunBenchmarks(b, func(*testing.B) sandbox.DurableMeta { return sandbox.NewMemMeta() })
}
