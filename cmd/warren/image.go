package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/containerd/errdefs"
	"github.com/spf13/cobra"
	"golang.org/x/sys/unix"

	"github.com/warren-sandbox/warren/api"
	"github.com/warren-sandbox/warren/image"
	"github.com/warren-sandbox/warren/native"
	"github.com/warren-sandbox/warren/sandbox"
	"github.com/warren-sandbox/warren/sandbox/boltmeta"
	"github.com/warren-sandbox/warren/sandbox/node"
	"github.com/warren-sandbox/warren/sandbox/workerpool"
	storedir "github.com/warren-sandbox/warren/store/dir"
)

func init() { verbs = append(verbs, newImageCmd) }

// buildRunDir is the native tier's run directory for `image build` (not
// serve's, so a build never fights a running server for its lock).
const buildRunDir = "/run/warren/native-build"

// imageInUse reports whether a sandbox recorded in DATA/meta.db was made
// from digest. While warren serve runs it holds meta.db: the check then
// fails, and `image rm` refuses rather than guess.
func imageInUse(ctx context.Context, data string) (func(string) bool, error) {
	used := map[string]bool{}
	// Every metadata file: the in-process node's and each worker's.
	for _, p := range workerpool.MetaFiles(data) {
		db, err := boltmeta.Open(p)
		if err != nil {
			return nil, fmt.Errorf("cannot check whether sandboxes use the image (is warren serve running on %s? stop it first, or remove it through the server without --local): %w", data, err)
		}
		recs, err := db.Sandboxes(ctx)
		db.Close()
		if err != nil {
			return nil, err
		}
		for _, r := range recs {
			used[r.ImageDigest] = true
		}
	}
	return func(d string) bool { return used[d] }, nil
}

// imageDataDir is the data directory of a verb: --data, else the default
// that serve uses too (defaultDataDir).
func imageDataDir(flag string) (string, error) {
	if flag != "" {
		return flag, nil
	}
	return defaultDataDir(), nil
}

// openImageCatalog opens the blob store under data (DATA/blobs) and the
// image catalog over it (local files in DATA/cache, as the sandbox node has them). `run` and
// `serve` use it too, with image.Default for zero setup.
func openImageCatalog(data string) (*image.Catalog, func(), error) {
	st, err := storedir.Open(filepath.Join(data, "blobs"))
	if err != nil {
		return nil, nil, fmt.Errorf("cannot open data directory %s: %w", data, err)
	}
	c, err := image.NewCatalog(st, filepath.Join(data, "cache"))
	if err != nil {
		st.Close()
		return nil, nil, err
	}
	return c, func() { c.Close(); st.Close() }, nil
}

// imageFlags are the flags every image verb shares: where the catalog is.
type imageFlags struct {
	conn
	data  string
	local bool
}

// isLocal reports whether a verb works on a data directory's catalog
// (--local or --data) rather than through the configured server.
func (f *imageFlags) isLocal() bool { return f.local || f.data != "" }

