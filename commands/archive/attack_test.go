package archive_test

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"io/fs"
	"os"
	"strings"
	"testing"

	"github.com/warren-sandbox/warren/commands/std"
	"github.com/warren-sandbox/warren/vfs"
)

type member struct {
	name, link, body string
	typ              byte
}

func tarOf(t *testing.T, members []member) []byte {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, m := range members {
		h := &tar.Header{Name: m.name, Linkname: m.link, Typeflag: m.typ, Mode: 0o644, Size: int64(len(m.body))}
		if m.typ != tar.TypeReg {
			h.Size = 0
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if m.typ == tar.TypeReg {
			tw.Write([]byte(m.body))
		}
	}
	tw.Close()
	return buf.Bytes()
}

// attackBox is a sandbox with a victim file outside the extraction
// directory /tmp/wcase/out.
func attackBox(t *testing.T) *vfs.FS {
	fsys := newSandbox(t, map[string]string{"out/": ""}, nil)
	if err := fsys.WriteFile("/victim", []byte("original"), 0o644); err != nil {
		t.Fatal(err)
	}
	fsys.MkdirAll("/outside", 0o755)
	return fsys
}

func checkVictim(t *testing.T, fsys *vfs.FS) {
	t.Helper()
	if b, err := fsys.ReadFile("/victim"); err != nil || string(b) != "original" {
		t.Errorf("/victim changed: %q %v", b, err)
	}
	for _, p := range []string{"/evil", "/tmp/evil", "/tmp/wcase/evil", "/outside/pwned", "/pwned", "/tmp/pwned"} {
		if _, err := fsys.Lstat(p); err == nil {
			t.Errorf("%s was written outside the target directory", p)
		}
	}
}

func TestTarAttacks(t *testing.T) {
	cases := []struct {
		name       string
		members    []member
		wantErr    []string // substrings of stderr
		wantStatus int
		inside     map[string]string // files that must exist under out/ with content
	}{
		{"dotdot", []member{{name: "../evil", body: "x", typ: tar.TypeReg}},
			[]string{"../evil: Member name contains '..'"}, 2, nil},
		{"dotdot inside", []member{{name: "a/../../evil", body: "x", typ: tar.TypeReg}},
			[]string{"a/../../evil: Member name contains '..'"}, 2, nil},
		{"absolute stripped", []member{{name: "/abs/file", body: "abs", typ: tar.TypeReg}},
			[]string{"Removing leading `/' from member names"}, 0, map[string]string{"abs/file": "abs"}},
		{"file through symlink", []member{
			{name: "lnk", link: "/outside", typ: tar.TypeSymlink},
			{name: "lnk/pwned", body: "x", typ: tar.TypeReg}},
			[]string{"lnk/pwned: Cannot open: refusing to extract through symbolic link 'lnk'"}, 2, nil},
		{"file through relative symlink", []member{
			{name: "up", link: "../..", typ: tar.TypeSymlink},
			{name: "up/pwned", body: "x", typ: tar.TypeReg}},
			[]string{"up/pwned: Cannot open: refusing to extract through symbolic link 'up'"}, 2, nil},
		{"dir through symlink", []member{
			{name: "d", link: "/outside", typ: tar.TypeSymlink},
			{name: "d/sub/", typ: tar.TypeDir},
			{name: "d/sub/pwned", body: "x", typ: tar.TypeReg}},
			[]string{"refusing to extract through symbolic link 'd'"}, 2, nil},
		{"overwrite symlink with file", []member{
			{name: "v", link: "/victim", typ: tar.TypeSymlink},
			{name: "v", body: "replaced", typ: tar.TypeReg}},
			nil, 0, map[string]string{"v": "replaced"}},
		{"hard link outside", []member{{name: "hl", link: "../victim", typ: tar.TypeLink}},
			[]string{"Removing leading `../' from hard link targets", "hl: Cannot hard link to 'victim'"}, 2, nil},
		{"hard link absolute", []member{{name: "hl", link: "/victim", typ: tar.TypeLink}},
			[]string{"Removing leading `/' from hard link targets"}, 2, nil},
		{"hard link via symlink", []member{
			{name: "s", link: "/victim", typ: tar.TypeSymlink},
			{name: "h", link: "s", typ: tar.TypeLink},
			{name: "h", body: "x", typ: tar.TypeReg}},
			[]string{"h: Cannot hard link to 's': refusing to extract through symbolic link 's'"}, 2, nil},
		{"hard link then write", []member{
			{name: "a", body: "inside", typ: tar.TypeReg},
			{name: "b", link: "a", typ: tar.TypeLink}},
			nil, 0, map[string]string{"a": "inside", "b": "inside"}},
		{"device node", []member{{name: "dev", typ: tar.TypeChar}},
			[]string{"dev: Cannot mknod: Operation not permitted"}, 2, nil},
	}
	tab := std.Table()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fsys := attackBox(t)
			if err := fsys.WriteFile(caseDir+"/evil.tar", tarOf(t, c.members), 0o644); err != nil {
				t.Fatal(err)
			}
			_, errs, code := runIn(fsys, tab, []string{"tar", "-xf", "evil.tar", "-C", "out"}, "")
			if code != c.wantStatus {
				t.Errorf("status %d, want %d (stderr %q)", code, c.wantStatus, errs)
			}
			for _, w := range c.wantErr {
				if !strings.Contains(errs, w) {
					t.Errorf("stderr %q lacks %q", errs, w)
				}
			}
			checkVictim(t, fsys)
			for p, want := range c.inside {
				b, err := fsys.ReadFile(caseDir + "/out/" + p)
				if err != nil || string(b) != want {
					t.Errorf("out/%s = %q %v, want %q", p, b, err, want)
				}
			}
			if fi, err := fsys.Lstat(caseDir + "/out/dev"); err == nil && fi.Mode()&fs.ModeDevice != 0 {
				t.Errorf("device node was created")
			}
		})
	}
}

