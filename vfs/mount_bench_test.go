package vfs

import (
	"strconv"
	"testing"
)

// BenchmarkMount compares writes through a mount with the same writes to
// the sandbox's own tree: the routing is a prefix match per call.
func BenchmarkMount(b *testing.B) {
	data := make([]byte, 1<<20)
	for i := range data {
		data[i] = byte(i * 7)
	}
	for _, tc := range []struct {
		name string
		dir  string
	}{{"own", "/own"}, {"volume", "/data"}} {
		setup := func() *FS {
			root := New(Options{})
			if err := root.Mount("/data", New(Options{}), MountOptions{Name: "volume data"}); err != nil {
				b.Fatal(err)
			}
			if err := root.MkdirAll("/own", 0o755); err != nil {
				b.Fatal(err)
			}
			return root
		}
		b.Run("small-files/"+tc.name, func(b *testing.B) {
			root := setup()
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				if err := root.WriteFile(tc.dir+"/f"+strconv.Itoa(i), data[:512], 0o644); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("sequential-1MiB/"+tc.name, func(b *testing.B) {
			root := setup()
			b.SetBytes(int64(len(data)))
			for i := 0; b.Loop(); i++ {
				h, err := root.OpenFile(tc.dir+"/big", O_CREATE|O_WRONLY|O_TRUNC, 0o644)
				if err != nil {
					b.Fatal(err)
				}
				for off := 0; off < len(data); off += 64 << 10 {
					if _, err := h.Write(data[off : off+64<<10]); err != nil {
						b.Fatal(err)
					}
				}
				if err := h.Close(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
