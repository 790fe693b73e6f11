package sandbox

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"
	"sync"
	"time"

	"github.com/warren-sandbox/warren/api"
	"github.com/warren-sandbox/warren/commands"
	"github.com/warren-sandbox/warren/image"
	"github.com/warren-sandbox/warren/native"
	"github.com/warren-sandbox/warren/shell"
	"github.com/warren-sandbox/warren/vfs"
)

// BuildRunner runs Dockerfile RUN steps (image.Runner) in a throwaway
// sandbox over the image built so far: the command runs in the resident
// shell, ELF files in the native tier when Native is available, and the
// sandbox's whole root filesystem afterwards becomes the step's layer.
type BuildRunner struct {
	Commands commands.Table
	// Catalog opens the image built so far (for its EROFS file, which the
	// native tier mounts).
	Catalog *image.Catalog
	// Native runs ELF files; nil or unavailable: they fail with the reason.
	Native *native.Runtime
	// Timeout bounds one RUN (default 30 minutes).
	Timeout time.Duration
	// DiskBytes bounds what one RUN may add (default 8 GiB).
	DiskBytes int64
}

var _ image.Runner = (*BuildRunner)(nil)

// Run executes req and returns the resulting root filesystem. A non-zero
// exit status is an error naming it, as in docker build.
func (r *BuildRunner) Run(ctx context.Context, req image.RunRequest) (fs.FS, error) {
	if len(req.Args) == 0 && req.Command == "" {
		return nil, errors.New("RUN: empty command")
	}
	timeout := r.Timeout
	if timeout <= 0 {
		timeout = 30 * time.Minute
	}
	disk := r.DiskBytes
	if disk <= 0 {
		disk = 8 << 30
	}
	base := req.Base
	imgPath := ""
	if req.Image.Digest != "" && r.Catalog != nil {
		im, err := r.Catalog.Open(ctx, req.Image)
		if err != nil {
			return nil, fmt.Errorf("RUN: cannot open image %s: %w", req.Image.Digest, err)
		}
		base, imgPath = im.FS(), im.Path
	}
	// A RUN step is untrusted like any exec: the default limits, with the
	// build's own time and disk, and room for compilers (4x the memory and
	// processes of an exec).
	lim := api.Limits{Timeout: api.Duration(timeout), DiskBytes: disk,
		MaxMemoryBytes: 4 * api.DefaultLimits.MaxMemoryBytes, Pids: 4 * api.DefaultLimits.Pids}.WithDefaults(api.DefaultLimits)
	fsys := vfs.New(vfs.Options{Base: base, MaxBytes: disk, MaxInodes: lim.DiskInodes})

	var idb [6]byte
	rand.Read(idb[:])
	id := "build-" + hex.EncodeToString(idb[:])
	var (
		mu sync.Mutex
		ws *native.Workspace
	)
	defer func() {
		if ws != nil {
			ws.Close()
		}
	}()
	hook := func(ctx context.Context, inv *commands.Invocation, path string) int {
		why := ""
		switch {
		case r.Native == nil:
			why = "the native tier is not enabled for image builds"
		case imgPath == "":
			why = "the image built so far has no EROFS file (FROM scratch)"
		default:
			if err := r.Native.Available(); err != nil {
				why = err.Error()
			}
		}
		if why != "" {
			fmt.Fprintf(inv.Stderr, "warren: %s: cannot execute binary file: %s\n", path, why)
			return 126
		}
		mu.Lock()
		if ws == nil {
			w, err := r.Native.Workspace(ctx, id, imgPath, fsys, NativeLimits(lim))
			if err != nil {
				mu.Unlock()
				fmt.Fprintf(inv.Stderr, "warren: %s: native tier: %v\n", path, err)
				return 126
			}
			ws = w
		}
		w := ws
		mu.Unlock()
		res, err := w.Exec(ctx, native.Cmd{
			Path: path, Args: inv.Args, Env: inv.Env, Dir: inv.Dir,
			Stdin: inv.Stdin, Stdout: inv.Stdout, Stderr: inv.Stderr,
		})
		if err != nil && ctx.Err() == nil {
			fmt.Fprintf(inv.Stderr, "warren: %s: native tier: %v\n", path, err)
			if res.Status == 0 {
				res.Status = 126
			}
		}
		return res.Status
	}
	cfg := ShellConfig(r.Commands, SessionConfig{
		FS: fsys, Env: req.Env, Dir: req.WorkingDir, Hostname: id, Limits: lim,
		Native: hook,
	})
	cfg.Limits.MaxOutputBytes = lim.MaxOutputBytes
	// The step runs as the image's USER, resolved in its /etc/passwd as a
	// sandbox of the image would be (image.LookupUser).
	u, err := image.LookupUser(fsys.ReadFile, req.User)
	if err != nil {
		return nil, fmt.Errorf("RUN: USER %s: %w", req.User, err)
	}
	cfg.User, cfg.Uid, cfg.Gid, cfg.Home = u.Name, u.Uid, u.Gid, u.Home
	if cfg.Sys != nil {
		cfg.Sys.Uid, cfg.Sys.Gid = u.Uid, u.Gid
	}
	sh, err := shell.New(cfg)
	if err != nil {
		return nil, err
	}
	src := req.Command
	if src == "" {
		words := make([]string, len(req.Args))
		for i, a := range req.Args {
			words[i] = quote(a)
		}
		src = strings.Join(words, " ")
	}
	stdout, stderr := req.Stdout, req.Stderr
	if stdout == nil {
		stdout = io.Discard
	}
	if stderr == nil {
		stderr = io.Discard
	}
	status, err := sh.Run(ctx, src, strings.NewReader(""), stdout, stderr)
	if err != nil {
		return nil, fmt.Errorf("RUN %s: %w", src, err)
	}
	if status != 0 {
		return nil, fmt.Errorf("RUN %s: exit status %d", src, status)
	}
	return RootFS(fsys), nil
}

// RootFS presents a sandbox's vfs as an io/fs file system rooted at "/"
// (names without a leading slash, "." for the root; FileInfo.Sys() is
// *vfs.Stat; symlinks readable through fs.ReadLinkFS).
func RootFS(f *vfs.FS) fs.FS { return rootFS{f} }

type rootFS struct{ f *vfs.FS }

func (r rootFS) abs(op, name string) (string, error) {
	if !fs.ValidPath(name) {
		return "", &fs.PathError{Op: op, Path: name, Err: fs.ErrInvalid}
	}
	if name == "." {
		return "/", nil
	}
	return "/" + name, nil
}

func (r rootFS) Open(name string) (fs.File, error) {
	p, err := r.abs("open", name)
	if err != nil {
		return nil, err
	}
	f, err := r.f.Open(p)
	if err != nil {
		return nil, err
	}
	return f, nil
}

func (r rootFS) Stat(name string) (fs.FileInfo, error) {
	p, err := r.abs("stat", name)
	if err != nil {
		return nil, err
	}
	return r.f.Stat(p)
}

func (r rootFS) Lstat(name string) (fs.FileInfo, error) {
	p, err := r.abs("lstat", name)
	if err != nil {
		return nil, err
	}
	return r.f.Lstat(p)
}

func (r rootFS) ReadDir(name string) ([]fs.DirEntry, error) {
	p, err := r.abs("readdir", name)
	if err != nil {
		return nil, err
	}
	return r.f.ReadDir(p)
}

func (r rootFS) ReadLink(name string) (string, error) {
	p, err := r.abs("readlink", name)
	if err != nil {
		return "", err
	}
	return r.f.Readlink(p)
}