func TestTarStripComponentsDotDot(t *testing.T) {
	fsys := attackBox(t)
	fsys.WriteFile(caseDir+"/evil.tar", tarOf(t, []member{{name: "x/../../../evil", body: "x", typ: tar.TypeReg}}), 0o644)
	_, errs, code := runIn(fsys, std.Table(), []string{"tar", "-xf", "evil.tar", "-C", "out", "--strip-components=1"}, "")
	if code != 2 || !strings.Contains(errs, "Member name contains '..'") {
		t.Errorf("status %d stderr %q", code, errs)
	}
	checkVictim(t, fsys)
}

func zipOf(t *testing.T, members []member) []byte {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, m := range members {
		h := &zip.FileHeader{Name: m.name, Method: zip.Store}
		if m.typ == tar.TypeSymlink {
			h.SetMode(fs.ModeSymlink | 0o777)
			w, _ := zw.CreateHeader(h)
			w.Write([]byte(m.link))
			continue
		}
		h.SetMode(0o644)
		w, err := zw.CreateHeader(h)
		if err != nil {
			t.Fatal(err)
		}
		w.Write([]byte(m.body))
	}
	zw.Close()
	return buf.Bytes()
}

func TestUnzipAttacks(t *testing.T) {
	cases := []struct {
		name    string
		members []member
		wantErr []string
		inside  map[string]string
	}{
		// Info-ZIP unzip strips ".." and "/" with a warning and extracts inside
		{"dotdot", []member{{name: "../../evil", body: "x", typ: tar.TypeReg}},
			[]string{`warning:  skipped "../" path component(s) in ../../evil`}, map[string]string{"evil": "x"}},
		{"absolute", []member{{name: "/pwned", body: "y", typ: tar.TypeReg}},
			[]string{"warning:  stripped absolute path spec from /pwned"}, map[string]string{"pwned": "y"}},
		{"file through symlink", []member{
			{name: "lnk", link: "/outside", typ: tar.TypeSymlink},
			{name: "lnk/pwned", body: "x", typ: tar.TypeReg}},
			[]string{"refusing to extract through symbolic link 'lnk'"}, nil},
	}
	tab := std.Table()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fsys := attackBox(t)
			fsys.WriteFile(caseDir+"/evil.zip", zipOf(t, c.members), 0o644)
			_, errs, _ := runIn(fsys, tab, []string{"unzip", "-o", "evil.zip", "-d", "out"}, "")
			for _, w := range c.wantErr {
				if !strings.Contains(errs, w) {
					t.Errorf("stderr %q lacks %q", errs, w)
				}
			}
			checkVictim(t, fsys)
			for p, want := range c.inside {
				b, err := fsys.ReadFile(caseDir + "/out/" + p)
				if err != nil || string(b) != want {
					t.Errorf("out/%s = %q %v, want %q", p, b, err, want)
				}
			}
		})
	}
}