func newImageCmd() *cobra.Command {
	var f imageFlags
	var tag, dockerfile string
	cmd := &cobra.Command{
		Use:   "image",
		Short: "build and manage base images (on the configured server, or --local)",
		Long: `Images are EROFS files sandboxes start from.

build, ls and rm talk to the configured server by default (--server,
$WARREN_SERVER, http://127.0.0.1:7711) and act on the images of the API
key's tenant. With --local (or --data DIR) they act on a data directory's
catalog instead: images built there without a tenants/ prefix are the
node's shared images, which every tenant of a server on that directory can
start from (a tenant's own image of the same name comes first).
pull, inspect and export always work on the local data directory.`,
	}
	f.flags(cmd)
	cmd.PersistentFlags().StringVar(&f.data, "data", "", "data directory (implies --local; default $WARREN_DATA, else ~/.local/share/warren)")
	cmd.PersistentFlags().BoolVar(&f.local, "local", false, "use the data directory's catalog instead of the server")
	withCatalog := func(fn func(ctx context.Context, c *image.Catalog, cmd *cobra.Command, args []string) error) func(*cobra.Command, []string) error {
		return runE(func(cmd *cobra.Command, args []string) error {
			dir, err := imageDataDir(f.data)
			if err != nil {
				return err
			}
			c, done, err := openImageCatalog(dir)
			if err != nil {
				return err
			}
			defer done()
			c.Runner = &sandbox.BuildRunner{Commands: node.Commands(), Catalog: c}
			ctx := cmd.Context()
			if ctx == nil {
				ctx = context.Background()
			}
			if cmd.Name() == "rm" {
				if c.InUse, err = imageInUse(ctx, dir); err != nil {
					return err
				}
			}
			if cmd.Name() == "build" && localDockerfile(dockerfile, args) != "" {
				// RUN steps: resident shell, ELF files natively when the
				// host allows it.
				rt, err := native.NewRuntime(ctx, native.Config{RunDir: buildRunDir})
				if err != nil {
					return err
				}
				defer rt.Close()
				if why := rt.Available(); why != nil {
					fmt.Fprintf(cmd.ErrOrStderr(), "warren: RUN steps cannot run ELF files: %v\n", why)
				}
				c.Runner.(*sandbox.BuildRunner).Native = rt
			}
			return localNotFound(fn(ctx, c, cmd, args), dir)
		})
	}

	var buildArgs []string
	build := &cobra.Command{
		Use:   "build -t NAME [-f Dockerfile] SOURCE",
		Short: "build an image from a directory (its Dockerfile if it has one), a tar (- for stdin), or locally oci:DIR and docker-archive:FILE",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts := image.BuildOptions{Stdin: cmd.InOrStdin(), Log: cmd.ErrOrStderr(), Progress: newProgress(cmd.ErrOrStderr()), Pull: true}
			for _, a := range buildArgs {
				k, v, ok := strings.Cut(a, "=")
				if !ok || k == "" {
					return cliError(usageError(fmt.Errorf("--build-arg %q: want NAME=VALUE", a)))
				}
				if opts.BuildArgs == nil {
					opts.BuildArgs = map[string]string{}
				}
				opts.BuildArgs[k] = v
			}
			if !f.isLocal() {
				return runE(func(cmd *cobra.Command, args []string) error {
					return remoteBuild(cmd, &f.conn, tag, dockerfile, args[0], opts.BuildArgs)
				})(cmd, args)
			}
			return withCatalog(func(ctx context.Context, c *image.Catalog, cmd *cobra.Command, args []string) error {
				stderr := cmd.ErrOrStderr()
				start := time.Now()
				var m image.Manifest
				var err error
				if df := localDockerfile(dockerfile, args); df != "" {
					m, err = c.BuildDockerfile(ctx, df, args[0], opts)
				} else {
					m, err = c.BuildSource(ctx, args[0], opts)
				}
				if err != nil {
					return err
				}
				if tag != "" {
					if err := c.Tag(ctx, tag, m); err != nil {
						return err
					}
				}
				fmt.Fprintf(stderr, "built %s: %d entries, %d bytes in %v\n", m.Digest, m.Files, m.Size, time.Since(start).Round(time.Millisecond))
				fmt.Fprintln(cmd.OutOrStdout(), m.Digest)
				return nil
			})(cmd, args)
		},
	}
	build.Flags().StringVarP(&tag, "tag", "t", "", "name the image (required for a server build)")
	build.Flags().StringVarP(&dockerfile, "file", "f", "", "build from this Dockerfile with SOURCE as the context (default SOURCE/Dockerfile when it exists)")
	build.Flags().StringArrayVar(&buildArgs, "build-arg", nil, "Dockerfile ARG value NAME=VALUE")

	ls := &cobra.Command{
		Use:   "ls",
		Short: "list images",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if !f.isLocal() {
				return runE(func(cmd *cobra.Command, _ []string) error {
					cl, err := f.client()
					if err != nil {
						return err
					}
					list, err := cl.ListImages(cmd.Context())
					if err != nil {
						return err
					}
					tw := tabwriter.NewWriter(cmd.OutOrStdout(), 2, 8, 2, ' ', 0)
					fmt.Fprintln(tw, "NAME\tDIGEST\tSIZE\tSHARED")
					for _, im := range list {
						fmt.Fprintf(tw, "%s\t%.19s\t%d\t%v\n", im.Name, im.Digest, im.Size, im.Shared)
					}
					return tw.Flush()
				})(cmd, args)
			}
			return withCatalog(func(ctx context.Context, c *image.Catalog, cmd *cobra.Command, _ []string) error {
				list, err := c.List(ctx)
				if err != nil {
					return err
				}
				tw := tabwriter.NewWriter(cmd.OutOrStdout(), 2, 8, 2, ' ', 0)
				fmt.Fprintln(tw, "NAME\tDIGEST\tSIZE\tFILES")
				for _, t := range list {
					fmt.Fprintf(tw, "%s\t%.19s\t%d\t%d\n", t.Name, t.Digest, t.Size, t.Files)
				}
				return tw.Flush()
			})(cmd, args)
		},
	}
	inspect := &cobra.Command{
		Use:   "inspect NAME",
		Short: "show a local image's digest, size, file count and config",
		Args:  cobra.ExactArgs(1),
		RunE: withCatalog(func(ctx context.Context, c *image.Catalog, cmd *cobra.Command, args []string) error {
			m, err := c.ResolveRef(ctx, args[0])
			if err != nil {
				return err
			}
			enc := json.NewEncoder(cmd.OutOrStdout())
			enc.SetIndent("", "  ")
			return enc.Encode(m)
		}),
	}
	rm := &cobra.Command{
		Use:   "rm NAME...",
		Short: "remove images (refused while sandboxes use them)",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if !f.isLocal() {
				return runE(func(cmd *cobra.Command, args []string) error {
					cl, err := f.client()
					if err != nil {
						return err
					}
					for _, name := range args {
						if err := cl.DeleteImage(cmd.Context(), name); err != nil {
							return err
						}
					}
					return nil
				})(cmd, args)
			}
			return withCatalog(func(ctx context.Context, c *image.Catalog, cmd *cobra.Command, args []string) error {
				for _, name := range args {
					if err := c.Remove(ctx, name); err != nil {
						return err
					}
				}
				return nil
			})(cmd, args)
		},
	}
	pull := &cobra.Command{
		Use:   "pull REF",
		Short: "fetch an image from its registry into the local data directory (credentials from the docker config)",
		Long: `pull fetches REF (debian:bookworm, ghcr.io/org/app:v1, repo@sha256:...) with
credentials from the usual docker config ($DOCKER_CONFIG or ~/.docker/config.json,
credential helpers included) and tags it with its full name
(index.docker.io/library/debian:bookworm); FROM debian:bookworm and
--image debian:bookworm find it. A server on the same data directory
offers it to every tenant as a shared image.`,
		Args: cobra.ExactArgs(1),
		RunE: withCatalog(func(ctx context.Context, c *image.Catalog, cmd *cobra.Command, args []string) error {
			start := time.Now()
			m, err := c.Pull(ctx, args[0], image.BuildOptions{Progress: newProgress(cmd.ErrOrStderr())})
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "pulled %s: %d entries, %d bytes in %v\n", args[0], m.Files, m.Size, time.Since(start).Round(time.Millisecond))
			fmt.Fprintln(cmd.OutOrStdout(), m.Digest)
			return nil
		}),
	}
	export := &cobra.Command{
		Use:   "export NAME > image.erofs",
		Short: "write a local image's EROFS file to standard output",
		Args:  cobra.ExactArgs(1),
		RunE: withCatalog(func(ctx context.Context, c *image.Catalog, cmd *cobra.Command, args []string) error {
			out := cmd.OutOrStdout()
			if f, ok := out.(*os.File); ok && isTerminal(f) {
				return errors.New("refusing to write an image to a terminal; redirect standard output")
			}
			return c.Export(ctx, args[0], out)
		}),
	}
	cmd.AddCommand(build, ls, inspect, rm, pull, export, newImageAddRubyCmd(&f, withCatalog))
	return cmd
}

