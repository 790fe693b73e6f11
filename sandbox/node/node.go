// Package node assembles one warren node on its embedded defaults: blobs
// in a local directory (store/dir), metadata and API keys in bbolt
// (boltmeta), images in an image.Catalog with the embedded default image,
// the real shell and vfs, and the HTTP server over them. Options.Blobs
// replaces the blob directory with another store (S3: OpenS3).
//
// Layout of DIR:
//
//	DIR/blobs/     the blob store (deltas, session states, StateRefs, images),
//	               unless Options.Blobs is set
//	DIR/meta.db    sandboxes, snapshots, API keys (bbolt; absent when
//	               Options.Meta names a PostgreSQL database instead)
//	DIR/cache/     image spools and local copies; cache/wasm: compiled modules;
//	               cache/chunks: the chunk cache's disk tier (emptied at start)
//	DIR/admin.key  the admin API key, mode 0600, written on first start
//	DIR/node-id    this node's stable id (the owner name of its sandboxes'
//	               heads), written on first start
//	DIR/wlog/      the write log (acks at "local"; replayed at start)
package node

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"github.com/warren-sandbox/warren/egress"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/warren-sandbox/warren/api"
	"github.com/warren-sandbox/warren/chunkcache"
	"github.com/warren-sandbox/warren/commands"
	"github.com/warren-sandbox/warren/commands/std"
	"github.com/warren-sandbox/warren/committer"
	"github.com/warren-sandbox/warren/console"
	"github.com/warren-sandbox/warren/drive"
	driveboltmeta "github.com/warren-sandbox/warren/drive/boltmeta"
	"github.com/warren-sandbox/warren/drive/pgmeta"
	"github.com/warren-sandbox/warren/image"
	"github.com/warren-sandbox/warren/meta/postgres"
	"github.com/warren-sandbox/warren/native"
	"github.com/warren-sandbox/warren/sandbox"
	"github.com/warren-sandbox/warren/sandbox/boltmeta"
	"github.com/warren-sandbox/warren/server"
	"github.com/warren-sandbox/warren/store"
	"github.com/warren-sandbox/warren/store/dir"
	"github.com/warren-sandbox/warren/vfs"
	"github.com/warren-sandbox/warren/wasm"
	"github.com/warren-sandbox/warren/wlog"
)

// Options configure a node.
type Options struct {
	Dir string
	// Meta is where metadata lives: "" for bbolt in DIR/meta.db, or a
	// postgres:// (postgresql://) URL for a PostgreSQL database.
	Meta   string
	Logger *slog.Logger
	// Blobs, if set, holds the blobs instead of DIR/blobs (Fsync does not
	// apply). The caller closes it after Close.
	Blobs store.Store
	// Fsync makes every blob write durable against power loss (slower);
	// without it a clean shutdown or a warren crash keeps everything that
	// was hibernated, a power loss may not.
	Fsync bool
	// Manager settings (zero: the sandbox package defaults).
	DefaultStandbyAfter   time.Duration
	TickInterval          time.Duration
	MaxSandboxesPerTenant int
	// Server settings.
	MaxFileBytes int64
	// Guard sheds load under memory pressure (nil: never).
	Guard *server.MemoryGuard
	// Native is the node's native tier (nil: off). The caller creates it
	// (native.NewRuntime) and closes it after Close.
	Native *native.Runtime
	// Durability is the server's default ack level ("" = local).
	Durability string
	// CommitBytes and CommitDelay are the committer's thresholds (zero:
	// committer.DefaultMaxBytes, committer.DefaultMaxDelay).
	CommitBytes int64
	CommitDelay time.Duration
	// Egress is the node's way out to the network (nil: sandboxes have
	// none). The caller builds it (egress.New).
	Egress *egress.Egress
	// Budget bounds the uncommitted bytes per sandbox and per node (zero
	// fields: sandbox.DefaultSandboxBudget, DefaultNodeBudget,
	// DefaultBudgetWait).
	Budget sandbox.Budget
	// ChunkCacheMemory and ChunkCacheDisk size the cache committed chunks
	// are read back through once they left memory (DIR/cache/chunks; zero:
	// chunkcache.DefaultMemory, DefaultDisk; negative: that tier off). The
	// cache is the process's (vfs.SetChunkCache): the last node opened in
	// a process sets it.
	ChunkCacheMemory, ChunkCacheDisk int64
	// ChunkCacheDir is the disk tier's directory (default DIR/cache/chunks).
	// It is emptied at Open, so no two nodes may share one: a worker
	// process, whose DIR/cache is the node's shared image cache, gives its
	// own.
	ChunkCacheDir string
	// ChunkFetchTimeout bounds one fetch of an evicted chunk (zero: the
	// vfs default, 20 s); a read past it fails with EIO. Process-wide.
	ChunkFetchTimeout time.Duration
}

