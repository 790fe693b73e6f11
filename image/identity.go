package image

import (
	"errors"
	"fmt"
	"io/fs"
	"strconv"
	"strings"
)

// User is who a sandbox's shell runs as.
type User struct {
	Name     string // the passwd name, or the uid in decimal when it has none
	Uid, Gid int
	Home     string
}

// DefaultPath is the PATH of an image whose config sets none (Docker's).
const DefaultPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// LookupUser resolves a USER spec ("name", "uid", "name:group",
// "uid:gid"; "" is root) against /etc/passwd and /etc/group of a root
// filesystem, read with readFile. As in Docker, a numeric uid needs no
// passwd entry (its home is then /), a name does.
func LookupUser(readFile func(string) ([]byte, error), spec string) (User, error) {
	if spec == "" {
		spec = "0"
	}
	name, group, hasGroup := strings.Cut(spec, ":")
	passwd := entries(readFile, "/etc/passwd", 7)
	u := User{Home: "/"}
	uid, numeric := parseID(name)
	found := false
	for _, e := range passwd {
		id, ok := parseID(e[2])
		if !ok || !(e[0] == name || (numeric && id == uid)) {
			continue
		}
		gid, _ := parseID(e[3])
		u = User{Name: e[0], Uid: id, Gid: gid, Home: e[5]}
		found = true
		break
	}
	switch {
	case found:
	case numeric:
		u = User{Name: name, Uid: uid, Gid: uid, Home: "/"}
		if uid == 0 {
			u.Name, u.Home = "root", "/root"
		}
	default:
		return User{}, fmt.Errorf("user %q is not in the image's /etc/passwd", name)
	}
	if hasGroup {
		gid, ok := parseID(group)
		if !ok {
			ok = false
			for _, e := range entries(readFile, "/etc/group", 4) {
				if e[0] == group {
					gid, ok = parseID(e[2])
					break
				}
			}
			if !ok {
				return User{}, fmt.Errorf("group %q is not in the image's /etc/group", group)
			}
		}
		u.Gid = gid
	}
	if u.Home == "" {
		u.Home = "/"
	}
	return u, nil
}

func parseID(s string) (int, bool) {
	n, err := strconv.ParseUint(s, 10, 31)
	return int(n), err == nil
}

// entries reads a colon-separated database; a missing file is empty.
func entries(readFile func(string) ([]byte, error), p string, fields int) [][]string {
	data, err := readFile(p)
	if err != nil || len(data) > 4<<20 {
		return nil
	}
	var out [][]string
	for _, line := range strings.Split(string(data), "\n") {
		if f := strings.Split(line, ":"); len(f) >= fields {
			out = append(out, f)
		}
	}
	return out
}

// Start is how a fresh sandbox of an image begins: the same for `warren
// run` and a server's sandboxes.
type Start struct {
	User User
	Dir  string   // WORKDIR, else /
	Env  []string // the image's, plus HOME and PATH when it sets none
}

// StartOf is the Start of an image with config c over a root filesystem
// read with readFile.
func (c Config) StartOf(readFile func(string) ([]byte, error)) (Start, error) {
	u, err := LookupUser(readFile, c.User)
	if err != nil {
		return Start{}, err
	}
	s := Start{User: u, Dir: c.WorkingDir, Env: append([]string(nil), c.Env...)}
	if s.Dir == "" {
		s.Dir = "/"
	}
	has := func(k string) bool {
		for _, kv := range s.Env {
			if strings.HasPrefix(kv, k+"=") {
				return true
			}
		}
		return false
	}
	if !has("PATH") {
		s.Env = append(s.Env, "PATH="+DefaultPath)
	}
	if !has("HOME") {
		s.Env = append(s.Env, "HOME="+u.Home)
	}
	return s, nil
}

// FSReader adapts an fs.FS (an opened image) to the readFile of
// LookupUser and StartOf; absolute names are taken from its root.
func FSReader(fsys fs.FS) func(string) ([]byte, error) {
	return func(p string) ([]byte, error) {
		p = strings.TrimPrefix(p, "/")
		if p == "" {
			return nil, errors.New("not a file")
		}
		return fs.ReadFile(fsys, p)
	}
}
