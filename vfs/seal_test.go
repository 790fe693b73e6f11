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

// TestSealAppendClose: a file grown by appends each opened and closed (the
// shell's `echo line >> log` in a loop) keeps about a chunk per chunkMin
// bytes, not a tiny chunk per append, and reads back exactly; a write into
// the middle afterwards still reads back.
func TestSealAppendClose(t *testing.T) {
	for _, tc := range []struct {
		name  string
		lines int
		line  string
	}{
		{"short lines", 4000, "line of a log\n"},
		{"longer lines", 2000, "a longer line of a log, padded to be longer than most of them\n"},
		{"one big write then lines", 300, string(bytes.Repeat([]byte("x"), 5000)) + "\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := New(Options{})
			var want bytes.Buffer
			var ino uint64
			for range tc.lines {
				h, err := f.OpenFile("/log", O_WRONLY|O_CREATE|O_APPEND, 0o644)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := io.WriteString(h, tc.line); err != nil {
					t.Fatal(err)
				}
				ino = h.ino
				if err := h.Close(); err != nil {
					t.Fatal(err)
				}
				want.WriteString(tc.line)
			}
			in := f.cur.Load().get(ino)
			if !sealed(in.ext) {
				t.Errorf("closed file not sealed")
			}
			if max := want.Len()/chunkMin + 3; len(in.ext) > max {
				t.Errorf("%d extents for %d bytes appended %d times, want at most %d", len(in.ext), want.Len(), tc.lines, max)
			}
			h, err := f.OpenFile("/log", O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			mid := int64(want.Len() / 2)
			if _, err := h.WriteAt([]byte("MIDDLE"), mid); err != nil {
				t.Fatal(err)
			}
			h.Close()
			exp := want.Bytes()
			copy(exp[mid:], "MIDDLE")
			got, err := f.ReadFile("/log")
			if err != nil || !bytes.Equal(got, exp) {
				t.Fatalf("read back %d bytes (%v), want the %d written", len(got), err, len(exp))
			}
		})
	}
}
