package fileutils

// file: what a file holds, from its first bytes.

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"io/fs"
	"path"
	"strings"

	"github.com/warren-sandbox/warren/commands"
)

func file(ctx context.Context, inv *commands.Invocation) int {
	opts, args, err := newOpts("bLhiF:z", "brief:b", "dereference:L", "no-dereference:h", "mime:i", "mime-type", "separator=:F").Parse(inv.Args[1:])
	if err != nil {
		return badUsage(inv, err, 1)
	}
	brief, deref, mime, typeOnly := false, false, false, false
	sep := ":"
	for _, o := range opts {
		switch o.Key {
		case "b":
			brief = true
		case "L":
			deref = true
		case "h":
			deref = false
		case "i":
			mime = true
		case "mime-type":
			mime, typeOnly = true, true
		case "F":
			sep = o.Val
		}
	}
	if len(args) == 0 {
		fmt.Fprintln(inv.Stderr, "Usage: file [-bcCdEhikLlNnprsSvzZ0] [--apple] [--extension] [--mime-encoding]")
		return 1
	}
	width := 0
	for _, a := range args {
		width = max(width, len(a)+len(sep))
	}
	for _, a := range args {
		desc, mt := describeFile(inv, a, deref)
		out := desc
		if mime {
			out = mt
			if typeOnly && !strings.HasPrefix(mt, "cannot open") {
				out, _, _ = strings.Cut(mt, ";")
			}
		}
		if brief {
			fmt.Fprintln(inv.Stdout, out)
		} else {
			fmt.Fprintf(inv.Stdout, "%-*s %s\n", width, a+sep, out)
		}
	}
	return 0
}

func describeFile(inv *commands.Invocation, name string, deref bool) (string, string) {
	abs := inv.Abs(name)
	var fi fs.FileInfo
	var err error
	if deref {
		fi, err = inv.FS.Stat(abs)
	} else {
		fi, err = inv.FS.Lstat(abs)
	}
	if err != nil {
		msg := fmt.Sprintf("cannot open `%s' (%s)", name, commands.Strerror(err))
		return msg, msg // -i says the same as file does
	}
	m := fi.Mode()
	switch {
	case m.IsDir():
		return "directory", "inode/directory; charset=binary"
	case m&fs.ModeSymlink != 0:
		t, _ := inv.FS.Readlink(abs)
		if _, err := inv.FS.Stat(abs); err != nil {
			return "broken symbolic link to " + t, "inode/symlink; charset=binary"
		}
		return "symbolic link to " + t, "inode/symlink; charset=binary"
	case m&fs.ModeNamedPipe != 0:
		return "fifo (named pipe)", "inode/fifo; charset=binary"
	case m&fs.ModeSocket != 0:
		return "socket", "inode/socket; charset=binary"
	case m&fs.ModeCharDevice != 0:
		return "character special", "inode/chardevice; charset=binary"
	case m&fs.ModeDevice != 0:
		return "block special", "inode/blockdevice; charset=binary"
	}
	if fi.Size() == 0 {
		return "empty", "inode/x-empty; charset=binary"
	}
	f, err := inv.FS.Open(abs)
	if err != nil {
		msg := fmt.Sprintf("cannot open `%s' (%s)", name, commands.Strerror(err))
		return msg, msg // -i says the same as file does
	}
	head := make([]byte, 8192)
	n, _ := io.ReadFull(f, head)
	f.Close()
	return sniff(head[:n], fi.Size())
}

