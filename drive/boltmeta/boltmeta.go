// Package boltmeta keeps drives' metadata in one bbolt file for a single
// node, shared by any number of processes (warren serve's workers).
//
// bbolt lets one process at a time have a file open read-write (it
// flocks the file for as long as it is open), so this store opens the
// file for each transaction and closes it after: bolt.Open, Update or
// View, Close. Who goes next is decided by a flock on a lock file beside
// it (PATH.lock): exclusive for an Update, shared for a View. The kernel
// wakes the next waiter when it is released, where bbolt's own flock
// would poll every 50 ms. Inside one process transactions are serialised
// by a mutex (flock locks belong to the open file, which the process's
// goroutines share). The cost of the reopen is measured by
// BenchmarkTx (docs/drive.md "Measured").
package boltmeta

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/containerd/errdefs"
	"github.com/warren-sandbox/warren/drive"
	bolt "go.etcd.io/bbolt"
	"golang.org/x/sys/unix"
)

var (
	bucketDrives = []byte("drives") // id -> record JSON
	bucketNames  = []byte("names")  // tenant \0 name -> id
	// Per drive, a bucket named "d/<id>" holding:
	subEntries = []byte("entries") // be64 id -> entry JSON
	subNames   = []byte("names")   // be64 parent + name -> be64 id
	subLocks   = []byte("locks")   // be64 inode + owner -> lock JSON
	subMounts  = []byte("mounts")  // mount id -> be64 expiry (unix ns)
	subGarbage = []byte("garbage") // sha256 -> garbage JSON
)

// Options for Open.
type Options struct {
	// NoSync skips the fsync of each commit: a crash of warren loses
	// nothing (the page cache has it), a power loss may lose the last
	// commits. Off by default: a drive's Close is an acknowledgement.
	NoSync bool
	// Timeout bounds bbolt's wait for the file (it should never wait:
	// the lock file orders the openers).
	Timeout time.Duration
}

// Meta is a drive.Meta over a bbolt file.
type Meta struct {
	path string
	opts Options
	mu   sync.Mutex
	lock *os.File
}

var _ drive.Meta = (*Meta)(nil)

