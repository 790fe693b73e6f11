package boltmeta

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"time"

	"github.com/containerd/errdefs"
	"github.com/warren-sandbox/warren/api"
	"github.com/warren-sandbox/warren/sandbox"
	bolt "go.etcd.io/bbolt"
)

// genKey orders a sandbox's generations by number: id, 0, uint64 BE.
func genKey(sandbox string, number uint64) []byte {
	k := make([]byte, 0, len(sandbox)+9)
	k = append(append([]byte(sandbox), 0), make([]byte, 8)...)
	binary.BigEndian.PutUint64(k[len(sandbox)+1:], number)
	return k
}

func genPrefix(sandbox string) []byte { return append([]byte(sandbox), 0) }

func unknownSandbox(id string) error {
	return api.Errorf(errdefs.ErrNotFound, "sandbox %s has no record", id)
}

// head reads the head of a sandbox with a record (the zero head when none
// was written); ok is false without a record.
func head(tx *bolt.Tx, id string) (h sandbox.Head, ok bool, err error) {
	if tx.Bucket(bucketSandboxes).Get([]byte(id)) == nil {
		return h, false, nil
	}
	h.Sandbox = id
	if v := tx.Bucket(bucketHeads).Get([]byte(id)); v != nil {
		if err := json.Unmarshal(v, &h); err != nil {
			return h, true, fmt.Errorf("corrupt head %q: %w", id, err)
		}
	}
	return h, true, nil
}

func putJSON(b *bolt.Bucket, key []byte, v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return b.Put(key, data)
}

// update runs fn in a write transaction and, when durable, syncs the file
// before returning: the fence and the head must survive a power loss.
func (d *DB) update(durable bool, fn func(tx *bolt.Tx) error) error {
	if err := d.db.Update(fn); err != nil {
		return err
	}
	if durable {
		if err := d.db.Sync(); err != nil {
			return fmt.Errorf("cannot sync metadata: %w", err)
		}
	}
	return nil
}

func (d *DB) Head(_ context.Context, id string) (sandbox.Head, error) {
	var h sandbox.Head
	err := d.db.View(func(tx *bolt.Tx) error {
		var ok bool
		var err error
		if h, ok, err = head(tx, id); err == nil && !ok {
			err = unknownSandbox(id)
		}
		return err
	})
	return h, err
}

func (d *DB) ListHeads(context.Context) ([]sandbox.Head, error) {
	var out []sandbox.Head
	err := d.db.View(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketSandboxes).ForEach(func(k, _ []byte) error {
			h, _, err := head(tx, string(k))
			out = append(out, h)
			return err
		})
	})
	return out, err
}

func (d *DB) Claim(_ context.Context, id, node string, seen uint64) (uint64, error) {
	if node == "" {
		return 0, api.Errorf(errdefs.ErrInvalidArgument, "claim of %s: no node", id)
	}
	var epoch uint64
	err := d.update(true, func(tx *bolt.Tx) error {
		h, ok, err := head(tx, id)
		switch {
		case err != nil:
			return err
		case !ok:
			return unknownSandbox(id)
		case h.Epoch != seen:
			return sandbox.ClaimFenced(id, node, seen, h)
		}
		h.Owner, h.Epoch = node, h.Epoch+1
		epoch = h.Epoch
		return putJSON(tx.Bucket(bucketHeads), []byte(id), h)
	})
	return epoch, err
}

func (d *DB) Release(_ context.Context, id, node string, epoch uint64) error {
	return d.update(true, func(tx *bolt.Tx) error {
		h, ok, err := head(tx, id)
		switch {
		case err != nil:
			return err
		case !ok:
			return unknownSandbox(id)
		case h.Epoch == epoch && h.Owner == "":
			return nil
		case h.Owner != node || h.Epoch != epoch:
			return sandbox.Fenced(sandbox.Commit{Sandbox: id, Node: node, Epoch: epoch}, h)
		}
		h.Owner = ""
		return putJSON(tx.Bucket(bucketHeads), []byte(id), h)
	})
}

func (d *DB) Publish(_ context.Context, c sandbox.Commit) (sandbox.Generation, error) {
	if err := sandbox.CheckCommit(c); err != nil {
		return sandbox.Generation{}, err
	}
	var g sandbox.Generation
	err := d.update(true, func(tx *bolt.Tx) error {
		h, ok, err := head(tx, c.Sandbox)
		if err != nil {
			return err
		}
		if !ok {
			return unknownSandbox(c.Sandbox)
		}
		var landed *sandbox.Generation
		if k := tx.Bucket(bucketCommits).Get([]byte(c.CommitID)); k != nil {
			landed = new(sandbox.Generation)
			if err := json.Unmarshal(tx.Bucket(bucketGens).Get(k), landed); err != nil {
				return fmt.Errorf("corrupt generation of commit %q: %w", c.CommitID, err)
			}
		}
		done, err := sandbox.PublishRule(c, h, landed)
		if err != nil || done {
			if done {
				g = *landed
			}
			return err
		}
		g = sandbox.Generation{
			Sandbox: c.Sandbox, Number: c.Base + 1, Ref: c.Ref, Parent: c.Parent,
			Epoch: c.Epoch, CommitID: c.CommitID, CreatedAt: sandbox.StoreTime(d.now()),
		}
		h.Generation, h.Ref, h.CommitID = g.Number, g.Ref, g.CommitID
		k := genKey(c.Sandbox, g.Number)
		if err := putJSON(tx.Bucket(bucketGens), k, g); err != nil {
			return err
		}
		if err := tx.Bucket(bucketCommits).Put([]byte(c.CommitID), k); err != nil {
			return err
		}
		return putJSON(tx.Bucket(bucketHeads), []byte(c.Sandbox), h)
	})
	if err != nil {
		return sandbox.Generation{}, err
	}
	return g, nil
}

