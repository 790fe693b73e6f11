package vfs

import (
	"fmt"
	"math/rand"
	"testing"
)

// TestTrieModel applies random inserts and removes to the trie and to a
// map, in transactions (a transient owner) and outside them, and checks
// that every older root still holds exactly what it held (persistence).
func TestTrieModel(t *testing.T) {
	rnd := rand.New(rand.NewSource(5))
	type version struct {
		root *hnode[string, dirent]
		want map[string]dirent
	}
	var root *hnode[string, dirent]
	want := map[string]dirent{}
	var versions []version
	check := func(v version) {
		t.Helper()
		n := 0
		v.root.each(func(k string, de dirent) bool {
			n++
			if w, ok := v.want[k]; !ok || w != de {
				t.Fatalf("trie has %s=%v, model %v (present %v)", k, de, w, ok)
			}
			return true
		})
		if n != len(v.want) {
			t.Fatalf("trie has %d entries, model %d", n, len(v.want))
		}
		for k, w := range v.want {
			if got, ok := v.root.lookup(k, strHash(k)); !ok || got != w {
				t.Fatalf("lookup %s = %v %v, want %v", k, got, ok, w)
			}
		}
	}
	ops := 20000
	if testing.Short() {
		ops = 4000
	}
	for i := 0; i < ops; i++ {
		var owner *tree
		if rnd.Intn(2) == 0 {
			owner = &tree{}
		}
		for j := rnd.Intn(4) + 1; j > 0; j-- {
			k := fmt.Sprintf("k%d", rnd.Intn(3000))
			if rnd.Intn(3) == 0 {
				var removed bool
				root, removed = root.remove(k, strHash(k), 0)
				if _, ok := want[k]; ok != removed {
					t.Fatalf("remove %s = %v, model had it: %v", k, removed, ok)
				}
				delete(want, k)
			} else {
				de := dirent{ino: uint64(rnd.Intn(1000) + 1)}
				var added bool
				root, added = root.insert(k, strHash(k), de, 0, owner)
				if _, ok := want[k]; ok == added {
					t.Fatalf("insert %s added=%v, model had it: %v", k, added, ok)
				}
				want[k] = de
			}
		}
		if i%500 == 0 {
			versions = append(versions, version{root: root, want: clone(want)})
			for _, v := range versions {
				check(v)
			}
		}
	}
	check(version{root: root, want: want})
	for k := range want {
		root, _ = root.remove(k, strHash(k), 0)
	}
	if root != nil {
		t.Fatalf("trie not empty after removing everything: %d entries, %d kids", len(root.entries), len(root.kids))
	}
}

func clone[K comparable, V any](m map[K]V) map[K]V {
	c := make(map[K]V, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}
