package workerpool

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"

	"github.com/containerd/errdefs"

	"github.com/warren-sandbox/warren/sandbox/boltmeta"
	"github.com/warren-sandbox/warren/server"
)

// Front is the serving process of a node in worker mode: the HTTP API with
// its keys (DATA/meta.db) over a Pool.
type Front struct {
	Pool     *Pool
	Meta     *boltmeta.DB // API keys only
	Handler  http.Handler
	AdminKey string // set when this start created it
	KeyFile  string
}

// FrontOptions configure OpenFront.
type FrontOptions struct {
	Pool         Options
	MaxFileBytes int64
}

// OpenFront opens the key store, moves sandboxes an in-process node left
// in DATA/meta.db to worker 0 (so switching --workers on keeps them),
// starts the pool and builds the server over it.
func OpenFront(ctx context.Context, o FrontOptions) (f *Front, err error) {
	data := o.Pool.Data
	if data == "" {
		return nil, errors.New("workerpool: no data directory")
	}
	if err := os.MkdirAll(data, 0o700); err != nil {
		return nil, fmt.Errorf("cannot create data directory: %w", err)
	}
	f = &Front{KeyFile: filepath.Join(data, "admin.key")}
	if f.Meta, err = boltmeta.Open(filepath.Join(data, "meta.db")); err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			f.Meta.Close()
		}
	}()
	if err := adopt(ctx, f.Meta, filepath.Join(data, "workers", "w0", "meta.db")); err != nil {
		return nil, err
	}
	if f.Pool, err = Open(ctx, o.Pool); err != nil {
		return nil, err
	}
	srv, err := server.New(server.Config{Backend: f.Pool, Keys: f.Meta, Logger: o.Pool.Logger, MaxFileBytes: o.MaxFileBytes})
	if err != nil {
		f.Pool.Close(ctx)
		return nil, err
	}
	f.Handler = f.Pool.Handler(srv)
	has, err := f.Meta.HasKeys(ctx)
	if err != nil {
		f.Pool.Close(ctx)
		return nil, err
	}
	if !has {
		key := server.NewKey()
		if err := f.Meta.PutKey(ctx, key, "admin", true); err != nil {
			f.Pool.Close(ctx)
			return nil, err
		}
		if err := os.WriteFile(f.KeyFile, []byte(key+"\n"), 0o600); err != nil {
			f.Pool.Close(ctx)
			return nil, fmt.Errorf("cannot write the admin key: %w", err)
		}
		f.AdminKey = key
	}
	return f, nil
}

// Close stops the workers (each hibernates its sandboxes) and the key store.
func (f *Front) Close(ctx context.Context) error {
	return errors.Join(f.Pool.Close(ctx), f.Meta.Close())
}

// adopt moves the sandbox and snapshot records of an in-process node's
// meta into worker 0's, before that worker starts. Their blobs are already
// in the shared store, so the records are all there is to move.
func adopt(ctx context.Context, front *boltmeta.DB, w0 string) error {
	recs, err := front.Sandboxes(ctx)
	if err != nil {
		return fmt.Errorf("cannot read sandboxes: %w", err)
	}
	snaps, err := front.Snapshots(ctx)
	if err != nil {
		return fmt.Errorf("cannot read snapshots: %w", err)
	}
	if len(recs) == 0 && len(snaps) == 0 {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(w0), 0o700); err != nil {
		return fmt.Errorf("cannot create worker directory: %w", err)
	}
	db, err := boltmeta.Open(w0)
	if err != nil {
		return err
	}
	for _, r := range recs {
		if err := db.PutSandbox(ctx, r); err != nil {
			db.Close()
			return fmt.Errorf("cannot move sandbox %s to worker 0: %w", r.ID, err)
		}
	}
	for _, s := range snaps {
		if err := db.CreateSnapshot(ctx, s); err != nil && !errdefs.IsAlreadyExists(err) {
			db.Close()
			return fmt.Errorf("cannot move snapshot %q to worker 0: %w", s.Name, err)
		}
	}
	// Written and closed before the front forgets them: a crash in between
	// leaves a record in both, and worker 0's copy wins on the next start.
	if err := db.Close(); err != nil {
		return err
	}
	for _, r := range recs {
		if err := front.DeleteSandbox(ctx, r.ID); err != nil {
			return err
		}
	}
	for _, s := range snaps {
		if err := front.DeleteSnapshot(ctx, s.Tenant, s.Name); err != nil {
			return err
		}
	}
	return nil
}
