package native

import (
	"os"
	"testing"
)

func BenchmarkCgroupCycle(b *testing.B) {
	if os.Geteuid() != 0 {
		b.Skip("needs root")
	}
	cg, err := detectCgroups("warren-native-cgbench")
	if err != nil {
		b.Skip(err)
	}
	defer func() {
		for _, h := range cg.hier {
			os.Remove(h.parent)
		}
	}()
	for i := 0; i < b.N; i++ {
		if err := cg.create("x", false); err != nil {
			b.Fatal(err)
		}
		if err := cg.setLimits("x", Limits{Memory: 1 << 30, Pids: 100, CPUs: 1}); err != nil {
			b.Fatal(err)
		}
		fs, _ := cg.procsFiles("x")
		closeAll(fs)
		cg.cpuTime("x")
		cg.oomKills("x")
		cg.pidsOf("x")
		if err := cg.remove("x"); err != nil {
			b.Fatal(err)
		}
	}
}
