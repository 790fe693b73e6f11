package image

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing/fstest"
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

var supported = map[string]bool{"FROM": true, "COPY": true, "ADD": true, "RUN": true, "ENV": true, "WORKDIR": true, "USER": true, "LABEL": true, "ARG": true}

var knownUnsupported = map[string]bool{"CMD": true, "ENTRYPOINT": true, "EXPOSE": true, "VOLUME": true, "ONBUILD": true, "STOPSIGNAL": true, "HEALTHCHECK": true, "SHELL": true, "MAINTAINER": true}

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

// dfState is the image being built by a Dockerfile.
type dfState struct {
	m       *Manifest // nil for scratch
	cfg     Config
	args    map[string]string
	lastKey string
}

func (s *dfState) expand(v string) string {
	env := map[string]string{}
	for k, val := range s.args {
		env[k] = val
	}
	for _, kv := range s.cfg.Env {
		k, val, _ := strings.Cut(kv, "=")
		env[k] = val
	}
	return os.Expand(v, func(k string) string { return env[k] })
}

func setEnv(env []string, k, v string) []string {
	out := make([]string, 0, len(env)+1)
	for _, kv := range env {
		if name, _, _ := strings.Cut(kv, "="); name != k {
			out = append(out, kv)
		}
	}
	return append(out, k+"="+v)
}

// BuildDockerfile builds the Dockerfile at file with contextDir as the
// build context. Every instruction's result is cached under a digest of
// (parent, instruction, inputs), so an unchanged rebuild writes nothing.
func (c *Catalog) BuildDockerfile(ctx context.Context, file, contextDir string, opts BuildOptions) (Manifest, error) {
	f, err := os.Open(file)
	if err != nil {
		return Manifest{}, fmt.Errorf("Dockerfile: %w", err)
	}
	ins, err := ParseDockerfile(f)
	f.Close()
	if err != nil {
		return Manifest{}, err
	}
	ctxAbs, err := filepath.Abs(contextDir)
	if err != nil {
		return Manifest{}, err
	}
	if fi, err := os.Stat(ctxAbs); err != nil || !fi.IsDir() {
		return Manifest{}, fmt.Errorf("build context %s is not a directory", contextDir)
	}
	st := &dfState{args: map[string]string{}}
	logf := func(format string, a ...any) {
		if opts.Log != nil {
			fmt.Fprintf(opts.Log, format+"\n", a...)
		}
	}
	from := false
	for i, in := range ins {
		logf("step %d/%d: %s %s", i+1, len(ins), in.Cmd, in.Args)
		if err := c.step(ctx, st, in, ctxAbs, opts, &from, logf); err != nil {
			return Manifest{}, fmt.Errorf("Dockerfile:%d: %s: %w", in.Line, in.Cmd, err)
		}
	}
	if st.m == nil {
		// FROM scratch with no file changes: an empty image.
		m, err := c.buildTree(ctx, newTree(c.Limits), st.cfg, opts)
		if err != nil {
			return Manifest{}, err
		}
		st.m = &m
	}
	m := *st.m
	m.Config = st.cfg
	if err := c.putJSON(ctx, "manifests/"+m.Hex(), m); err != nil {
		return Manifest{}, err
	}
	return m, nil
}

