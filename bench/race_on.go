//go:build race

package bench

// raceEnabled leaves out what the race detector makes minutes long.
const raceEnabled = true
