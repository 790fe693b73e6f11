package coreutils_test

import (
	"testing"
	"time"

	"github.com/warren-sandbox/warren/commands/coreutils/cmdtest"
	"github.com/warren-sandbox/warren/commands/std"
	"github.com/warren-sandbox/warren/conformance/differential"
)

// gnuDiff compares scripts in real bash with the Debian tools named by need
// and in warren's shell over the same input files (differential.CheckAgainst).
func gnuDiff(t *testing.T, need []string, scripts []string) {
	t.Helper()
	const files = "printf 'hello world\\nSecond Line\\n' > in; printf 'no newline' > nonl; printf '1 2048 x\\n-3 1.5K y\\n' > nums\n"
	differential.CheckAgainst(t, std.Table(), need, files, scripts)
}

func TestDdAgainstGNU(t *testing.T) {
	gnuDiff(t, []string{"dd", "od"}, []string{
		"dd if=in bs=2 count=2",
		"dd if=in skip=1 bs=3",
		"dd if=in of=o bs=1 count=4 && od -c o",
		"dd if=in conv=ucase",
		"dd if=in ibs=1 obs=2 count=3 2>&1 | sed 's/ copied.*//'",
		"dd if=in bs=1 skip=2 count=3 status=none",
		"dd if=/dev/zero bs=4 count=2 2>/dev/null | od -c",
		"dd if=in conv=lcase,swab",
		"dd if=in bs=5 conv=sync 2>/dev/null | od -c",
		"dd if=in ibs=5 obs=3 2>&1 | sed 's/ copied.*//'",
		"dd if=nope",
		"dd foo=1",
		"dd bs=abc",
		"dd if=in conv=frob",
		"dd if=in status=noxfer 2>&1",
		"dd if=in bs=1k count=1 status=noxfer 2>&1",
		"dd if=/dev/zero bs=1 count=2x3 2>/dev/null | od -c",
		"dd if=in of=o seek=2 bs=1 && od -c o",
		"printf 'XXXXXXXXXXXXXXXX' > o; dd if=in of=o seek=1 bs=4 count=1 conv=notrunc; od -c o",
		"printf 'XXXXXXXXXXXXXXXX' > o; dd if=in of=o seek=1 bs=4 count=1; od -c o",
		"cat in | dd bs=4 count=2 iflag=fullblock 2>&1 | sed 's/ copied.*//'",
		"dd if=in bs=3 count=5 iflag=count_bytes 2>&1 | sed 's/ copied.*//'",
		"dd if=in bs=2 skip=5 iflag=skip_bytes",
		"dd < in 2>&1 | head -3",
		"dd if=nonl bs=3 conv=sync 2>/dev/null | od -c",
		"dd if=in conv=ucase,lcase",
		"dd if=in bs=0",
		"dd if=in of=o oflag=append; dd if=in of=o oflag=append; cat o",
		"dd if=in status=bogus",
		"dd if=in bs=1M count=1 2>&1 | tail -1 | cut -d, -f1",
		"head -c 3000 /dev/zero | dd bs=1k iflag=fullblock 2>&1 >/dev/null | tail -1 | cut -d, -f1",
	})
}

// zeros is an endless input.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

func TestDdHostile(t *testing.T) {
	cmdtest.RunHostile(t, table(), []cmdtest.Hostile{
		{Name: "buffer past the budget", Args: []string{"dd", "bs=64M", "count=1"}, Stdin: zeros{}, Status: 125, Msg: "warren: memory limit exceeded (32 MiB)"},
		{Name: "buffer past the bound", Args: []string{"dd", "bs=1G"}, Budget: 4 << 30, Status: 1, Msg: "memory exhausted by input buffer of size 1073741824 bytes (1.0 GiB)"},
		{Name: "endless copy", Args: []string{"dd", "of=/dev/null", "bs=1k"}, Stdin: zeros{}, Cancel: 50 * time.Millisecond, Within: time.Second},
		{Name: "endless skip", Args: []string{"dd", "skip=1000000000000", "bs=1"}, Stdin: zeros{}, Cancel: 50 * time.Millisecond, Within: time.Second},
	})
}

