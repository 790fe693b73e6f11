package awk_test

import (
	"strings"
	"testing"

	"github.com/warren-sandbox/warren/commands"
	"github.com/warren-sandbox/warren/commands/awk"
	"github.com/warren-sandbox/warren/commands/coreutils/cmdtest"
)

// BenchmarkMeter compares a compute-bound program with and without the
// memory meter (go test -bench Meter ./commands/awk).
func BenchmarkMeter(b *testing.B) {
	tab := commands.Table{}
	awk.Register(tab)
	progs := map[string]string{
		"loop":  `BEGIN{for(i=0;i<200000;i++) s+=i; print s}`,
		"array": `BEGIN{for(i=0;i<50000;i++) a[i%500]=a[i%500] "x"; print length(a[1])}`,
		"input": `{n[$1]+=length($0)} END{for(k in n) c++; print c}`,
	}
	input := strings.Repeat("alpha beta gamma\ndelta epsilon\n", 20000)
	for _, name := range []string{"loop", "array", "input"} {
		for _, metered := range []bool{false, true} {
			label := name + "/unmetered"
			if metered {
				label = name + "/metered"
			}
			b.Run(label, func(b *testing.B) {
				files := cmdtest.NewFiles(nil)
				for b.Loop() {
					var out, errb strings.Builder
					inv := files.Invocation([]string{"awk", progs[name]}, strings.NewReader(input), &out, &errb)
					if metered {
						inv.Sys = &commands.System{Memory: commands.NewMemory(256 << 20)}
					}
					if code := tab["awk"](b.Context(), inv); code != 0 {
						b.Fatalf("status %d: %s", code, errb.String())
					}
				}
			})
		}
	}
}
