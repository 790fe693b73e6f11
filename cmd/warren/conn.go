package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/containerd/errdefs"
	"github.com/spf13/cobra"
	"github.com/warren-sandbox/warren/api"
	"github.com/warren-sandbox/warren/client"
)

// defaultServer is where client verbs look for `warren serve` (its --addr
// default).
const defaultServer = "http://127.0.0.1:7711"

// conn holds the client flags shared by the sandbox, fs and shell verbs.
type conn struct {
	server, key string
}

func (c *conn) flags(cmd *cobra.Command) {
	cmd.PersistentFlags().StringVar(&c.server, "server", "", "warren server (default $WARREN_SERVER or "+defaultServer+")")
	cmd.PersistentFlags().StringVar(&c.key, "api-key", "", "API key (default $WARREN_API_KEY, else DATA/admin.key of a local warren serve, DATA being serve's --data default: $WARREN_DATA, else $XDG_DATA_HOME/warren, else ~/.local/share/warren)")
}

func (c *conn) client() (*client.Client, error) {
	server, key := c.server, c.key
	if server == "" {
		server = os.Getenv("WARREN_SERVER")
	}
	if server == "" {
		server = defaultServer
	}
	if key == "" {
		key = os.Getenv("WARREN_API_KEY")
	}
	keyFile := filepath.Join(defaultDataDir(), "admin.key")
	if key == "" {
		// A local `warren serve` with the default --data: use its admin
		// key (serve and the client verbs share defaultDataDir).
		if data, err := os.ReadFile(keyFile); err == nil {
			key = strings.TrimSpace(string(data))
		}
	}
	if key == "" {
		return nil, api.Errorf(errdefs.ErrUnauthenticated, "no API key: set WARREN_API_KEY (or --api-key); "+
			"a local `warren serve` writes its admin key to DATA/admin.key, and %s does not exist "+
			"(a serve with another --data: export WARREN_DATA=DIR, or WARREN_API_KEY=$(cat DIR/admin.key))", keyFile)
	}
	return client.New(server, key)
}

// hint adds what to do to the errors a user can fix.
func hint(err error) error {
	switch {
	case errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ENOENT) && errors.Is(err, errdefs.ErrUnavailable):
		return fmt.Errorf("%w\nno warren server there: start it with `warren serve` (or point --server / WARREN_SERVER at a running one)", err)
	case errors.Is(err, errdefs.ErrUnauthenticated) && strings.Contains(err.Error(), "unknown API key"):
		return fmt.Errorf("%w\nthe server does not know this key: check WARREN_API_KEY (or --api-key); the admin key of a server is in its DATA/admin.key", err)
	}
	return err
}
