package main

import (
	"fmt"
	"os"
	"testing"

	"github.com/warren-sandbox/warren/internal/pgtest"
	"github.com/warren-sandbox/warren/meta/postgres"
)

// TestMain points every verb's default data directory at a temporary one,
// so tests never write into the user's ~/.local/share/warren, and stops
// the throwaway PostgreSQL of the --meta tests.
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "warren-cmd-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Setenv("WARREN_DATA", dir)
	code := pgtest.Run(m, postgres.Migrate)
	os.RemoveAll(dir)
	os.Exit(code)
}