// Meta is a node's metadata store: boltmeta.DB or postgres.DB.
type Meta interface {
	sandbox.DurableMeta
	server.Keys
	HasKeys(ctx context.Context) (bool, error)
	Close() error
}

// OpenMeta opens the metadata store metaURL names ("" = bbolt in dir).
func OpenMeta(ctx context.Context, metaURL, dir string) (Meta, error) {
	// Each branch returns a nil interface on error, never a nil pointer
	// in one (closeStores would call its Close).
	switch {
	case metaURL == "":
		db, err := boltmeta.Open(filepath.Join(dir, "meta.db"))
		if err != nil {
			return nil, err
		}
		return db, nil
	case strings.HasPrefix(metaURL, "postgres://"), strings.HasPrefix(metaURL, "postgresql://"):
		db, err := postgres.Open(ctx, metaURL)
		if err != nil {
			return nil, fmt.Errorf("metadata %s: %w", redact(metaURL), err)
		}
		return db, nil
	}
	return nil, fmt.Errorf("metadata %q: want a postgres:// URL (or none for bbolt in the data directory)", redact(metaURL))
}

// redact drops a URL's password from messages.
func redact(s string) string {
	if u, err := url.Parse(s); err == nil && u.User != nil {
		if _, ok := u.User.Password(); ok {
			u.User = url.UserPassword(u.User.Username(), "xxxxx")
			return u.String()
		}
	}
	return s
}

// Node is one running node.
type Node struct {
	Manager  *sandbox.Manager
	Meta     Meta
	Blobs    store.Store
	Catalog  *image.Catalog
	Log      *wlog.Log
	NodeID   string
	WASM     *wasm.Runtime // the WASM tier every sandbox of the node shares
	Handler  *server.Server
	AdminKey string // set when this start created it
	KeyFile  string
	Chunks   *chunkcache.Cache // the chunk cache (DIR/cache/chunks)
	Drives   *drive.Registry   // shared drives (DIR/drives/meta.db, or PostgreSQL)

	closeDrives func() error

	closeBlobs func() error // nil when the caller owns Blobs
}