func TestNumfmtAgainstGNU(t *testing.T) {
	gnuDiff(t, []string{"numfmt"}, []string{
		"numfmt --to=si 1500",
		"numfmt --to=si 999",
		"numfmt --to=si 1000",
		"numfmt --to=si 1001",
		"numfmt --to=si 9999",
		"numfmt --to=si 10001",
		"numfmt --to=si 99999",
		"numfmt --to=si 999999",
		"numfmt --to=si 123456789",
		"numfmt --to=iec 1048576",
		"numfmt --to=iec 1023",
		"numfmt --to=iec 1025",
		"numfmt --to=iec-i 4096",
		"numfmt --from=si 1.5K",
		"numfmt --from=iec 2M",
		"numfmt --from=auto 1Ki",
		"numfmt --from=auto 1K",
		"numfmt --from=iec-i 1Ki",
		"numfmt --from=iec-i 1K",
		"numfmt --padding=8 42",
		"numfmt --padding=-8 42",
		"numfmt --format=%.2f 3.14159",
		"numfmt --format=%10f 3",
		"numfmt --format=%-10f 3",
		"numfmt --format=%05f 3",
		"numfmt --suffix=B --to=si 2000",
		"numfmt --to=si --round=down 1999",
		"numfmt --to=si --round=up 1001",
		"numfmt --to=si --round=nearest 1050",
		"numfmt --to=si --round=towards-zero -- -1999",
		"numfmt --to=si -1500",
		"numfmt --to=si -- -1500",
		"numfmt --to=si -- -0.5",
		"numfmt --invalid=ignore abc",
		"numfmt abc",
		"numfmt --invalid=warn abc 5",
		"numfmt --invalid=fail abc 5",
		"numfmt 1.5",
		"numfmt --from=si 1.5",
		"numfmt --to=si 0.5",
		"numfmt --to=si 1.5",
		"numfmt --to=si 2.5",
		"numfmt --to=si 1e3",
		"numfmt --from=si 1G",
		"numfmt --from=si 1.5Q",
		"numfmt --to=si 1000000000000000000000000000000000",
		"numfmt --from=si --to=iec 1G",
		"numfmt --to=iec --format=%.3f 123456",
		"numfmt --grouping 1234567",
		"numfmt --from=none 1K",
		"numfmt --from-unit=1024 2",
		"numfmt --to-unit=1000 5000",
		"numfmt --to=si 1 2 3",
		"numfmt 12abc",
		"numfmt --suffix=B 12B",
		"numfmt --to=si 0",
		"numfmt ' 5'",
		"numfmt --to=iec 1536",
		"numfmt --from=si 1k",
		"numfmt --format=%e 5",
		"numfmt --to=si --padding=6 1500",
		"numfmt -d, --field=2 --to=si a,2000,c",
		"numfmt --field=2- --to=si a 2000 3000",
		"numfmt --format=%.1f 12.345",
		"numfmt --format=%.0f 2.5",
		"numfmt --to=si --format=%.3f 1500",
		"numfmt --to=si 999999999999999999",
		"numfmt --to=si 9999999999999999999999",
		"numfmt --to=si 999999999999999999999999999",
		"numfmt 12345678901234567890",
		"numfmt 1234567890123456789",
		"printf '1 2048 x\\n-3 1.5K y\\n' | numfmt --field=2 --from=iec",
		"printf '1 2048 x\\n-3 1.5K y\\n' | numfmt --field=2 --to=si",
		"printf 'a 2048\\n  b   4096  \\n' | numfmt --field=2 --to=iec",
		"printf 'x 2048\\n' | numfmt --field 1 --invalid=ignore --to=iec",
		"printf 'h 1\\n2000 3\\n' | numfmt --header --to=si",
		"printf 'a  1K   b\\n' | numfmt --field=2 --from=si",
		"printf '  1K   b\\n' | numfmt --from=si",
		"printf '1K\\t2K\\n' | numfmt --from=si --field=1,2",
		"printf '5\\n' | numfmt --to=si --format=%.2f",
		"printf '   4096 x\\n' | numfmt --to=iec",
		"printf 'a 1\\n' | numfmt --field=2 --to=si --padding=3",
		"printf 'a b\\n' | numfmt --field=3",
		"printf 'a b\\n' | numfmt --field=2",
		"printf '5\\n\\n6\\n' | numfmt",
		"numfmt --format='%8f' --to=si 1500",
		"numfmt --format='%-8f|' --padding=10 1500",
		"numfmt -d: --field=2 --to=si 'a:3000:b'",
		"numfmt --from=si --suffix=B 1KB",
		"numfmt --to=si --suffix=B 1500B",
		"numfmt --from=si 1Mi",
		"numfmt --from=auto 1Mi",
		"numfmt --to=iec 0.9",
		"numfmt --to=si 10.5",
		"numfmt --to=si 9.96",
		"numfmt --to=si 999.9",
		"numfmt --to=si 99950",
		"numfmt --round=down --to=iec 1535",
		"numfmt --padding=x 5",
		"numfmt --field=0 5",
		"numfmt -z 5",
		"numfmt --to=foo 5",
		"numfmt 0.000",
		"numfmt -- -12.50",
	})
}

