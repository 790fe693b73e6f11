//go:build race

package std_test

// raceEnabled: the race detector slows path resolution ~10x, so the
// deep-tree test walks with fewer commands under it.
const raceEnabled = true