func (d *DB) Generations(_ context.Context, id string) ([]sandbox.Generation, error) {
	out := []sandbox.Generation{}
	err := d.db.View(func(tx *bolt.Tx) error {
		if tx.Bucket(bucketSandboxes).Get([]byte(id)) == nil {
			return unknownSandbox(id)
		}
		c := tx.Bucket(bucketGens).Cursor()
		p := genPrefix(id)
		for k, v := c.Seek(p); k != nil && bytes.HasPrefix(k, p) && len(k) == len(p)+8; k, v = c.Next() {
			var g sandbox.Generation
			if err := json.Unmarshal(v, &g); err != nil {
				return fmt.Errorf("corrupt generation %q: %w", k, err)
			}
			out = append(out, g)
		}
		return nil
	})
	return out, err
}

func (d *DB) Generation(_ context.Context, id string, number uint64) (sandbox.Generation, error) {
	var g sandbox.Generation
	err := d.db.View(func(tx *bolt.Tx) error {
		if tx.Bucket(bucketSandboxes).Get([]byte(id)) == nil {
			return unknownSandbox(id)
		}
		v := tx.Bucket(bucketGens).Get(genKey(id, number))
		if v == nil {
			return sandbox.NoGeneration(id, number)
		}
		return json.Unmarshal(v, &g)
	})
	return g, err
}

func (d *DB) DeleteGeneration(_ context.Context, id string, number uint64) error {
	return d.db.Update(func(tx *bolt.Tx) error {
		h, ok, err := head(tx, id)
		if err != nil || !ok {
			return err
		}
		if h.Generation == number && number != 0 {
			return sandbox.HeadGenerationPinned(id, number)
		}
		return deleteGeneration(tx, genKey(id, number))
	})
}

func deleteGeneration(tx *bolt.Tx, k []byte) error {
	gens := tx.Bucket(bucketGens)
	v := gens.Get(k)
	if v == nil {
		return nil
	}
	var g sandbox.Generation
	if err := json.Unmarshal(v, &g); err != nil {
		return fmt.Errorf("corrupt generation %q: %w", k, err)
	}
	if err := tx.Bucket(bucketCommits).Delete([]byte(g.CommitID)); err != nil {
		return err
	}
	return gens.Delete(k)
}

// deleteGenerations deletes every generation of a sandbox.
func deleteGenerations(tx *bolt.Tx, id string) error {
	p := genPrefix(id)
	var keys [][]byte
	c := tx.Bucket(bucketGens).Cursor()
	for k, _ := c.Seek(p); k != nil && bytes.HasPrefix(k, p); k, _ = c.Next() {
		if len(k) == len(p)+8 {
			keys = append(keys, bytes.Clone(k))
		}
	}
	for _, k := range keys {
		if err := deleteGeneration(tx, k); err != nil {
			return err
		}
	}
	return nil
}

func (d *DB) AddCustody(_ context.Context, c sandbox.CustodyRecord, ttl time.Duration) (time.Time, error) {
	if err := sandbox.CheckCustody(c, ttl); err != nil {
		return time.Time{}, err
	}
	c.Expires = sandbox.StoreTime(d.now().Add(ttl))
	err := d.update(false, func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketCustody)
		if b.Get([]byte(c.Upload)) != nil {
			return api.Errorf(errdefs.ErrAlreadyExists, "upload %q already has custody", c.Upload)
		}
		return putJSON(b, []byte(c.Upload), c)
	})
	if err != nil {
		return time.Time{}, err
	}
	return c.Expires, nil
}

func getJSON(b *bolt.Bucket, key []byte, v any) (bool, error) {
	data := b.Get(key)
	if data == nil {
		return false, nil
	}
	if err := json.Unmarshal(data, v); err != nil {
		return true, fmt.Errorf("corrupt %s record %q: %w", b.Tx().DB().Path(), key, err)
	}
	return true, nil
}

