//go:build race

package coreutils_test

// raceEnabled: the race detector makes sync.Pool drop items at random, so
// allocation budgets cannot be asserted under -race.
const raceEnabled = true
