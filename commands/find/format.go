package find

// find's output formats: -printf and -ls.

import (
	"fmt"
	"io/fs"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/warren-sandbox/warren/commands/fileutils"
	"github.com/warren-sandbox/warren/commands/sysinfo"
)

func (f *finder) printf(format string, e *entry) string {
	var b strings.Builder
	for i := 0; i < len(format); i++ {
		c := format[i]
		if c == '\\' && i+1 < len(format) {
			i++
			switch format[i] {
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			case '0':
				b.WriteByte(0)
			case 'a':
				b.WriteByte('\a')
			case 'b':
				b.WriteByte('\b')
			case 'f':
				b.WriteByte('\f')
			case 'r':
				b.WriteByte('\r')
			case 'v':
				b.WriteByte('\v')
			case '\\':
				b.WriteByte('\\')
			case 'c':
				return b.String()
			default:
				b.WriteByte('\\')
				b.WriteByte(format[i])
			}
			continue
		}
		if c != '%' || i+1 >= len(format) {
			b.WriteByte(c)
			continue
		}
		j := i + 1
		for j < len(format) && strings.IndexByte("-+ #0", format[j]) >= 0 {
			j++
		}
		for j < len(format) && (format[j] >= '0' && format[j] <= '9' || format[j] == '.') {
			j++
		}
		if j >= len(format) {
			b.WriteString(format[i:])
			break
		}
		spec := format[i+1 : j]
		verb := format[j]
		i = j
		var s string
		num := false
		st := statOf(e.fi)
		switch verb {
		case '%':
			b.WriteByte('%')
			continue
		case 'p':
			s = e.disp
		case 'f':
			s = path.Base(e.disp)
			if e.disp == "/" {
				s = "/"
			}
		case 'h':
			s = "."
			if i := strings.LastIndexByte(strings.TrimSuffix(e.disp, "/"), '/'); i > 0 {
				s = e.disp[:i]
			} else if i == 0 {
				s = "/"
			}
		case 'P':
			s = strings.TrimPrefix(strings.TrimPrefix(e.disp, e.root), "/")
		case 'H':
			s = e.root
		case 's':
			s, num = strconv.FormatInt(e.fi.Size(), 10), true
		case 'd':
			s, num = strconv.Itoa(e.depth), true
		case 'm':
			s = strconv.FormatUint(uint64(fileutils.UnixMode(e.fi.Mode())), 8)
		case 'M':
			s = fileutils.ModeString(e.fi.Mode())
		case 'u':
			if f.users == nil {
				f.users = fileutils.Names(f.inv, "/etc/passwd")
			}
			s = f.users(st.Uid)
		case 'g':
			if f.groups == nil {
				f.groups = fileutils.Names(f.inv, "/etc/group")
			}
			s = f.groups(st.Gid)
		case 'U':
			s, num = strconv.FormatUint(uint64(st.Uid), 10), true
		case 'G':
			s, num = strconv.FormatUint(uint64(st.Gid), 10), true
		case 'i':
			s, num = strconv.FormatUint(st.Ino, 10), true
		case 'n':
			s, num = strconv.FormatUint(uint64(max(st.Nlink, 1)), 10), true
		case 'k':
			s, num = strconv.FormatInt(blocks(e.fi)/2, 10), true
		case 'b':
			s, num = strconv.FormatInt(blocks(e.fi), 10), true
		case 'y':
			s = typeChar(e.fi.Mode())
		case 'Y':
			s = typeChar(e.fi.Mode())
			if e.fi.Mode()&fs.ModeSymlink != 0 {
				if fi, err := f.inv.FS.Stat(e.abs); err == nil {
					s = typeChar(fi.Mode())
				} else {
					s = "N"
				}
			}
		case 'l':
			if e.fi.Mode()&fs.ModeSymlink != 0 {
				s, _ = f.inv.FS.Readlink(e.abs)
			}
		case 'D':
			s, num = "45", true
		case 'F':
			s = "warren"
		case 'S':
			s = "1.0"
		case 't', 'a', 'c', 'T', 'A', 'C':
			which := map[byte]byte{'t': 'm', 'T': 'm', 'a': 'a', 'A': 'a', 'c': 'c', 'C': 'c'}[verb]
			t := fileTime(e.fi, which).In(f.loc)
			if verb >= 'a' && verb <= 'z' {
				s = t.Format("Mon Jan _2 15:04:05.") + fmt.Sprintf("%09d0", t.Nanosecond()) + t.Format(" 2006")
			} else {
				if i+1 >= len(format) {
					b.WriteString("%" + string(verb))
					continue
				}
				i++
				s = timeDirective(format[i], t)
			}
		default:
			b.WriteByte('%')
			b.WriteByte(verb)
			continue
		}
		if spec == "" {
			b.WriteString(s)
		} else if num {
			n, _ := strconv.ParseInt(s, 10, 64)
			fmt.Fprintf(&b, "%"+spec+"d", n)
		} else {
			fmt.Fprintf(&b, "%"+spec+"s", s)
		}
	}
	return b.String()
}

func timeDirective(k byte, t time.Time) string {
	frac := fmt.Sprintf("%09d0", t.Nanosecond())
	switch k {
	case '@':
		return fmt.Sprintf("%d.%s", t.Unix(), frac)
	case '+':
		return t.Format("2006-01-02+15:04:05.") + frac
	case 'T':
		return t.Format("15:04:05.") + frac
	case 'S':
		return t.Format("05.") + frac
	}
	return sysinfo.Strftime("%"+string(k), t)
}

func blocks(fi fs.FileInfo) int64 {
	switch {
	case fi.Mode()&fs.ModeSymlink != 0, !fi.IsDir() && !fi.Mode().IsRegular():
		return 0
	case fi.IsDir():
		return 8
	}
	return (fi.Size() + 4095) / 4096 * 8
}

func (f *finder) lsLine(e *entry) string {
	st := statOf(e.fi)
	if f.users == nil {
		f.users = fileutils.Names(f.inv, "/etc/passwd")
	}
	if f.groups == nil {
		f.groups = fileutils.Names(f.inv, "/etc/group")
	}
	t := e.fi.ModTime().In(f.loc)
	date := t.Format("Jan _2 15:04")
	if f.now.Sub(t) > 182*24*time.Hour || t.After(f.now) {
		date = t.Format("Jan _2  2006")
	}
	name := e.disp
	if e.fi.Mode()&fs.ModeSymlink != 0 {
		tgt, _ := f.inv.FS.Readlink(e.abs)
		name += " -> " + tgt
	}
	return fmt.Sprintf("%9d %6d %s %3d %-8s %-8s %12d %s %s\n", st.Ino, blocks(e.fi)/2,
		fileutils.ModeString(e.fi.Mode()), max(st.Nlink, 1), f.users(st.Uid), f.groups(st.Gid), e.fi.Size(), date, name)
}