func (d *DB) RenewCustody(_ context.Context, upload string, ttl time.Duration) (time.Time, error) {
	if err := sandbox.CheckTTL(ttl); err != nil {
		return time.Time{}, err
	}
	var c sandbox.CustodyRecord
	err := d.update(false, func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketCustody)
		ok, err := getJSON(b, []byte(upload), &c)
		switch {
		case err != nil:
			return err
		case !ok:
			return sandbox.NoCustody(upload)
		}
		now := d.now()
		if !c.Expires.After(now) {
			return sandbox.CustodyExpired(upload, c.Expires)
		}
		c.Expires = sandbox.StoreTime(now.Add(ttl))
		return putJSON(b, []byte(upload), c)
	})
	if err != nil {
		return time.Time{}, err
	}
	return c.Expires, nil
}

func (d *DB) AddCustodyKeys(_ context.Context, upload string, keys []string) error {
	return d.update(false, func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketCustody)
		var c sandbox.CustodyRecord
		ok, err := getJSON(b, []byte(upload), &c)
		switch {
		case err != nil:
			return err
		case !ok:
			return sandbox.NoCustody(upload)
		}
		if !c.Expires.After(d.now()) {
			return sandbox.CustodyExpired(upload, c.Expires)
		}
		c.Keys = append(c.Keys, keys...)
		return putJSON(b, []byte(upload), c)
	})
}

func (d *DB) ReleaseCustody(_ context.Context, upload string) error {
	return d.db.Update(func(tx *bolt.Tx) error { return tx.Bucket(bucketCustody).Delete([]byte(upload)) })
}

func (d *DB) ListCustody(context.Context) ([]sandbox.CustodyRecord, error) {
	var out []sandbox.CustodyRecord
	now := d.now()
	err := d.db.View(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketCustody).ForEach(func(k, v []byte) error {
			var c sandbox.CustodyRecord
			if err := json.Unmarshal(v, &c); err != nil {
				return fmt.Errorf("corrupt custody %q: %w", k, err)
			}
			if c.Expires.After(now) {
				out = append(out, c)
			}
			return nil
		})
	})
	return out, err
}

func (d *DB) ExpireCustody(context.Context) (int, error) {
	now := d.now()
	n := 0
	err := d.db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketCustody)
		var gone [][]byte
		err := b.ForEach(func(k, v []byte) error {
			var c sandbox.CustodyRecord
			if err := json.Unmarshal(v, &c); err != nil {
				return fmt.Errorf("corrupt custody %q: %w", k, err)
			}
			if !c.Expires.After(now) {
				gone = append(gone, bytes.Clone(k))
			}
			return nil
		})
		if err != nil {
			return err
		}
		for _, k := range gone {
			if err := b.Delete(k); err != nil {
				return err
			}
		}
		n = len(gone)
		return nil
	})
	return n, err
}

func (d *DB) Join(_ context.Context, n sandbox.NodeRecord, ttl time.Duration) (time.Time, error) {
	if err := sandbox.CheckNode(n, ttl); err != nil {
		return time.Time{}, err
	}
	n.Expires, n.Live = sandbox.StoreTime(d.now().Add(ttl)), false
	if err := d.update(false, func(tx *bolt.Tx) error { return putJSON(tx.Bucket(bucketNodes), []byte(n.ID), n) }); err != nil {
		return time.Time{}, err
	}
	return n.Expires, nil
}

func (d *DB) RenewLease(_ context.Context, id, boot string, ttl time.Duration) (time.Time, error) {
	if err := sandbox.CheckTTL(ttl); err != nil {
		return time.Time{}, err
	}
	var n sandbox.NodeRecord
	err := d.update(false, func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketNodes)
		ok, err := getJSON(b, []byte(id), &n)
		switch {
		case err != nil:
			return err
		case !ok:
			return sandbox.NoNode(id)
		case n.BootID != boot:
			return sandbox.NodeFenced(id, boot, n.BootID)
		}
		n.Expires = sandbox.StoreTime(d.now().Add(ttl))
		return putJSON(b, []byte(id), n)
	})
	if err != nil {
		return time.Time{}, err
	}
	return n.Expires, nil
}

func (d *DB) Leave(_ context.Context, id, boot string) error {
	return d.db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketNodes)
		var n sandbox.NodeRecord
		ok, err := getJSON(b, []byte(id), &n)
		switch {
		case err != nil || !ok:
			return err
		case n.BootID != boot:
			return sandbox.NodeFenced(id, boot, n.BootID)
		}
		return b.Delete([]byte(id))
	})
}

func (d *DB) ListNodes(context.Context) ([]sandbox.NodeRecord, error) {
	var out []sandbox.NodeRecord
	now := d.now()
	err := d.db.View(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketNodes).ForEach(func(k, v []byte) error {
			var n sandbox.NodeRecord
			if err := json.Unmarshal(v, &n); err != nil {
				return fmt.Errorf("corrupt node %q: %w", k, err)
			}
			n.Live = n.Expires.After(now)
			out = append(out, n)
			return nil
		})
	})
	return out, err
}
