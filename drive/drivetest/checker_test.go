package drivetest

import (
	"strings"
	"testing"
)

// TestCheck: the checker itself finds what it claims to find.
func TestCheck(t *testing.T) {
	init := InitialEvents()
	tests := []struct {
		name   string
		events []Event
		want   string // "" = no violation
	}{
		{"fresh read", []Event{
			{Kind: "mut", File: "/f0", Content: "a.1", Start: 10, End: 20},
			{Kind: "read", File: "/f0", Content: "a.1", Start: 30, End: 40},
		}, ""},
		{"concurrent read may see old", []Event{
			{Kind: "mut", File: "/f0", Content: "a.1", Start: 10, End: 50},
			{Kind: "read", File: "/f0", Content: "init.0", Start: 30, End: 40},
		}, ""},
		{"stale read", []Event{
			{Kind: "mut", File: "/f0", Content: "a.1", Start: 10, End: 20},
			{Kind: "read", File: "/f0", Content: "init.0", Start: 30, End: 40},
		}, "stale read of /f0"},
		{"stale after two", []Event{
			{Kind: "mut", File: "/f1", Content: "a.1", Start: 10, End: 20},
			{Kind: "mut", File: "/f1", Content: "b.1", Start: 25, End: 28},
			{Kind: "read", File: "/f1", Content: "a.1", Start: 30, End: 40},
		}, "stale read of /f1"},
		{"overlapping writers either wins", []Event{
			{Kind: "mut", File: "/f1", Content: "a.1", Start: 10, End: 20},
			{Kind: "mut", File: "/f1", Content: "b.1", Start: 15, End: 28},
			{Kind: "read", File: "/f1", Content: "a.1", Start: 30, End: 40},
		}, ""},
		{"content from elsewhere", []Event{
			{Kind: "read", File: "/f2", Content: "x.9", Start: 30, End: 40},
		}, "never written there"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fails, _ := Check([]Log{{Events: init}, {Events: tt.events}})
			got := strings.Join(fails, "; ")
			if tt.want == "" && got != "" || tt.want != "" && !strings.Contains(got, tt.want) {
				t.Fatalf("Check: %q, want %q", got, tt.want)
			}
		})
	}
}

func TestVerify(t *testing.T) {
	c := content("w", 7, 5000)
	if id, err := verify(c); err != nil || id != "w.7" {
		t.Fatalf("verify whole: %q %v", id, err)
	}
	torn := append([]byte(nil), c[:len(c)-100]...)
	if _, err := verify(torn); err == nil || !strings.Contains(err.Error(), "torn") {
		t.Fatalf("verify of a prefix: %v", err)
	}
	mixed := append([]byte(nil), c...)
	copy(mixed[len(mixed)-10:], content("w", 8, 10)[:10])
	if _, err := verify(mixed); err == nil || !strings.Contains(err.Error(), "torn") {
		t.Fatalf("verify of mixed versions: %v", err)
	}
}
