package workerpool

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sort"

	"github.com/containerd/errdefs"

	"github.com/warren-sandbox/warren/sandbox"
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

// OpenFront moves sandbox records to where this many workers find them
// (Adopt), opens the key store, starts the pool and builds the server
// over it.
func OpenFront(ctx context.Context, o FrontOptions) (f *Front, err error) {
	data := o.Pool.Data
	if data == "" {
		return nil, errors.New("workerpool: no data directory")
	}
	if err := os.MkdirAll(data, 0o700); err != nil {
		return nil, fmt.Errorf("cannot create data directory: %w", err)
	}
	f = &Front{KeyFile: filepath.Join(data, "admin.key")}
	if err := Adopt(ctx, data, o.Pool.Workers); err != nil {
		return nil, err
	}
	meta, err := boltmeta.Open(filepath.Join(data, "meta.db"))
	if err != nil {
		return nil, err
	}
	f.Meta = meta
	defer func() {
		if err != nil {
			meta.Close()
		}
	}()
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

// MetaFiles lists every metadata file under data: the front's (or the
// in-process node's) DATA/meta.db and each worker's, whichever exist.
func MetaFiles(data string) []string {
	var out []string
	if _, err := os.Stat(filepath.Join(data, "meta.db")); err == nil {
		out = append(out, filepath.Join(data, "meta.db"))
	}
	ws, _ := filepath.Glob(filepath.Join(data, "workers", "w*", "meta.db"))
	sort.Strings(ws)
	return append(out, ws...)
}

// Adopt moves sandbox, snapshot and volume records to where a node
// started with the given number of workers looks for them, so changing
// --workers (to or from 0, or to fewer) loses no sandbox and no volume:
// with 0 every worker's records go to DATA/meta.db; with N they go from
// DATA/meta.db and from workers N and above to worker 0. Their blobs are
// already in the shared store, so the records are all there is to move;
// a volume and the sandboxes holding its leases are on one worker, so
// they move together. Run it before opening any of the
// files (each is bbolt: one process at a time).
func Adopt(ctx context.Context, data string, workers int) error {
	dst := filepath.Join(data, "meta.db")
	if workers > 0 {
		dst = filepath.Join(data, "workers", "w0", "meta.db")
	}
	var srcs []string
	for _, f := range MetaFiles(data) {
		if f == dst {
			continue
		}
		if workers > 0 && f != filepath.Join(data, "meta.db") {
			var k int
			if _, err := fmt.Sscanf(filepath.Base(filepath.Dir(f)), "w%d", &k); err != nil || k < workers {
				continue
			}
		}
		srcs = append(srcs, f)
	}
	for _, src := range srcs {
		if err := move(ctx, src, dst); err != nil {
			return err
		}
	}
	return nil
}

func move(ctx context.Context, srcPath, dstPath string) error {
	src, err := boltmeta.Open(srcPath)
	if err != nil {
		return err
	}
	defer src.Close()
	recs, err := src.Sandboxes(ctx)
	if err != nil {
		return fmt.Errorf("cannot read sandboxes of %s: %w", srcPath, err)
	}
	snaps, err := src.Snapshots(ctx)
	if err != nil {
		return fmt.Errorf("cannot read snapshots of %s: %w", srcPath, err)
	}
	vols, err := src.ListVolumes(ctx)
	if err != nil {
		return fmt.Errorf("cannot read volumes of %s: %w", srcPath, err)
	}
	if len(recs) == 0 && len(snaps) == 0 && len(vols) == 0 {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(dstPath), 0o700); err != nil {
		return fmt.Errorf("cannot create %s: %w", filepath.Dir(dstPath), err)
	}
	db, err := boltmeta.Open(dstPath)
	if err != nil {
		return err
	}
	for _, r := range recs {
		if err := db.PutSandbox(ctx, r); err != nil {
			db.Close()
			return fmt.Errorf("cannot move sandbox %s to %s: %w", r.ID, dstPath, err)
		}
	}
	for _, s := range snaps {
		if err := db.CreateSnapshot(ctx, s); err != nil && !errdefs.IsAlreadyExists(err) {
			db.Close()
			return fmt.Errorf("cannot move snapshot %q to %s: %w", s.Name, dstPath, err)
		}
	}
	for _, v := range vols {
		if err := moveVolume(ctx, db, v, srcPath, dstPath); err != nil {
			db.Close()
			return err
		}
	}
	// Written and closed before the source forgets them: a crash in
	// between leaves a record in both, and the next Adopt moves it again.
	if err := db.Close(); err != nil {
		return err
	}
	for _, r := range recs {
		if err := src.DeleteSandbox(ctx, r.ID); err != nil {
			return err
		}
	}
	for _, s := range snaps {
		if err := src.DeleteSnapshot(ctx, s.Tenant, s.Name); err != nil {
			return err
		}
	}
	for _, v := range vols {
		if err := src.DeleteVolume(ctx, v.Tenant, v.Name, nil); err != nil && !errdefs.IsNotFound(err) {
			return err
		}
	}
	return nil
}

// moveVolume writes volume record v into db. The same record there (a
// move cut short before the source forgot it) is fine; a different one
// of the same name stops the start rather than drop either head.
func moveVolume(ctx context.Context, db *boltmeta.DB, v sandbox.VolumeRecord, srcPath, dstPath string) error {
	err := db.CreateVolume(ctx, v)
	if err == nil {
		return nil
	}
	if !errdefs.IsAlreadyExists(err) {
		return fmt.Errorf("cannot move volume %q to %s: %w", v.Name, dstPath, err)
	}
	cur, err := db.GetVolume(ctx, v.Tenant, v.Name)
	if err != nil {
		return fmt.Errorf("cannot move volume %q to %s: %w", v.Name, dstPath, err)
	}
	if cur.Ref == v.Ref && cur.Generation == v.Generation {
		return nil
	}
	return fmt.Errorf("volume %q of tenant %q is in %s (generation %d) and in %s (generation %d) with different heads, and only one can stay: "+
		"start with the previous --workers, copy what you need out of the volume through a sandbox and delete it", v.Name, v.Tenant, srcPath, v.Generation, dstPath, cur.Generation)
}
