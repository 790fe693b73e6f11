// Package storetest is the conformance suite every store.Store backend must
// pass, and the benchmarks every backend reports. A backend's test calls
//
//	storetest.RunSuite(t, func(t *testing.T) store.Store { ... })
//
// newStore must return an empty store and arrange its cleanup with t.Cleanup.
// If the store implements store.Conditional, the conditional-write tests run
// too; if it implements store.RangeGetter, so do the ranged-read tests (the
// store.GetRange fallback over Get is tested either way).
package storetest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/warren-sandbox/warren/store"
)

// RunSuite runs every conformance test against stores made by newStore.
func RunSuite(t *testing.T, newStore func(t *testing.T) store.Store) {
	tests := []struct {
		name string
		fn   func(t *testing.T, s store.Store)
	}{
		{"PutGet", testPutGet},
		{"Overwrite", testOverwrite},
		{"Missing", testMissing},
		{"Delete", testDelete},
		{"BadKeys", testBadKeys},
		{"GoodKeys", testGoodKeys},
		{"List", testList},
		{"ListStop", testListStop},
		{"ListReentrant", testListReentrant},
		{"ConcurrentSameKey", testConcurrentSameKey},
		{"ConcurrentKeys", testConcurrentKeys},
		{"Large", testLarge},
		{"ContextCancelled", testContextCancelled},
		{"ContextCancelledMidPut", testContextCancelledMidPut},
		{"FailedPutLeavesNothing", testFailedPut},
		{"PutInvisibleUntilDone", testPutInvisible},
		{"SHA256", testSHA256},
		{"MaxObjectSize", testMaxObjectSize},
		{"GetRange", testGetRange},
		{"GetRangeFallback", testGetRangeFallback},
		{"GetRangeWrappers", testGetRangeWrappers},
		{"GetRangeCancelled", testGetRangeCancelled},
		{"Conditional", testConditional},
		{"ConditionalRace", testConditionalRace},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.fn(t, newStore(t)) })
	}
}

var ctx = context.Background()

func mustPut(t testing.TB, s store.Store, key string, b []byte) {
	t.Helper()
	if err := store.PutBytes(ctx, s, key, b); err != nil {
		t.Fatalf("put %q: %v", key, err)
	}
}

func mustGet(t testing.TB, s store.Store, key string) []byte {
	t.Helper()
	b, err := store.ReadAll(ctx, s, key)
	if err != nil {
		t.Fatalf("get %q: %v", key, err)
	}
	return b
}

type entry struct {
	Key  string
	Size int64
}

func list(t testing.TB, s store.Store, prefix string) []entry {
	t.Helper()
	var got []entry
	err := s.List(ctx, prefix, func(k string, size int64) error {
		got = append(got, entry{k, size})
		return nil
	})
	if err != nil {
		t.Fatalf("list %q: %v", prefix, err)
	}
	return got
}

func wantHas(t testing.TB, s store.Store, key string, want bool) {
	t.Helper()
	got, err := s.Has(ctx, key)
	if err != nil || got != want {
		t.Fatalf("has %q = %v, %v; want %v, nil", key, got, err, want)
	}
}

func wantNotFound(t testing.TB, s store.Store, key string) {
	t.Helper()
	rc, err := s.Get(ctx, key)
	if err == nil {
		rc.Close()
		t.Fatalf("get %q: no error, want not found", key)
	}
	if !errors.Is(err, store.ErrNotFound) || !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("get %q: %v; want ErrNotFound and fs.ErrNotExist", key, err)
	}
	if !strings.Contains(err.Error(), key) {
		t.Fatalf("get %q: error %q does not name the key", key, err)
	}
}

func testPutGet(t *testing.T, s store.Store) {
	for _, tc := range []struct {
		key  string
		data []byte
	}{
		{"a", []byte("hello")},
		{"empty", nil},
		{"chunks/ab/abcdef", bytes.Repeat([]byte{0, 1, 2, 255}, 1000)},
	} {
		mustPut(t, s, tc.key, tc.data)
		if got := mustGet(t, s, tc.key); !bytes.Equal(got, tc.data) {
			t.Fatalf("get %q = %d bytes, want %d", tc.key, len(got), len(tc.data))
		}
		wantHas(t, s, tc.key, true)
	}
	want := []entry{{"a", 5}, {"chunks/ab/abcdef", 4000}, {"empty", 0}}
	if got := list(t, s, ""); !slices.Equal(got, want) {
		t.Fatalf("list = %v, want %v", got, want)
	}
}

