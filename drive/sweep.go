package drive

import (
	"context"
	"encoding/hex"
	"fmt"
	"strings"
	"time"
)

// DefaultGrace is how long a chunk stays stored after the sweep first
// finds no entry referring to it: an open handle reads the version it
// opened for at least that long after a newer one replaced it.
const DefaultGrace = time.Hour

// SweepStats says what one Sweep found and did.
type SweepStats struct {
	Stored       int   // chunks under the drive's prefix when listed
	Pending      int   // unreferenced, within the grace (kept for now)
	Deleted      int   // chunks deleted
	DeletedBytes int64 // their bytes
}

// Sweep deletes the chunks of tenant's drive name that no entry has
// referred to for at least Options.Grace: the chunks of
// overwritten, truncated and removed files, and of commits that never
// happened. Any node may run it, at any time, while the drive is in use:
//
//  1. list the chunks stored under the drive's prefix;
//  2. in one metadata transaction (serialised with every commit), mark
//     the listed chunks no entry refers to (first seen now), forget the
//     marks of chunks referred to again, and doom the marks older than
//     grace, counting the sweep in the drive's record (Sweeps);
//  3. delete the doomed chunks from the store;
//  4. drop their marks.
//
// A commit that finds one of its chunks doomed waits for step 4 and
// uploads it again; one that finds Sweeps moved since its file was opened
// checks its chunks are still stored (re-uploading any that are not)
// before it commits; a handle open for more than half the grace uploads
// the chunks it kept from the version it opened too. So a sweep never
// deletes a chunk a committed version refers to.
func (r *Registry) Sweep(ctx context.Context, tenant, name string) (SweepStats, error) {
	var st SweepStats
	grace := r.opts.Grace
	rec, err := r.meta.Drive(ctx, tenant, name)
	if err != nil {
		return st, err
	}
	prefix := Prefix(rec.ID) + "chunks/"
	stored := map[[32]byte]int64{}
	err = r.store.List(ctx, prefix, func(key string, size int64) error {
		var sum [32]byte
		b, err := hex.DecodeString(strings.TrimPrefix(key, prefix))
		if err != nil || len(b) != 32 {
			return nil // not a chunk of ours
		}
		copy(sum[:], b)
		stored[sum] = size
		return nil
	})
	if err != nil {
		return st, fmt.Errorf("cannot list the chunks of drive %q: %w", name, err)
	}
	st.Stored = len(stored)
	var doomed [][32]byte
	err = r.meta.Update(ctx, rec.ID, func(tx Tx) error {
		doomed, st.Pending = doomed[:0], 0
		now, err := tx.Now()
		if err != nil {
			return err
		}
		refs := map[[32]byte]bool{}
		if err := tx.Entries(func(e Entry) error {
			for _, c := range e.Chunks {
				if !c.Hole() {
					refs[c.Sum] = true
				}
			}
			return nil
		}); err != nil {
			return err
		}
		marks, err := tx.Garbage(nil)
		if err != nil {
			return err
		}
		marked := map[[32]byte]bool{}
		for _, g := range marks {
			marked[g.Sum] = true
			_, isStored := stored[g.Sum]
			switch {
			case refs[g.Sum]:
				err = tx.DeleteGarbage(g.Sum)
			case g.Doomed: // a sweep that stopped before step 4
				doomed = append(doomed, g.Sum)
			case !isStored:
				// Gone from the listing: deleted by another sweep, or
				// stored after it (then marked next time).
				err = tx.DeleteGarbage(g.Sum)
			case now.Sub(g.FirstSeen) >= grace:
				g.Doomed = true
				doomed = append(doomed, g.Sum)
				err = tx.PutGarbage(g)
			default:
				st.Pending++
			}
			if err != nil {
				return err
			}
		}
		for sum := range stored {
			if !refs[sum] && !marked[sum] {
				if err := tx.PutGarbage(Garbage{Sum: sum, FirstSeen: now}); err != nil {
					return err
				}
				st.Pending++
			}
		}
		if len(doomed) == 0 {
			return nil
		}
		rec, err := tx.Record()
		if err != nil {
			return err
		}
		return tx.SetSweeps(rec.Sweeps + 1)
	})
	if err != nil {
		return st, fmt.Errorf("cannot sweep drive %q: %w", name, err)
	}
	for _, sum := range doomed {
		if err := r.store.Delete(ctx, chunkKey(rec.ID, sum)); err != nil {
			return st, fmt.Errorf("cannot sweep drive %q: %w", name, err)
		}
		st.Deleted++
		st.DeletedBytes += stored[sum]
	}
	if len(doomed) == 0 {
		return st, nil
	}
	err = r.meta.Update(ctx, rec.ID, func(tx Tx) error {
		for _, sum := range doomed {
			if err := tx.DeleteGarbage(sum); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return st, fmt.Errorf("cannot sweep drive %q: %w", name, err)
	}
	return st, nil
}
