package archive_test

import (
	"encoding/hex"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/warren-sandbox/warren/commands/std"
)

// bzHello is "hello\nworld\n" as Debian's bzip2 1.0.8 compressed it.
const bzHello = "425a68393141592653596b5fb1dd00000241800010064490802000310c0821a369080723ae878bb9229c284835afd8ee80"

// TestBunzip2: every expectation was recorded with Debian's bzip2 1.0.8
// (LC_ALL=C) in a directory holding the same files.
func TestBunzip2(t *testing.T) {
	data, err := hex.DecodeString(bzHello)
	if err != nil {
		t.Fatal(err)
	}
	d := string(data)
	files := map[string]string{"a.bz2": d, "j.bz2": "junk", "t.bz2": d[:20], "x": d, "cat.bz2": d + d, "a.tbz2": d}
	for _, tt := range []struct {
		argv           []string
		stdin          bool
		stdout, stderr string
		code           int
		ls             []string // the directory after, when checked
	}{
		{[]string{"bunzip2", "-c", "a.bz2"}, false, "hello\nworld\n", "", 0, nil},
		{[]string{"bzcat", "a.bz2", "a.bz2"}, false, "hello\nworld\nhello\nworld\n", "", 0, nil},
		{[]string{"bzcat", "cat.bz2"}, false, "hello\nworld\nhello\nworld\n", "", 0, nil},
		{[]string{"bzcat"}, true, "hello\nworld\n", "", 0, nil},
		{[]string{"bunzip2", "-c", "j.bz2"}, false, "", "bunzip2: j.bz2 is not a bzip2 file.\n", 2, nil},
		{[]string{"bunzip2", "nofile.bz2"}, false, "", "bunzip2: Can't open input file nofile.bz2: No such file or directory.\n", 1, nil},
		{[]string{"bunzip2", "-t", "a.bz2"}, false, "", "", 0, nil},
		{[]string{"bunzip2", "-t", "j.bz2"}, false, "", "bunzip2: j.bz2: bad magic number (file not created by bzip2)\n\nYou can use the `bzip2recover' program to attempt to recover\ndata from undamaged sections of corrupted files.\n\n", 2, nil},
		{[]string{"bunzip2", "-c", "t.bz2"}, false, "", "\nbunzip2: Compressed file ends unexpectedly;\n\tperhaps it is corrupted?  *Possible* reason follows.\nbunzip2: Success\n\tInput file = t.bz2, output file = (stdout)\n\nIt is possible that the compressed file(s) have become corrupted.\nYou can use the -tvv option to test integrity of such files.\n\nYou can use the `bzip2recover' program to attempt to recover\ndata from undamaged sections of corrupted files.\n\n", 2, nil},
		{[]string{"bunzip2", "-k", "a.bz2"}, false, "", "", 0, []string{"a", "a.bz2", "a.tbz2", "cat.bz2", "j.bz2", "t.bz2", "x"}},
		{[]string{"bunzip2", "a.bz2"}, false, "", "", 0, []string{"a", "a.tbz2", "cat.bz2", "j.bz2", "t.bz2", "x"}},
		{[]string{"bunzip2", "x"}, false, "", "bunzip2: Can't guess original name for x -- using x.out\n", 0, []string{"a.bz2", "a.tbz2", "cat.bz2", "j.bz2", "t.bz2", "x.out"}},
		{[]string{"bzip2", "-d", "a.tbz2"}, false, "", "", 0, []string{"a.bz2", "a.tar", "cat.bz2", "j.bz2", "t.bz2", "x"}},
		{[]string{"bunzip2", "j.bz2"}, false, "", "bunzip2: j.bz2 is not a bzip2 file.\n", 2, []string{"a.bz2", "a.tbz2", "cat.bz2", "j.bz2", "t.bz2", "x"}},
	} {
		t.Run(tt.argv[0]+" "+tt.argv[len(tt.argv)-1], func(t *testing.T) {
			fsys := newSandbox(t, files, nil)
			in := ""
			if tt.stdin {
				in = d
			}
			out, errs, code := runIn(fsys, std.Table(), tt.argv, in)
			if out != tt.stdout || errs != tt.stderr || code != tt.code {
				t.Errorf("%v:\n got %q %q %d\nwant %q %q %d", tt.argv, out, errs, code, tt.stdout, tt.stderr, tt.code)
			}
			if tt.ls != nil {
				ents, err := fsys.ReadDir(caseDir)
				if err != nil {
					t.Fatal(err)
				}
				var got []string
				for _, e := range ents {
					got = append(got, e.Name())
				}
				if !slices.Equal(got, tt.ls) {
					t.Errorf("%v: directory %v, want %v", tt.argv, got, tt.ls)
				}
			}
		})
	}
}

