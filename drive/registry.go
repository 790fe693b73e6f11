package drive

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"time"

	"github.com/containerd/errdefs"
	"github.com/warren-sandbox/warren/store"
)

// Registry is a node's way to its drives: create, list, delete and open
// them over one Meta and one blob store. Safe for concurrent use.
type Registry struct {
	meta  Meta
	store store.Store
	opts  Options
}

// NewRegistry returns a Registry; opts apply to every Drive it opens.
func NewRegistry(m Meta, s store.Store, opts Options) *Registry {
	return &Registry{meta: m, store: s, opts: opts.withDefaults()}
}

// Meta is the registry's metadata store.
func (r *Registry) Meta() Meta { return r.meta }

var nameRE = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{0,62}$`)

// classError is an error of an errdefs class with its own text.
type classError struct {
	class error
	msg   string
}

func (e *classError) Error() string { return e.msg }
func (e *classError) Unwrap() error { return e.class }

// Errorf returns an error matching class (errdefs.ErrNotFound, ...)
// whose text is the message alone.
func Errorf(class error, format string, args ...any) error {
	return &classError{class: class, msg: fmt.Sprintf(format, args...)}
}

// NoDrive is the error for a missing drive: it matches errdefs.ErrNotFound.
func NoDrive(name string) error { return Errorf(errdefs.ErrNotFound, "drive %q not found", name) }

// Create records a new, empty drive. quota is in bytes of file content (0:
// none). A bad name or quota matches errdefs.ErrInvalidArgument, an
// existing name errdefs.ErrAlreadyExists.
func (r *Registry) Create(ctx context.Context, tenant, name string, quota int64) (Record, error) {
	if !nameRE.MatchString(name) {
		return Record{}, Errorf(errdefs.ErrInvalidArgument, "drive name %q: want 1-63 of a-z 0-9 . _ - starting with a letter or digit", name)
	}
	if quota < 0 {
		return Record{}, Errorf(errdefs.ErrInvalidArgument, "drive %q: negative quota %d", name, quota)
	}
	rec := Record{ID: randomID(), Tenant: tenant, Name: name, Quota: quota, CreatedAt: time.Now().UTC().Truncate(time.Microsecond)}
	if err := r.meta.CreateDrive(ctx, rec); err != nil {
		return Record{}, err
	}
	return rec, nil
}

// Get returns tenant's drive name (errdefs.ErrNotFound when missing).
func (r *Registry) Get(ctx context.Context, tenant, name string) (Record, error) {
	return r.meta.Drive(ctx, tenant, name)
}

// List returns tenant's drives by name ("" = every tenant's).
func (r *Registry) List(ctx context.Context, tenant string) ([]Record, error) {
	return r.meta.Drives(ctx, tenant)
}

// Open mounts tenant's drive name: the Drive holds a mount lease (renewed
// while open) until its Close.
func (r *Registry) Open(ctx context.Context, tenant, name string) (*Drive, error) {
	rec, err := r.meta.Drive(ctx, tenant, name)
	if err != nil {
		return nil, err
	}
	return open(ctx, r.meta, r.store, rec, r.opts)
}

// SetQuota changes tenant's drive name's quota (0: none). A quota below
// the bytes in use is allowed: the drive then refuses growth until it has
// shrunk below it. Mounted drives see it at their next commit.
func (r *Registry) SetQuota(ctx context.Context, tenant, name string, quota int64) (Record, error) {
	if quota < 0 {
		return Record{}, Errorf(errdefs.ErrInvalidArgument, "drive %q: negative quota %d", name, quota)
	}
	rec, err := r.meta.Drive(ctx, tenant, name)
	if err != nil {
		return Record{}, err
	}
	err = r.meta.Update(ctx, rec.ID, func(tx Tx) error {
		if err := tx.SetQuota(quota); err != nil {
			return err
		}
		rec, err = tx.Record()
		return err
	})
	return rec, err
}

// ErrMounted is matched by Delete's refusal of a mounted drive (it also
// matches errdefs.ErrFailedPrecondition).
var ErrMounted = errors.New("drive is mounted")

// Delete removes tenant's drive name: its metadata in one transaction,
// refused while any Drive anywhere holds a live mount lease (an error
// matching ErrMounted and errdefs.ErrFailedPrecondition; a mount whose
// node died lapses after Options.MountTTL), then every object under its
// blob prefix. A crash between the two leaves the objects; DeleteOrphans
// sweeps them.
func (r *Registry) Delete(ctx context.Context, tenant, name string) error {
	rec, err := r.meta.Drive(ctx, tenant, name)
	if err != nil {
		return err
	}
	err = r.meta.Update(ctx, rec.ID, func(tx Tx) error {
		now, err := tx.Now()
		if err != nil {
			return err
		}
		ms, err := tx.Mounts()
		if err != nil {
			return err
		}
		live := 0
		for _, m := range ms {
			if m.Expires.After(now) {
				live++
			}
		}
		if live > 0 {
			return &mountedError{name: name, n: live}
		}
		return tx.DeleteDrive()
	})
	if err != nil {
		return err
	}
	return r.deletePrefix(ctx, rec.ID)
}

type mountedError struct {
	name string
	n    int
}

func (e *mountedError) Error() string {
	return fmt.Sprintf("drive %q is mounted (%d live mount leases): unmount it first", e.name, e.n)
}
func (e *mountedError) Is(target error) bool {
	return target == ErrMounted || target == errdefs.ErrFailedPrecondition
}

func (r *Registry) deletePrefix(ctx context.Context, id string) error {
	var keys []string
	if err := r.store.List(ctx, Prefix(id), func(key string, _ int64) error {
		keys = append(keys, key)
		return nil
	}); err != nil {
		return fmt.Errorf("cannot list the objects of deleted drive %s: %w", id, err)
	}
	for _, k := range keys {
		if err := r.store.Delete(ctx, k); err != nil {
			return fmt.Errorf("cannot delete the objects of deleted drive %s: %w", id, err)
		}
	}
	return nil
}

// DeleteOrphans deletes the objects of drives that have no record any
// more (a Delete interrupted between its two steps) and returns how many
// drives' objects it removed.
func (r *Registry) DeleteOrphans(ctx context.Context) (int, error) {
	recs, err := r.meta.Drives(ctx, "")
	if err != nil {
		return 0, err
	}
	known := map[string]bool{}
	for _, rec := range recs {
		known[rec.ID] = true
	}
	ids := map[string]bool{}
	err = r.store.List(ctx, "drives/", func(key string, _ int64) error {
		if id, _, ok := cut(key[len("drives/"):]); ok && !known[id] {
			ids[id] = true
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("cannot list drive objects: %w", err)
	}
	// A drive created after the listing of records has objects but no
	// record in recs: look again before deleting.
	n := 0
	for id := range ids {
		if r.exists(ctx, id) {
			continue
		}
		if err := r.deletePrefix(ctx, id); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

func (r *Registry) exists(ctx context.Context, id string) bool {
	err := r.meta.View(ctx, id, func(Tx) error { return nil })
	return !errors.Is(err, errdefs.ErrNotFound)
}

func cut(s string) (string, string, bool) {
	for i := 0; i < len(s); i++ {
		if s[i] == '/' {
			return s[:i], s[i+1:], true
		}
	}
	return s, "", false
}
