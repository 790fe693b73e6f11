package store_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/warren-sandbox/warren/store"
	"github.com/warren-sandbox/warren/store/mem"
	"github.com/warren-sandbox/warren/store/storetest"
)

func TestValidateKey_Bad(t *testing.T) {
	for _, tc := range storetest.BadKeys {
		err := store.ValidateKey(tc.Key)
		var ike *store.InvalidKeyError
		if !errors.As(err, &ike) || ike.Key != tc.Key || !errors.Is(err, store.ErrInvalidKey) {
			t.Errorf("%s: ValidateKey(%.40q) = %v, want *InvalidKeyError", tc.Why, tc.Key, err)
		}
	}
}

var reasons = []struct{ key, reason string }{
	{"", "empty"},
	{"/a", "starts with \"/\""},
	{"a/", "ends with \"/\""},
	{"a//b", "empty segment at offset 2"},
	{"a/../b", "\"..\" segment"},
	{"a\x00b", "NUL byte at offset 1"},
	{"a b", "contains ' ' at offset 1"},
	{strings.Repeat("x", 961), "longer than 960 bytes (961)"},
	{strings.Repeat("x", 201), "segment longer than 200 bytes (201)"},
}

func TestValidateKey_Reason(t *testing.T) {
	for _, tc := range reasons {
		err := store.ValidateKey(tc.key)
		if err == nil || !strings.Contains(err.Error(), tc.reason) {
			t.Errorf("ValidateKey(%.30q) = %v, want reason %q", tc.key, err, tc.reason)
		}
	}
	// A huge key is cut in the message, not echoed whole.
	if msg := store.ValidateKey(strings.Repeat("x", 5000)).Error(); len(msg) > 400 {
		t.Errorf("error for a 5000-byte key is %d bytes long", len(msg))
	}
}

func TestValidatePrefix(t *testing.T) {
	for _, p := range []string{"", "a", "chunks/", "chunks/ab", "a/.", "a/..", "."} {
		if err := store.ValidatePrefix(p); err != nil {
			t.Errorf("ValidatePrefix(%q) = %v, want nil", p, err)
		}
	}
	for _, p := range []string{"/", "/a", "a//", "../", "a/../", "a\x00", "a~", strings.Repeat("x/", 512)} {
		if err := store.ValidatePrefix(p); !errors.Is(err, store.ErrInvalidKey) {
			t.Errorf("ValidatePrefix(%.30q) = %v, want ErrInvalidKey", p, err)
		}
	}
}

func TestError(t *testing.T) {
	err := error(&store.Error{Op: "get", Key: "chunks/x", Err: store.ErrNotFound})
	if !errors.Is(err, store.ErrNotFound) || !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("%v does not match ErrNotFound and fs.ErrNotExist", err)
	}
	if errors.Is(err, fs.ErrExist) || errors.Is(err, store.ErrPreconditionFailed) {
		t.Fatalf("%v matches unrelated errors", err)
	}
	if got, want := err.Error(), `store: cannot get "chunks/x": object not found`; got != want {
		t.Fatalf("message %q, want %q", got, want)
	}
	if !errors.Is(store.ErrExists, store.ErrPreconditionFailed) || !errors.Is(store.ErrExists, fs.ErrExist) {
		t.Fatalf("ErrExists must match ErrPreconditionFailed and fs.ErrExist")
	}
}

func digestOf(s string) string { h := sha256.Sum256([]byte(s)); return hex.EncodeToString(h[:]) }

func TestVerifySHA256(t *testing.T) {
	content := strings.Repeat("chunk data ", 1000)
	key := "chunks/" + digestOf(content)
	tests := []struct {
		name    string
		key     string
		content string
		wantErr error
	}{
		{"OK", key, content, nil},
		{"OKEmpty", "c/" + digestOf(""), "", nil},
		{"ErrCorrupt", key, content[:len(content)-1] + "X", store.ErrCorrupt},
		{"ErrTruncated", key, content[:100], store.ErrCorrupt},
		{"ErrLonger", key, content + "x", store.ErrCorrupt},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			// OneByteReader and DataErrReader exercise short reads and data
			// returned together with io.EOF.
			for _, wrap := range []func(io.Reader) io.Reader{iotest.OneByteReader, iotest.DataErrReader, iotest.HalfReader} {
				r, err := store.VerifySHA256(tc.key, io.NopCloser(wrap(strings.NewReader(tc.content))))
				if err != nil {
					t.Fatal(err)
				}
				got, err := io.ReadAll(r)
				if !errors.Is(err, tc.wantErr) && !(tc.wantErr == nil && err == nil) {
					t.Fatalf("read: %v, want %v", err, tc.wantErr)
				}
				if tc.wantErr == nil && string(got) != tc.content {
					t.Fatalf("content changed")
				}
				// The result is sticky.
				if _, err2 := r.Read(make([]byte, 1)); tc.wantErr != nil && !errors.Is(err2, tc.wantErr) {
					t.Fatalf("second read after corruption: %v", err2)
				}
			}
		})
	}
	r, _ := store.VerifySHA256(key, io.NopCloser(strings.NewReader("bad")))
	_, err := io.ReadAll(r)
	var ce *store.CorruptError
	if !errors.As(err, &ce) || ce.Key != key || ce.Want != digestOf(content) || ce.Got != digestOf("bad") {
		t.Fatalf("corrupt error = %#v", err)
	}
	for _, bad := range []string{"heads/x", "c/" + strings.ToUpper(digestOf("")), "c/" + digestOf("")[:63]} {
		if _, err := store.VerifySHA256(bad, io.NopCloser(strings.NewReader(""))); !errors.Is(err, store.ErrInvalidKey) {
			t.Errorf("VerifySHA256(%q): %v, want ErrInvalidKey", bad, err)
		}
	}
}