// sniff names content the way file(1) does for the common cases.
func sniff(b []byte, size int64) (string, string) {
	switch {
	case bytes.HasPrefix(b, []byte("\x7fELF")) && len(b) > 18:
		bits := "32-bit"
		if b[4] == 2 {
			bits = "64-bit"
		}
		end := "LSB"
		if b[5] == 2 {
			end = "MSB"
		}
		kind := "executable"
		switch b[16] {
		case 1:
			kind = "relocatable"
		case 3:
			kind = "pie executable"
		case 4:
			kind = "core file"
		}
		arch := ""
		switch b[18] {
		case 0x3e:
			arch = ", x86-64"
		case 0xb7:
			arch = ", ARM aarch64"
		case 0x03:
			arch = ", Intel 80386"
		}
		return fmt.Sprintf("ELF %s %s %s%s", bits, end, kind, arch), "application/x-executable; charset=binary"
	case bytes.HasPrefix(b, []byte("\x00asm")):
		return "WebAssembly (wasm) binary module version 0x1 (MVP)", "application/wasm; charset=binary"
	case bytes.HasPrefix(b, []byte("\x1f\x8b")):
		return "gzip compressed data", "application/gzip; charset=binary"
	case bytes.HasPrefix(b, []byte("BZh")):
		return "bzip2 compressed data", "application/x-bzip2; charset=binary"
	case bytes.HasPrefix(b, []byte("\xfd7zXZ\x00")):
		return "XZ compressed data", "application/x-xz; charset=binary"
	case bytes.HasPrefix(b, []byte("PK\x03\x04")):
		return "Zip archive data", "application/zip; charset=binary"
	case len(b) > 262 && bytes.HasPrefix(b[257:], []byte("ustar")):
		return "POSIX tar archive", "application/x-tar; charset=binary"
	case bytes.HasPrefix(b, []byte("\x89PNG\r\n\x1a\n")):
		if len(b) >= 24 {
			w := int(b[16])<<24 | int(b[17])<<16 | int(b[18])<<8 | int(b[19])
			h := int(b[20])<<24 | int(b[21])<<16 | int(b[22])<<8 | int(b[23])
			return fmt.Sprintf("PNG image data, %d x %d", w, h), "image/png; charset=binary"
		}
		return "PNG image data", "image/png; charset=binary"
	case bytes.HasPrefix(b, []byte("\xff\xd8\xff")):
		return "JPEG image data", "image/jpeg; charset=binary"
	case bytes.HasPrefix(b, []byte("GIF8")):
		return "GIF image data", "image/gif; charset=binary"
	case bytes.HasPrefix(b, []byte("%PDF-")):
		return "PDF document", "application/pdf; charset=binary"
	case bytes.HasPrefix(b, []byte("SQLite format 3\x00")):
		return "SQLite 3.x database", "application/vnd.sqlite3; charset=binary"
	}
	if bytes.IndexByte(b, 0) >= 0 {
		return "data", "application/octet-stream; charset=binary"
	}
	text, charset := "ASCII text", "us-ascii"
	for _, c := range b {
		if c >= 0x80 {
			text, charset = "Unicode text, UTF-8 text", "utf-8"
			break
		}
	}
	if !utf8Valid(b, size) {
		text, charset = "ISO-8859 text", "iso-8859-1"
	}
	mimeType := "text/plain"
	kind := ""
	if bytes.HasPrefix(b, []byte("#!")) {
		line, _, _ := bytes.Cut(b, []byte("\n"))
		interp := strings.Fields(string(line[2:]))
		if len(interp) > 0 {
			prog := path.Base(interp[0])
			if prog == "env" && len(interp) > 1 {
				prog = interp[1]
				kind = fmt.Sprintf("a /usr/bin/env %s script, ", strings.Join(interp[1:], " "))
			} else {
				switch prog {
				case "bash":
					kind = "Bourne-Again shell script, "
				case "sh", "dash":
					kind = "POSIX shell script, "
				default:
					kind = fmt.Sprintf("a %s script, ", strings.Join(interp, " "))
				}
			}
			text += " executable"
			mimeType = "text/x-shellscript"
		}
	} else if t := bytes.TrimSpace(b); len(t) > 0 && (t[0] == '{' || t[0] == '[') && int64(len(b)) == size && jsonish(t) {
		return "JSON text data", "application/json; charset=" + charset
	} else if charset == "us-ascii" && csvish(b) {
		text, mimeType = "CSV text", "text/csv"
	}
	if bytes.Contains(b, []byte("\r\n")) {
		text += ", with CRLF line terminators"
	} else if !bytes.Contains(b, []byte("\n")) {
		text += ", with no line terminators"
	}
	return kind + text, mimeType + "; charset=" + charset
}

func utf8Valid(b []byte, size int64) bool {
	// the head may cut a multibyte rune; trim an incomplete tail
	for i := 0; i < 3 && len(b) > 0 && int64(len(b)) < size; i++ {
		if b[len(b)-1] < 0x80 {
			break
		}
		b = b[:len(b)-1]
	}
	return strings.ToValidUTF8(string(b), "\uFFFD") == string(b) || bytes.ContainsRune(b, '\uFFFD')
}

func jsonish(t []byte) bool {
	last := t[len(t)-1]
	return (t[0] == '{' && last == '}') || (t[0] == '[' && last == ']')
}

// ---- split ----

// csvish is the plain case of libmagic's CSV test: the first lines (up
// to ten, at least two) all hold the same number, more than one, of
// comma-separated fields. Quotes and carriage returns are left to the
// text verdict, as this machine's file 5.44 reads them.
func csvish(b []byte) bool {
	lines, fields := 0, 0
	for len(b) > 0 && lines < 10 {
		line, rest, ok := bytes.Cut(b, []byte("\n"))
		if !ok {
			break // a partial last line is not judged
		}
		b = rest
		if bytes.ContainsAny(line, "\"\r") {
			return false
		}
		n := 1 + bytes.Count(line, []byte(","))
		if n < 2 || fields != 0 && n != fields {
			return false
		}
		fields = n
		lines++
	}
	return lines >= 2
}
