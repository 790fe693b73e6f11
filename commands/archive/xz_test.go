package archive_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"hash/crc32"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/commands/coreutils/cmdtest"
	"github.com/warren-sandbox/warren/commands/std"
)

// numsSHA is sha256 of `seq 1 5000`, what every testdata/xz/nums* file and
// blocks.xz hold (written by XZ Utils 5.4.1: -C crc32/sha256/none, -F lzma,
// and -T2 --block-size=4KiB for six blocks in one stream).
const numsSHA = "23f90f8b2c3a4b5f3b5e156339994afd5c2718b378aca6f0e17111f80a70d4ec"

func xzFiles(t *testing.T) map[string]string {
	t.Helper()
	files := map[string]string{}
	ents, err := os.ReadDir("testdata/xz")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join("testdata/xz", e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		files[e.Name()] = string(b)
	}
	return files
}

// TestXzReadsXZUtils: what XZ Utils wrote decodes to the same bytes, and
// damaged inputs fail as xz 5.4.1 reports them (messages and statuses
// recorded with it).
func TestXzReadsXZUtils(t *testing.T) {
	files := xzFiles(t)
	blocks := files["blocks.xz"]
	crc := files["nums-crc32.xz"]
	bad := []byte(crc)
	bad[200] = 0x55
	badck := []byte(files["nums-sha256.xz"])
	badck[len(badck)-40] = 0
	hello := files["hello.xz"]
	files["tr.xz"] = blocks[:1000]
	files["bad.xz"] = string(bad)
	files["badck.xz"] = string(badck)
	files["two.xz"] = hello + hello
	files["pad.xz"] = hello + "\x00\x00\x00\x00"
	files["trail.xz"] = hello + "junk"
	for _, tt := range []struct {
		argv           []string
		stdin          string
		sha            string // of stdout, when set
		stdout, stderr string
		code           int
	}{
		{argv: []string{"xz", "-dc", "blocks.xz"}, sha: numsSHA},
		{argv: []string{"xz", "-dc", "nums-crc32.xz"}, sha: numsSHA},
		{argv: []string{"xz", "-dc", "nums-sha256.xz"}, sha: numsSHA},
		{argv: []string{"xz", "-dc", "nums-none.xz"}, sha: numsSHA},
		{argv: []string{"xz", "-dc", "nums.lzma"}, sha: numsSHA},
		{argv: []string{"lzcat", "nums.lzma"}, sha: numsSHA},
		{argv: []string{"xz", "-t", "blocks.xz"}},
		{argv: []string{"xzcat"}, stdin: hello, stdout: "hello\n"},
		{argv: []string{"xzcat", "two.xz"}, stdout: "hello\nhello\n"},
		{argv: []string{"xzcat", "--single-stream", "two.xz"}, stdout: "hello\n"},
		{argv: []string{"xzcat", "pad.xz"}, stdout: "hello\n"},
		{argv: []string{"xzcat", "trail.xz"}, stdout: "hello\n", stderr: "xzcat: trail.xz: Unexpected end of input\n", code: 1},
		{argv: []string{"xz", "-t", "tr.xz"}, stderr: "xz: tr.xz: Unexpected end of input\n", code: 1},
		{argv: []string{"xz", "-t", "bad.xz"}, stderr: "xz: bad.xz: Compressed data is corrupt\n", code: 1},
		{argv: []string{"xz", "-t", "badck.xz"}, stderr: "xz: badck.xz: Compressed data is corrupt\n", code: 1},
		{argv: []string{"xz", "-d"}, stdin: "junk", stderr: "xz: (stdin): File format not recognized\n", code: 1},
		{argv: []string{"xz", "-dc", "-F", "xz", "nums.lzma"}, stderr: "xz: nums.lzma: File format not recognized\n", code: 1},
		{argv: []string{"xz", "-l", "hello.xz"}, stderr: "warren: xz --list: not supported here\n", code: 2},
		{argv: []string{"tar", "-tJf", "tree.txz"}, stdout: "tr/\ntr/a\ntr/sub/\ntr/sub/b\n"},
		{argv: []string{"tar", "-tf", "tree.txz"}, stdout: "tr/\ntr/a\ntr/sub/\ntr/sub/b\n"},
	} {
		t.Run(strings.Join(tt.argv, " "), func(t *testing.T) {
			fsys := newSandbox(t, files, nil)
			out, errs, code := runIn(fsys, std.Table(), tt.argv, tt.stdin)
			if tt.sha != "" {
				sum := sha256.Sum256([]byte(out))
				if got := hex.EncodeToString(sum[:]); got != tt.sha {
					t.Errorf("stdout sha256 %s (%d bytes), want %s", got, len(out), tt.sha)
				}
				out = ""
			}
			if out != tt.stdout || errs != tt.stderr || code != tt.code {
				t.Errorf("got %q %q %d\nwant %q %q %d", out, errs, code, tt.stdout, tt.stderr, tt.code)
			}
		})
	}
}