// localNotFound says what to do about a missing local image.
func localNotFound(err error, data string) error {
	if err != nil && errors.Is(err, fs.ErrNotExist) && strings.Contains(err.Error(), "not found") {
		return api.Errorf(errdefs.ErrNotFound, "%v in %s: build it with `warren image build --local -t NAME DIR`, or list the images with `warren image ls --local`", err, data)
	}
	return err
}

// localDockerfile is the Dockerfile of a local build: -f, else the
// source directory's own Dockerfile, else none (a directory image).
func localDockerfile(flag string, args []string) string {
	if flag != "" {
		return flag
	}
	if len(args) == 1 && image.ContextDockerfile(args[0]) {
		return filepath.Join(args[0], image.DefaultDockerfile)
	}
	return ""
}

func isTerminal(f *os.File) bool {
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}

// newProgress draws a bar on a terminal and prints plain lines (at most
// one every 2 s) otherwise.
func newProgress(w io.Writer) image.Progress {
	f, ok := w.(*os.File)
	tty := ok && isTerminal(f)
	var last time.Time
	return func(files, totalFiles int, bytes, totalBytes int64) {
		done := files >= totalFiles && bytes >= totalBytes
		if tty {
			pct := 100.0
			if totalBytes > 0 {
				pct = float64(bytes) * 100 / float64(totalBytes)
			}
			n := int(pct / 5)
			fmt.Fprintf(w, "\r[%-20s] %5.1f%%  %d/%d files  %s/%s", strings.Repeat("=", n), pct, files, totalFiles, human(bytes), human(totalBytes))
			if done {
				fmt.Fprintln(w)
			}
			return
		}
		if done || time.Since(last) >= 2*time.Second {
			last = time.Now()
			fmt.Fprintf(w, "progress: %d/%d files, %s/%s\n", files, totalFiles, human(bytes), human(totalBytes))
		}
	}
}

func human(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}
