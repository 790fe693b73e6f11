package grep_test

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/commands/coreutils/cmdtest"
	"github.com/warren-sandbox/warren/commands/grep"
)

// passwd is the base image's /etc/passwd, exec_pipeline's input.
var passwd = "root:x:0:0:root:/root:/bin/bash\n" +
	strings.Repeat("daemon:x:1:1:daemon:/var/lib/daemon:/usr/sbin/nologin\n", 19) +
	"user:x:1000:1000:Agent User,,,:/home/user:/bin/bash\n"

// benchGrep runs grep once per op over a small stdin: the grep stage of
// exec_pipeline (allocs/op and the per-call compile are the figures).
func benchGrep(b *testing.B, args []string, want string) {
	fs := cmdtest.NewFiles(nil)
	in := strings.NewReader(passwd)
	var out bytes.Buffer
	out.Grow(4 << 10)
	inv := fs.Invocation(args, in, &out, io.Discard)
	ctx := context.Background()
	d := make([]time.Duration, 0, b.N)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		in.Reset(passwd)
		out.Reset()
		start := time.Now()
		code := grep.Grep(ctx, inv)
		d = append(d, time.Since(start))
		if code != 0 || string(out.Bytes()) != want { // no copy: allocs/op is the command's own
			b.Fatalf("%q: exit %d, stdout %q, want %q", args, code, out.String(), want)
		}
	}
	b.StopTimer()
	cmdtest.ReportPercentiles(b, d)
}

func BenchmarkGrepSmall(b *testing.B) {
	benchGrep(b, []string{"grep", "root"}, "root:x:0:0:root:/root:/bin/bash\n")
}

func BenchmarkGrepSmallRegexp(b *testing.B) {
	benchGrep(b, []string{"grep", "^ro*t:"}, "root:x:0:0:root:/root:/bin/bash\n")
}

func BenchmarkGrepSmallIcase(b *testing.B) {
	benchGrep(b, []string{"grep", "-ic", "ROOT"}, "1\n")
}