func TestHexdumpAgainstGNU(t *testing.T) {
	const files = "printf 'hello\\n' > h; : > empty; printf '\"%%07.7_ax \" 4/1 \"%%02x \" \"\\\\n\"\\n' > fmt; head -c 100 /dev/zero > big; printf 'abcdefghijklmnopqrstuvwxyz0123456789' >> big; head -c 40 /dev/zero >> big; "
	var scripts []string
	for _, s := range []string{
		"hexdump -e '16/1 \"%02x \" \"\\n\"' h",
		"hexdump h",
		"hexdump -e '\"%07.7_ax \" 8/1 \"%02x\" \"\\n\"' h",
		"hexdump -v -e '/1 \"%u,\"' h",
		"hexdump -e '\"%_p\"' h",
		"hexdump -e '4/1 \"%_c\" \"\\n\"' h",
		"hexdump -e '\"%x\\n\"' h",
		"hexdump -e '2/2 \"%d|\" \"\\n\"' h",
		"hexdump -e '/1 \"%_u \"' h",
		"printf '\\x00\\x7f\\x80\\xff ' | hexdump -e '/1 \"%_u \"'",
		"hexdump -e '\"%_Ad\\n\"' h",
		"hexdump -e '\"%07.7_Ax\\n\"' -e '\"%07.7_ax \" 2/1 \"%02x\" \"\\n\"' h",
		"hexdump -e '1/1 \"%s\"' h",
		"hexdump -e '\"[%3d]\"' h",
		"hexdump -e '/4 \"%f\\n\"' h",
		"hexdump -e '/1 \"%5.1o|\"' h",
		"hexdump -b h",
		"hexdump -c h",
		"hexdump -d h",
		"hexdump -o h",
		"hexdump -x h",
		"hexdump -C h",
		"hexdump -C big",
		"hexdump big",
		"hexdump -v -C big",
		"hexdump -C -n 5 big",
		"hexdump -C -s 3 h",
		"hexdump -e '8/1 \"%02X\" \"\\n\"' big",
		"hexdump -e '\"%08_ax: \" 16/1 \"%02x \" \"  \" 16/1 \"%_p\" \"\\n\"' big",
		"hexdump -e '/2 \"%04x\\n\"' h",
		"hexdump -e '/8 \"%e\\n\"' big",
		"hexdump -e '/4 \"%g\\n\"' big",
		"hexdump -e '4/4 \"%08x \" \"\\n\"' big",
		"hexdump -e '\"%_ao %_ad\\n\"' h",
		"hexdump -e '16/1 \"%02x\" \"\\n\"' nonl",
		"hexdump -e '\"%-5d|\"' h",
		"hexdump -e '\"%c\"' h",
		"hexdump -e '/1 \"%c\"' h",
		"hexdump -e '/1 \"%3c|\"' h",
		"hexdump -e '\"%q\"' h",
		"hexdump -e '/3 \"%d\"' h",
		"hexdump -e '4/1 \"%02x\" \"\\n\"' -e '\"--\\n\"' h",
		"hexdump -e '/1 \"%#x \"' h",
		"hexdump -C empty",
		"hexdump empty",
		"hexdump -e '/1 \"%02x\"' empty",
		"hexdump -x -c h",
		"hexdump -f fmt h",
	} {
		scripts = append(scripts, files+s)
	}
	gnuDiff(t, []string{"hexdump"}, scripts)
}

