package main

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"sync"
	"time"

	"github.com/warren-sandbox/warren/store"
)

// blobGauge reports the blob store's size on /metrics. Counting means
// listing every object (a walk of DATA/blobs, or an S3 listing), so it is
// redone at most every blobGaugeEvery, in the background; a scrape waits
// at most a second for a count under way and otherwise reports the last.
type blobGauge struct {
	count func(ctx context.Context) (bytes, objects int64, err error)

	mu      sync.Mutex
	at      time.Time
	bytes   int64
	objects int64
	err     error
	running chan struct{} // closed when the count under way ends
}

const blobGaugeEvery = 30 * time.Second

// storeCounter counts a store.Store's objects.
func storeCounter(st store.Store) func(context.Context) (int64, int64, error) {
	return func(ctx context.Context) (b, n int64, err error) {
		err = st.List(ctx, "", func(_ string, size int64) error {
			b += size
			n++
			return nil
		})
		return b, n, err
	}
}

// dirCounter counts the files under dir (the blobs of worker processes,
// whose store the front does not open).
func dirCounter(dir string) func(context.Context) (int64, int64, error) {
	return func(ctx context.Context) (b, n int64, err error) {
		err = filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !d.Type().IsRegular() {
				return nil // a blob deleted during the walk is not an error
			}
			if fi, err := d.Info(); err == nil {
				b += fi.Size()
				n++
			}
			return ctx.Err()
		})
		return b, n, err
	}
}

func (g *blobGauge) refresh() chan struct{} {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.running != nil {
		return g.running
	}
	if !g.at.IsZero() && time.Since(g.at) < blobGaugeEvery {
		return nil
	}
	done := make(chan struct{})
	g.running = done
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		b, n, err := g.count(ctx)
		g.mu.Lock()
		g.at, g.err, g.running = time.Now(), err, nil
		if err == nil {
			g.bytes, g.objects = b, n
		}
		g.mu.Unlock()
		close(done)
	}()
	return done
}

// write appends the series (MetricsFront's extra).
func (g *blobGauge) write(w io.Writer) {
	if done := g.refresh(); done != nil {
		select {
		case <-done:
		case <-time.After(time.Second):
		}
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.at.IsZero() || (g.err != nil && g.bytes == 0) {
		return // never counted: no series rather than a false zero
	}
	fmt.Fprintf(w, "# HELP warren_blob_store_bytes Bytes in the blob store (recounted at most every %s).\n# TYPE warren_blob_store_bytes gauge\nwarren_blob_store_bytes %d\n", blobGaugeEvery, g.bytes)
	fmt.Fprintf(w, "# HELP warren_blob_store_objects Objects in the blob store.\n# TYPE warren_blob_store_objects gauge\nwarren_blob_store_objects %d\n", g.objects)
	fmt.Fprintf(w, "# HELP warren_blob_store_counted_seconds_ago Age of the count above.\n# TYPE warren_blob_store_counted_seconds_ago gauge\nwarren_blob_store_counted_seconds_ago %g\n", time.Since(g.at).Seconds())
}
