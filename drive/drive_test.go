package drive

import (
	"reflect"
	"strings"
	"testing"
)

func TestChunks_RoundTrip(t *testing.T) {
	cs := []Chunk{{Sum: [32]byte{1}, Len: ChunkSize}, {}, {Sum: [32]byte{2, 3}, Len: 7}}
	got, err := UnmarshalChunks(MarshalChunks(cs))
	if err != nil || !reflect.DeepEqual(got, cs) {
		t.Fatalf("round trip: %v %v", got, err)
	}
	for _, bad := range []struct {
		b    []byte
		want string
	}{
		{make([]byte, 35), "not a multiple"},
		{append(make([]byte, 32), 0xff, 0, 0, 0), "more than"},
	} {
		if _, err := UnmarshalChunks(bad.b); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Fatalf("UnmarshalChunks(%d bytes): %v, want %q", len(bad.b), err, bad.want)
		}
	}
}

func TestTruncateChunks(t *testing.T) {
	a, b, c := Chunk{Sum: [32]byte{1}, Len: ChunkSize}, Chunk{Sum: [32]byte{2}, Len: ChunkSize}, Chunk{Sum: [32]byte{3}, Len: 100}
	cut := func(c Chunk, n uint32) Chunk { c.Len = n; return c }
	tests := []struct {
		name string
		in   []Chunk
		size int64
		want []Chunk
	}{
		{"to zero", []Chunk{a, b}, 0, nil},
		{"inside the second slot", []Chunk{a, b, c}, ChunkSize + 10, []Chunk{a, cut(b, 10)}},
		{"at a slot boundary", []Chunk{a, b, c}, 2 * ChunkSize, []Chunk{a, b}},
		{"past the end", []Chunk{a, c}, 5 * ChunkSize, []Chunk{a, c}},
		{"short last chunk kept", []Chunk{a, c}, ChunkSize + 50, []Chunk{a, cut(c, 50)}},
		{"trailing hole dropped", []Chunk{a, {}, c}, 2*ChunkSize - 1, []Chunk{a}},
	}
	for _, tt := range tests {
		got := truncateChunks(tt.in, tt.size)
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestCheckName(t *testing.T) {
	for _, tt := range []struct {
		name string
		ok   bool
	}{
		{"/", true}, {"/a/b", true}, {"", false}, {"a", false}, {"/a/", false}, {"/a/../b", false},
		{"/a//b", false}, {"/" + strings.Repeat("x", 255), true}, {"/" + strings.Repeat("x", 256), false}, {"/a\x00b", false},
	} {
		if _, err := checkName(tt.name); (err == nil) != tt.ok {
			t.Errorf("checkName(%.20q): %v, want ok=%v", tt.name, err, tt.ok)
		}
	}
}
