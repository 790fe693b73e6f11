package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/warren-sandbox/warren/native"
	"github.com/warren-sandbox/warren/sandbox/node"
	"github.com/warren-sandbox/warren/sandbox/workerpool"
)

func init() { verbs = append(verbs, newServeCmd) }

// defaultDataDir is where serve keeps its data and where client verbs
// look for the admin key when none is given.
func defaultDataDir() string {
	if d := os.Getenv("WARREN_DATA"); d != "" {
		return d
	}
	if d := os.Getenv("XDG_DATA_HOME"); d != "" {
		return filepath.Join(d, "warren")
	}
	if h, err := os.UserHomeDir(); err == nil {
		return filepath.Join(h, ".local", "share", "warren")
	}
	return "warren-data"
}

func newServeCmd() *cobra.Command {
	var (
		addr, data, keysFile, logFormat string
		apiKeys                         []string
		standbyAfter                    time.Duration
		maxUpload                       int64
		fsync, noNative                 bool
		nativeRunDir                    string
		wf                              workerFlags
	)
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "run the sandbox service (HTTP API under /v1)",
		Long: `serve runs warren's service on its embedded defaults: blobs in DATA/blobs,
metadata and API keys in DATA/meta.db. On first start it creates an admin
key, prints it once and writes it to DATA/admin.key (mode 0600).
SIGTERM or SIGINT hibernates every sandbox to DATA and exits; the next start
knows every sandbox and resumes each on first use. A kill -9 loses the work
of each sandbox since its last hibernate.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var h slog.Handler = slog.NewTextHandler(cmd.ErrOrStderr(), nil)
			if logFormat == "json" {
				h = slog.NewJSONHandler(cmd.ErrOrStderr(), nil)
			} else if logFormat != "text" {
				return fmt.Errorf("--log-format %q: want text or json", logFormat)
			}
			log := slog.New(h)
			ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
			defer stop()
			if wf.workers != 0 {
				return serveWorkers(ctx, cmd, log, wf, serveSettings{addr, data, keysFile, apiKeys, standbyAfter, maxUpload, fsync, noNative, nativeRunDir, logFormat == "json"})
			}
			if err := workerpool.Adopt(ctx, data, 0); err != nil { // sandboxes of an earlier --workers start
				return err
			}
			var rt *native.Runtime
			if noNative {
				log.Info("native tier off (--no-native): ELF commands fail with a message saying so")
			} else {
				var err error
				rt, err = native.NewRuntime(ctx, native.Config{RunDir: nativeRunDir})
				if err != nil {
					return fmt.Errorf("native tier: %w", err)
				}
				if why := rt.Available(); why != nil {
					// Keep serving: resident commands work, ELF commands
					// fail naming this reason.
					log.Warn("native tier unavailable; ELF commands will fail", "reason", why.Error())
				} else {
					log.Info("native tier ready", "cgroups", rt.CgroupInfo())
				}
			}
			n, err := node.Open(ctx, node.Options{
				Dir: data, Logger: log, Fsync: fsync, DefaultStandbyAfter: standbyAfter, MaxFileBytes: maxUpload,
				Native: rt,
			})
			if err != nil {
				if rt != nil {
					rt.Close()
				}
				return err
			}
			closeNode := func() error {
				cctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				defer cancel()
				// Sandboxes first (hibernating closes their workspaces),
				// then the runtime (mounts, cgroups).
				err := n.Close(cctx)
				if rt != nil {
					err = errors.Join(err, rt.Close())
				}
				return err
			}
			if err := addKeys(ctx, n, apiKeys, keysFile); err != nil {
				closeNode()
				return err
			}
			ln, err := net.Listen("tcp", addr)
			if err != nil {
				closeNode()
				return fmt.Errorf("cannot listen on %s: %w", addr, err)
			}
			out := cmd.OutOrStdout()
			fmt.Fprintf(out, "warren listening on http://%s\n", ln.Addr())
			if n.AdminKey != "" {
				fmt.Fprintf(out, "admin key (shown once): %s\n", n.AdminKey)
			}
			fmt.Fprintf(out, "admin key file: %s\n", n.KeyFile)
			srv := &http.Server{Handler: n.Handler, ReadHeaderTimeout: 10 * time.Second}
			errc := make(chan error, 1)
			go func() { errc <- srv.Serve(ln) }()
			select {
			case err = <-errc:
			case <-ctx.Done():
				log.Info("shutting down: hibernating every sandbox")
			}
			sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			srv.Shutdown(sctx) // streams still open are cut; their execs are cancelled by Close
			cancel()
			if cerr := closeNode(); cerr != nil {
				return fmt.Errorf("shutdown: %w", cerr)
			}
			if err != nil && !errors.Is(err, http.ErrServerClosed) {
				return err
			}
			fmt.Fprintln(out, "warren stopped; every sandbox is hibernated")
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&addr, "addr", "127.0.0.1:7711", "address to listen on")
	f.StringVar(&data, "data", defaultDataDir(), "data directory (blobs, metadata, admin.key)")
	f.StringArrayVar(&apiKeys, "api-key", nil, "TENANT=KEY: accept KEY for TENANT (repeatable)")
	f.StringVar(&keysFile, "keys-file", "", "file of \"TENANT KEY\" lines to accept")
	f.DurationVar(&standbyAfter, "standby-after", 15*time.Second, "default idle time before a sandbox hibernates")
	f.Int64Var(&maxUpload, "max-upload", 64<<20, "largest file or tar upload, bytes")
	f.BoolVar(&fsync, "fsync", false, "fsync every blob (durable against power loss; slower)")
	f.StringVar(&logFormat, "log-format", "text", "request log format: text or json")
	f.BoolVar(&noNative, "no-native", false, "do not run ELF files natively (namespaces, overlay, cgroups)")
	f.StringVar(&nativeRunDir, "native-run-dir", "/run/warren/native", "the native tier's mounts and workspaces (one warren serve per directory)")
	wf.add(cmd)
	return cmd
}

// addKeys installs keys from flags and a keys file (persisted in meta).
func addKeys(ctx context.Context, n *node.Node, flags []string, file string) error {
	pairs := map[string]string{}
	for _, kv := range flags {
		t, k, ok := strings.Cut(kv, "=")
		if !ok || t == "" || k == "" {
			return fmt.Errorf("--api-key %q: want TENANT=KEY", kv)
		}
		pairs[k] = t
	}
	if file != "" {
		f, err := os.Open(file)
		if err != nil {
			return fmt.Errorf("keys file: %w", err)
		}
		defer f.Close()
		sc := bufio.NewScanner(f)
		for line := 1; sc.Scan(); line++ {
			s := strings.TrimSpace(sc.Text())
			if s == "" || strings.HasPrefix(s, "#") {
				continue
			}
			fields := strings.Fields(s)
			if len(fields) != 2 {
				return fmt.Errorf("%s:%d: want \"TENANT KEY\"", file, line)
			}
			pairs[fields[1]] = fields[0]
		}
		if err := sc.Err(); err != nil {
			return fmt.Errorf("keys file: %w", err)
		}
	}
	for k, t := range pairs {
		if len(k) < 16 {
			return fmt.Errorf("key for tenant %q is shorter than 16 characters", t)
		}
		if err := n.Meta.PutKey(ctx, k, t, false); err != nil {
			return err
		}
	}
	return nil
}
