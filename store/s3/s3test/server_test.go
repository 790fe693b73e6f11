package s3test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestBinary: found in GOPATH/bin when not on PATH; missing, the error
// says how to install it.
func TestBinary(t *testing.T) {
	gp := t.TempDir()
	t.Setenv("PATH", t.TempDir())
	t.Setenv("GOPATH", gp)
	if _, err := Binary(); err == nil || !strings.Contains(err.Error(), Install) {
		t.Fatalf("Binary with none installed: %v, want the install command", err)
	}
	bin := filepath.Join(gp, "bin", "versitygw")
	os.MkdirAll(filepath.Dir(bin), 0o755)
	if err := os.WriteFile(bin, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if got, err := Binary(); err != nil || got != bin {
		t.Fatalf("Binary = %q, %v; want %q", got, err, bin)
	}
}
