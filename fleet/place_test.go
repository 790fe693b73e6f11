package fleet

import (
	"testing"
)

// TestChoose: power-of-two choices over running/capacity.
func TestChoose(t *testing.T) {
	ms := []Member{
		{Load: 9, Capacity: 10}, // 0.9
		{Load: 1, Capacity: 10}, // 0.1
		{Load: 50, Capacity: 100},
	}
	ms[0].ID, ms[1].ID, ms[2].ID = "hot", "cold", "mid"
	for _, tc := range []struct {
		name  string
		draws []int
		want  string
	}{
		{"hot vs cold", []int{0, 0}, "cold"}, // draws hot, then cold
		{"hot vs mid", []int{0, 1}, "mid"},   // hot, then (swap) mid
		{"cold vs hot", []int{1, 1}, "cold"}, // cold, then hot
		{"mid vs cold", []int{2, 0}, "cold"}, // mid, then cold
	} {
		t.Run(tc.name, func(t *testing.T) {
			i := 0
			got := choose(ms, 2, func(n int) int { d := tc.draws[i] % n; i++; return d })
			if got.ID != tc.want {
				t.Fatalf("chose %s, want %s", got.ID, tc.want)
			}
		})
	}
	// With two distinct draws the most loaded node never wins.
	counts := map[string]int{}
	for range 2000 {
		counts[choose(ms, 2, randIntN).ID]++
	}
	if counts["hot"] != 0 || counts["cold"] < counts["mid"] {
		t.Fatalf("placement counts %v: the hottest node was picked, or the coldest not most", counts)
	}
	if got := choose(ms[:1], 2, randIntN); got.ID != "hot" {
		t.Fatalf("one candidate: %s", got.ID)
	}
}

func TestMatches(t *testing.T) {
	for _, tc := range []struct {
		labels, sel map[string]string
		want        bool
	}{
		{nil, nil, true},
		{map[string]string{"a": "1"}, nil, true},
		{map[string]string{"a": "1"}, map[string]string{"a": "1"}, true},
		{map[string]string{"a": "1"}, map[string]string{"a": "2"}, false},
		{nil, map[string]string{"a": ""}, false}, // a selector key needs the label
		{map[string]string{"a": "1"}, map[string]string{"b": "1"}, false},
	} {
		if got := matches(tc.labels, tc.sel); got != tc.want {
			t.Errorf("matches(%v, %v) = %v", tc.labels, tc.sel, got)
		}
	}
}
