package coreutils_test

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/commands"
	"github.com/warren-sandbox/warren/commands/coreutils"
	"github.com/warren-sandbox/warren/commands/coreutils/cmdtest"
)

// passwd is the base image's /etc/passwd (1,085 bytes): the input of the
// bench's exec_pipeline (cat /etc/passwd | grep root | wc -l).
const passwd = `root:x:0:0:root:/root:/bin/bash
daemon:x:1:1:daemon:/var/lib/daemon:/usr/sbin/nologin
bin:x:2:2:bin:/var/lib/bin:/usr/sbin/nologin
sys:x:3:3:sys:/var/lib/sys:/usr/sbin/nologin
sync:x:4:4:sync:/var/lib/sync:/usr/sbin/nologin
games:x:5:5:games:/var/lib/games:/usr/sbin/nologin
man:x:6:6:man:/var/lib/man:/usr/sbin/nologin
lp:x:7:7:lp:/var/lib/lp:/usr/sbin/nologin
mail:x:8:8:mail:/var/lib/mail:/usr/sbin/nologin
news:x:9:9:news:/var/lib/news:/usr/sbin/nologin
uucp:x:10:10:uucp:/var/lib/uucp:/usr/sbin/nologin
proxy:x:11:11:proxy:/var/lib/proxy:/usr/sbin/nologin
www-data:x:12:12:www-data:/var/lib/www-data:/usr/sbin/nologin
backup:x:13:13:backup:/var/lib/backup:/usr/sbin/nologin
list:x:14:14:list:/var/lib/list:/usr/sbin/nologin
irc:x:15:15:irc:/var/lib/irc:/usr/sbin/nologin
nobody:x:16:16:nobody:/var/lib/nobody:/usr/sbin/nologin
systemd-network:x:17:17:systemd-network:/var/lib/systemd-network:/usr/sbin/nologin
messagebus:x:18:18:messagebus:/var/lib/messagebus:/usr/sbin/nologin
sshd:x:19:19:sshd:/var/lib/sshd:/usr/sbin/nologin
user:x:1000:1000:Agent User,,,:/home/user:/bin/bash
`

// benchSmall runs one command invocation per op over a small input, the
// resident-command share of exec_pipeline and density: allocs/op is the
// figure to watch (a 1 KB input should allocate next to nothing).
func benchSmall(b *testing.B, fn commands.Func, args []string, stdin, want string, files map[string]string) {
	fs := cmdtest.NewFiles(files)
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
		code := fn(ctx, inv)
		d = append(d, time.Since(start))
		if code != 0 || string(out.Bytes()) != want { // no copy: allocs/op is the command's own
			b.Fatalf("%q: exit %d, stdout %q, want %q", args, code, out.String(), want)
		}
	}
	b.StopTimer()
	cmdtest.ReportPercentiles(b, d)
}

func BenchmarkCatFile(b *testing.B) {
	benchSmall(b, coreutils.Cat, []string{"cat", "passwd"}, "", passwd, map[string]string{"passwd": passwd})
}

func BenchmarkCatStdin(b *testing.B) {
	benchSmall(b, coreutils.Cat, []string{"cat"}, passwd, passwd, nil)
}

func BenchmarkWcLines(b *testing.B) {
	benchSmall(b, coreutils.Wc, []string{"wc", "-l"}, passwd, "21\n", nil)
}

func BenchmarkWcDefault(b *testing.B) {
	benchSmall(b, coreutils.Wc, []string{"wc"}, passwd, "     21      22    1085\n", nil)
}

func BenchmarkHeadSmall(b *testing.B) {
	benchSmall(b, coreutils.Head, []string{"head", "-n", "1"}, passwd, "root:x:0:0:root:/root:/bin/bash\n", nil)
}

func BenchmarkTailSmall(b *testing.B) {
	benchSmall(b, coreutils.Tail, []string{"tail", "-n", "1"}, passwd, "user:x:1000:1000:Agent User,,,:/home/user:/bin/bash\n", nil)
}

func BenchmarkSortSmall(b *testing.B) {
	benchSmall(b, coreutils.Sort, []string{"sort", "-r"}, "b\na\nc\n", "c\nb\na\n", nil)
}

func BenchmarkCutSmall(b *testing.B) {
	benchSmall(b, coreutils.Cut, []string{"cut", "-d:", "-f1"}, "root:x:0\nbin:x:2\n", "root\nbin\n", nil)
}

func BenchmarkTrSmall(b *testing.B) {
	benchSmall(b, coreutils.Tr, []string{"tr", "a-z", "A-Z"}, "root:x:0\n", "ROOT:X:0\n", nil)
}
