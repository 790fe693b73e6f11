package image

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"
)

// Runner executes a Dockerfile RUN in a sandbox created from the image
// built so far and returns that sandbox's whole root filesystem after the
// command (FileInfo.Sys() *vfs.Stat, symlinks via fs.ReadLinkFS). The lead
// wires it to the sandbox package; image only defines it.
type Runner interface {
	Run(ctx context.Context, req RunRequest) (fs.FS, error)
}

// RunRequest is one RUN instruction.
type RunRequest struct {
	Image      Manifest // the image built so far
	Base       fs.FS    // its root filesystem
	Args       []string // exec form; for shell form ["/bin/sh", "-c", Command]
	Command    string   // shell form text ("" for exec form)
	Env        []string
	WorkingDir string
	User       string
	Stdout     io.Writer
	Stderr     io.Writer
}

// Instruction is one parsed Dockerfile line.
type Instruction struct {
	Line int
	Cmd  string // upper case
	Args string // raw text after the instruction word
}

var supported = map[string]bool{"FROM": true, "COPY": true, "ADD": true, "RUN": true, "ENV": true, "WORKDIR": true, "USER": true, "LABEL": true, "ARG": true,
	"CMD": true, "ENTRYPOINT": true, "EXPOSE": true}

var knownUnsupported = map[string]bool{"VOLUME": true, "ONBUILD": true, "STOPSIGNAL": true, "HEALTHCHECK": true, "SHELL": true, "MAINTAINER": true}

// ParseDockerfile splits a Dockerfile into instructions, joining
// continuation lines. Unknown instructions are errors naming the line.
func ParseDockerfile(r io.Reader) ([]Instruction, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	var out []Instruction
	var cur strings.Builder
	start, n := 0, 0
	flush := func() error {
		text := strings.TrimSpace(cur.String())
		cur.Reset()
		if text == "" {
			return nil
		}
		word, rest, _ := strings.Cut(text, " ")
		if i := strings.IndexAny(word, "\t"); i >= 0 {
			word, rest = word[:i], word[i+1:]+" "+rest
		}
		cmd := strings.ToUpper(word)
		switch {
		case supported[cmd]:
		case knownUnsupported[cmd]:
			return fmt.Errorf("Dockerfile:%d: instruction %s is not supported by warren image build", start, cmd)
		default:
			return fmt.Errorf("Dockerfile:%d: unknown instruction %q", start, word)
		}
		out = append(out, Instruction{Line: start, Cmd: cmd, Args: strings.TrimSpace(rest)})
		return nil
	}
	for sc.Scan() {
		n++
		line := sc.Text()
		trimmed := strings.TrimSpace(line)
		if cur.Len() == 0 {
			if trimmed == "" || strings.HasPrefix(trimmed, "#") {
				continue
			}
			start = n
		} else if strings.HasPrefix(trimmed, "#") {
			continue // comment inside a continuation
		}
		if strings.HasSuffix(trimmed, "\\") {
			cur.WriteString(strings.TrimSuffix(trimmed, "\\"))
			cur.WriteByte(' ')
			continue
		}
		cur.WriteString(line)
		if err := flush(); err != nil {
			return nil, err
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("Dockerfile: %w", err)
	}
	if err := flush(); err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, errors.New("Dockerfile: no instructions")
	}
	if out[0].Cmd != "FROM" && out[0].Cmd != "ARG" {
		return nil, fmt.Errorf("Dockerfile:%d: the first instruction must be FROM, not %s", out[0].Line, out[0].Cmd)
	}
	return out, nil
}

// words splits s like a shell would for ENV/LABEL/ARG: whitespace
// separated, double and single quotes, backslash escapes.
func words(s string) ([]string, error) {
	var out []string
	var cur strings.Builder
	in := false
	var quote rune
	esc := false
	for _, r := range s {
		switch {
		case esc:
			cur.WriteRune(r)
			esc = false
			in = true
		case r == '\\' && quote != '\'':
			esc = true
		case quote != 0:
			if r == quote {
				quote = 0
			} else {
				cur.WriteRune(r)
			}
		case r == '"' || r == '\'':
			quote = r
			in = true
		case r == ' ' || r == '\t':
			if in {
				out = append(out, cur.String())
				cur.Reset()
				in = false
			}
		default:
			cur.WriteRune(r)
			in = true
		}
	}
	if quote != 0 {
		return nil, errors.New("unterminated quote")
	}
	if in {
		out = append(out, cur.String())
	}
	return out, nil
}

// keyValues parses "K=V K2=V2" or the legacy "K V" form.
func keyValues(s string) ([][2]string, error) {
	ws, err := words(s)
	if err != nil {
		return nil, err
	}
	if len(ws) == 0 {
		return nil, errors.New("missing arguments")
	}
	if !strings.Contains(ws[0], "=") {
		k, v, _ := strings.Cut(strings.TrimSpace(s), " ")
		if len(ws) < 2 {
			return nil, fmt.Errorf("%s: missing value", ws[0])
		}
		vs, err := words(v)
		if err != nil {
			return nil, err
		}
		return [][2]string{{k, strings.Join(vs, " ")}}, nil
	}
	var out [][2]string
	for _, w := range ws {
		k, v, ok := strings.Cut(w, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("%q is not NAME=VALUE", w)
		}
		out = append(out, [2]string{k, v})
	}
	return out, nil
}

// jsonArgs returns the exec-form array if s is one.
func jsonArgs(s string) ([]string, bool) {
	if !strings.HasPrefix(strings.TrimSpace(s), "[") {
		return nil, false
	}
	var a []string
	if json.Unmarshal([]byte(s), &a) != nil {
		return nil, false
	}
	return a, true
}
