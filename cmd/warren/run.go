package main

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/signal"
	"path"
	"path/filepath"
	"runtime/debug"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/warren-sandbox/warren/api"
	"github.com/warren-sandbox/warren/commands"
	"github.com/warren-sandbox/warren/image"
	"github.com/warren-sandbox/warren/sandbox"
	"github.com/warren-sandbox/warren/shell"
	"github.com/warren-sandbox/warren/vfs"
	"github.com/warren-sandbox/warren/wasm"
)

func init() { verbs = append(verbs, newRunCmd) }

func newRunCmd() *cobra.Command {
	var (
		script            string
		imgName, security string
		cwd               string
		envs              []string
		copyIns           []string
		data              string
		lf                limitFlags
		cf                commandsFlags
	)
	c := &cobra.Command{
		Use:   "run [flags] [-c SCRIPT | FILE [ARG...]]",
		Short: "run a bash script in a fresh in-process sandbox",
		Long: "run starts a fresh sandbox in this process and runs SCRIPT (-c), FILE (read from the host),\n" +
			"or the script on stdin. stdout/stderr pass through; the exit status is the script's.\n" +
			"The host environment is not passed in: use --env.\n" +
			"Every limit is on by default, the same defaults as `warren serve` (docs/limits.md);\n" +
			"a script stopped by one exits 124 (timeout) or 125 (another limit) naming it.",
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			src := script
			var params []string
			file := "" // FILE as given: the script's $0 and the name in its messages
			switch {
			case cmd.Flags().Changed("command"):
				params = args
			case len(args) > 0:
				data, err := os.ReadFile(args[0])
				if err != nil {
					return fmt.Errorf("cannot read script: %w", err)
				}
				src = string(data)
				file, params = args[0], args[1:]
			default:
				data, err := io.ReadAll(cmd.InOrStdin())
				if err != nil {
					return fmt.Errorf("cannot read script from stdin: %w", err)
				}
				src = string(data)
			}
			lim, err := lf.limits()
			if err != nil {
				return err
			}
			lim = lim.WithDefaults(api.DefaultLimits)
			runHolds := lim.DiskBytes + lim.MaxMemoryBytes + 256<<20
			if os.Getenv("GOMEMLIMIT") == "" {
				// What the run may hold (its delta and its budget) plus the
				// process itself: past it the GC works harder instead of
				// letting garbage double the heap (a full 1 GiB quota took
				// 2.4 GB RSS without it).
				debug.SetMemoryLimit(lim.DiskBytes + lim.MaxMemoryBytes + 256<<20)
			}
			fsys, imagePath, imgCfg, closeImage, err := sandboxFS(cmd.Context(), data, imgName, lim)
			if err != nil {
				return err
			}
			defer closeImage()
			if err := api.CheckSecurity(security); err != nil {
				return fmt.Errorf("--security: %w", err)
			}
			nat := &runNative{off: !lim.NativeAllowed(), imagePath: imagePath, fsys: fsys,
				limits: sandbox.NativeLimits(lim), security: security}
			defer nat.close()
			for _, ci := range copyIns {
				host, dst, ok := strings.Cut(ci, ":")
				if !ok || host == "" || !strings.HasPrefix(dst, "/") {
					return fmt.Errorf("--copy-in %q: want HOSTPATH:/SANDBOX/PATH", ci)
				}
				if err := copyIn(fsys, host, dst); err != nil {
					return err
				}
			}
			for _, kv := range envs {
				if !strings.Contains(kv, "=") {
					return fmt.Errorf("--env %q: want K=V", kv)
				}
			}
			// The image's user, WORKDIR and environment, as a sandbox of
			// `warren serve` of the same image starts with; --env wins.
			start, err := imgCfg.StartOf(fsys.ReadFile)
			if err != nil {
				return fmt.Errorf("--image %s: %w", imgName, err)
			}
			if cwd == "" {
				cwd = start.Dir
			}
			if err := fsys.MkdirAll(cwd, 0o755); err != nil {
				return fmt.Errorf("--cwd %s: %w", cwd, err)
			}
			user := ""
			if start.User.Uid != 0 {
				user = start.User.Name
			}
			// The same shell configuration as a sandbox of `warren serve`,
			// with one memory budget for the run.
			policy, err := cf.value()
			if err != nil {
				return err
			}
			scfg := sandbox.ShellConfig(residentCommands(), sandbox.SessionConfig{
				FS: fsys, Env: append(start.Env, envs...), Dir: cwd, User: user, Limits: lim,
				Memory: commands.NewMemory(lim.MaxMemoryBytes), Native: nat.exec, Commands: policy,
			})
			// WASM modules run in process; compiles persist in the data dir.
			wcache := ""
			if d, err := imageDataDir(data); err == nil {
				wcache = filepath.Join(d, "cache", "wasm")
			}
			wrt := wasm.New(wasm.Config{CacheDir: wcache})
			defer wrt.Close(context.Background())
			scfg.WASM = wrt.Exec
			// No manager truncates here: the shell's output limit is the limit.
			scfg.Limits.MaxOutputBytes = lim.MaxOutputBytes
			sh, err := shell.New(scfg)
			if err != nil {
				return err
			}
			if file == "" && len(params) > 0 {
				sh.SetArgs(params)
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt)
			defer stop()
			stopWatch := make(chan struct{})
			go backstop{heapMax: 2 * uint64(runHolds), deadline: time.Duration(lim.Timeout), every: 250 * time.Millisecond,
				stderr: cmd.ErrOrStderr(), exit: os.Exit}.run(stopWatch)
			var st int
			if file != "" {
				st, err = sh.RunFile(ctx, file, params, src, cmd.InOrStdin(), cmd.OutOrStdout(), cmd.ErrOrStderr())
			} else {
				st, err = sh.Run(ctx, src, cmd.InOrStdin(), cmd.OutOrStdout(), cmd.ErrOrStderr())
			}
			close(stopWatch)
			if err != nil {
				return err
			}
			if st != 0 {
				return exitStatus(st)
			}
			return nil
		},
	}
	c.Flags().StringVarP(&script, "command", "c", "", "script text to run")
	c.Flags().StringVar(&imgName, "image", image.DefaultName, "base image: a tag or digest in the data directory's catalog")
	c.Flags().StringVar(&security, "security", api.SecurityDefault, "native tier confinement: default (Docker's seccomp profile and capabilities, masked /proc) or relaxed (none of those; trusted images only)")
	cf.register(c.Flags())
	c.Flags().StringVar(&data, "data", "", "data directory holding images (default $WARREN_DATA, else ~/.local/share/warren)")
	c.Flags().StringVar(&cwd, "cwd", "", "working directory in the sandbox (default the image's WORKDIR: /home/user for the default image)")
	c.Flags().StringArrayVar(&envs, "env", nil, "K=V environment variable (repeatable)")
	c.Flags().StringArrayVar(&copyIns, "copy-in", nil, "HOSTPATH:SANDBOXPATH to copy into the sandbox first (repeatable)")
	lf.register(c.Flags())
	return c
}

