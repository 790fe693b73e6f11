package archive_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"io/fs"
	"os"
	"path"
	"strings"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/commands"
	"github.com/warren-sandbox/warren/commands/std"
	"github.com/warren-sandbox/warren/vfs"
)

// Arbitrary bytes as an archive, extracted into a fresh vfs with a quota:
// no panic, nothing written outside the target directory, the quota held,
// done in bounded time. Run longer with
//
//	go test -run=^$ -fuzz=FuzzTarExtract -fuzztime=20s -fuzzminimizetime=2s ./commands/archive
//	go test -run=^$ -fuzz=FuzzZipExtract -fuzztime=20s -fuzzminimizetime=2s ./commands/archive
//
// (without -fuzzminimizetime, minimizing a new input can stall the run).
//
// (seeds in testdata/fuzz and f.Add below run with every go test).
func FuzzTarExtract(f *testing.F) {
	t := &testing.T{}
	f.Add(tarOf(t, []member{{name: "a", body: "x", typ: tar.TypeReg}, {name: "d/", typ: tar.TypeDir}}))
	f.Add(tarOf(t, []member{{name: "../evil", body: "x", typ: tar.TypeReg}}))
	f.Add(tarOf(t, []member{{name: "l", link: "/outside", typ: tar.TypeSymlink}, {name: "l/pwned", body: "x", typ: tar.TypeReg}}))
	f.Add(tarOf(t, []member{{name: "h", link: "../victim", typ: tar.TypeLink}}))
	f.Add(gzBombSmall(f, tarOf(t, []member{{name: "z", body: strings.Repeat("z", 4096), typ: tar.TypeReg}})))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		extract(t, data, "x.tar", []string{"tar", "-xf", "/x.tar", "-C", "/out"})
	})
}

func FuzzZipExtract(f *testing.F) {
	t := &testing.T{}
	f.Add(zipOf(t, []member{{name: "a", body: "x", typ: tar.TypeReg}, {name: "d/b", body: "y", typ: tar.TypeReg}}))
	f.Add(zipOf(t, []member{{name: "../evil", body: "x", typ: tar.TypeReg}}))
	f.Add(zipOf(t, []member{{name: "l", link: "/outside", typ: tar.TypeSymlink}, {name: "l/pwned", body: "x", typ: tar.TypeReg}}))
	f.Add(zipOf(t, []member{{name: "/abs", body: "x", typ: tar.TypeReg}}))
	f.Add([]byte("PK\x05\x06" + strings.Repeat("\x00", 18)))
	f.Fuzz(func(t *testing.T, data []byte) {
		extract(t, data, "x.zip", []string{"unzip", "-qo", "/x.zip", "-d", "/out"})
	})
}

// FuzzXzExtract: arbitrary bytes as .xz, tested and extracted as a
// tar.xz (seeds: the XZ Utils files in testdata/xz and a dictionary bomb):
// the decoder's charges all given back, the quota held, no panic.
func FuzzXzExtract(f *testing.F) {
	ents, _ := os.ReadDir("testdata/xz")
	for _, e := range ents {
		if b, err := os.ReadFile(path.Join("testdata/xz", e.Name())); err == nil {
			f.Add(b)
		}
	}
	f.Add(dictBomb())
	f.Fuzz(func(t *testing.T, data []byte) {
		extract(t, data, "x.xz", []string{"xz", "-t", "/x.xz"})
		extract(t, data, "x.txz", []string{"tar", "-xJf", "/x.txz", "-C", "/out"})
	})
}

const fuzzQuota = 1 << 20

func gzBombSmall(f *testing.F, b []byte) []byte {
	var out bytes.Buffer
	zw := gzip.NewWriter(&out)
	zw.Write(b)
	zw.Close()
	return out.Bytes()
}

// extract runs argv over an archive holding data and checks the sandbox.
func extract(t *testing.T, data []byte, name string, argv []string) {
	fsys := vfs.New(vfs.Options{})
	for _, d := range []string{"/out", "/outside", "/work"} {
		if err := fsys.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := fsys.WriteFile("/victim", []byte("original"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := fsys.WriteFile("/"+name, data, 0o644); err != nil {
		t.Fatal(err)
	}
	before := fsys.Usage()
	fsys.SetQuota(before.Bytes+fuzzQuota, before.Inodes+256)
	var out, errb bytes.Buffer
	inv := &commands.Invocation{Args: argv, Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, Dir: "/work", FS: fsys,
		Sys: &commands.System{Memory: commands.NewMemory(64 << 20)}}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	// A command that ignores its cancelled context would hang the fuzzer
	// without a report: panic, so the input is saved as a crasher.
	watchdog := time.AfterFunc(4*time.Second, func() { panic("extraction ignored cancellation for 2 s") })
	defer watchdog.Stop()
	std.Table()[argv[0]](ctx, inv)
	if ctx.Err() != nil {
		t.Fatalf("extraction did not end in 2 s")
	}
	if inv.Sys.Memory.Used() != 0 {
		t.Fatalf("%d bytes of the memory budget still charged", inv.Sys.Memory.Used())
	}
	if b, err := fsys.ReadFile("/victim"); err != nil || string(b) != "original" {
		t.Fatalf("/victim changed: %q %v", b, err)
	}
	if u := fsys.Usage(); u.Bytes > before.Bytes+fuzzQuota {
		t.Fatalf("usage %d past the quota %d", u.Bytes, before.Bytes+fuzzQuota)
	}
	allowed := map[string]bool{"/": true, "/out": true, "/outside": true, "/work": true, "/victim": true, "/" + name: true}
	var walk func(dir string)
	walk = func(dir string) {
		ents, err := fsys.ReadDir(dir)
		if err != nil {
			return
		}
		for _, e := range ents {
			p := path.Join(dir, e.Name())
			if !allowed[p] && !strings.HasPrefix(p, "/out/") {
				t.Fatalf("%s was written outside the target directory (stderr %q)", p, errb.String())
			}
			if e.Type()&fs.ModeSymlink == 0 && e.IsDir() {
				walk(p)
			}
		}
	}
	walk("/")
}
