package boltmeta

import (
	"path/filepath"
	"testing"

	"github.com/warren-sandbox/warren/drive"
	"github.com/warren-sandbox/warren/drive/drivetest"
	"github.com/warren-sandbox/warren/store/dir"
)

// fixture: one bbolt file opened through a separate Meta per node (its own
// lock file descriptor, as another process has), over store/dir.
func fixture(t testing.TB) drivetest.Fixture {
	base := t.TempDir()
	st, err := dir.Open(filepath.Join(base, "blobs"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	path := filepath.Join(base, "drives.db")
	return drivetest.Fixture{
		Store: st,
		NewMeta: func(t testing.TB) drive.Meta {
			m, err := Open(path, Options{})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { m.Close() })
			return m
		},
	}
}

func TestSuite(t *testing.T) {
	drivetest.Run(t, func(t *testing.T) drivetest.Fixture { return fixture(t) })
}
