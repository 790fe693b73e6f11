package main

import (
	"fmt"
	"os"
	"testing"
)

// TestMain points every verb's default data directory at a temporary one,
// so tests never write into the user's ~/.local/share/warren.
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "warren-cmd-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Setenv("WARREN_DATA", dir)
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}
