package vfs

import (
	"bytes"
	"io"
	"math/rand"
	"testing"
)

// TestSealWhileWriting: a file written in small pieces and never closed
// holds fewer than sealAfter unhashed bytes, identical data once (64 MiB
// of zeros is one distinct chunk), and reads back exactly.
func TestSealWhileWriting(t *testing.T) {
	rnd := make([]byte, 3<<20)
	rand.New(rand.NewSource(1)).Read(rnd)
	for _, tc := range []struct {
		name     string
		data     []byte
		distinct int // most distinct chunks allowed
	}{
		{"zeros", make([]byte, 64<<20), 2},
		{"repeated block", bytes.Repeat(rnd[:1<<20], 24), 3 * (1 << 20) / chunkMin},
		{"random", rnd, len(rnd)/chunkMin + 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := New(Options{})
			h, err := f.Create("/f")
			if err != nil {
				t.Fatal(err)
			}
			for p := tc.data; len(p) > 0; {
				n := min(len(p), 64<<10)
				if _, err := h.Write(p[:n]); err != nil {
					t.Fatal(err)
				}
				p = p[n:]
			}
			in := f.cur.Load().get(h.ino)
			if mb := memBytes(in.ext); mb >= sealAfter {
				t.Errorf("%d unsealed bytes in an open file, want < %d", mb, sealAfter)
			}
			distinct := map[*chunk]bool{}
			for _, e := range in.ext {
				if e.kind == extChunk {
					distinct[e.ch] = true
				}
			}
			if len(distinct) > tc.distinct {
				t.Errorf("%d distinct chunks held, want at most %d", len(distinct), tc.distinct)
			}
			r, err := f.Open("/f")
			if err != nil {
				t.Fatal(err)
			}
			got, err := io.ReadAll(r)
			if err != nil || !bytes.Equal(got, tc.data) {
				t.Fatalf("read back %d bytes (%v), want the %d written", len(got), err, len(tc.data))
			}
			h.Close()
		})
	}
}
