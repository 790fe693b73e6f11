package sed_test

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/commands/coreutils/cmdtest"
	"github.com/warren-sandbox/warren/commands/sed"
)

// benchSed runs sed once per op over a small stdin: per-call costs (script
// parse, regexp compile, buffers) dominate at this size.
func benchSed(b *testing.B, args []string, stdin, want string) {
	fs := cmdtest.NewFiles(nil)
	in := strings.NewReader(stdin)
	var out bytes.Buffer
	out.Grow(4 << 10)
	inv := fs.Invocation(args, in, &out, io.Discard)
	ctx := context.Background()
	d := make([]time.Duration, 0, b.N)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		in.Reset(stdin)
		out.Reset()
		start := time.Now()
		code := sed.Sed(ctx, inv)
		d = append(d, time.Since(start))
		if code != 0 || string(out.Bytes()) != want { // no copy: allocs/op is the command's own
			b.Fatalf("%q: exit %d, stdout %q, want %q", args, code, out.String(), want)
		}
	}
	b.StopTimer()
	cmdtest.ReportPercentiles(b, d)
}

func BenchmarkSedSubstSmall(b *testing.B) {
	benchSed(b, []string{"sed", "s/ro*t/admin/g"}, "root:x:0:0:root\nbin:x:2\n", "admin:x:0:0:admin\nbin:x:2\n")
}

func BenchmarkSedAddrSmall(b *testing.B) {
	benchSed(b, []string{"sed", "-n", "/^bin/p"}, "root:x:0:0:root\nbin:x:2\n", "bin:x:2\n")
}