// TestTarRoundTrip checks that what tar -c writes tar -x restores, with
// modes, symlinks and hard links.
func TestTarRoundTrip(t *testing.T) {
	fsys := newSandbox(t, map[string]string{"src/a": "alpha", "src/d/b": "beta", "out/": ""}, map[string]string{"src/l": "a"})
	fsys.Chmod(caseDir+"/src/a", 0o755)
	fsys.Link(caseDir+"/src/d/b", caseDir+"/src/hard")
	tab := std.Table()
	for _, argv := range [][]string{{"tar", "-czf", "s.tgz", "src"}, {"tar", "-xzf", "s.tgz", "-C", "out"}} {
		if _, errs, code := runIn(fsys, tab, argv, ""); code != 0 {
			t.Fatalf("%v: %d %s", argv, code, errs)
		}
	}
	if b, _ := fsys.ReadFile(caseDir + "/out/src/d/b"); string(b) != "beta" {
		t.Errorf("out/src/d/b = %q", b)
	}
	if fi, err := fsys.Stat(caseDir + "/out/src/a"); err != nil || fi.Mode().Perm() != 0o755 {
		t.Errorf("mode of a: %v %v", fi, err)
	}
	if l, err := fsys.Readlink(caseDir + "/out/src/l"); err != nil || l != "a" {
		t.Errorf("symlink: %q %v", l, err)
	}
	a, err1 := fsys.Stat(caseDir + "/out/src/hard")
	b, err2 := fsys.Stat(caseDir + "/out/src/d/b")
	if err1 != nil || err2 != nil || a.Sys().(*vfs.Stat).Ino != b.Sys().(*vfs.Stat).Ino {
		t.Errorf("hard link not restored: %v %v", err1, err2)
	}
}

// TestTarBzip2 reads a bzip2 tarball made by GNU tar 1.34 (-cjf), with and
// without -j (the compression is detected from the magic bytes).
func TestTarBzip2(t *testing.T) {
	data, err := os.ReadFile("testdata/bzip2.tbz2")
	if err != nil {
		t.Fatal(err)
	}
	fsys := newSandbox(t, map[string]string{"out/": ""}, nil)
	fsys.WriteFile(caseDir+"/t.tbz2", data, 0o644)
	tab := std.Table()
	out, errs, code := runIn(fsys, tab, []string{"tar", "-tvjf", "t.tbz2"}, "")
	want := "drwxr-xr-x 0/0               0 2023-11-14 22:13 d/\n-rw-r--r-- 0/0              11 2023-11-14 22:13 d/f.txt\n"
	if out != want || code != 0 {
		t.Errorf("tar -tvjf: %q %q %d, want %q", out, errs, code, want)
	}
	if _, errs, code := runIn(fsys, tab, []string{"tar", "-xf", "t.tbz2", "-C", "out"}, ""); code != 0 {
		t.Fatalf("tar -xf: %d %s", code, errs)
	}
	if b, _ := fsys.ReadFile(caseDir + "/out/d/f.txt"); string(b) != "bz content\n" {
		t.Errorf("extracted %q", b)
	}
	if _, errs, code = runIn(fsys, tab, []string{"tar", "-cjf", "new.tbz2", "out"}, ""); code != 0 {
		t.Fatalf("tar -cjf: %d %q", code, errs)
	}
	out, errs, code = runIn(fsys, tab, []string{"tar", "-tf", "new.tbz2"}, "")
	if want := "out/\nout/d/\nout/d/f.txt\n"; out != want || code != 0 {
		t.Errorf("tar -tf of tar -cjf's archive: %q %q %d, want %q", out, errs, code, want)
	}
}