func testOverwrite(t *testing.T, s store.Store) {
	mustPut(t, s, "k", []byte("first version, long"))
	mustPut(t, s, "k", []byte("second"))
	if got := string(mustGet(t, s, "k")); got != "second" {
		t.Fatalf("get after overwrite = %q", got)
	}
	if got := list(t, s, ""); !slices.Equal(got, []entry{{"k", 6}}) {
		t.Fatalf("list after overwrite = %v", got)
	}
	// A reader opened before an overwrite still reads one whole version.
	rc, err := s.Get(ctx, "k")
	if err != nil {
		t.Fatal(err)
	}
	mustPut(t, s, "k", []byte("third"))
	b, err := io.ReadAll(rc)
	rc.Close()
	if err != nil || (string(b) != "second" && string(b) != "third") {
		t.Fatalf("reader across overwrite read %q, %v", b, err)
	}
}

func testMissing(t *testing.T, s store.Store) {
	wantNotFound(t, s, "nope")
	wantNotFound(t, s, "deep/er/nope")
	wantHas(t, s, "nope", false)
	if err := s.Delete(ctx, "nope"); err != nil {
		t.Fatalf("delete missing: %v", err)
	}
	if _, err := store.ReadAll(ctx, s, "nope"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("ReadAll missing: %v", err)
	}
	// A key below an existing object is missing, not an error.
	mustPut(t, s, "file", []byte("x"))
	wantNotFound(t, s, "file/below")
	wantHas(t, s, "file/below", false)
	if got := list(t, s, "nothing"); len(got) != 0 {
		t.Fatalf("list of empty prefix = %v", got)
	}
}

func testDelete(t *testing.T, s store.Store) {
	mustPut(t, s, "d/x", []byte("x"))
	mustPut(t, s, "d/y", []byte("y"))
	if err := s.Delete(ctx, "d/x"); err != nil {
		t.Fatal(err)
	}
	wantHas(t, s, "d/x", false)
	wantNotFound(t, s, "d/x")
	if err := s.Delete(ctx, "d/x"); err != nil {
		t.Fatalf("second delete: %v", err)
	}
	if got := list(t, s, ""); !slices.Equal(got, []entry{{"d/y", 1}}) {
		t.Fatalf("list after delete = %v", got)
	}
	// Put after delete works again.
	mustPut(t, s, "d/x", []byte("back"))
	if got := string(mustGet(t, s, "d/x")); got != "back" {
		t.Fatalf("get after re-put = %q", got)
	}
}

// BadKeys are refused by every method. Exported so other packages' tests
// (a future S3 backend, wrappers) reuse the table.
var BadKeys = []struct{ Key, Why string }{
	{"", "empty"},
	{"/abs", "leading slash"},
	{"a/", "trailing slash"},
	{"a//b", "empty segment"},
	{"..", "dot-dot"},
	{"../x", "escape"},
	{"a/../../x", "escape in the middle"},
	{"a/..", "trailing dot-dot"},
	{".", "dot"},
	{"a/./b", "dot segment"},
	{"a\x00b", "NUL"},
	{"a b", "space"},
	{"a\\b", "backslash"},
	{"a~b", "tilde"},
	{"a\nb", "newline"},
	{"caf\u00e9", "non-ASCII"},
	{strings.Repeat("a", store.MaxKeyLen+1), "too long"},
	{strings.Repeat("a/", 600) + "a", "too long in segments"},
	{strings.Repeat("s", store.MaxSegmentLen+1), "segment too long"},
}

func testBadKeys(t *testing.T, s store.Store) {
	for _, tc := range BadKeys {
		t.Run(tc.Why, func(t *testing.T) {
			check := func(op string, err error) {
				t.Helper()
				var ike *store.InvalidKeyError
				if !errors.Is(err, store.ErrInvalidKey) || !errors.As(err, &ike) || ike.Key != tc.Key {
					t.Fatalf("%s %q: %v; want *InvalidKeyError naming the key", op, tc.Key, err)
				}
			}
			check("put", store.PutBytes(ctx, s, tc.Key, []byte("x")))
			rc, err := s.Get(ctx, tc.Key)
			if err == nil {
				rc.Close()
			}
			check("get", err)
			_, err = s.Has(ctx, tc.Key)
			check("has", err)
			check("delete", s.Delete(ctx, tc.Key))
			if c, ok := s.(store.Conditional); ok {
				_, err = c.PutIfAbsent(ctx, tc.Key, strings.NewReader("x"))
				check("put-if-absent", err)
				_, err = c.CompareAndSwap(ctx, tc.Key, `"x"`, strings.NewReader("x"))
				check("compare-and-swap", err)
			}
		})
	}
	if got := list(t, s, ""); len(got) != 0 {
		t.Fatalf("bad keys stored something: %v", got)
	}
	for _, p := range []string{"/a", "a//", "../", "a\x00", "a~", "a/../"} {
		err := s.List(ctx, p, func(string, int64) error { return nil })
		if !errors.Is(err, store.ErrInvalidKey) {
			t.Fatalf("list %q: %v; want ErrInvalidKey", p, err)
		}
	}
}

