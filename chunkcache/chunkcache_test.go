package chunkcache

import (
	"bytes"
	"crypto/sha256"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func chunkOf(i, n int) ([32]byte, []byte) {
	b := bytes.Repeat([]byte{byte(i), byte(i >> 8)}, n/2)
	return sha256.Sum256(b), b
}

// waitDisk waits until the disk writer has drained.
func waitDisk(t *testing.T, c *Cache) {
	t.Helper()
	for i := 0; i < 500; i++ {
		c.wmu.Lock()
		n := len(c.pending)
		c.wmu.Unlock()
		if n == 0 {
			return
		}
		time.Sleep(2 * time.Millisecond)
	}
	t.Fatal("disk writer did not drain")
}

func TestTiers(t *testing.T) {
	const n = 64 << 10
	for _, tc := range []struct {
		name              string
		mem, disk         int64
		wantMem, wantDisk int // chunks in each tier after 16 puts
	}{
		{"memory only", 4 * n, 0, 4, 0},
		{"memory and disk", 4 * n, 8 * n, 4, 8},
		{"disk only", 0, 8 * n, 0, 8},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Open(Options{Memory: tc.mem, Disk: tc.disk, Dir: filepath.Join(t.TempDir(), "c")})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			for i := 0; i < 16; i++ {
				sum, b := chunkOf(i, n)
				c.Put(sum, b)
				waitDisk(t, c)
			}
			st := c.Stats()
			if st.MemoryChunks != tc.wantMem || st.DiskChunks != tc.wantDisk || st.MemoryBytes > tc.mem || st.DiskBytes > tc.disk {
				t.Fatalf("stats %+v: want %d chunks in memory and %d on disk, within %d / %d bytes",
					st, tc.wantMem, tc.wantDisk, tc.mem, tc.disk)
			}
			// The newest are kept, the oldest went: in memory 12..15, on
			// disk the 8 before.
			for i := 15; i >= 0; i-- {
				sum, b := chunkOf(i, n)
				kept := i >= 16-tc.wantMem-tc.wantDisk
				if tc.wantMem == 0 {
					kept = i >= 16-tc.wantDisk
				}
				c2 := c.mem.get(sum) != nil || c.disk.has(sum)
				if c2 != kept {
					t.Fatalf("chunk %d: kept %v, want %v", i, c2, kept)
				}
				if kept && i == 16-tc.wantMem-tc.wantDisk && !bytes.Equal(c.Get(sum), b) {
					t.Fatalf("chunk %d: other bytes", i) // the oldest kept: from disk, if any
				}
			}
		})
	}
}

// TestDiskVerified: a damaged disk entry is a miss (and removed), never
// wrong bytes.
func TestDiskVerified(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "c")
	c, err := Open(Options{Disk: 1 << 20, Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	sum, b := chunkOf(1, 4096)
	c.Put(sum, b)
	waitDisk(t, c)
	if err := os.WriteFile(c.path(sum), bytes.Repeat([]byte{9}, 4096), 0o600); err != nil {
		t.Fatal(err)
	}
	if got := c.Get(sum); got != nil {
		t.Fatal("a damaged disk entry was returned")
	}
	if st := c.Stats(); st.DiskErrors != 1 || st.DiskChunks != 0 {
		t.Fatalf("stats %+v: want the bad entry counted and dropped", st)
	}
}

func TestOpenErrors(t *testing.T) {
	for _, o := range []Options{{Memory: -1}, {Disk: 1 << 20}} {
		if _, err := Open(o); err == nil {
			t.Fatalf("Open(%+v) succeeded", o)
		}
	}
}