func (c *Catalog) step(ctx context.Context, st *dfState, in Instruction, ctxDir string, opts BuildOptions, from *bool, logf func(string, ...any)) error {
	if in.Cmd == "ARG" {
		kvs, err := words(in.Args)
		if err != nil || len(kvs) == 0 {
			return errors.New("ARG needs NAME[=DEFAULT]")
		}
		for _, kv := range kvs {
			k, v, _ := strings.Cut(kv, "=")
			if ov, ok := opts.BuildArgs[k]; ok {
				v = ov
			}
			st.args[k] = v
		}
		return nil
	}
	if in.Cmd != "FROM" && !*from {
		return errors.New("no FROM before this instruction")
	}
	switch in.Cmd {
	case "FROM":
		*from = true
		ws, err := words(st.expand(in.Args))
		if err != nil || len(ws) == 0 {
			return errors.New("FROM needs an image name")
		}
		if len(ws) > 1 {
			return errors.New("FROM options and stage names are not supported")
		}
		st.cfg = Config{}
		st.m = nil
		if ws[0] == "scratch" {
			return nil
		}
		m, err := c.Resolve(ctx, ws[0])
		if errors.Is(err, fs.ErrNotExist) && ws[0] == DefaultName {
			// The embedded default needs no setup, here as in `warren run`.
			var im *Image
			if im, err = Default(ctx, c); err == nil {
				m = im.Manifest
			}
		}
		if err != nil {
			return err
		}
		st.m = &m
		st.cfg = m.Config
		return nil
	case "ENV":
		kvs, err := keyValues(in.Args)
		if err != nil {
			return err
		}
		for _, kv := range kvs {
			st.cfg.Env = setEnv(st.cfg.Env, kv[0], st.expand(kv[1]))
		}
		return nil
	case "LABEL":
		kvs, err := keyValues(in.Args)
		if err != nil {
			return err
		}
		if st.cfg.Labels == nil {
			st.cfg.Labels = map[string]string{}
		}
		for _, kv := range kvs {
			st.cfg.Labels[kv[0]] = st.expand(kv[1])
		}
		return nil
	case "USER":
		u := strings.TrimSpace(st.expand(in.Args))
		if u == "" || strings.ContainsAny(u, " \t") {
			return fmt.Errorf("bad user %q", in.Args)
		}
		st.cfg.User = u
		return nil
	case "WORKDIR":
		w := strings.TrimSpace(st.expand(in.Args))
		if w == "" {
			return errors.New("WORKDIR needs a path")
		}
		if !path.IsAbs(w) {
			w = path.Join("/", st.cfg.WorkingDir, w)
		}
		st.cfg.WorkingDir = path.Clean(w)
		rel := strings.TrimPrefix(st.cfg.WorkingDir, "/")
		if rel == "" {
			return nil
		}
		if st.m != nil {
			// An existing directory needs no new image.
			if im, err := c.Open(ctx, *st.m); err == nil {
				if fi, err := fs.Stat(im.FS(), rel); err == nil && fi.IsDir() {
					return nil
				}
			}
		}
		return c.fsStep(ctx, st, "WORKDIR "+st.cfg.WorkingDir, "", opts, logf, func(t *tree) error {
			_, err := t.dir(rel, true)
			return err
		})
	case "COPY", "ADD":
		return c.copyStep(ctx, st, in, ctxDir, opts, logf)
	case "RUN":
		return c.runStep(ctx, st, in, opts, logf)
	}
	return fmt.Errorf("unknown instruction %s", in.Cmd)
}

// fsStep runs change on a tree of the current image and makes the result
// the new image, unless the cache has the result of (parent, what, inputs).
func (c *Catalog) fsStep(ctx context.Context, st *dfState, what, inputs string, opts BuildOptions, logf func(string, ...any), change func(t *tree) error) error {
	h := sha256.New()
	parent := "scratch"
	if st.m != nil {
		parent = st.m.Digest
	}
	cfgJSON, _ := json.Marshal(st.cfg)
	fmt.Fprintf(h, "warren-image-step-v1\x00%s\x00%s\x00%s\x00%s", parent, cfgJSON, what, inputs)
	key := hex.EncodeToString(h.Sum(nil))
	var cached Manifest
	if err := c.getJSON(ctx, "cache/"+key, &cached); err == nil {
		if rc, err := c.store.Get(ctx, imageKey(cached.Hex())); err == nil {
			rc.Close()
			logf(" ---> cached %s", cached.Digest)
			st.m = &cached
			return nil
		}
	}
	t := newTree(c.Limits)
	if st.m != nil {
		im, err := c.Open(ctx, *st.m)
		if err != nil {
			return err
		}
		if err := t.addFS(ctx, im.FS(), ""); err != nil {
			return fmt.Errorf("reading parent image: %w", err)
		}
	}
	t.layer = 1
	if err := change(t); err != nil {
		return err
	}
	m, err := c.buildTree(ctx, t, st.cfg, opts)
	if err != nil {
		return err
	}
	if err := c.putJSON(ctx, "cache/"+key, m); err != nil {
		return err
	}
	logf(" ---> %s", m.Digest)
	st.m = &m
	return nil
}

