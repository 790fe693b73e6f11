package main

import (
	"log/slog"
	"math"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/sandbox"
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

func TestBudgetFlags(t *testing.T) {
	cases := []struct {
		sb, node string
		wait     time.Duration
		want     sandbox.Budget
		bad      string
	}{
		{"256MiB", "1GiB", 10 * time.Second, sandbox.Budget{Sandbox: 256 << 20, Node: 1 << 30, Wait: 10 * time.Second}, ""},
		{"off", "64M", time.Second, sandbox.Budget{Sandbox: -1, Node: 64 << 20, Wait: time.Second}, ""},
		{"lots", "1G", time.Second, sandbox.Budget{}, "--uncommitted-budget"},
		{"1G", "-5", time.Second, sandbox.Budget{}, "--node-uncommitted-budget"},
		{"1G", "1G", 0, sandbox.Budget{}, "--budget-wait"},
	}
	for _, c := range cases {
		got, err := parseBudget(c.sb, c.node, c.wait)
		if c.bad != "" {
			if err == nil || !strings.Contains(err.Error(), c.bad) {
				t.Errorf("%q %q %v: err %v, want one naming %s", c.sb, c.node, c.wait, err, c.bad)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("%q %q %v: %+v, %v; want %+v", c.sb, c.node, c.wait, got, err, c.want)
		}
	}
}