func testGoodKeys(t *testing.T, s store.Store) {
	long := strings.Repeat(strings.Repeat("k", store.MaxSegmentLen)+"/", 6)
	long = long[:store.MaxKeyLen-1] + "z"
	keys := []string{strings.Repeat("d/", store.MaxKeyLen/2-1) + "d", "a", ".hidden", "a..b", "...", "A-Z_0.9+=,@", "x/y/z/w/v/u", long, strings.Repeat("s", store.MaxSegmentLen)}
	for i, k := range keys {
		if err := store.ValidateKey(k); err != nil {
			t.Fatalf("ValidateKey(%q): %v", k, err)
		}
		mustPut(t, s, k, []byte{byte(i)})
	}
	for i, k := range keys {
		if got := mustGet(t, s, k); !bytes.Equal(got, []byte{byte(i)}) {
			t.Fatalf("get %q = %v", k, got)
		}
	}
	got := list(t, s, "")
	sorted := slices.Clone(keys)
	sort.Strings(sorted)
	if len(got) != len(sorted) {
		t.Fatalf("list = %d keys, want %d", len(got), len(sorted))
	}
	for i := range got {
		if got[i].Key != sorted[i] {
			t.Fatalf("list[%d] = %q, want %q", i, got[i].Key, sorted[i])
		}
	}
}

// listKeys holds keys whose byte order differs from a naive directory walk:
// '-' and '.' sort before '/', digits after it.
var listKeys = []string{
	"a", "a-b", "a.c", "a/b", "a/b/c", "a/b-", "a0", "ab", "ab/c", "abc", "b",
	"chunks/ab/ab12", "chunks/ab/ab34", "chunks/ab/ac", "chunks/abc", "chunks/b",
	"chunks/3f", "chunks/3f0", "chunks/3", "heads/s1", "z/z/z/z",
}

func testList(t *testing.T, s store.Store) {
	for i, k := range listKeys {
		mustPut(t, s, k, bytes.Repeat([]byte("x"), i))
	}
	size := map[string]int64{}
	for i, k := range listKeys {
		size[k] = int64(i)
	}
	for _, prefix := range []string{"", "a", "a/", "a/b", "a/b/", "ab", "b", "c", "chunks/", "chunks/a", "chunks/ab", "chunks/ab/", "chunks/ab/ab", "chunks/3", "chunks/3f", "z/z/", "zz", "nothing/"} {
		var want []entry
		for _, k := range listKeys {
			if strings.HasPrefix(k, prefix) {
				want = append(want, entry{k, size[k]})
			}
		}
		sort.Slice(want, func(i, j int) bool { return want[i].Key < want[j].Key })
		if got := list(t, s, prefix); !slices.Equal(got, want) {
			t.Errorf("list %q:\n got %v\nwant %v", prefix, got, want)
		}
	}
}

func testListStop(t *testing.T, s store.Store) {
	for _, k := range listKeys {
		mustPut(t, s, k, nil)
	}
	stop := errors.New("stop here")
	n := 0
	err := s.List(ctx, "", func(string, int64) error {
		n++
		if n == 3 {
			return stop
		}
		return nil
	})
	if err != stop || n != 3 {
		t.Fatalf("list with stopping fn: err %v after %d calls; want the fn's own error after 3", err, n)
	}
}

