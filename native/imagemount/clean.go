package imagemount

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"golang.org/x/sys/unix"
)

// MountsUnder lists the mount points at or below dir in this process's mount
// namespace, deepest first.
func MountsUnder(dir string) ([]string, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil, fmt.Errorf("imagemount: cannot read mount table: %w", err)
	}
	defer f.Close()
	dir = filepath.Clean(dir)
	var out []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 5 {
			continue
		}
		mp := unescapeMountinfo(fields[4])
		if mp == dir || strings.HasPrefix(mp, dir+"/") {
			out = append(out, mp)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("imagemount: cannot read mount table: %w", err)
	}
	// Deepest first so children go before their parents; a path mounted
	// several times appears several times and each unmount peels one.
	sort.SliceStable(out, func(i, j int) bool {
		return strings.Count(out[i], "/") > strings.Count(out[j], "/")
	})
	return out, nil
}

// unescapeMountinfo undoes the octal escapes (\040 for space ...) of
// /proc/self/mountinfo.
func unescapeMountinfo(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			v := 0
			ok := true
			for _, c := range s[i+1 : i+4] {
				if c < '0' || c > '7' {
					ok = false
					break
				}
				v = v*8 + int(c-'0')
			}
			if ok {
				b.WriteByte(byte(v))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// UnmountUnder detaches every mount at or below dir (but not dir itself when
// keepTop is set).
func UnmountUnder(dir string, keepTop bool) error {
	dir = filepath.Clean(dir)
	for round := 0; round < 8; round++ {
		mps, err := MountsUnder(dir)
		if err != nil {
			return err
		}
		n := 0
		var errs []error
		for _, mp := range mps {
			if keepTop && mp == dir {
				continue
			}
			n++
			if err := unix.Unmount(mp, unix.MNT_DETACH); err != nil && !errors.Is(err, unix.EINVAL) && !errors.Is(err, unix.ENOENT) {
				errs = append(errs, fmt.Errorf("imagemount: cannot unmount %s: %w", mp, err))
			}
		}
		if n == 0 {
			return nil
		}
		if len(errs) > 0 {
			return errors.Join(errs...)
		}
	}
	return fmt.Errorf("imagemount: mounts remain under %s after 8 rounds of unmounting", dir)
}

// CleanDir unmounts everything below dir and removes its contents. It never
// removes files while a mount remains below dir, so a failed unmount cannot
// turn into deleting files of a mounted filesystem.
func CleanDir(dir string) error {
	if err := UnmountUnder(dir, true); err != nil {
		return err
	}
	mps, err := MountsUnder(dir)
	if err != nil {
		return err
	}
	for _, mp := range mps {
		if mp != filepath.Clean(dir) {
			return fmt.Errorf("imagemount: %s is still mounted; not removing %s", mp, dir)
		}
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("imagemount: cannot list %s: %w", dir, err)
	}
	var errs []error
	for _, e := range ents {
		if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
			errs = append(errs, fmt.Errorf("imagemount: cannot remove stale %s: %w", e.Name(), err))
		}
	}
	return errors.Join(errs...)
}