func (c *Catalog) copyStep(ctx context.Context, st *dfState, in Instruction, ctxDir string, opts BuildOptions, logf func(string, ...any)) error {
	args, isJSON := jsonArgs(in.Args)
	var chown *[2]uint32
	if !isJSON {
		ws, err := words(st.expand(in.Args))
		if err != nil {
			return err
		}
		args = nil
		for _, w := range ws {
			if v, ok := strings.CutPrefix(w, "--chown="); ok && args == nil {
				u, g, _ := strings.Cut(v, ":")
				if g == "" {
					g = u
				}
				uid, err1 := strconv.ParseUint(u, 10, 32)
				gid, err2 := strconv.ParseUint(g, 10, 32)
				if err1 != nil || err2 != nil {
					return fmt.Errorf("--chown=%s: only numeric uid:gid is supported", v)
				}
				chown = &[2]uint32{uint32(uid), uint32(gid)}
				continue
			}
			if strings.HasPrefix(w, "--") && args == nil {
				return fmt.Errorf("option %s is not supported", w)
			}
			args = append(args, w)
		}
	}
	if len(args) < 2 {
		return errors.New("needs at least one source and a destination")
	}
	srcs, dest := args[:len(args)-1], args[len(args)-1]
	if !path.IsAbs(dest) {
		dest = path.Join("/", st.cfg.WorkingDir, dest) + map[bool]string{true: "/"}[strings.HasSuffix(dest, "/")]
	}
	// Resolve sources inside the context; none may leave it.
	var hosts []string
	inputs := sha256.New()
	for _, s := range srcs {
		if strings.Contains(s, "://") {
			return fmt.Errorf("%s: only local files are supported", s)
		}
		matches, err := filepath.Glob(filepath.Join(ctxDir, filepath.FromSlash(path.Clean("/"+s))))
		if err != nil || len(matches) == 0 {
			return fmt.Errorf("%s: not found in the build context", s)
		}
		for _, m := range matches {
			real, err := filepath.EvalSymlinks(m)
			if err != nil {
				return fmt.Errorf("%s: %w", s, err)
			}
			if real != ctxDir && !strings.HasPrefix(real, ctxDir+string(filepath.Separator)) {
				return fmt.Errorf("%s: outside the build context", s)
			}
			hosts = append(hosts, m)
			if err := hashHostTree(inputs, m); err != nil {
				return err
			}
		}
	}
	if chown != nil {
		fmt.Fprintf(inputs, "chown %d:%d", chown[0], chown[1])
	}
	what := in.Cmd + " " + strings.Join(srcs, " ") + " " + dest
	// The spool of ADDed tars must live until the image is written.
	var sp *spool
	defer func() {
		if sp != nil {
			sp.Close()
		}
	}()
	return c.fsStep(ctx, st, what, hex.EncodeToString(inputs.Sum(nil)), opts, logf, func(t *tree) error {
		destDir := strings.HasSuffix(dest, "/") || len(hosts) > 1
		for _, h := range hosts {
			fi, err := os.Stat(h)
			if err != nil {
				return err
			}
			target := strings.TrimPrefix(path.Clean(dest), "/")
			if in.Cmd == "ADD" && !fi.IsDir() && isTarName(h) {
				if sp == nil {
					var err error
					if sp, err = newSpool(c.cacheDir); err != nil {
						return err
					}
				}
				sub := newTree(c.Limits)
				f, err := os.Open(h)
				if err != nil {
					return err
				}
				err = sub.addTar(ctx, f, sp, false)
				f.Close()
				if err != nil {
					return fmt.Errorf("%s: %w", filepath.Base(h), err)
				}
				if err := t.graft(sub, target, nil); err != nil {
					return err
				}
				continue
			}
			if !fi.IsDir() && destDir {
				target = path.Join(target, filepath.Base(h))
			}
			if !fi.IsDir() {
				ino, err := hostFileInode(h)
				if err != nil {
					return err
				}
				copyOwner(chown)(ino)
				if err := t.put(target, ino); err != nil {
					return err
				}
				continue
			}
			sub := newTree(c.Limits)
			if err := sub.addHostDir(ctx, h); err != nil {
				return err
			}
			if err := t.graft(sub, target, copyOwner(chown)); err != nil {
				return err
			}
		}
		return nil
	})
}

func isTarName(p string) bool {
	for _, s := range []string{".tar", ".tar.gz", ".tgz"} {
		if strings.HasSuffix(p, s) {
			return true
		}
	}
	return false
}