// TestBzip2Compress: what warren's bzip2 writes, warren's bunzip2 reads
// back at every level, and so does the host's bzip2 when there is one (the
// encoder is dsnet/compress's, not bzip2's, so the bytes may differ).
// Messages are in testdata/gnu.json's "bzip2" case.
func TestBzip2Compress(t *testing.T) {
	var plain strings.Builder
	for i := range 30000 {
		plain.WriteString(strings.Repeat("y", i%13) + "row\n")
	}
	host, _ := exec.LookPath("bzip2")
	if host == "" {
		t.Log("no bzip2 on the host: warren's output is checked by warren's reader only")
	}
	for _, lvl := range []string{"-1", "-5", "-9"} {
		fsys := newSandbox(t, map[string]string{"p": plain.String()}, nil)
		z, errs, code := runIn(fsys, std.Table(), []string{"bzip2", lvl, "-c", "p"}, "")
		if code != 0 || errs != "" || len(z) == 0 || len(z) > plain.Len()/4 {
			t.Fatalf("bzip2 %s: %d bytes, %q, %d", lvl, len(z), errs, code)
		}
		if out, errs, code := runIn(fsys, std.Table(), []string{"bzcat"}, z); out != plain.String() || code != 0 {
			t.Errorf("bzcat of bzip2 %s: %d bytes, %q, %d", lvl, len(out), errs, code)
		}
		if host == "" {
			continue
		}
		cmd := exec.Command(host, "-dc")
		cmd.Stdin = strings.NewReader(z)
		if got, err := cmd.Output(); err != nil || string(got) != plain.String() {
			t.Errorf("host bzip2 -dc of bzip2 %s: %d bytes, %v", lvl, len(got), err)
		}
	}
}

// gzHello is "hello\nworld\n" as Debian's gzip 1.12 compressed it (named
// h, mtime 2024-03-05 06:07:08 UTC).
const gzHello = "1f8b08088cb6e66500036800cb48cdc9c9e72acf2fca49e10200ff5dc5c40c000000"

// TestGzipList: gzip -l and -lv of a file and of standard input, recorded
// with Debian's gzip 1.12 (TZ=UTC). zforce greps -lv's "defl" method.
func TestGzipList(t *testing.T) {
	data, err := hex.DecodeString(gzHello)
	if err != nil {
		t.Fatal(err)
	}
	const head = "         compressed        uncompressed  ratio uncompressed_name\n"
	const vhead = "method  crc     date  time  " + head
	for _, tt := range []struct {
		argv  []string
		stdin bool
		want  string
	}{
		{[]string{"gzip", "-l", "h.gz"}, false, head + "                 34                  12 -16.7% h\n"},
		{[]string{"gzip", "-lv", "h.gz"}, false, vhead + "defla c4c55dff Mar  5 06:07                  34                  12 -16.7% h\n"},
		{[]string{"gzip", "-lv"}, true, vhead + "defla c4c55dff Mar  5 06:07                  34                  12 -16.7% stdout\n"},
		{[]string{"gzip", "-l", "-"}, true, head + "                 34                  12 -16.7% stdout\n"},
	} {
		fsys := newSandbox(t, map[string]string{"h.gz": string(data)}, nil)
		in := ""
		if tt.stdin {
			in = string(data)
		}
		out, errs, code := runIn(fsys, std.Table(), tt.argv, in)
		if out != tt.want || errs != "" || code != 0 {
			t.Errorf("%v:\n got %q %q %d\nwant %q", tt.argv, out, errs, code, tt.want)
		}
	}
}
