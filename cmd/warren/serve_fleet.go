package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/warren-sandbox/warren/fleet"
	"github.com/warren-sandbox/warren/sandbox/node"
)

// fleetFlags are serve's flags for running as one node of a fleet
// (docs/fleet.md): --node-id or --advertise turns it on.
type fleetFlags struct {
	id, advertise string
	lease         time.Duration
	capacity      int
	labels        []string
	drainTimeout  time.Duration
	parsed        map[string]string
}

func (f *fleetFlags) add(cmd *cobra.Command) {
	fs := cmd.Flags()
	fs.StringVar(&f.id, "node-id", os.Getenv("WARREN_NODE_ID"), "run as node ID of a fleet sharing --meta postgres:// and --blobs s3:// (docs/fleet.md) [$WARREN_NODE_ID]")
	fs.StringVar(&f.advertise, "advertise", os.Getenv("WARREN_ADVERTISE"), "URL the other nodes forward to, e.g. http://warren-0.warren:7711 (default: the listening address) [$WARREN_ADVERTISE]")
	fs.DurationVar(&f.lease, "lease", envDuration("WARREN_LEASE", fleet.DefaultLease), "node lease: a node that has not renewed for this long may have its sandboxes taken over; it stops acknowledging writes a quarter before [$WARREN_LEASE]")
	fs.IntVar(&f.capacity, "capacity", fleet.DefaultCapacity, "running sandboxes this node is sized for (placement's load is running / capacity)")
	fs.StringArrayVar(&f.labels, "node-label", nil, "KEY=VALUE label of this node, matched by a create's node_selector (repeatable)")
	fs.DurationVar(&f.drainTimeout, "drain-timeout", 60*time.Second, "on SIGTERM, how long handing the sandboxes to other nodes may take")
}

func envDuration(key string, def time.Duration) time.Duration {
	if d, err := time.ParseDuration(os.Getenv(key)); err == nil && d > 0 {
		return d
	}
	return def
}

var nodeIDRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$`)

func (f *fleetFlags) on() bool { return f.id != "" || f.advertise != "" }

// check validates the flags and pins DATA/node-id to --node-id (the id
// the sandbox layer claims with), before the node opens.
func (f *fleetFlags) check(data, metaURL string) error {
	if !f.on() {
		return nil
	}
	if !strings.HasPrefix(metaURL, "postgres://") && !strings.HasPrefix(metaURL, "postgresql://") {
		return errors.New("--node-id/--advertise: a fleet shares its metadata in PostgreSQL: give --meta postgres://... (and --blobs s3://... for the data)")
	}
	if f.lease < 500*time.Millisecond {
		return fmt.Errorf("--lease %v: too short (at least 500ms)", f.lease)
	}
	if f.capacity <= 0 {
		return fmt.Errorf("--capacity %d: must be positive", f.capacity)
	}
	if f.advertise != "" {
		u, err := url.Parse(f.advertise)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("--advertise %q: want http://HOST:PORT", f.advertise)
		}
	}
	f.parsed = map[string]string{}
	for _, kv := range f.labels {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return fmt.Errorf("--node-label %q: want KEY=VALUE", kv)
		}
		f.parsed[k] = v
	}
	if f.id == "" {
		return nil // DATA/node-id, made on first start
	}
	if !nodeIDRE.MatchString(f.id) {
		return fmt.Errorf("--node-id %q: want 1-63 of [A-Za-z0-9._-]", f.id)
	}
	if err := os.MkdirAll(data, 0o700); err != nil {
		return fmt.Errorf("cannot create data directory: %w", err)
	}
	p := filepath.Join(data, "node-id")
	if b, err := os.ReadFile(p); err == nil {
		if have := strings.TrimSpace(string(b)); have != f.id {
			return fmt.Errorf("--node-id %s: data directory %s belongs to node %s (its write log is that node's); use another --data", f.id, data, have)
		}
		return nil
	}
	return os.WriteFile(p, []byte(f.id+"\n"), 0o600)
}

// start joins the fleet and turns on routing; nil without fleet flags.
func (f *fleetFlags) start(ctx context.Context, log *slog.Logger, n *node.Node, listen string) (*fleet.Node, error) {
	if !f.on() {
		return nil, nil
	}
	st, ok := n.Meta.(fleet.Store)
	if !ok {
		return nil, errors.New("--node-id: the metadata store cannot coordinate a fleet (use --meta postgres://...)")
	}
	if k := os.Getenv("WARREN_ADMIN_KEY"); k != "" {
		// Every node of a deployment knows the admin key from its
		// Secret (the preStop drain uses it), not only the first to start.
		if len(k) < 16 {
			return nil, errors.New("WARREN_ADMIN_KEY is shorter than 16 characters")
		}
		if err := n.Meta.PutKey(ctx, k, "admin", true); err != nil {
			return nil, fmt.Errorf("WARREN_ADMIN_KEY: %w", err)
		}
	}
	adv := f.advertise
	if adv == "" {
		adv = "http://" + listen
	}
	fl, err := fleet.Start(ctx, fleet.Config{Store: st, Manager: n.Manager, ID: n.NodeID, Address: adv,
		Capacity: f.capacity, Labels: f.parsed, Lease: f.lease, Logger: log})
	if err != nil {
		return nil, fmt.Errorf("cannot join the fleet: %w", err)
	}
	n.Handler.SetFleet(fl)
	return fl, nil
}

// drain hands the node's sandboxes off before it stops serving.
func (f *fleetFlags) drain(log *slog.Logger, fl *fleet.Node) {
	if fl == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), f.drainTimeout)
	defer cancel()
	log.Info("shutting down: draining this node's sandboxes to the fleet")
	if _, err := fl.Drain(ctx); err != nil {
		log.Warn("drain incomplete: the rest are hibernated here and taken over when this node's lease expires", "err", err)
	}
}

func (f *fleetFlags) leave(log *slog.Logger, fl *fleet.Node) {
	if fl == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := fl.Leave(ctx); err != nil {
		log.Warn("cannot leave the fleet (the lease will expire)", "err", err)
	}
}
