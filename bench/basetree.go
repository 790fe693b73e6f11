package bench

import (
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing/fstest"
)

// BaseTreeSHA256 is the digest of the peer harness's base-tree.json
// (shared/peers/justbash/README.md): both sides must run on the same tree.
const BaseTreeSHA256 = "d56d2a7dbb352c2db3255591e821a0fbe577a81d08494e92b0a5cee6eb477737"

// embeddedBaseTree is an identical copy, for a binary run away from the
// shared folder.
//
//go:embed base-tree.json
var embeddedBaseTree []byte

// BaseTree is the benchmark's base image: a flat {"/abs/path": content} map
// with parent directories implied.
type BaseTree struct {
	Files  map[string]string
	Source string // the file it came from, or "embedded"
	Digest string
	Bytes  int64 // content bytes
}

// DefaultBaseTreePaths are tried in order when no --base-tree is given:
// $WARREN_SHARED/peers/justbash/base-tree.json, then the shared folder next
// to the repository (relative to the working directory).
func DefaultBaseTreePaths() []string {
	var p []string
	if d := os.Getenv("WARREN_SHARED"); d != "" {
		p = append(p, filepath.Join(d, "peers", "justbash", "base-tree.json"))
	}
	return append(p, filepath.Join("..", "shared", "peers", "justbash", "base-tree.json"))
}

// LoadBaseTree reads path, or when path is "" the first default path that
// exists, else the embedded copy. Whatever it reads must have the peer's
// digest.
func LoadBaseTree(path string) (*BaseTree, error) {
	if path != "" {
		b, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("cannot read base tree: %w", err)
		}
		return ParseBaseTree(b, path)
	}
	for _, p := range DefaultBaseTreePaths() {
		b, err := os.ReadFile(p)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("cannot read base tree: %w", err)
		}
		return ParseBaseTree(b, p)
	}
	return ParseBaseTree(embeddedBaseTree, "embedded")
}

// ParseBaseTree checks data's digest against BaseTreeSHA256 and decodes it.
func ParseBaseTree(data []byte, source string) (*BaseTree, error) {
	sum := sha256.Sum256(data)
	if d := hex.EncodeToString(sum[:]); d != BaseTreeSHA256 {
		return nil, fmt.Errorf("base tree %s has sha256 %s, want %s (the peer harness's tree; regenerate with gen-base-tree.mjs or pass --base-tree)", source, d, BaseTreeSHA256)
	}
	t := &BaseTree{Source: source, Digest: BaseTreeSHA256}
	if err := json.Unmarshal(data, &t.Files); err != nil {
		return nil, fmt.Errorf("base tree %s: %w", source, err)
	}
	for p, c := range t.Files {
		if !strings.HasPrefix(p, "/") || !fs.ValidPath(strings.TrimPrefix(p, "/")) {
			return nil, fmt.Errorf("base tree %s: invalid path %q", source, p)
		}
		t.Bytes += int64(len(c))
	}
	return t, nil
}

// FS returns the tree as an fs.FS for the vfs base. Parent directories are
// implied (0755); files under a bin directory are 0755, the rest 0644. /tmp
// (1777) is added, as every real image has it: just-bash creates it itself.
func (t *BaseTree) FS() fs.FS {
	m := fstest.MapFS{"tmp": {Mode: fs.ModeDir | fs.ModeSticky | 0o777}}
	for p, c := range t.Files {
		mode := fs.FileMode(0o644)
		if strings.Contains(p, "/bin/") {
			mode = 0o755
		}
		name := strings.TrimPrefix(p, "/")
		m[name] = &fstest.MapFile{Data: []byte(c), Mode: mode}
		// explicit parents: MapFS would synthesize them read-only (0555)
		for d := path.Dir(name); d != "."; d = path.Dir(d) {
			m[d] = &fstest.MapFile{Mode: fs.ModeDir | 0o755}
		}
	}
	return m
}
