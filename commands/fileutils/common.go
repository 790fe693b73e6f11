// Package fileutils holds the resident file commands (ls cp mv rm mkdir
// rmdir touch ln chmod chown stat readlink realpath mktemp truncate du df
// tree file install split mkfifo), GNU coreutils behaviour over the vfs.
package fileutils

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strconv"
	"strings"
	"syscall"

	"github.com/warren-sandbox/warren/commands"
	"github.com/warren-sandbox/warren/vfs"
)

// Register adds the file commands to t.
func Register(t commands.Table) {
	t.Register("ls", ls)
	t.Register("dir", ls)
	t.Register("cp", cp)
	t.Register("mv", mv)
	t.Register("rm", rm)
	t.Register("mkdir", mkdir)
	t.Register("rmdir", rmdir)
	t.Register("touch", touch)
	t.Register("ln", ln)
	t.Register("chmod", chmod)
	t.Register("chown", chown)
	t.Register("chgrp", chgrp)
	t.Register("stat", stat)
	t.Register("readlink", readlink)
	t.Register("realpath", realpath)
	t.Register("mktemp", mktemp)
	t.Register("truncate", truncate)
	t.Register("du", du)
	t.Register("df", df)
	t.Register("tree", tree)
	t.Register("file", file)
	t.Register("install", install)
	t.Register("split", split)
	t.Register("mkfifo", mkfifo)
	t.Register("flock", flock)
}

// badUsage prints a getopt error the GNU way and returns status.
func badUsage(inv *commands.Invocation, err error, status int) int {
	// an unknown option is a refusal: the ladder may run a fuller version
	return inv.BadUsage(err, fmt.Sprintf("%s: %s\nTry '%s --help' for more information.\n", inv.Args[0], err, inv.Args[0]), status)
}