// Open starts a node over opts.Dir, creating it on first use.
func Open(ctx context.Context, opts Options) (n *Node, err error) {
	if opts.Dir == "" {
		return nil, errors.New("node: no data directory")
	}
	if err := os.MkdirAll(opts.Dir, 0o700); err != nil {
		return nil, fmt.Errorf("cannot create data directory: %w", err)
	}
	n = &Node{KeyFile: filepath.Join(opts.Dir, "admin.key")}
	// A failed Open returns nil, so the deferred close needs its own copy.
	built := n
	defer func() {
		if err != nil {
			built.closeStores()
		}
	}()
	if opts.Blobs != nil {
		n.Blobs = opts.Blobs
	} else {
		var sopts []dir.Option
		if !opts.Fsync {
			sopts = append(sopts, dir.WithoutSync())
		}
		d, err := dir.Open(filepath.Join(opts.Dir, "blobs"), sopts...)
		if err != nil {
			return nil, err
		}
		n.Blobs, n.closeBlobs = d, d.Close
	}
	if n.Meta, err = OpenMeta(ctx, opts.Meta, opts.Dir); err != nil {
		return nil, err
	}
	n.WASM = wasm.New(wasm.Config{CacheDir: filepath.Join(opts.Dir, "cache", "wasm")})
	if n.Catalog, err = image.NewCatalog(n.Blobs, filepath.Join(opts.Dir, "cache")); err != nil {
		return nil, err
	}
	if _, err := image.Default(ctx, n.Catalog); err != nil {
		return nil, fmt.Errorf("cannot install the default image: %w", err)
	}
	if err := api.CheckDurability(opts.Durability); err != nil {
		return nil, err
	}
	if n.NodeID, err = nodeID(opts.Dir); err != nil {
		return nil, err
	}
	if n.Log, err = wlog.Open(filepath.Join(opts.Dir, "wlog"), wlog.Options{Logger: opts.Logger}); err != nil {
		return nil, err
	}
	// After the log's lock: a second process on this directory fails
	// there, before it could empty the first one's cache.
	if n.Chunks, err = openChunkCache(opts); err != nil {
		return nil, err
	}
	vfs.SetChunkCache(n.Chunks)
	if opts.ChunkFetchTimeout > 0 {
		vfs.SetFetchTimeout(opts.ChunkFetchTimeout)
	}
	if err := n.openDrives(ctx, opts); err != nil {
		return nil, err
	}
	n.Manager, err = sandbox.New(ctx, sandbox.Config{
		Blobs:                 n.Blobs,
		Deltas:                sandbox.VFSDeltas(n.Blobs),
		Images:                sandbox.CatalogImages(n.Catalog),
		Interpreters:          sandbox.ShellInterpreters(Commands(), sandbox.WithWASM(n.WASM)),
		Meta:                  n.Meta,
		DefaultStandbyAfter:   opts.DefaultStandbyAfter,
		TickInterval:          opts.TickInterval,
		MaxSandboxesPerTenant: opts.MaxSandboxesPerTenant,
		Native:                opts.Native,
		Logger:                opts.Logger,
		Egress:                opts.Egress,
		Drives:                n.Drives,
		Durable: &sandbox.Durable{Node: n.NodeID, Log: n.Log, Default: opts.Durability, Budget: opts.Budget,
			Commit: committer.Options{MaxBytes: opts.CommitBytes, MaxDelay: opts.CommitDelay, Logger: opts.Logger}},
	})
	if err != nil {
		return nil, err
	}
	// Dockerfile RUN steps run in a throwaway sandbox; an image stays while
	// any sandbox was made from it.
	n.Catalog.Runner = &sandbox.BuildRunner{Commands: Commands(), Catalog: n.Catalog, Native: opts.Native}
	n.Catalog.InUse = n.Manager.ImageInUse
	if n.Handler, err = server.New(server.Config{
		Backend: n.Manager, Keys: n.Meta, Logger: opts.Logger, MaxFileBytes: opts.MaxFileBytes,
		Guard: opts.Guard, Console: console.Handler(),
	}); err != nil {
		return nil, err
	}
	has, err := n.Meta.HasKeys(ctx)
	if err != nil {
		return nil, err
	}
	if !has {
		key := server.NewKey()
		if err := n.Meta.PutKey(ctx, key, "admin", true); err != nil {
			return nil, err
		}
		if err := os.WriteFile(n.KeyFile, []byte(key+"\n"), 0o600); err != nil {
			return nil, fmt.Errorf("cannot write the admin key: %w", err)
		}
		n.AdminKey = key
	}
	return n, nil
}

// openDrives opens the node's drive registry: its metadata in
// PostgreSQL when the node's is, else in DIR/drives/meta.db (bbolt opened
// per transaction, so the worker processes of one data directory share it
// through their drives link); its chunks in the node's blob store, read
// through the node's chunk cache.
func (n *Node) openDrives(ctx context.Context, opts Options) error {
	var m drive.Meta
	if strings.HasPrefix(opts.Meta, "postgres://") || strings.HasPrefix(opts.Meta, "postgresql://") {
		pm, err := pgmeta.Open(ctx, opts.Meta)
		if err != nil {
			return fmt.Errorf("drive metadata %s: %w", redact(opts.Meta), err)
		}
		m, n.closeDrives = pm, pm.Close
	} else {
		dir := filepath.Join(opts.Dir, "drives")
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return fmt.Errorf("cannot create %s: %w", dir, err)
		}
		bm, err := driveboltmeta.Open(filepath.Join(dir, "meta.db"), driveboltmeta.Options{NoSync: !opts.Fsync})
		if err != nil {
			return err
		}
		m, n.closeDrives = bm, bm.Close
	}
	spill := filepath.Join(opts.Dir, "cache", "drive-spill")
	if err := os.MkdirAll(spill, 0o700); err != nil {
		return fmt.Errorf("cannot create %s: %w", spill, err)
	}
	n.Drives = drive.NewRegistry(m, n.Blobs, drive.Options{Cache: n.Chunks, SpillDir: spill, Logger: opts.Logger})
	return nil
}

