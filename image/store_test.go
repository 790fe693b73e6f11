package image

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"io/fs"
	"sort"
	"strings"
	"sync"
	"testing"

	storedir "github.com/warren-sandbox/warren/store/dir"
	storemem "github.com/warren-sandbox/warren/store/mem"
)

// memStore is an in-memory Store (no local paths: images are copied
// into the cache directory).
type memStore struct {
	mu   sync.Mutex
	blob map[string][]byte
}

func newMemStore() *memStore { return &memStore{blob: map[string][]byte{}} }

func (s *memStore) Put(_ context.Context, key string, r io.Reader) error {
	b, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.blob[key] = b
	return nil
}

func (s *memStore) Get(_ context.Context, key string) (io.ReadCloser, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	b, ok := s.blob[key]
	if !ok {
		return nil, fmt.Errorf("%s: %w", key, fs.ErrNotExist)
	}
	return io.NopCloser(bytes.NewReader(b)), nil
}

func (s *memStore) Delete(_ context.Context, key string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.blob, key)
	return nil
}

func (s *memStore) List(_ context.Context, prefix string, fn func(string, int64) error) error {
	s.mu.Lock()
	var keys []string
	for k := range s.blob {
		if strings.HasPrefix(k, prefix) {
			keys = append(keys, k)
		}
	}
	s.mu.Unlock()
	sort.Strings(keys)
	for _, k := range keys {
		s.mu.Lock()
		n := len(s.blob[k])
		s.mu.Unlock()
		if err := fn(k, int64(n)); err != nil {
			return err
		}
	}
	return nil
}

// stores runs a test against both real store kinds: store/mem has no
// local paths (images are copied into the cache), store/dir has them
// (images are mapped in place).
var stores = []struct {
	name string
	new  func(t *testing.T) Store
}{
	{"mem", func(t *testing.T) Store { return storemem.New() }},
	{"dir", func(t *testing.T) Store {
		s, err := storedir.Open(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}},
}

func newTestCatalog(t *testing.T, s Store) *Catalog {
	t.Helper()
	c, err := NewCatalog(s, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}