// hostFileInode describes one host file for COPY.
func hostFileInode(p string) (*inode, error) {
	fi, err := os.Lstat(p)
	if err != nil {
		return nil, err
	}
	ino := &inode{mode: fi.Mode(), mtime: fi.ModTime()}
	switch {
	case fi.Mode().IsRegular():
		ino.size = fi.Size()
		ino.data = func() (io.ReadCloser, error) { return os.Open(p) }
	case fi.Mode()&fs.ModeSymlink != 0:
		if ino.target, err = os.Readlink(p); err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("%s: only regular files, symlinks and directories can be copied", filepath.Base(p))
	}
	return ino, nil
}

// copyOwner returns how COPY sets owners: root unless --chown, like
// Docker; nil keeps the source's owners (ADD of a tar).
func copyOwner(chown *[2]uint32) func(*inode) {
	return func(ino *inode) {
		ino.uid, ino.gid = 0, 0
		if chown != nil {
			ino.uid, ino.gid = chown[0], chown[1]
		}
	}
}

// graft copies the contents of sub into t under dest.
func (t *tree) graft(sub *tree, dest string, owner func(*inode)) error {
	if dest != "" {
		if _, err := t.dir(dest, true); err != nil {
			return err
		}
	}
	linked := map[*inode]string{}
	return sub.walk(func(p string, n *node) error {
		if p == "" {
			return nil
		}
		full := path.Join(dest, p)
		if first, ok := linked[n.ino]; ok {
			return t.link(full, first)
		}
		if n.ino.names > 1 {
			linked[n.ino] = full
		}
		ino := *n.ino
		ino.names = 0
		if owner != nil {
			owner(&ino)
		}
		return t.put(full, &ino)
	})
}

// hashHostTree feeds the names, modes, sizes, link targets and contents
// under p to h, so a COPY step's cache key changes when its inputs do.
func hashHostTree(h io.Writer, p string) error {
	return filepath.WalkDir(p, func(fp string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(p, fp)
		fmt.Fprintf(h, "%s\x00%o\x00%d\x00", rel, fi.Mode(), fi.Size())
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			t, _ := os.Readlink(fp)
			fmt.Fprintf(h, "%s\x00", t)
		case fi.Mode().IsRegular():
			f, err := os.Open(fp)
			if err != nil {
				return err
			}
			_, err = io.Copy(h, f)
			f.Close()
			if err != nil {
				return err
			}
		}
		return nil
	})
}

func (c *Catalog) runStep(ctx context.Context, st *dfState, in Instruction, opts BuildOptions, logf func(string, ...any)) error {
	req := RunRequest{Env: st.cfg.Env, WorkingDir: st.cfg.WorkingDir, User: st.cfg.User}
	if a, ok := jsonArgs(in.Args); ok {
		if len(a) == 0 {
			return errors.New("empty exec form")
		}
		req.Args = a
	} else {
		req.Command = in.Args
		req.Args = []string{"/bin/sh", "-c", in.Args}
	}
	// ARG values are visible to RUN as environment, as in Docker.
	keys := make([]string, 0, len(st.args))
	for k := range st.args {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	env := append([]string(nil), req.Env...)
	for _, k := range keys {
		found := false
		for _, kv := range env {
			if strings.HasPrefix(kv, k+"=") {
				found = true
			}
		}
		if !found {
			env = append(env, k+"="+st.args[k])
		}
	}
	req.Env = env
	what, _ := json.Marshal(req.Args)
	return c.fsStep(ctx, st, "RUN "+string(what), strings.Join(env, "\x00"), opts, logf, func(t *tree) error {
		if c.Runner == nil {
			return errors.New("RUN needs a sandbox runner and none is configured")
		}
		base := newTree(c.Limits)
		req.Base = fstest.MapFS{}
		if st.m != nil {
			req.Image = *st.m
			im, err := c.Open(ctx, *st.m)
			if err != nil {
				return err
			}
			req.Base = im.FS()
		}
		req.Stdout, req.Stderr = opts.Log, opts.Log
		if req.Stdout == nil {
			req.Stdout, req.Stderr = io.Discard, io.Discard
		}
		out, err := c.Runner.Run(ctx, req)
		if err != nil {
			return err
		}
		if err := base.addFS(ctx, out, ""); err != nil {
			return fmt.Errorf("reading the sandbox after RUN: %w", err)
		}
		*t = *base
		return nil
	})
}