// TestXzRoundTrip: what warren's xz writes, warren's xz reads back, for
// every preset, check and format, and so does XZ Utils when the host has
// it (the encoder is another one than XZ Utils', so the bytes differ).
func TestXzRoundTrip(t *testing.T) {
	var plain strings.Builder
	for i := range 20000 {
		plain.WriteString(strings.Repeat("x", i%17) + "line\n")
	}
	files := map[string]string{"p": plain.String()}
	host, _ := exec.LookPath("xz")
	if host == "" {
		t.Log("no xz on the host: warren's output is checked by warren's reader only")
	}
	for _, args := range [][]string{
		{"-c"}, {"-0", "-c"}, {"-9e", "-c"}, {"-C", "crc32", "-c"}, {"-C", "sha256", "-c"},
		{"-C", "none", "-c"}, {"-F", "lzma", "-c"}, {"-T0", "-c"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			fsys := newSandbox(t, files, nil)
			z, errs, code := runIn(fsys, std.Table(), append(append([]string{"xz"}, args...), "p"), "")
			if code != 0 || errs != "" || len(z) == 0 || len(z) > plain.Len()/4 {
				t.Fatalf("xz %v: %d bytes, %q, status %d", args, len(z), errs, code)
			}
			out, errs, code := runIn(fsys, std.Table(), []string{"xz", "-dc"}, z)
			if code != 0 || errs != "" || out != plain.String() {
				t.Errorf("xz -dc of it: %d bytes, %q, status %d", len(out), errs, code)
			}
			if host == "" {
				return
			}
			cmd := exec.Command(host, "-dc")
			cmd.Stdin = strings.NewReader(z)
			got, err := cmd.Output()
			if err != nil || string(got) != plain.String() {
				t.Errorf("host xz -dc of it: %d bytes, %v", len(got), err)
			}
		})
	}
	t.Run("tar cJf then xJf", func(t *testing.T) {
		fsys := newSandbox(t, map[string]string{"d/a": "one\n", "d/s/b": plain.String()}, nil)
		tbl := std.Table()
		if _, errs, code := runIn(fsys, tbl, []string{"tar", "-cJf", "d.txz", "d"}, ""); code != 0 {
			t.Fatalf("tar cJf: %q %d", errs, code)
		}
		if _, errs, code := runIn(fsys, tbl, []string{"rm", "-r", "d"}, ""); code != 0 {
			t.Fatalf("rm: %q", errs)
		}
		if _, errs, code := runIn(fsys, tbl, []string{"tar", "-xJf", "d.txz"}, ""); code != 0 {
			t.Fatalf("tar xJf: %q %d", errs, code)
		}
		out, _, _ := runIn(fsys, tbl, []string{"cat", "d/a", "d/s/b"}, "")
		if out != "one\n"+plain.String() {
			t.Errorf("extracted %d bytes, want %d", len(out), 4+plain.Len())
		}
	})
}

// dictBomb is a 64-byte .xz whose one block asks for a 4 GiB dictionary
// (property byte 40): the library alone would allocate it before reading
// any data.
func dictBomb() []byte {
	var b bytes.Buffer
	b.Write([]byte{0xfd, '7', 'z', 'X', 'Z', 0, 0, 1})
	binary.Write(&b, binary.LittleEndian, crc32.ChecksumIEEE([]byte{0, 1}))
	hdr := []byte{2, 0, 0x21, 1, 40, 0, 0, 0}
	b.Write(hdr)
	binary.Write(&b, binary.LittleEndian, crc32.ChecksumIEEE(hdr))
	b.Write([]byte{1, 0, 0, 'h', 'i', 0}) // an uncompressed chunk, the end
	return b.Bytes()
}

// zerosXz is ~100 MiB of zeros as .xz (a few KiB).
func zerosXz(t *testing.T) string {
	t.Helper()
	fsys := newSandbox(t, nil, nil)
	z, errs, code := runIn(fsys, std.Table(), []string{"xz", "-0", "-c"}, string(make([]byte, 100<<20)))
	if code != 0 {
		t.Fatalf("xz of zeros: %q %d", errs, code)
	}
	return z
}

// The budget holds: a dictionary is charged before it exists, an
// expansion into the vfs ends at the quota and one into a stream on
// cancellation, and the encoder takes a smaller dictionary when the
// budget has no room for its preset's.
func TestXzHostile(t *testing.T) {
	zeros := zerosXz(t)
	files := map[string]string{"bomb.xz": string(dictBomb()), "zeros.xz": zeros, "zeros.tar.xz": zeros, "p": strings.Repeat("abc\n", 1000)}
	cmdtest.RunHostile(t, std.Table(), []cmdtest.Hostile{
		{Name: "4 GiB dictionary", Args: []string{"xz", "-dc", "bomb.xz"}, Files: files, Budget: 64 << 20, Status: 125, Msg: "warren: memory limit exceeded (64 MiB)", MaxHeap: 256 << 20},
		{Name: "4 GiB dictionary in tar", Args: []string{"tar", "-xJf", "bomb.xz"}, Files: files, Budget: 64 << 20, Status: 125, Msg: "warren: memory limit exceeded (64 MiB)", MaxHeap: 256 << 20},
		{Name: "unxz into the vfs", Args: []string{"unxz", "zeros.xz"}, Files: files, Quota: 16 << 20, Status: 1, Msg: "No space left on device", Within: 10 * time.Second},
		{Name: "xz -t cancelled", Args: []string{"xz", "-t", "zeros.xz"}, Files: files, Cancel: 50 * time.Millisecond, Status: 130, Within: time.Second},
		{Name: "-9 under a small budget", Args: []string{"xz", "-9", "-k", "p"}, Files: files, Budget: 32 << 20, Status: 0},
		{Name: "no room for any dictionary", Args: []string{"xz", "-0", "-k", "p"}, Files: files, Budget: 4 << 20, Status: 125, Msg: "warren: memory limit exceeded (4 MiB)"},
	})
}