// xxd -r reads any dump the way vim's xxd does, C arrays and bit dumps
// included (xxd 2022-01-14 from Debian's xxd package).
func TestXxdRevertAgainstVim(t *testing.T) {
	gnuDiff(t, []string{"xxd", "od"}, []string{
		"xxd -i < in | xxd -r | od -c; echo $?",
		"xxd -i in | xxd -r | od -c; echo $?",
		"xxd -b -c2 nonl | xxd -r | od -c; echo $?",
		"xxd -b in | xxd -r | od -c; echo $?",
		"xxd in | xxd -r | od -c",
		"xxd -c4 in | xxd -r | od -c",
		"xxd -c4 in | xxd -r -c4 | od -c",
		"xxd -u -g1 in | xxd -r",
		"xxd -l5 in | xxd -r | od -c",
		"xxd -s3 in | xxd -r | od -c",
		"xxd -p in | xxd -r -p",
		"printf '00000010: 4142\\n' | xxd -r | od -c",
		"printf '0: 41 42\\n1: 43\\n' | xxd -r | od -c; echo $?",
		"printf '00000000: 6869\\r\\n' | xxd -r | od -c",
		"printf 'zz\\n00000000: 4142\\n' | xxd -r | od -c",
	})
}

func TestOdZAgainstGNU(t *testing.T) {
	gnuDiff(t, []string{"od"}, []string{
		"printf 'hello world 12345\\n' | od -tx1z",
		"printf 'ab' | od -tx1z -tc",
		"printf 'abcd' | od -tx2z",
		"printf 'abc' | od -tx2z",
		"printf 'a\\r\\nb\\r\\n' | od -w8 -tx1z",
		"printf 'abcdefghi' | od -tcz -w4",
		"printf 'abcdefghij' | od -Ax -tx4z",
	})
}

func TestUuAgainstGNU(t *testing.T) {
	gnuDiff(t, []string{"uuencode", "uudecode", "cmp"}, []string{
		"uuencode in name",
		"uuencode name < in",
		"uuencode -m in name",
		"printf '' | uuencode e",
		"head -c 100 /dev/zero | tr '\\0' 'x' > r; uuencode r r",
		"uuencode -m r r 2>/dev/null; echo $?",
		"uuencode in name | uudecode -o /dev/stdout",
		"uuencode -m in name | uudecode -o -",
		"uuencode in name | uudecode && cat name && ls -l name | cut -c1-10",
		"printf 'garbage\\n' | uudecode; echo $?",
		"uuencode in name > e; uudecode e; od -c name",
		"uuencode -m in name > e; uudecode -o out e; cat out",
		"printf 'junk\\nbegin 600 z\\n#86)C\\n`\\nend\\n' | uudecode; cat z; ls -l z | cut -c1-10",
		"printf 'begin 644 z\\n#86)C\\n' | uudecode; echo $?",
		"seq 1000 > big; uuencode big big | uudecode -o - | cmp - big && echo same",
		"seq 1000 > big; uuencode -m big big | uudecode -o - | cmp - big && echo same",
		"uuencode; echo $?",
		"chmod 600 in; uuencode in x | head -1",
		"umask 077; uuencode x < in | head -1",
	})
}
