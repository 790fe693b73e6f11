// Package boltmeta stores warren's metadata on one node in a bbolt file:
// sandbox records, snapshots, API keys, heads and generations, upload
// custody and node leases (a sandbox.DurableMeta). Record writes are not
// fsynced one by one (NoSync): a clean shutdown (Close, which syncs) keeps
// everything, a warren crash keeps everything too (the writes are in the
// kernel's page cache), a power loss may lose records since the last sync,
// and per-write fsyncs would cost create->first exec its 1 ms. Claim and
// Publish are the exception: they sync before returning, because a
// committed ack and the fence must survive a power loss.
package boltmeta

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/containerd/errdefs"
	"github.com/warren-sandbox/warren/api"
	"github.com/warren-sandbox/warren/sandbox"
	bolt "go.etcd.io/bbolt"
)

var (
	bucketSandboxes = []byte("sandboxes")
	bucketSnapshots = []byte("snapshots")
	bucketKeys      = []byte("keys")
	bucketHeads     = []byte("heads")       // sandbox id -> Head (absent: the zero head)
	bucketGens      = []byte("generations") // genKey -> Generation
	bucketCommits   = []byte("commits")     // commit id -> genKey
	bucketCustody   = []byte("custody")     // upload id -> CustodyRecord
	bucketNodes     = []byte("nodes")       // node id -> NodeRecord
	bucketVolumes   = []byte("volumes")     // tenant \0 name -> VolumeRecord (volumes.go)
	allBuckets      = [][]byte{bucketSandboxes, bucketSnapshots, bucketKeys, bucketHeads, bucketGens, bucketCommits, bucketCustody, bucketNodes, bucketVolumes}
)

// DB is a bbolt-backed sandbox.DurableMeta and key store.
type DB struct {
	db  *bolt.DB
	now func() time.Time // the store's clock
}

var _ sandbox.DurableMeta = (*DB)(nil)

// Open opens (creating if needed) the database file at path.
func Open(path string) (*DB, error) {
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: 2 * time.Second, NoSync: true})
	if err != nil {
		return nil, fmt.Errorf("cannot open metadata %s: %w", path, err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		for _, b := range allBuckets {
			if _, err := tx.CreateBucketIfNotExists(b); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("cannot initialise metadata %s: %w", path, err)
	}
	return &DB{db: db, now: time.Now}, nil
}

// Close syncs and closes the file.
func (d *DB) Close() error {
	if err := d.db.Sync(); err != nil {
		d.db.Close()
		return fmt.Errorf("cannot sync metadata: %w", err)
	}
	return d.db.Close()
}

func (d *DB) put(bucket, key []byte, v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return d.db.Update(func(tx *bolt.Tx) error { return tx.Bucket(bucket).Put(key, data) })
}

func (d *DB) PutSandbox(_ context.Context, r sandbox.Record) error {
	r.CreatedAt = sandbox.StoreTime(r.CreatedAt)
	return d.put(bucketSandboxes, []byte(r.ID), r)
}

// DeleteSandbox deletes the record, its head and its generations.
func (d *DB) DeleteSandbox(_ context.Context, id string) error {
	return d.db.Update(func(tx *bolt.Tx) error {
		if err := tx.Bucket(bucketSandboxes).Delete([]byte(id)); err != nil {
			return err
		}
		if err := tx.Bucket(bucketHeads).Delete([]byte(id)); err != nil {
			return err
		}
		return deleteGenerations(tx, id)
	})
}

func (d *DB) Sandboxes(context.Context) ([]sandbox.Record, error) {
	var out []sandbox.Record
	err := d.db.View(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketSandboxes).ForEach(func(k, v []byte) error {
			var r sandbox.Record
			if err := json.Unmarshal(v, &r); err != nil {
				return fmt.Errorf("corrupt record %q: %w", k, err)
			}
			out = append(out, r)
			return nil
		})
	})
	return out, err
}

func snapKey(tenant, name string) []byte { return []byte(tenant + "\x00" + name) }

func (d *DB) CreateSnapshot(_ context.Context, s sandbox.SnapshotRecord) error {
	s.CreatedAt = sandbox.StoreTime(s.CreatedAt)
	data, err := json.Marshal(s)
	if err != nil {
		return err
	}
	return d.db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketSnapshots)
		k := snapKey(s.Tenant, s.Name)
		if b.Get(k) != nil {
			return api.Errorf(errdefs.ErrAlreadyExists, "snapshot %q already exists", s.Name)
		}
		return b.Put(k, data)
	})
}

func (d *DB) DeleteSnapshot(_ context.Context, tenant, name string) error {
	return d.db.Update(func(tx *bolt.Tx) error { return tx.Bucket(bucketSnapshots).Delete(snapKey(tenant, name)) })
}

func (d *DB) Snapshots(context.Context) ([]sandbox.SnapshotRecord, error) {
	var out []sandbox.SnapshotRecord
	err := d.db.View(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketSnapshots).ForEach(func(k, v []byte) error {
			var s sandbox.SnapshotRecord
			if err := json.Unmarshal(v, &s); err != nil {
				return fmt.Errorf("corrupt snapshot %q: %w", k, err)
			}
			out = append(out, s)
			return nil
		})
	})
	return out, err
}

// keyRecord is what an API key grants.
type keyRecord struct {
	Tenant  string    `json:"tenant"`
	Admin   bool      `json:"admin,omitempty"`
	Created time.Time `json:"created"`
}

// keyID is how a key is stored: its sha256, never the key itself.
func keyID(key string) []byte {
	sum := sha256.Sum256([]byte(key))
	return []byte(hex.EncodeToString(sum[:]))
}

// PutKey maps key to tenant.
func (d *DB) PutKey(_ context.Context, key, tenant string, admin bool) error {
	return d.put(bucketKeys, keyID(key), keyRecord{Tenant: tenant, Admin: admin, Created: time.Now().UTC()})
}

// LookupKey returns the tenant of key; an unknown key matches
// errdefs.ErrNotFound.
func (d *DB) LookupKey(_ context.Context, key string) (tenant string, admin bool, err error) {
	var t keyRecord
	err = d.db.View(func(tx *bolt.Tx) error {
		v := tx.Bucket(bucketKeys).Get(keyID(key))
		if v == nil {
			return errdefs.ErrNotFound
		}
		return json.Unmarshal(v, &t)
	})
	if errors.Is(err, errdefs.ErrNotFound) {
		return "", false, api.Errorf(errdefs.ErrNotFound, "unknown API key")
	}
	return t.Tenant, t.Admin, err
}

// HasKeys reports whether any key exists (first start creates the admin's).
func (d *DB) HasKeys(context.Context) (bool, error) {
	var has bool
	err := d.db.View(func(tx *bolt.Tx) error {
		k, _ := tx.Bucket(bucketKeys).Cursor().First()
		has = k != nil
		return nil
	})
	return has, err
}