// quote renders a file name as GNU's quote() does in diagnostics.
func quote(s string) string {
	if !strings.Contains(s, "'") {
		return "'" + s + "'"
	}
	if !strings.ContainsAny(s, "\"$`\\") {
		return "\"" + s + "\""
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// errnoOf extracts the errno behind err (0 if none).
func errnoOf(err error) syscall.Errno {
	var e syscall.Errno
	if errors.As(err, &e) {
		return e
	}
	return 0
}

func isNotExist(err error) bool { return errors.Is(err, fs.ErrNotExist) }

// statOf returns the vfs stat block of fi (never nil).
func statOf(fi fs.FileInfo) *vfs.Stat {
	if st, ok := fi.Sys().(*vfs.Stat); ok && st != nil {
		return st
	}
	return &vfs.Stat{Nlink: 1}
}

// blocksOf is the 512-byte block count shown for fi. The vfs charges
// exact bytes; ls, du and stat report ext4/tmpfs-style 4 KiB allocation so
// their numbers match what agents see on Debian (a 6-byte file is 4K, a
// directory 4K, a fast symlink 0).
func blocksOf(fi fs.FileInfo) int64 {
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		return 0
	case fi.IsDir():
		return 8
	case !fi.Mode().IsRegular():
		return 0
	}
	return (fi.Size() + 4095) / 4096 * 8
}

// idNames maps uids or gids to names from the sandbox's /etc/passwd or
// /etc/group (never the host's).
type idNames map[uint32]string

func loadIDs(inv *commands.Invocation, file string) idNames {
	m := idNames{}
	data, err := inv.FS.ReadFile(file)
	if err != nil {
		m[0] = "root"
		return m
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		f := strings.Split(sc.Text(), ":")
		if len(f) < 3 {
			continue
		}
		id, err := strconv.ParseUint(f[2], 10, 32)
		if err != nil {
			continue
		}
		if _, dup := m[uint32(id)]; !dup {
			m[uint32(id)] = f[0]
		}
	}
	if _, ok := m[0]; !ok {
		m[0] = "root"
	}
	return m
}

func (m idNames) name(id uint32) string {
	if n, ok := m[id]; ok {
		return n
	}
	return strconv.FormatUint(uint64(id), 10)
}

func (m idNames) lookup(name string) (uint32, bool) {
	for id, n := range m {
		if n == name {
			return id, true
		}
	}
	if id, err := strconv.ParseUint(name, 10, 32); err == nil {
		return uint32(id), true
	}
	return 0, false
}

// modeString renders mode as ls -l does ("drwxr-xr-x").
func modeString(m fs.FileMode) string {
	var b [10]byte
	switch {
	case m&fs.ModeDir != 0:
		b[0] = 'd'
	case m&fs.ModeSymlink != 0:
		b[0] = 'l'
	case m&fs.ModeNamedPipe != 0:
		b[0] = 'p'
	case m&fs.ModeSocket != 0:
		b[0] = 's'
	case m&fs.ModeCharDevice != 0:
		b[0] = 'c'
	case m&fs.ModeDevice != 0:
		b[0] = 'b'
	default:
		b[0] = '-'
	}
	const rwx = "rwxrwxrwx"
	for i := 0; i < 9; i++ {
		if m&(1<<uint(8-i)) != 0 {
			b[i+1] = rwx[i]
		} else {
			b[i+1] = '-'
		}
	}
	special := func(i int, set bool, lower, upper byte) {
		if !set {
			return
		}
		if b[i] == 'x' {
			b[i] = lower
		} else {
			b[i] = upper
		}
	}
	special(3, m&fs.ModeSetuid != 0, 's', 'S')
	special(6, m&fs.ModeSetgid != 0, 's', 'S')
	special(9, m&fs.ModeSticky != 0, 't', 'T')
	return string(b[:])
}

// unixMode converts an io/fs mode to the st_mode permission bits (07777).
func unixMode(m fs.FileMode) uint32 {
	u := uint32(m.Perm())
	if m&fs.ModeSetuid != 0 {
		u |= 0o4000
	}
	if m&fs.ModeSetgid != 0 {
		u |= 0o2000
	}
	if m&fs.ModeSticky != 0 {
		u |= 0o1000
	}
	return u
}

// fsMode converts st_mode permission bits to an io/fs mode.
func fsMode(u uint32) fs.FileMode {
	m := fs.FileMode(u & 0o777)
	if u&0o4000 != 0 {
		m |= fs.ModeSetuid
	}
	if u&0o2000 != 0 {
		m |= fs.ModeSetgid
	}
	if u&0o1000 != 0 {
		m |= fs.ModeSticky
	}
	return m
}

// typeBits is the S_IFMT part of st_mode.
func typeBits(m fs.FileMode) uint32 {
	switch {
	case m&fs.ModeDir != 0:
		return 0o040000
	case m&fs.ModeSymlink != 0:
		return 0o120000
	case m&fs.ModeNamedPipe != 0:
		return 0o010000
	case m&fs.ModeSocket != 0:
		return 0o140000
	case m&fs.ModeCharDevice != 0:
		return 0o020000
	case m&fs.ModeDevice != 0:
		return 0o060000
	}
	return 0o100000
}

// humanSize renders n bytes as ls -h / du -h do: one decimal below 10,
// always rounded up, powers of 1024.
func humanSize(n int64) string {
	if n < 1024 {
		return strconv.FormatInt(n, 10)
	}
	units := "KMGTPEZY"
	f := float64(n)
	i := -1
	for f >= 1024 && i < len(units)-1 {
		f /= 1024
		i++
	}
	if f < 10 {
		v := ceilTenth(f)
		if v >= 10 {
			return fmt.Sprintf("%d%c", int64(v), units[i])
		}
		return fmt.Sprintf("%.1f%c", v, units[i])
	}
	v := int64(f)
	if float64(v) < f {
		v++
	}
	if v >= 1024 && i < len(units)-1 {
		return fmt.Sprintf("1.0%c", units[i+1])
	}
	return fmt.Sprintf("%d%c", v, units[i])
}

func ceilTenth(f float64) float64 {
	t := int64(f * 10)
	if float64(t) < f*10-1e-9 {
		t++
	}
	return float64(t) / 10
}

// copyData streams src into dst with a pooled-size buffer.
func copyData(ctx context.Context, dst io.Writer, src io.Reader) error {
	buf := make([]byte, 64<<10)
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		n, err := src.Read(buf)
		if n > 0 {
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return werr
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// umask is the shell's file creation mask (`umask 077; touch f` gives 600,
// as in bash).
func umask(inv *commands.Invocation) fs.FileMode { return inv.Umask & fs.ModePerm }