// testListReentrant calls the store from inside fn, as GC does (list, then
// delete): a backend holding a lock across fn would deadlock here.
func testListReentrant(t *testing.T, s store.Store) {
	for _, k := range listKeys {
		mustPut(t, s, k, []byte(k))
	}
	err := s.List(ctx, "", func(k string, _ int64) error {
		if got := string(mustGet(t, s, k)); got != k {
			return fmt.Errorf("get %q in list = %q", k, got)
		}
		if strings.HasPrefix(k, "a") {
			return s.Delete(ctx, k)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := list(t, s, "a"); len(got) != 0 {
		t.Fatalf("deleted in list, still listed: %v", got)
	}
}

// payload makes a self-describing object: every 8-byte word holds the
// writer's tag, so a torn or mixed read is detected.
func payload(tag uint64, size int) []byte {
	b := make([]byte, size)
	for i := 0; i+8 <= size; i += 8 {
		binary.LittleEndian.PutUint64(b[i:], tag)
	}
	return b
}

func checkPayload(b []byte, size int) (uint64, error) {
	if len(b) != size {
		return 0, fmt.Errorf("read %d bytes, want %d", len(b), size)
	}
	tag := binary.LittleEndian.Uint64(b)
	if !bytes.Equal(b, payload(tag, size)) {
		return 0, fmt.Errorf("torn object: mixes writers (first tag %d)", tag)
	}
	return tag, nil
}

func testConcurrentSameKey(t *testing.T, s store.Store) {
	const (
		writers = 6
		puts    = 15
		size    = 96 << 10
	)
	var wg sync.WaitGroup
	errc := make(chan error, writers*2)
	done := make(chan struct{})
	mustPut(t, s, "same", payload(1000, size))
	for w := range writers {
		wg.Go(func() {
			for i := range puts {
				if err := store.PutBytes(ctx, s, "same", payload(uint64(w*100+i+1), size)); err != nil {
					errc <- err
					return
				}
			}
		})
	}
	var readers sync.WaitGroup
	for range 2 {
		readers.Go(func() {
			for {
				select {
				case <-done:
					return
				default:
				}
				b, err := store.ReadAll(ctx, s, "same")
				if err == nil {
					_, err = checkPayload(b, size)
				}
				if err != nil {
					errc <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(done)
	readers.Wait()
	close(errc)
	for err := range errc {
		t.Fatal(err)
	}
	if _, err := checkPayload(mustGet(t, s, "same"), size); err != nil {
		t.Fatal(err)
	}
	if got := list(t, s, ""); !slices.Equal(got, []entry{{"same", size}}) {
		t.Fatalf("list after concurrent puts = %v", got)
	}
}

func testConcurrentKeys(t *testing.T, s store.Store) {
	const writers, puts = 8, 40
	var wg sync.WaitGroup
	errc := make(chan error, writers)
	for w := range writers {
		wg.Go(func() {
			for i := range puts {
				key := fmt.Sprintf("c/%02x/%04d", (w*puts+i)%7, w*puts+i)
				if err := store.PutBytes(ctx, s, key, payload(uint64(w*puts+i), 64)); err != nil {
					errc <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errc)
	for err := range errc {
		t.Fatal(err)
	}
	got := list(t, s, "c/")
	if len(got) != writers*puts {
		t.Fatalf("list = %d keys, want %d", len(got), writers*puts)
	}
	for _, e := range got {
		tag, err := checkPayload(mustGet(t, s, e.Key), 64)
		if err != nil || !strings.HasSuffix(e.Key, fmt.Sprintf("/%04d", tag)) {
			t.Fatalf("%s holds tag %d, %v", e.Key, tag, err)
		}
	}
}

// genReader yields n deterministic pseudo-random bytes without holding them.
type genReader struct {
	rng *rand.ChaCha8
	n   int64
}

func newGen(seed byte, n int64) *genReader {
	var s [32]byte
	s[0] = seed
	return &genReader{rng: rand.NewChaCha8(s), n: n}
}

func (g *genReader) Read(p []byte) (int, error) {
	if g.n == 0 {
		return 0, io.EOF
	}
	if int64(len(p)) > g.n {
		p = p[:g.n]
	}
	g.rng.Read(p)
	g.n -= int64(len(p))
	return len(p), nil
}

func digest(t testing.TB, r io.Reader) string {
	h := sha256.New()
	if _, err := io.Copy(h, r); err != nil {
		t.Fatalf("read: %v", err)
	}
	return hex.EncodeToString(h.Sum(nil))
}

func testLarge(t *testing.T, s store.Store) {
	size := int64(64 << 20)
	if testing.Short() {
		size = 8 << 20
	}
	want := digest(t, newGen(7, size))
	if err := s.Put(ctx, "big/object", newGen(7, size)); err != nil {
		t.Fatal(err)
	}
	rc, err := s.Get(ctx, "big/object")
	if err != nil {
		t.Fatal(err)
	}
	got := digest(t, rc)
	rc.Close()
	if got != want {
		t.Fatalf("large object: sha256 %s, want %s", got, want)
	}
	if l := list(t, s, "big/"); !slices.Equal(l, []entry{{"big/object", size}}) {
		t.Fatalf("list = %v", l)
	}
}

func testContextCancelled(t *testing.T, s store.Store) {
	mustPut(t, s, "k", []byte("v"))
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if err := s.Put(cctx, "new", strings.NewReader("x")); !errors.Is(err, context.Canceled) {
		t.Fatalf("put with cancelled ctx: %v", err)
	}
	wantHas(t, s, "new", false)
	if rc, err := s.Get(cctx, "k"); !errors.Is(err, context.Canceled) {
		if err == nil {
			rc.Close()
		}
		t.Fatalf("get with cancelled ctx: %v", err)
	}
	if _, err := s.Has(cctx, "k"); !errors.Is(err, context.Canceled) {
		t.Fatalf("has with cancelled ctx: %v", err)
	}
	if err := s.Delete(cctx, "k"); !errors.Is(err, context.Canceled) {
		t.Fatalf("delete with cancelled ctx: %v", err)
	}
	wantHas(t, s, "k", true)
	if err := s.List(cctx, "", func(string, int64) error { return nil }); !errors.Is(err, context.Canceled) {
		t.Fatalf("list with cancelled ctx: %v", err)
	}
	// A reader obtained before the cancel stops at its next read.
	mustPut(t, s, "big", make([]byte, 1<<20))
	gctx, gcancel := context.WithCancel(ctx)
	rc, err := s.Get(gctx, "big")
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	if _, err := io.ReadFull(rc, make([]byte, 100)); err != nil {
		t.Fatal(err)
	}
	gcancel()
	if _, err := io.Copy(io.Discard, rc); !errors.Is(err, context.Canceled) {
		t.Fatalf("read after cancel: %v", err)
	}
}

// cancelReader cancels its context after n bytes and keeps producing data:
// only the store's own context checks can stop the Put.
type cancelReader struct {
	n      int
	cancel func()
}

func (c *cancelReader) Read(p []byte) (int, error) {
	if c.n <= 0 {
		c.cancel()
	}
	c.n -= len(p)
	clear(p)
	return len(p), nil
}

func testContextCancelledMidPut(t *testing.T, s store.Store) {
	mustPut(t, s, "old", []byte("old"))
	for _, key := range []string{"old", "fresh"} {
		cctx, cancel := context.WithCancel(ctx)
		err := s.Put(cctx, key, &cancelReader{n: 1 << 20, cancel: cancel})
		cancel()
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("put %q cancelled mid-stream: %v", key, err)
		}
	}
	if got := string(mustGet(t, s, "old")); got != "old" {
		t.Fatalf("cancelled overwrite changed the object to %d bytes", len(got))
	}
	wantNotFound(t, s, "fresh")
	if got := list(t, s, ""); !slices.Equal(got, []entry{{"old", 3}}) {
		t.Fatalf("list after cancelled puts = %v", got)
	}
}

// failReader returns n bytes, then err: a client crash mid-upload.
type failReader struct {
	n   int
	err error
}

func (f *failReader) Read(p []byte) (int, error) {
	if f.n == 0 {
		return 0, f.err
	}
	p = p[:min(len(p), f.n)]
	clear(p)
	f.n -= len(p)
	return len(p), nil
}

var errCrash = errors.New("simulated crash mid-stream")

func testFailedPut(t *testing.T, s store.Store) {
	mustPut(t, s, "keep", []byte("kept"))
	for _, key := range []string{"keep", "gone", "deep/gone/x"} {
		err := s.Put(ctx, key, &failReader{n: 3<<20 + 17, err: errCrash})
		if !errors.Is(err, errCrash) {
			t.Fatalf("put %q with failing reader: %v, want the reader's error", key, err)
		}
	}
	if got := string(mustGet(t, s, "keep")); got != "kept" {
		t.Fatalf("failed overwrite left %d bytes", len(got))
	}
	wantNotFound(t, s, "gone")
	wantHas(t, s, "deep/gone/x", false)
	if got := list(t, s, ""); !slices.Equal(got, []entry{{"keep", 4}}) {
		t.Fatalf("failed puts visible to list: %v", got)
	}
}

// blockReader hands out half the object, then waits for release.
type blockReader struct {
	half    int
	reached chan struct{}
	release chan error
	once    sync.Once
}

func (b *blockReader) Read(p []byte) (int, error) {
	if b.half > 0 {
		p = p[:min(len(p), b.half)]
		clear(p)
		b.half -= len(p)
		return len(p), nil
	}
	b.once.Do(func() { close(b.reached) })
	if err := <-b.release; err != nil {
		return 0, err
	}
	return 0, io.EOF
}

func testPutInvisible(t *testing.T, s store.Store) {
	for _, finish := range []error{nil, errCrash} {
		key := fmt.Sprintf("slow/%v", finish == nil)
		br := &blockReader{half: 1 << 20, reached: make(chan struct{}), release: make(chan error, 1)}
		errc := make(chan error, 1)
		go func() { errc <- s.Put(ctx, key, br) }()
		<-br.reached
		wantHas(t, s, key, false)
		wantNotFound(t, s, key)
		if got := list(t, s, ""); len(got) != 0 {
			t.Fatalf("half-written object listed: %v", got)
		}
		br.release <- finish
		err := <-errc
		if finish == nil {
			if err != nil {
				t.Fatal(err)
			}
			if got := list(t, s, ""); !slices.Equal(got, []entry{{key, 1 << 20}}) {
				t.Fatalf("list after put = %v", got)
			}
			if err := s.Delete(ctx, key); err != nil {
				t.Fatal(err)
			}
		} else if !errors.Is(err, errCrash) {
			t.Fatalf("put: %v, want the reader's error", err)
		}
	}
	if got := list(t, s, ""); len(got) != 0 {
		t.Fatalf("list at end = %v", got)
	}
}

func sha(b []byte) string { h := sha256.Sum256(b); return hex.EncodeToString(h[:]) }

func testSHA256(t *testing.T, s store.Store) {
	v := store.WithSHA256(s)
	good := []byte("content-addressed chunk")
	key := "chunks/" + sha(good)
	if err := store.PutBytes(ctx, v, key, good); err != nil {
		t.Fatal(err)
	}
	if got := mustGet(t, v, key); !bytes.Equal(got, good) {
		t.Fatalf("verified get = %q", got)
	}
	// Content that does not match its key is refused and not stored.
	badKey := "chunks/" + sha([]byte("other"))
	err := store.PutBytes(ctx, v, badKey, good)
	var ce *store.CorruptError
	if !errors.Is(err, store.ErrCorrupt) || !errors.As(err, &ce) || ce.Key != badKey {
		t.Fatalf("put of mismatched content: %v, want *CorruptError", err)
	}
	wantHas(t, s, badKey, false)
	// Corruption in the backend is caught on read.
	mustPut(t, s, badKey, good)
	if _, err := store.ReadAll(ctx, v, badKey); !errors.Is(err, store.ErrCorrupt) {
		t.Fatalf("get of corrupt object: %v, want ErrCorrupt", err)
	}
	// Corruption of an empty object, and truncation.
	emptyKey := "chunks/" + sha(nil)
	mustPut(t, s, emptyKey, []byte("x"))
	if _, err := store.ReadAll(ctx, v, emptyKey); !errors.Is(err, store.ErrCorrupt) {
		t.Fatalf("get of corrupt empty object: %v", err)
	}
	mustPut(t, s, key, good[:5])
	if _, err := store.ReadAll(ctx, v, key); !errors.Is(err, store.ErrCorrupt) {
		t.Fatalf("get of truncated object: %v", err)
	}
	// Keys without a digest pass through.
	if err := store.PutBytes(ctx, v, "heads/s1", []byte("anything")); err != nil {
		t.Fatal(err)
	}
	if got := string(mustGet(t, v, "heads/s1")); got != "anything" {
		t.Fatalf("pass-through get = %q", got)
	}
	// The bare reader refuses keys without a digest.
	if _, err := store.VerifySHA256("heads/s1", io.NopCloser(strings.NewReader(""))); !errors.Is(err, store.ErrInvalidKey) {
		t.Fatalf("VerifySHA256 without digest: %v", err)
	}
	// Missing objects keep their not-found error through the wrapper.
	wantNotFound(t, v, "chunks/"+sha([]byte("missing")))
}

func readETag(t testing.TB, c store.Conditional, key string) (string, string) {
	t.Helper()
	rc, etag, err := c.GetWithETag(ctx, key)
	if err != nil {
		t.Fatalf("get-with-etag %q: %v", key, err)
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	if err != nil {
		t.Fatal(err)
	}
	return string(b), etag
}

func testConditional(t *testing.T, s store.Store) {
	c, ok := s.(store.Conditional)
	if !ok {
		t.Skip("backend does not implement store.Conditional")
	}
	const key = "heads/sandbox-1"
	if _, _, err := c.GetWithETag(ctx, key); !errors.Is(err, store.ErrNotFound) || !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("get-with-etag missing: %v", err)
	}
	if _, err := c.CompareAndSwap(ctx, key, `"any"`, strings.NewReader("x")); !errors.Is(err, store.ErrPreconditionFailed) {
		t.Fatalf("cas on missing object: %v", err)
	}
	wantHas(t, s, key, false)
	e1, err := c.PutIfAbsent(ctx, key, strings.NewReader("gen-1"))
	if err != nil || e1 == "" {
		t.Fatalf("put-if-absent: %q, %v", e1, err)
	}
	_, err = c.PutIfAbsent(ctx, key, strings.NewReader("gen-X"))
	if !errors.Is(err, store.ErrPreconditionFailed) || !errors.Is(err, fs.ErrExist) {
		t.Fatalf("second put-if-absent: %v", err)
	}
	if got, e := readETag(t, c, key); got != "gen-1" || e != e1 {
		t.Fatalf("after put-if-absent: %q etag %q, want gen-1 etag %q", got, e, e1)
	}
	e2, err := c.CompareAndSwap(ctx, key, e1, strings.NewReader("gen-2"))
	if err != nil || e2 == e1 {
		t.Fatalf("cas: %q, %v (old etag %q)", e2, err, e1)
	}
	if _, err := c.CompareAndSwap(ctx, key, e1, strings.NewReader("stale")); !errors.Is(err, store.ErrPreconditionFailed) {
		t.Fatalf("cas with stale etag: %v", err)
	}
	if got, e := readETag(t, c, key); got != "gen-2" || e != e2 {
		t.Fatalf("after cas: %q etag %q, want gen-2 etag %q", got, e, e2)
	}
	// A failed conditional write stores nothing.
	if _, err := c.CompareAndSwap(ctx, key, e2, &failReader{n: 10, err: errCrash}); !errors.Is(err, errCrash) {
		t.Fatalf("cas with failing reader: %v", err)
	}
	if _, err := c.PutIfAbsent(ctx, "heads/other", &failReader{n: 10, err: errCrash}); !errors.Is(err, errCrash) {
		t.Fatalf("put-if-absent with failing reader: %v", err)
	}
	if got := list(t, s, "heads/"); !slices.Equal(got, []entry{{key, 5}}) {
		t.Fatalf("list = %v", got)
	}
	// A plain Put changes the ETag.
	mustPut(t, s, key, []byte("gen-3"))
	if _, e := readETag(t, c, key); e == e2 {
		t.Fatalf("etag unchanged by put")
	}
}

// testConditionalRace runs the head-update loop (read, modify, swap) from
// several goroutines: every successful swap must count exactly once.
func testConditionalRace(t *testing.T, s store.Store) {
	c, ok := s.(store.Conditional)
	if !ok {
		t.Skip("backend does not implement store.Conditional")
	}
	const workers, incs = 4, 25
	var wins atomic.Int32
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			if _, err := c.PutIfAbsent(ctx, "counter", strings.NewReader("0")); err == nil {
				wins.Add(1)
			} else if !errors.Is(err, store.ErrPreconditionFailed) {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if wins.Load() != 1 {
		t.Fatalf("%d racing put-if-absent calls won, want 1", wins.Load())
	}
	for range workers {
		wg.Go(func() {
			for done := 0; done < incs; {
				rc, etag, err := c.GetWithETag(ctx, "counter")
				if err != nil {
					t.Error(err)
					return
				}
				b, _ := io.ReadAll(rc)
				rc.Close()
				var n int
				fmt.Sscan(string(b), &n)
				_, err = c.CompareAndSwap(ctx, "counter", etag, strings.NewReader(fmt.Sprint(n+1)))
				switch {
				case err == nil:
					done++
				case !errors.Is(err, store.ErrPreconditionFailed):
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	if got, _ := readETag(t, c, "counter"); got != fmt.Sprint(workers*incs) {
		t.Fatalf("counter = %s after %d swaps: lost updates", got, workers*incs)
	}
}

func testMaxObjectSize(t *testing.T, s store.Store) {
	l := store.WithMaxObjectSize(s, 1000)
	for _, n := range []int{0, 999, 1000} {
		if err := store.PutBytes(ctx, l, fmt.Sprint("ok", n), make([]byte, n)); err != nil {
			t.Fatalf("put of %d bytes under a 1000-byte limit: %v", n, err)
		}
	}
	mustPut(t, s, "big", []byte("old"))
	for _, key := range []string{"big", "new"} {
		if err := l.Put(ctx, key, newGen(1, 1001)); !errors.Is(err, store.ErrTooLarge) {
			t.Fatalf("put of 1001 bytes: %v, want ErrTooLarge", err)
		}
	}
	if err := l.Put(ctx, "huge", zeroReader{}); !errors.Is(err, store.ErrTooLarge) {
		t.Fatalf("put of an endless stream: %v, want ErrTooLarge", err)
	}
	want := []entry{{"big", 3}, {"ok0", 0}, {"ok1000", 1000}, {"ok999", 999}}
	if got := list(t, s, ""); !slices.Equal(got, want) {
		t.Fatalf("list = %v, want %v", got, want)
	}
}

type zeroReader struct{}

func (zeroReader) Read(p []byte) (int, error) { clear(p); return len(p), nil }

// rangeCases are (off, n) pairs over an object of rangeSize bytes: inside,
// at both ends, past the end, to the end (n < 0), and empty.
const rangeSize = 100000

var rangeCases = []struct{ off, n int64 }{
	{0, 1}, {0, 10}, {0, rangeSize}, {0, rangeSize + 1}, {0, -1},
	{1, 1}, {513, 4096}, {rangeSize / 2, -1}, {rangeSize - 1, 1}, {rangeSize - 1, 100},
	{rangeSize - 1, -1}, {rangeSize, 1}, {rangeSize, -1}, {rangeSize + 1, 10},
	{1 << 40, 1}, {10, 0}, {0, 0}, {1, math.MaxInt64},
}

// wantRange is what a range of b must read.
func wantRange(b []byte, off, n int64) []byte {
	if off >= int64(len(b)) {
		return []byte{}
	}
	b = b[off:]
	if n >= 0 && n < int64(len(b)) {
		b = b[:n]
	}
	return b
}

func readRange(t testing.TB, get func(ctx context.Context, key string, off, n int64) (io.ReadCloser, error), key string, off, n int64) []byte {
	t.Helper()
	rc, err := get(ctx, key, off, n)
	if err != nil {
		t.Fatalf("get range %d+%d of %q: %v", off, n, key, err)
	}
	defer rc.Close()
	got, err := io.ReadAll(rc)
	if err != nil {
		t.Fatalf("read range %d+%d of %q: %v", off, n, key, err)
	}
	return got
}

// checkRanges runs rangeCases and the error cases through get.
func checkRanges(t *testing.T, s store.Store, get func(ctx context.Context, key string, off, n int64) (io.ReadCloser, error)) {
	data := payload(7, rangeSize)
	key := "packs/" + sha(data)
	mustPut(t, s, key, data)
	mustPut(t, s, "empty", nil)
	for _, tc := range rangeCases {
		if got, want := readRange(t, get, key, tc.off, tc.n), wantRange(data, tc.off, tc.n); !bytes.Equal(got, want) {
			t.Errorf("range %d+%d: read %d bytes, want %d (content equal: %v)", tc.off, tc.n, len(got), len(want), bytes.Equal(got, want))
		}
		if got := readRange(t, get, "empty", tc.off, tc.n); len(got) != 0 {
			t.Errorf("range %d+%d of an empty object: %d bytes", tc.off, tc.n, len(got))
		}
	}
	// Ranges see the object as it is now.
	mustPut(t, s, "empty", []byte("now full"))
	if got := string(readRange(t, get, "empty", 4, -1)); got != "full" {
		t.Errorf("range of an overwritten object = %q, want %q", got, "full")
	}
	for _, missing := range []string{"packs/" + sha([]byte("missing")), "nodir/x"} {
		rc, err := get(ctx, missing, 0, 10)
		if err == nil {
			rc.Close()
			t.Fatalf("get range of missing %q: no error", missing)
		}
		if !errors.Is(err, store.ErrNotFound) || !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), missing) {
			t.Fatalf("get range of missing %q: %v; want ErrNotFound naming the key", missing, err)
		}
	}
	if rc, err := get(ctx, key, -1, 10); !errors.Is(err, store.ErrInvalidRange) {
		if err == nil {
			rc.Close()
		}
		t.Fatalf("get range at offset -1: %v, want ErrInvalidRange", err)
	}
	for _, bad := range []string{"", "/abs", "a//b", "../x", "a b"} {
		if rc, err := get(ctx, bad, 0, 10); !errors.Is(err, store.ErrInvalidKey) {
			if err == nil {
				rc.Close()
			}
			t.Fatalf("get range of bad key %q: %v, want ErrInvalidKey", bad, err)
		}
	}
}

func testGetRange(t *testing.T, s store.Store) {
	rg, ok := s.(store.RangeGetter)
	if !ok {
		t.Skip("store does not implement store.RangeGetter")
	}
	checkRanges(t, s, rg.GetRange)
	// Through the helper too.
	checkRanges(t, s, func(ctx context.Context, key string, off, n int64) (io.ReadCloser, error) {
		return store.GetRange(ctx, s, key, off, n)
	})
}

// plainStore hides every optional interface of the store it wraps.
type plainStore struct{ store.Store }

func testGetRangeFallback(t *testing.T, s store.Store) {
	p := plainStore{s}
	checkRanges(t, s, func(ctx context.Context, key string, off, n int64) (io.ReadCloser, error) {
		return store.GetRange(ctx, p, key, off, n)
	})
}

// testGetRangeWrappers: the wrappers keep GetRange exactly when the wrapped
// store has it, and WithSHA256 passes ranges through unverified.
func testGetRangeWrappers(t *testing.T, s store.Store) {
	_, has := s.(store.RangeGetter)
	for name, w := range map[string]store.Store{
		"sha256":        store.WithSHA256(s),
		"max-size":      store.WithMaxObjectSize(s, 1<<20),
		"sha256(plain)": store.WithSHA256(plainStore{s}),
		"max(plain)":    store.WithMaxObjectSize(plainStore{s}, 1<<20),
	} {
		rg, ok := w.(store.RangeGetter)
		if want := has && !strings.Contains(name, "plain"); ok != want {
			t.Fatalf("%s: RangeGetter = %v, want %v", name, ok, want)
		}
		if ok {
			checkRanges(t, w, rg.GetRange)
		}
	}
	if !has {
		return
	}
	// A corrupt object: ranges read its bytes as stored, whole reads fail.
	key := "packs/" + sha([]byte("the real content"))
	mustPut(t, s, key, []byte("not the content!"))
	v := store.WithSHA256(s)
	if got := string(readRange(t, v.(store.RangeGetter).GetRange, key, 4, 3)); got != "the" {
		t.Fatalf("unverified range = %q, want %q", got, "the")
	}
	if _, err := store.ReadAll(ctx, v, key); !errors.Is(err, store.ErrCorrupt) {
		t.Fatalf("whole read of a corrupt object: %v, want ErrCorrupt", err)
	}
}

func testGetRangeCancelled(t *testing.T, s store.Store) {
	rg, ok := s.(store.RangeGetter)
	if !ok {
		t.Skip("store does not implement store.RangeGetter")
	}
	mustPut(t, s, "obj", payload(3, rangeSize))
	c, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := rg.GetRange(c, "obj", 0, 10); !errors.Is(err, context.Canceled) {
		t.Fatalf("get range with a cancelled context: %v, want context.Canceled", err)
	}
	c, cancel = context.WithCancel(ctx)
	rc, err := rg.GetRange(c, "obj", 10, -1)
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	buf := make([]byte, 100)
	if _, err := io.ReadFull(rc, buf); err != nil {
		t.Fatal(err)
	}
	cancel()
	if _, err := io.ReadAll(rc); !errors.Is(err, context.Canceled) {
		t.Fatalf("read after cancel: %v, want context.Canceled", err)
	}
}
