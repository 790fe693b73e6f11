package image

import (
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
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing/fstest"
)

// dfState is the image being built by a Dockerfile: the current stage
// and the stages before it (for FROM STAGE and COPY --from).
type dfState struct {
	m       *Manifest // nil for scratch
	cfg     Config
	args    map[string]string
	stages  []dfStage
	name    string // the current stage's AS name
	context *tree
}

type dfStage struct {
	name string
	m    *Manifest
	cfg  Config
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

// stage finds an earlier stage by its AS name or index.
func (s *dfState) stage(ref string) (dfStage, bool) {
	for _, st := range s.stages {
		if st.name != "" && strings.EqualFold(st.name, ref) {
			return st, true
		}
	}
	if i, err := strconv.Atoi(ref); err == nil && i >= 0 && i < len(s.stages) {
		return s.stages[i], true
	}
	return dfStage{}, false
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
// build context ("" file: contextDir/Dockerfile). Every instruction's
// result is cached under a digest of (parent, instruction, inputs), so an
// unchanged rebuild writes nothing.
func (c *Catalog) BuildDockerfile(ctx context.Context, file, contextDir string, opts BuildOptions) (Manifest, error) {
	if file == "" {
		file = path.Join(contextDir, DefaultDockerfile)
	}
	f, err := os.Open(file)
	if err != nil {
		return Manifest{}, fmt.Errorf("Dockerfile: %w", err)
	}
	defer f.Close()
	t, err := c.contextTree(ctx, contextDir)
	if err != nil {
		return Manifest{}, err
	}
	return c.buildDockerfile(ctx, f, t, opts)
}

// buildDockerfile runs the Dockerfile text df over the context tree bc.
func (c *Catalog) buildDockerfile(ctx context.Context, df io.Reader, bc *tree, opts BuildOptions) (Manifest, error) {
	ins, err := ParseDockerfile(df)
	if err != nil {
		return Manifest{}, err
	}
	st := &dfState{args: map[string]string{}, context: bc}
	logf := func(format string, a ...any) {
		if opts.Log != nil {
			fmt.Fprintf(opts.Log, format+"\n", a...)
		}
	}
	from := false
	for i, in := range ins {
		logf("step %d/%d: %s %s", i+1, len(ins), in.Cmd, in.Args)
		if err := c.step(ctx, st, in, opts, &from, logf); err != nil {
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

// from starts a stage: FROM IMAGE [AS NAME].
func (c *Catalog) from(ctx context.Context, st *dfState, args string, first bool, opts BuildOptions, logf func(string, ...any)) error {
	ws, err := words(st.expand(args))
	if err != nil || len(ws) == 0 {
		return errors.New("FROM needs an image name")
	}
	if strings.HasPrefix(ws[0], "--") {
		return fmt.Errorf("FROM option %s is not supported", ws[0])
	}
	name := ""
	switch {
	case len(ws) == 3 && strings.EqualFold(ws[1], "AS"):
		name = ws[2]
		if !stageNameRe.MatchString(name) {
			return fmt.Errorf("bad stage name %q", name)
		}
	case len(ws) != 1:
		return fmt.Errorf("want FROM IMAGE [AS NAME], got %q", args)
	}
	if !first {
		st.stages = append(st.stages, dfStage{name: st.name, m: st.m, cfg: st.cfg})
	}
	st.name, st.cfg, st.m = name, Config{}, nil
	ref := ws[0]
	if ref == "scratch" {
		return nil
	}
	if prev, ok := st.stage(ref); ok && !isDigit(ref) {
		st.m, st.cfg = prev.m, prev.cfg
		return nil
	}
	m, err := c.baseImage(ctx, ref, opts, logf)
	if err != nil {
		return err
	}
	st.m = &m
	st.cfg = m.Config
	return nil
}

var stageNameRe = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9._-]{0,63}$`)

func isDigit(s string) bool { _, err := strconv.Atoi(s); return err == nil }

// baseImage resolves a FROM or COPY --from image: the build's scope (a
// tenant's own tags), the catalog, the embedded default, then (when the
// build may) its registry.
func (c *Catalog) baseImage(ctx context.Context, ref string, opts BuildOptions, logf func(string, ...any)) (Manifest, error) {
	if opts.Scope != "" {
		if strings.HasPrefix(ref, strings.SplitN(opts.Scope, "/", 2)[0]+"/") {
			return Manifest{}, fmt.Errorf("image %q not found (name images without the tenants/ prefix): %w", ref, fs.ErrNotExist)
		}
		if m, err := c.Resolve(ctx, opts.Scope+ref); err == nil {
			return m, nil
		}
	}
	m, err := c.ResolveRef(ctx, ref)
	if errors.Is(err, fs.ErrNotExist) && ref == DefaultName {
		// The embedded default needs no setup, here as in `warren run`.
		var im *Image
		if im, err = Default(ctx, c); err == nil {
			m = im.Manifest
		}
	}
	if err == nil || !errors.Is(err, fs.ErrNotExist) {
		return m, err
	}
	if !opts.Pull {
		return Manifest{}, fmt.Errorf("image %q is not in the catalog (add it with `warren image pull %s`): %w", ref, ref, fs.ErrNotExist)
	}
	logf(" ---> pulling %s", ref)
	return c.Pull(ctx, ref, opts)
}

func (c *Catalog) step(ctx context.Context, st *dfState, in Instruction, opts BuildOptions, from *bool, logf func(string, ...any)) error {
	if in.Cmd == "ARG" {
		kvs, err := words(in.Args)
		if err != nil || len(kvs) == 0 {
			return errors.New("ARG needs NAME[=DEFAULT]")
		}
		for _, kv := range kvs {
			k, v, hasDefault := strings.Cut(kv, "=")
			if ov, ok := opts.BuildArgs[k]; ok {
				v = ov
			} else if !hasDefault {
				// A bare ARG in a later stage re-declares the global one.
				v = st.args[k]
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
		first := !*from
		*from = true
		return c.from(ctx, st, in.Args, first, opts, logf)
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
	case "CMD", "ENTRYPOINT":
		argv, err := commandForm(in.Args)
		if err != nil {
			return err
		}
		if in.Cmd == "CMD" {
			st.cfg.Cmd = argv
		} else {
			// As in Docker, a new ENTRYPOINT drops the CMD inherited with it.
			st.cfg.Entrypoint, st.cfg.Cmd = argv, nil
		}
		return nil
	case "EXPOSE":
		ws, err := words(st.expand(in.Args))
		if err != nil || len(ws) == 0 {
			return errors.New("EXPOSE needs PORT[/PROTOCOL]")
		}
		for _, w := range ws {
			p, err := exposedPort(w)
			if err != nil {
				return err
			}
			if !contains(st.cfg.ExposedPorts, p) {
				st.cfg.ExposedPorts = append(st.cfg.ExposedPorts, p)
			}
		}
		sort.Strings(st.cfg.ExposedPorts)
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
		return c.copyStep(ctx, st, in, opts, logf)
	case "RUN":
		return c.runStep(ctx, st, in, opts, logf)
	}
	return fmt.Errorf("unknown instruction %s", in.Cmd)
}

// commandForm is the argv of CMD or ENTRYPOINT: the exec form as written,
// the shell form through /bin/sh -c.
func commandForm(args string) ([]string, error) {
	if a, ok := jsonArgs(args); ok {
		return a, nil
	}
	if strings.TrimSpace(args) == "" {
		return nil, errors.New("needs a command")
	}
	return []string{"/bin/sh", "-c", strings.TrimSpace(args)}, nil
}

// exposedPort normalises "8080" and "8080/tcp" to the OCI "PORT/PROTO".
func exposedPort(w string) (string, error) {
	port, proto, _ := strings.Cut(w, "/")
	if proto == "" {
		proto = "tcp"
	}
	n, err := strconv.Atoi(port)
	if err != nil || n < 1 || n > 65535 || (proto != "tcp" && proto != "udp" && proto != "sctp") {
		return "", fmt.Errorf("bad port %q: want PORT[/tcp|udp|sctp] with 1 <= PORT <= 65535", w)
	}
	return strconv.Itoa(n) + "/" + proto, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
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

func (c *Catalog) copyStep(ctx context.Context, st *dfState, in Instruction, opts BuildOptions, logf func(string, ...any)) error {
	args, isJSON := jsonArgs(in.Args)
	var chown *[2]uint32
	fromRef := ""
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
			if v, ok := strings.CutPrefix(w, "--from="); ok && args == nil && in.Cmd == "COPY" {
				if v == "" {
					return errors.New("--from needs a stage or image")
				}
				fromRef = v
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
	// The source tree: the context, or an earlier stage or an image.
	src, where := st.context, "the build context"
	inputs := sha256.New()
	if fromRef != "" {
		var m *Manifest
		if prev, ok := st.stage(fromRef); ok {
			m = prev.m
		} else {
			bm, err := c.baseImage(ctx, fromRef, opts, logf)
			if err != nil {
				return fmt.Errorf("--from=%s: %w", fromRef, err)
			}
			m = &bm
		}
		var err error
		if src, err = c.stageTree(ctx, m); err != nil {
			return fmt.Errorf("--from=%s: %w", fromRef, err)
		}
		where = "--from=" + fromRef
		if m != nil {
			fmt.Fprintf(inputs, "from %s\x00", m.Digest)
		}
	}
	type source struct {
		name string
		n    *node
	}
	var found []source
	for _, s := range srcs {
		if strings.Contains(s, "://") {
			return fmt.Errorf("%s: only local files are supported", s)
		}
		matches, err := src.glob(s)
		if err != nil {
			return err
		}
		if len(matches) == 0 {
			return fmt.Errorf("%s: not found in %s", s, where)
		}
		for _, p := range matches {
			rp, n, err := src.follow(p)
			if err != nil {
				return err
			}
			name := path.Base(p)
			if p == "" {
				name = ""
			}
			found = append(found, source{name, n})
			fmt.Fprintf(inputs, "%s\x00%s\x00", p, rp)
			if fromRef == "" {
				if err := hashNode(inputs, n); err != nil {
					return err
				}
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
		destDir := strings.HasSuffix(dest, "/") || len(found) > 1
		for _, f := range found {
			target := strings.TrimPrefix(path.Clean(dest), "/")
			isDir := f.n.ino.mode.IsDir()
			if in.Cmd == "ADD" && fromRef == "" && f.n.ino.mode.IsRegular() && isTarName(f.name) {
				if sp == nil {
					var err error
					if sp, err = newSpool(c.cacheDir); err != nil {
						return err
					}
				}
				sub := newTree(c.Limits)
				rc, err := f.n.ino.open()
				if err != nil {
					return err
				}
				err = sub.addTar(ctx, rc, sp, false)
				rc.Close()
				if err != nil {
					return fmt.Errorf("%s: %w", f.name, err)
				}
				if err := t.graft(sub, target, nil); err != nil {
					return err
				}
				continue
			}
			if isDir {
				if err := t.graft(&tree{root: f.n}, target, copyOwner(chown)); err != nil {
					return err
				}
				continue
			}
			if destDir {
				target = path.Join(target, f.name)
			}
			ino := *f.n.ino
			ino.names = 0
			copyOwner(chown)(&ino)
			if err := t.put(target, &ino); err != nil {
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
