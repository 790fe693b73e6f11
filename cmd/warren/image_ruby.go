package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"time"

	"github.com/spf13/cobra"

	"github.com/warren-sandbox/warren/image"
	"github.com/warren-sandbox/warren/wasm"
)

// rubyWASMPath is where npm puts ruby+stdlib.wasm for
// `npm install @ruby/3.4-wasm-wasi` in the current directory.
const rubyWASMPath = "node_modules/@ruby/3.4-wasm-wasi/dist/ruby+stdlib.wasm"

// imageNameRE is what add-ruby accepts as image names: the catalog's
// names, and nothing that could break the Dockerfile line it writes.
var imageNameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._/:@+-]*$`)

// newImageAddRubyCmd is `warren image add-ruby`: a new image that is
// IMAGE plus ruby.wasm as /usr/local/bin/ruby, which the WASM tier runs
// (package wasm's Ruby glue). It is an ordinary build (FROM IMAGE, COPY),
// locally or on the server like `image build`.
func newImageAddRubyCmd(f *imageFlags, withCatalog func(func(context.Context, *image.Catalog, *cobra.Command, []string) error) func(*cobra.Command, []string) error) *cobra.Command {
	var from, tag string
	cmd := &cobra.Command{
		Use:   "add-ruby [--from ruby+stdlib.wasm] IMAGE -t NEW",
		Short: "make an image with Ruby (ruby.wasm from the npm package @ruby/3.4-wasm-wasi) as /usr/local/bin/ruby",
		Long: `add-ruby builds NEW from IMAGE with ruby+stdlib.wasm installed as
/usr/local/bin/ruby. Sandboxes of NEW run ruby -e CODE, ruby FILE and
scripts on stdin in the WASM tier, with Ruby's standard library.

Get the module with npm:  npm install @ruby/3.4-wasm-wasi
(--from defaults to $WARREN_RUBY_WASM, else ./` + rubyWASMPath + `).`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			base := args[0]
			if tag == "" {
				return cliError(usageError(errors.New("add-ruby needs the new image's name: -t NEW")))
			}
			for _, n := range []string{base, tag} {
				if !imageNameRE.MatchString(n) {
					return cliError(usageError(fmt.Errorf("image name %q: want letters, digits and . _ / : @ + -", n)))
				}
			}
			src, err := rubyWASMSource(from)
			if err != nil {
				return cliError(usageError(err))
			}
			dir, err := os.MkdirTemp("", "warren-add-ruby-")
			if err != nil {
				return err
			}
			defer os.RemoveAll(dir)
			if err := copyExecutable(src, filepath.Join(dir, "ruby")); err != nil {
				return err
			}
			df := filepath.Join(dir, "Dockerfile")
			if err := os.WriteFile(df, []byte("FROM "+base+"\nCOPY ruby /usr/local/bin/ruby\n"), 0o644); err != nil {
				return err
			}
			if !f.isLocal() {
				return runE(func(cmd *cobra.Command, args []string) error {
					return remoteBuild(cmd, &f.conn, tag, "", dir, nil)
				})(cmd, args)
			}
			return withCatalog(func(ctx context.Context, c *image.Catalog, cmd *cobra.Command, args []string) error {
				start := time.Now()
				m, err := c.BuildDockerfile(ctx, df, dir, image.BuildOptions{Log: cmd.ErrOrStderr(), Progress: newProgress(cmd.ErrOrStderr())})
				if err != nil {
					return err
				}
				if err := c.Tag(ctx, tag, m); err != nil {
					return err
				}
				fmt.Fprintf(cmd.ErrOrStderr(), "built %s (%s + /usr/local/bin/ruby): %d entries, %d bytes in %v\n", tag, base, m.Files, m.Size, time.Since(start).Round(time.Millisecond))
				fmt.Fprintln(cmd.OutOrStdout(), m.Digest)
				return nil
			})(cmd, args)
		},
	}
	cmd.Flags().StringVar(&from, "from", "", "ruby+stdlib.wasm to install (default $WARREN_RUBY_WASM, else ./"+rubyWASMPath+")")
	cmd.Flags().StringVarP(&tag, "tag", "t", "", "the new image's name (required)")
	return cmd
}

// rubyWASMSource finds the module and checks that it is WebAssembly.
func rubyWASMSource(from string) (string, error) {
	if from == "" {
		from = os.Getenv("WARREN_RUBY_WASM")
	}
	if from == "" {
		from = rubyWASMPath
	}
	f, err := os.Open(from)
	if err != nil {
		return "", fmt.Errorf("ruby.wasm: %w (npm install @ruby/3.4-wasm-wasi, then --from %s)", err, rubyWASMPath)
	}
	defer f.Close()
	head := make([]byte, 4)
	if _, err := io.ReadFull(f, head); err != nil || !bytes.Equal(head, wasm.Magic) {
		return "", fmt.Errorf("%s is not a WebAssembly module (want ruby+stdlib.wasm from @ruby/3.4-wasm-wasi)", from)
	}
	return from, nil
}

// copyExecutable copies src to dst with mode 0755 (npm leaves it 0644,
// and COPY keeps the mode).
func copyExecutable(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
