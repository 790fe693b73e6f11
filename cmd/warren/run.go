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
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/warren-sandbox/warren/image"
	"github.com/warren-sandbox/warren/native"
	"github.com/warren-sandbox/warren/shell"
	"github.com/warren-sandbox/warren/vfs"
)

func init() { verbs = append(verbs, newRunCmd) }

func newRunCmd() *cobra.Command {
	var (
		script   string
		imgName  string
		cwd      string
		envs     []string
		copyIns  []string
		timeout  time.Duration
		data     string
		memory   string
		cpus     float64
		pids     int
		noNative bool
	)
	c := &cobra.Command{
		Use:   "run [flags] [-c SCRIPT | FILE [ARG...]]",
		Short: "run a bash script in a fresh in-process sandbox",
		Long: "run starts a fresh sandbox in this process and runs SCRIPT (-c), FILE (read from the host),\n" +
			"or the script on stdin. stdout/stderr pass through; the exit status is the script's.\n" +
			"The host environment is not passed in: use --env.",
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			src := script
			var params []string
			switch {
			case cmd.Flags().Changed("c"):
				params = args
			case len(args) > 0:
				data, err := os.ReadFile(args[0])
				if err != nil {
					return fmt.Errorf("cannot read script: %w", err)
				}
				src = string(data)
				params = args[1:]
			default:
				data, err := io.ReadAll(cmd.InOrStdin())
				if err != nil {
					return fmt.Errorf("cannot read script from stdin: %w", err)
				}
				src = string(data)
			}
			fsys, imagePath, closeImage, err := sandboxFS(cmd.Context(), data, imgName)
			if err != nil {
				return err
			}
			defer closeImage()
			nat := &runNative{off: noNative, imagePath: imagePath, fsys: fsys,
				limits: native.Limits{CPUs: cpus, Pids: int64(pids)}}
			if memory != "" {
				if nat.limits.Memory, err = parseSize(memory); err != nil {
					return fmt.Errorf("--memory: %w", err)
				}
			}
			if cpus < 0 || pids < 0 {
				return fmt.Errorf("--cpus and --pids must not be negative")
			}
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
			if cwd == "" {
				cwd = "/home/user"
			}
			if err := fsys.MkdirAll(cwd, 0o755); err != nil {
				return fmt.Errorf("--cwd %s: %w", cwd, err)
			}
			sh, err := shell.New(shell.Config{
				FS: fsys, Commands: residentCommands(), Env: envs, Dir: cwd,
				Limits: shell.Limits{Timeout: timeout}, Uid: 1000, Gid: 1000, User: "user",
				Native: nat.exec,
			})
			if err != nil {
				return err
			}
			if len(params) > 0 {
				src = "set -- " + shellWords(params) + "\n" + src
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt)
			defer stop()
			st, err := sh.Run(ctx, src, cmd.InOrStdin(), cmd.OutOrStdout(), cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			if st != 0 {
				return exitStatus(st)
			}
			return nil
		},
	}
	c.Flags().StringVarP(&script, "c", "c", "", "script text to run")
	c.Flags().StringVar(&imgName, "image", image.DefaultName, "base image: a tag or digest in the data directory's catalog")
	c.Flags().StringVar(&data, "data", "", "data directory holding images (default $WARREN_DATA, else ~/.local/share/warren)")
	c.Flags().StringVar(&cwd, "cwd", "", "working directory in the sandbox (default /home/user)")
	c.Flags().StringArrayVar(&envs, "env", nil, "K=V environment variable (repeatable)")
	c.Flags().StringArrayVar(&copyIns, "copy-in", nil, "HOSTPATH:SANDBOXPATH to copy into the sandbox first (repeatable)")
	c.Flags().DurationVar(&timeout, "timeout", 0, "wall-time limit for the script (default 5m)")
	c.Flags().StringVar(&memory, "memory", "", "memory limit of native (ELF) processes, e.g. 512M")
	c.Flags().Float64Var(&cpus, "cpus", 0, "CPU share of native processes, e.g. 0.5 (0: unlimited)")
	c.Flags().IntVar(&pids, "pids", 0, "process limit of native processes (0: the default)")
	c.Flags().BoolVar(&noNative, "no-native", false, "refuse to run ELF files")
	return c
}

func shellWords(ws []string) string {
	q := make([]string, len(ws))
	for i, w := range ws {
		q[i] = "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
	}
	return strings.Join(q, " ")
}

// openBase opens the image ref (a tag or digest; "" or "default" is the
// embedded default image, installed on first use) from the data directory's
// catalog, and returns its filesystem and the path of its EROFS file.
func openBase(ctx context.Context, dataFlag, ref string) (fs.FS, string, func(), error) {
	data, err := imageDataDir(dataFlag)
	if err != nil {
		return nil, "", nil, err
	}
	cat, closeCat, err := openImageCatalog(data)
	if err != nil {
		return nil, "", nil, err
	}
	var im *image.Image
	if ref == "" || ref == image.DefaultName {
		im, err = image.Default(ctx, cat)
	} else {
		im, err = cat.OpenRef(ctx, ref)
	}
	if err != nil {
		closeCat()
		return nil, "", nil, fmt.Errorf("--image %s: %w", ref, err)
	}
	return im.FS(), im.Path, closeCat, nil
}

// sandboxFS is the root for `warren run`: a fresh delta over the image.
func sandboxFS(ctx context.Context, dataFlag, ref string) (*vfs.FS, string, func(), error) {
	base, imagePath, closeBase, err := openBase(ctx, dataFlag, ref)
	if err != nil {
		return nil, "", nil, err
	}
	fsys := vfs.New(vfs.Options{Base: base})
	// Images built from arbitrary trees may lack /dev; the default has it,
	// so this adds nothing to the delta there.
	if err := shell.MakeDev(fsys); err != nil {
		closeBase()
		return nil, "", nil, err
	}
	return fsys, imagePath, closeBase, nil
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