// Open opens (creating if needed) the file at path and its lock file.
func Open(path string, o Options) (*Meta, error) {
	if o.Timeout <= 0 {
		o.Timeout = 10 * time.Second
	}
	lf, err := os.OpenFile(path+".lock", os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("cannot open drive metadata lock %s.lock: %w", path, err)
	}
	m := &Meta{path: path, opts: o, lock: lf}
	err = m.tx(true, func(tx *bolt.Tx) error {
		for _, b := range [][]byte{bucketDrives, bucketNames} {
			if _, err := tx.CreateBucketIfNotExists(b); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		lf.Close()
		return nil, fmt.Errorf("cannot initialise drive metadata %s: %w", path, err)
	}
	return m, nil
}

// Close closes the lock file (the database file is closed after every
// transaction).
func (m *Meta) Close() error { return m.lock.Close() }

// tx runs fn with the file open, under the lock file's flock.
func (m *Meta) tx(write bool, fn func(*bolt.Tx) error) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	how := unix.LOCK_SH
	if write {
		how = unix.LOCK_EX
	}
	if err := flock(m.lock, how); err != nil {
		return fmt.Errorf("cannot lock drive metadata %s: %w", m.path, err)
	}
	defer flock(m.lock, unix.LOCK_UN)
	db, err := bolt.Open(m.path, 0o600, &bolt.Options{Timeout: m.opts.Timeout, NoSync: m.opts.NoSync, ReadOnly: !write})
	if err != nil {
		return fmt.Errorf("cannot open drive metadata %s: %w", m.path, err)
	}
	if write {
		err = db.Update(fn)
	} else {
		err = db.View(fn)
	}
	if cerr := db.Close(); cerr != nil && err == nil {
		err = fmt.Errorf("cannot close drive metadata %s: %w", m.path, cerr)
	}
	return err
}

func flock(f *os.File, how int) error {
	for {
		err := unix.Flock(int(f.Fd()), how)
		if !errors.Is(err, unix.EINTR) {
			return err
		}
	}
}

func be64(v uint64) []byte { return binary.BigEndian.AppendUint64(nil, v) }

func nameKey(tenant, name string) []byte { return []byte(tenant + "\x00" + name) }

func driveBucket(id string) []byte { return []byte("d/" + id) }

func (m *Meta) CreateDrive(_ context.Context, r drive.Record) error {
	data, err := json.Marshal(r)
	if err != nil {
		return err
	}
	return m.tx(true, func(tx *bolt.Tx) error {
		names := tx.Bucket(bucketNames)
		k := nameKey(r.Tenant, r.Name)
		if names.Get(k) != nil {
			return drive.Errorf(errdefs.ErrAlreadyExists, "drive %q already exists", r.Name)
		}
		if err := names.Put(k, []byte(r.ID)); err != nil {
			return err
		}
		if err := tx.Bucket(bucketDrives).Put([]byte(r.ID), data); err != nil {
			return err
		}
		b, err := tx.CreateBucket(driveBucket(r.ID))
		if err != nil {
			return err
		}
		for _, s := range [][]byte{subEntries, subNames, subLocks, subMounts, subGarbage} {
			if _, err := b.CreateBucket(s); err != nil {
				return err
			}
		}
		t := &txn{tx: tx, b: b, id: r.ID}
		id, err := t.NewID()
		if err != nil {
			return err
		}
		if id != drive.RootID {
			return fmt.Errorf("drive %q: root got id %d", r.Name, id)
		}
		return t.Put(drive.Entry{ID: drive.RootID, Dir: true, Mode: 0o777, MTime: r.CreatedAt, Version: 1})
	})
}

func (m *Meta) Drive(_ context.Context, tenant, name string) (drive.Record, error) {
	var r drive.Record
	err := m.tx(false, func(tx *bolt.Tx) error {
		id := tx.Bucket(bucketNames).Get(nameKey(tenant, name))
		if id == nil {
			return drive.NoDrive(name)
		}
		return getRecord(tx, string(id), &r)
	})
	return r, err
}

func getRecord(tx *bolt.Tx, id string, r *drive.Record) error {
	v := tx.Bucket(bucketDrives).Get([]byte(id))
	if v == nil {
		return drive.Errorf(errdefs.ErrNotFound, "drive %s not found", id)
	}
	if err := json.Unmarshal(v, r); err != nil {
		return fmt.Errorf("corrupt drive record %s: %w", id, err)
	}
	return nil
}

func (m *Meta) Drives(_ context.Context, tenant string) ([]drive.Record, error) {
	var out []drive.Record
	err := m.tx(false, func(tx *bolt.Tx) error {
		return tx.Bucket(bucketNames).ForEach(func(k, id []byte) error {
			if tenant != "" && !bytes.HasPrefix(k, []byte(tenant+"\x00")) {
				return nil
			}
			var r drive.Record
			if err := getRecord(tx, string(id), &r); err != nil {
				return err
			}
			out = append(out, r)
			return nil
		})
	})
	if tenant == "" {
		// names sorts by tenant first; the contract is by name.
		sortByName(out)
	}
	return out, err
}

func sortByName(rs []drive.Record) {
	for i := 1; i < len(rs); i++ {
		for j := i; j > 0 && (rs[j].Name < rs[j-1].Name || rs[j].Name == rs[j-1].Name && rs[j].Tenant < rs[j-1].Tenant); j-- {
			rs[j], rs[j-1] = rs[j-1], rs[j]
		}
	}
}

// Update and View check ctx before they start; a bbolt transaction, short
// by design, is not interrupted.
func (m *Meta) Update(ctx context.Context, id string, fn func(drive.Tx) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return m.tx(true, func(tx *bolt.Tx) error {
		b := tx.Bucket(driveBucket(id))
		if b == nil {
			return drive.Errorf(errdefs.ErrNotFound, "drive %s not found", id)
		}
		return fn(&txn{tx: tx, b: b, id: id})
	})
}

func (m *Meta) View(ctx context.Context, id string, fn func(drive.Tx) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return m.tx(false, func(tx *bolt.Tx) error {
		b := tx.Bucket(driveBucket(id))
		if b == nil {
			return drive.Errorf(errdefs.ErrNotFound, "drive %s not found", id)
		}
		return fn(&txn{tx: tx, b: b, id: id})
	})
}

// txn is a drive.Tx over one bolt transaction.
type txn struct {
	tx  *bolt.Tx
	b   *bolt.Bucket
	id  string
	now time.Time
}

type entryJSON struct {
	Parent  uint64    `json:"p"`
	Name    string    `json:"n"`
	Dir     bool      `json:"d,omitempty"`
	Mode    uint32    `json:"m"`
	Size    int64     `json:"s"`
	MTime   time.Time `json:"t"`
	Version uint64    `json:"v"`
	Chunks  []byte    `json:"c,omitempty"`
}

func (t *txn) Record() (drive.Record, error) {
	var r drive.Record
	return r, getRecord(t.tx, t.id, &r)
}

func (t *txn) SetUsed(used int64) error {
	return t.setRecord(func(r *drive.Record) { r.Used = used })
}

func (t *txn) SetQuota(q int64) error {
	return t.setRecord(func(r *drive.Record) { r.Quota = q })
}

func (t *txn) SetSweeps(n uint64) error {
	return t.setRecord(func(r *drive.Record) { r.Sweeps = n })
}

func (t *txn) setRecord(fn func(*drive.Record)) error {
	r, err := t.Record()
	if err != nil {
		return err
	}
	fn(&r)
	data, err := json.Marshal(r)
	if err != nil {
		return err
	}
	return t.tx.Bucket(bucketDrives).Put([]byte(t.id), data)
}

func (t *txn) NewID() (uint64, error) { return t.b.Bucket(subEntries).NextSequence() }

func (t *txn) Entry(id uint64) (drive.Entry, error) {
	v := t.b.Bucket(subEntries).Get(be64(id))
	if v == nil {
		return drive.Entry{}, drive.ErrNoEntry
	}
	return decodeEntry(id, v)
}

func decodeEntry(id uint64, v []byte) (drive.Entry, error) {
	var j entryJSON
	if err := json.Unmarshal(v, &j); err != nil {
		return drive.Entry{}, fmt.Errorf("corrupt entry %d: %w", id, err)
	}
	cs, err := drive.UnmarshalChunks(j.Chunks)
	if err != nil {
		return drive.Entry{}, fmt.Errorf("entry %d: %w", id, err)
	}
	return drive.Entry{ID: id, Parent: j.Parent, Name: j.Name, Dir: j.Dir, Mode: os.FileMode(j.Mode), Size: j.Size,
		MTime: j.MTime, Version: j.Version, Chunks: cs}, nil
}

func childKey(parent uint64, name string) []byte { return append(be64(parent), name...) }

func (t *txn) Lookup(parent uint64, name string) (drive.Entry, error) {
	id := t.b.Bucket(subNames).Get(childKey(parent, name))
	if id == nil {
		return drive.Entry{}, drive.ErrNoEntry
	}
	return t.Entry(binary.BigEndian.Uint64(id))
}

func (t *txn) Children(parent uint64) ([]drive.Entry, error) {
	var out []drive.Entry
	prefix := be64(parent)
	c := t.b.Bucket(subNames).Cursor()
	for k, v := c.Seek(prefix); k != nil && len(k) >= 8 && binary.BigEndian.Uint64(k) == parent; k, v = c.Next() {
		e, err := t.Entry(binary.BigEndian.Uint64(v))
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, nil
}

func (t *txn) HasChildren(parent uint64) (bool, error) {
	k, _ := t.b.Bucket(subNames).Cursor().Seek(be64(parent))
	return k != nil && len(k) >= 8 && binary.BigEndian.Uint64(k) == parent, nil
}

func (t *txn) Put(e drive.Entry) error {
	ents, names := t.b.Bucket(subEntries), t.b.Bucket(subNames)
	if old := ents.Get(be64(e.ID)); old != nil {
		o, err := decodeEntry(e.ID, old)
		if err != nil {
			return err
		}
		if (o.Parent != e.Parent || o.Name != e.Name) && e.ID != drive.RootID {
			if err := names.Delete(childKey(o.Parent, o.Name)); err != nil {
				return err
			}
		}
	}
	data, err := json.Marshal(entryJSON{Parent: e.Parent, Name: e.Name, Dir: e.Dir, Mode: uint32(e.Mode), Size: e.Size,
		MTime: e.MTime, Version: e.Version, Chunks: drive.MarshalChunks(e.Chunks)})
	if err != nil {
		return err
	}
	if err := ents.Put(be64(e.ID), data); err != nil {
		return err
	}
	if e.ID == drive.RootID {
		return nil
	}
	return names.Put(childKey(e.Parent, e.Name), be64(e.ID))
}

func (t *txn) DeleteEntry(id uint64) error {
	ents := t.b.Bucket(subEntries)
	v := ents.Get(be64(id))
	if v == nil {
		return nil
	}
	e, err := decodeEntry(id, v)
	if err != nil {
		return err
	}
	if err := t.b.Bucket(subNames).Delete(childKey(e.Parent, e.Name)); err != nil {
		return err
	}
	return ents.Delete(be64(id))
}

type lockJSON struct {
	Exclusive bool      `json:"x"`
	Expires   time.Time `json:"e"`
}

func lockKey(inode uint64, owner string) []byte { return append(be64(inode), owner...) }

func (t *txn) Locks(inode uint64) ([]drive.Lock, error) {
	var out []drive.Lock
	c := t.b.Bucket(subLocks).Cursor()
	for k, v := c.Seek(be64(inode)); k != nil && len(k) >= 8 && binary.BigEndian.Uint64(k) == inode; k, v = c.Next() {
		var j lockJSON
		if err := json.Unmarshal(v, &j); err != nil {
			return nil, fmt.Errorf("corrupt lock on %d: %w", inode, err)
		}
		out = append(out, drive.Lock{Inode: inode, Owner: string(k[8:]), Exclusive: j.Exclusive, Expires: j.Expires})
	}
	return out, nil
}

func (t *txn) PutLock(l drive.Lock) error {
	data, err := json.Marshal(lockJSON{Exclusive: l.Exclusive, Expires: l.Expires})
	if err != nil {
		return err
	}
	return t.b.Bucket(subLocks).Put(lockKey(l.Inode, l.Owner), data)
}

func (t *txn) DeleteLock(inode uint64, owner string) error {
	return t.b.Bucket(subLocks).Delete(lockKey(inode, owner))
}

func (t *txn) Mounts() ([]drive.Mount, error) {
	var out []drive.Mount
	err := t.b.Bucket(subMounts).ForEach(func(k, v []byte) error {
		if len(v) != 8 {
			return fmt.Errorf("corrupt mount lease %q", k)
		}
		out = append(out, drive.Mount{ID: string(k), Expires: time.Unix(0, int64(binary.BigEndian.Uint64(v)))})
		return nil
	})
	return out, err
}

func (t *txn) PutMount(m drive.Mount) error {
	return t.b.Bucket(subMounts).Put([]byte(m.ID), be64(uint64(m.Expires.UnixNano())))
}

func (t *txn) DeleteMount(id string) error { return t.b.Bucket(subMounts).Delete([]byte(id)) }

func (t *txn) DeleteDrive() error {
	r, err := t.Record()
	if err != nil {
		return err
	}
	if err := t.tx.Bucket(bucketNames).Delete(nameKey(r.Tenant, r.Name)); err != nil {
		return err
	}
	if err := t.tx.Bucket(bucketDrives).Delete([]byte(t.id)); err != nil {
		return err
	}
	return t.tx.DeleteBucket(driveBucket(t.id))
}

// Now is this machine's clock: every process sharing the file shares it.
func (t *txn) Now() (time.Time, error) {
	if t.now.IsZero() {
		t.now = time.Now()
	}
	return t.now, nil
}

func (t *txn) Entries(fn func(drive.Entry) error) error {
	return t.b.Bucket(subEntries).ForEach(func(k, v []byte) error {
		e, err := decodeEntry(binary.BigEndian.Uint64(k), v)
		if err != nil {
			return err
		}
		return fn(e)
	})
}

type garbageJSON struct {
	FirstSeen time.Time `json:"f"`
	Doomed    bool      `json:"d,omitempty"`
}

func (t *txn) Garbage(sums [][32]byte) ([]drive.Garbage, error) {
	b := t.b.Bucket(subGarbage)
	var out []drive.Garbage
	add := func(k, v []byte) error {
		var j garbageJSON
		if err := json.Unmarshal(v, &j); err != nil || len(k) != 32 {
			return fmt.Errorf("corrupt garbage row %x: %v", k, err)
		}
		g := drive.Garbage{FirstSeen: j.FirstSeen, Doomed: j.Doomed}
		copy(g.Sum[:], k)
		out = append(out, g)
		return nil
	}
	if sums == nil {
		return out, b.ForEach(add)
	}
	for _, s := range sums {
		if v := b.Get(s[:]); v != nil {
			if err := add(s[:], v); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}

func (t *txn) PutGarbage(g drive.Garbage) error {
	data, err := json.Marshal(garbageJSON{FirstSeen: g.FirstSeen, Doomed: g.Doomed})
	if err != nil {
		return err
	}
	return t.b.Bucket(subGarbage).Put(g.Sum[:], data)
}

func (t *txn) DeleteGarbage(sum [32]byte) error { return t.b.Bucket(subGarbage).Delete(sum[:]) }
