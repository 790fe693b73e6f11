package main

import (
	"log/slog"
	"math"
	"runtime/debug"
	"strings"
	"testing"
)

// TestMemoryGuardFlags: --memory-limit and --shed-above take a size, a
// percentage or off, set the GOMEMLIMIT and size the guard; bad values
// name the flag.
func TestMemoryGuardFlags(t *testing.T) {
	t.Setenv("GOMEMLIMIT", "")
	old := debug.SetMemoryLimit(-1)
	defer debug.SetMemoryLimit(old)
	log := slog.New(slog.DiscardHandler)
	tests := []struct {
		name, limit, shed string
		wantLimit         int64 // -1: the node's memory scaled, checked loosely
		wantGuard         bool
		err               string
	}{
		{"sizes", "2G", "1G", 2 << 30, true, ""},
		{"percent of limit", "1G", "50%", 1 << 30, true, ""},
		{"percent of node", "50%", "90%", -1, true, ""},
		{"shedding off", "1G", "off", 1 << 30, false, ""},
		{"no limit, percent shed", "off", "90%", math.MaxInt64, false, ""},
		{"no limit, size shed", "off", "512M", math.MaxInt64, true, ""},
		{"bad limit", "lots", "90%", 0, false, "--memory-limit"},
		{"bad percent", "1G", "150%", 0, false, "--shed-above"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			debug.SetMemoryLimit(math.MaxInt64)
			g, err := memoryGuard(log, tt.limit, true, tt.shed)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err %v, want one naming %s", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := debug.SetMemoryLimit(-1)
			if tt.wantLimit == -1 {
				if got <= 0 || got == math.MaxInt64 {
					t.Fatalf("GOMEMLIMIT %d, want half the node's memory", got)
				}
			} else if got != tt.wantLimit {
				t.Fatalf("GOMEMLIMIT %d, want %d", got, tt.wantLimit)
			}
			if (g != nil) != tt.wantGuard {
				t.Fatalf("guard %v, want one: %v", g, tt.wantGuard)
			}
			if g != nil && tt.name == "percent of limit" && g.Stats().High != 1<<29 {
				t.Fatalf("high-water mark %d, want 512 MiB", g.Stats().High)
			}
		})
	}
}