// openBase opens the image ref (a tag or digest; "" or "default" is the
// embedded default image, installed on first use) from the data directory's
// catalog, and returns its filesystem and the path of its EROFS file.
func openBase(ctx context.Context, dataFlag, ref string) (fs.FS, string, func(), error) {
	im, closeCat, err := openBaseImage(ctx, dataFlag, ref)
	if err != nil {
		return nil, "", nil, err
	}
	return im.FS(), im.Path, closeCat, nil
}

// openBaseImage is openBase with the image itself (its config too).
func openBaseImage(ctx context.Context, dataFlag, ref string) (*image.Image, func(), error) {
	data, err := imageDataDir(dataFlag)
	if err != nil {
		return nil, nil, err
	}
	cat, closeCat, err := openImageCatalog(data)
	if err != nil {
		return nil, nil, err
	}
	var im *image.Image
	if ref == "" || ref == image.DefaultName {
		im, err = image.Default(ctx, cat)
	} else {
		var m image.Manifest
		if m, err = cat.ResolveRef(ctx, ref); err == nil {
			im, err = cat.Open(ctx, m)
		}
	}
	if err != nil {
		closeCat()
		return nil, nil, localNotFound(fmt.Errorf("--image %s: %w", ref, err), data)
	}
	return im, closeCat, nil
}

// sandboxFS is the root for `warren run`: a fresh delta over the image.
// Its delta is bounded by the disk limits, as a served sandbox's is.
func sandboxFS(ctx context.Context, dataFlag, ref string, lim api.Limits) (*vfs.FS, string, image.Config, func(), error) {
	im, closeBase, err := openBaseImage(ctx, dataFlag, ref)
	if err != nil {
		return nil, "", image.Config{}, nil, err
	}
	fsys := vfs.New(vfs.Options{Base: im.FS(), MaxBytes: lim.DiskBytes, MaxInodes: lim.DiskInodes})
	// Images built from arbitrary trees may lack /dev; the default has it,
	// so this adds nothing to the delta there.
	if err := shell.MakeDev(fsys); err != nil {
		closeBase()
		return nil, "", image.Config{}, nil, err
	}
	return fsys, im.Path, im.Manifest.Config, closeBase, nil
}

// copyIn copies a host file or tree into the sandbox, keeping modes and
// modification times.
func copyIn(fsys *vfs.FS, host, dst string) error {
	return filepath.WalkDir(host, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return fmt.Errorf("--copy-in: %w", err)
		}
		rel, _ := filepath.Rel(host, p)
		target := path.Join(dst, filepath.ToSlash(rel))
		info, err := d.Info()
		if err != nil {
			return fmt.Errorf("--copy-in: %w", err)
		}
		switch {
		case d.IsDir():
			if err := fsys.MkdirAll(target, info.Mode().Perm()|0o700); err != nil {
				return fmt.Errorf("--copy-in: %w", err)
			}
			fsys.Chmod(target, info.Mode().Perm())
		case info.Mode()&fs.ModeSymlink != 0:
			link, err := os.Readlink(p)
			if err != nil {
				return fmt.Errorf("--copy-in: %w", err)
			}
			if err := fsys.Symlink(link, target); err != nil {
				return fmt.Errorf("--copy-in: %w", err)
			}
			return nil
		case info.Mode().IsRegular():
			if err := fsys.MkdirAll(path.Dir(target), 0o755); err != nil {
				return fmt.Errorf("--copy-in: %w", err)
			}
			data, err := os.ReadFile(p)
			if err != nil {
				return fmt.Errorf("--copy-in: %w", err)
			}
			if err := fsys.WriteFile(target, data, info.Mode().Perm()); err != nil {
				return fmt.Errorf("--copy-in: %w", err)
			}
		default:
			return nil
		}
		if err := fsys.Chtimes(target, info.ModTime(), info.ModTime()); err != nil {
			return fmt.Errorf("--copy-in: %w", err)
		}
		return nil
	})
}

var _ = context.Background
