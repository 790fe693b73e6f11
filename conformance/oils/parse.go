// Package oils runs the Oils spec-test cases (the developer conformance set
// in shared/conformance/oils) against warren's shell, and optionally against
// a reference shell on the host, with the expectations for bash.
package oils

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
)

// Case is one "#### NAME" case with its expectations for bash.
type Case struct {
	Name   string
	Line   int // 1-based line of the #### header
	Code   string
	Stdout *string // nil: not checked
	Stderr *string
	Status int
}

// File is one parsed *.test.sh file.
type File struct {
	Name   string
	Header map[string]string
	Cases  []Case
}

var (
	metaRe  = regexp.MustCompile(`^## (?:((?:OK|BUG|N-I)(?:-\d)?) (\S+) )?([A-Za-z_-]+):(.*)$`)
	blockRe = regexp.MustCompile(`^## (?:((?:OK|BUG|N-I)(?:-\d)?) (\S+) )?(STDOUT|STDERR):\s*$`)
)

type rawCase struct {
	name string
	line int
	code []string
	// key -> value; qualified keys for bash override the plain ones
	plain   map[string]string
	bash    map[string]string
	hasCode bool
	inline  string
}

func namesBash(shells string) bool {
	for _, s := range strings.Split(shells, "/") {
		if s == "bash" || strings.HasPrefix(s, "bash-") {
			return true
		}
	}
	return false
}

// Parse reads a spec file.
func Parse(name string, r io.Reader) (*File, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	var lines []string
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("cannot read %s: %w", name, err)
	}
	f := &File{Name: name, Header: map[string]string{}}
	var cur *rawCase
	var raws []*rawCase
	inCode := false
	for i := 0; i < len(lines); i++ {
		ln := lines[i]
		if strings.HasPrefix(ln, "####") {
			cur = &rawCase{name: strings.TrimSpace(strings.TrimPrefix(ln, "####")), line: i + 1, plain: map[string]string{}, bash: map[string]string{}}
			raws = append(raws, cur)
			inCode = true
			continue
		}
		if m := blockRe.FindStringSubmatch(ln); m != nil {
			var block []string
			j := i + 1
			for ; j < len(lines); j++ {
				l := lines[j]
				if l == "## END" {
					break
				}
				if strings.HasPrefix(l, "####") || metaRe.MatchString(l) || blockRe.MatchString(l) {
					j--
					break
				}
				if isComment(l) {
					continue
				}
				block = append(block, l+"\n")
			}
			i = j
			if cur == nil {
				continue
			}
			inCode = false
			key := strings.ToLower(m[3])
			val := strings.Join(block, "")
			if m[1] != "" {
				if namesBash(m[2]) {
					cur.bash[key] = val
				}
			} else {
				cur.plain[key] = val
			}
			continue
		}
		if m := metaRe.FindStringSubmatch(ln); m != nil {
			key := m[3]
			val := strings.TrimLeft(m[4], " \t")
			if cur == nil {
				f.Header[key] = val
				continue
			}
			inCode = false
			if key == "stdout" || key == "stderr" {
				val += "\n"
			}
			if key == "code" {
				cur.hasCode = true
				cur.inline = val
				continue
			}
			if m[1] != "" {
				if namesBash(m[2]) {
					cur.bash[key] = val
				}
			} else {
				cur.plain[key] = val
			}
			continue
		}
		if cur == nil || !inCode {
			continue
		}
		if isComment(ln) {
			continue
		}
		if len(cur.code) == 0 && strings.TrimSpace(ln) == "" {
			continue
		}
		cur.code = append(cur.code, ln+"\n")
	}
	for _, rc := range raws {
		c := Case{Name: rc.name, Line: rc.line}
		if rc.hasCode {
			c.Code = rc.inline
		} else {
			c.Code = strings.Join(rc.code, "")
		}
		get := func(k string) (string, bool) {
			if v, ok := rc.bash[k]; ok {
				return v, true
			}
			v, ok := rc.plain[k]
			return v, ok
		}
		_ = get
		var err error
		if c.Stdout, err = pickValue(rc, "stdout"); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", name, rc.line, err)
		}
		if c.Stderr, err = pickValue(rc, "stderr"); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", name, rc.line, err)
		}
		if v, ok := get("status"); ok {
			n, err := strconv.Atoi(strings.TrimSpace(v))
			if err != nil {
				return nil, fmt.Errorf("%s:%d: bad status %q", name, rc.line, v)
			}
			c.Status = n
		}
		f.Cases = append(f.Cases, c)
	}
	return f, nil
}

// pickValue resolves stdout/stderr for bash. Block values (STDOUT:) are
// stored under the same key as "stdout" but already end in newlines; we tell
// them apart by how they were stored.
func pickValue(rc *rawCase, base string) (*string, error) {
	src := rc.plain
	if _, ok := rc.bash[base]; ok {
		src = rc.bash
	} else if _, ok := rc.bash[base+"-json"]; ok {
		src = rc.bash
	}
	if v, ok := src[base+"-json"]; ok {
		var s string
		if err := json.Unmarshal([]byte(v), &s); err != nil {
			return nil, fmt.Errorf("bad %s-json %q: %w", base, v, err)
		}
		return &s, nil
	}
	if v, ok := src[base]; ok {
		s := v
		return &s, nil
	}
	return nil, nil
}

func isComment(l string) bool {
	t := strings.TrimLeft(l, " \t")
	return strings.HasPrefix(t, "#")
}