// openChunkCache opens DIR/cache/chunks sized by opts.
func openChunkCache(opts Options) (*chunkcache.Cache, error) {
	size := func(v, def int64) int64 {
		switch {
		case v == 0:
			return def
		case v < 0:
			return 0
		}
		return v
	}
	co := chunkcache.Options{
		Memory: size(opts.ChunkCacheMemory, chunkcache.DefaultMemory),
		Disk:   size(opts.ChunkCacheDisk, chunkcache.DefaultDisk),
		Dir:    opts.ChunkCacheDir,
		Logger: opts.Logger,
	}
	if co.Dir == "" {
		co.Dir = filepath.Join(opts.Dir, "cache", "chunks")
	}
	if opts.Logger != nil {
		opts.Logger.Info("chunk cache", "memory", co.Memory, "disk", co.Disk, "dir", co.Dir, "fetch_timeout", opts.ChunkFetchTimeout)
	}
	return chunkcache.Open(co)
}

// nodeID reads DIR/node-id, writing a new random id on first start.
func nodeID(dir string) (string, error) {
	p := filepath.Join(dir, "node-id")
	if b, err := os.ReadFile(p); err == nil {
		id := strings.TrimSpace(string(b))
		if id == "" {
			return "", fmt.Errorf("%s is empty (delete it to get a new node id)", p)
		}
		return id, nil
	} else if !errors.Is(err, os.ErrNotExist) {
		return "", fmt.Errorf("cannot read the node id: %w", err)
	}
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	id := "node-" + hex.EncodeToString(b[:])
	tmp := p + ".tmp"
	if err := os.WriteFile(tmp, []byte(id+"\n"), 0o600); err != nil {
		return "", fmt.Errorf("cannot write the node id: %w", err)
	}
	if err := os.Rename(tmp, p); err != nil {
		return "", fmt.Errorf("cannot write the node id: %w", err)
	}
	return id, nil
}

// Commands is the resident command table every sandbox gets.
func Commands() commands.Table { return std.Table() }

// Close hibernates every sandbox and closes the stores.
func (n *Node) Close(ctx context.Context) error {
	var errs []error
	if n.Manager != nil {
		errs = append(errs, n.Manager.Close(ctx))
	}
	errs = append(errs, n.closeStores())
	return errors.Join(errs...)
}

func (n *Node) closeStores() error {
	var errs []error
	if n.Catalog != nil {
		errs = append(errs, n.Catalog.Close())
	}
	if n.Log != nil {
		errs = append(errs, n.Log.Close())
	}
	if n.WASM != nil {
		errs = append(errs, n.WASM.Close(context.Background()))
	}
	if n.Meta != nil {
		errs = append(errs, n.Meta.Close())
	}
	if n.closeDrives != nil {
		errs = append(errs, n.closeDrives())
	}
	if n.Chunks != nil {
		// The cache stays installed (a memory tier; chunks still refer to
		// it): only its disk writer stops.
		errs = append(errs, n.Chunks.Close())
	}
	if n.closeBlobs != nil {
		errs = append(errs, n.closeBlobs())
	}
	return errors.Join(errs...)
}

// Deltas persists vfs deltas into blobs (what Open wires; exported for
// callers that assemble a Manager themselves, like the benchmarks).
func Deltas(blobs *dir.Store) sandbox.Deltas { return sandbox.VFSDeltas(blobs) }