// FuzzValidateKey: whatever the input, ValidateKey does not panic, and an
// accepted key is a local path (no escape once joined to a directory) that
// contains no "~" (store/dir's reserved character).
func FuzzValidateKey(f *testing.F) {
	for _, tc := range storetest.BadKeys {
		f.Add(tc.Key)
	}
	for _, k := range []string{"a", "chunks/ab/abcdef", ".x", "a..b", "a/b/c"} {
		f.Add(k)
	}
	f.Fuzz(func(t *testing.T, key string) {
		err := store.ValidateKey(key)
		if err != nil {
			if !strings.Contains(err.Error(), "invalid key") {
				t.Fatalf("error %q does not say what is wrong", err)
			}
			return
		}
		if !filepath.IsLocal(key) || filepath.Clean(key) != key || strings.ContainsAny(key, "~\x00\\") || len(key) > store.MaxKeyLen {
			t.Fatalf("accepted key %q is not a clean local path", key)
		}
		if store.ValidatePrefix(key) != nil {
			t.Fatalf("valid key %q refused as a prefix", key)
		}
	})
}

func TestWithMaxObjectSize_Edges(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		max     int64
		size    int
		wantErr error
	}{
		{0, 0, nil},
		{0, 1, store.ErrTooLarge},
		{-5, 0, nil},
		{-5, 1, store.ErrTooLarge},
		{math.MaxInt64, 1 << 20, nil},
	} {
		s := store.WithMaxObjectSize(mem.New(), tc.max)
		err := store.PutBytes(ctx, s, "k", make([]byte, tc.size))
		if !errors.Is(err, tc.wantErr) && !(tc.wantErr == nil && err == nil) {
			t.Errorf("max %d, %d bytes: %v, want %v", tc.max, tc.size, err, tc.wantErr)
		}
	}
}

// TestContextReadCloser_ReaderAt: the wrapper keeps io.ReaderAt of the
// reader it wraps (an *os.File from store/dir), and both Read and ReadAt
// fail once ctx ends.
func TestContextReadCloser_ReaderAt(t *testing.T) {
	f, err := os.CreateTemp(t.TempDir(), "obj")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	f.WriteString("0123456789")
	f.Seek(0, io.SeekStart)
	c, cancel := context.WithCancel(context.Background())
	rc := store.ContextReadCloser(c, f)
	ra, ok := rc.(io.ReaderAt)
	if !ok {
		t.Fatal("ContextReadCloser of an *os.File is not an io.ReaderAt")
	}
	b := make([]byte, 3)
	if n, err := ra.ReadAt(b, 4); n != 3 || err != nil || string(b) != "456" {
		t.Fatalf("ReadAt = %d %q %v", n, b, err)
	}
	if n, err := rc.Read(b); n != 3 || err != nil || string(b) != "012" {
		t.Fatalf("Read after ReadAt = %d %q %v (ReadAt must not move the offset)", n, b, err)
	}
	cancel()
	if _, err := ra.ReadAt(b, 0); !errors.Is(err, context.Canceled) {
		t.Fatalf("ReadAt after cancel: %v", err)
	}
	if _, err := rc.Read(b); !errors.Is(err, context.Canceled) {
		t.Fatalf("Read after cancel: %v", err)
	}
	// A reader without ReadAt does not grow one.
	c2, cancel2 := context.WithCancel(context.Background())
	defer cancel2()
	if _, ok := store.ContextReadCloser(c2, io.NopCloser(strings.NewReader("x"))).(io.ReaderAt); ok {
		t.Fatal("ContextReadCloser of a plain reader claims io.ReaderAt")
	}
	if err := rc.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if _, err := f.Stat(); err == nil {
		t.Fatal("Close did not close the file")
	}
}

type sized struct{ io.Reader }

func (sized) Size() (int64, bool) { return 42, true }

func TestBodySize(t *testing.T) {
	half := bytes.NewReader(make([]byte, 10))
	half.Seek(4, io.SeekStart)
	for _, tc := range []struct {
		name string
		r    io.Reader
		n    int64
		ok   bool
	}{
		{"seeker", bytes.NewReader(make([]byte, 7)), 7, true},
		{"seeker part read", half, 6, true},
		{"Size method", sized{strings.NewReader("")}, 42, true},
		{"plain reader", io.MultiReader(strings.NewReader("abc")), 0, false},
	} {
		n, ok := store.BodySize(tc.r)
		if n != tc.n || ok != tc.ok {
			t.Errorf("%s: BodySize = %d, %v; want %d, %v", tc.name, n, ok, tc.n, tc.ok)
		}
	}
	if pos, _ := half.Seek(0, io.SeekCurrent); pos != 4 {
		t.Fatalf("BodySize moved the reader to %d", pos)
	}
}
