//go:build race

package vfs

// raceOn scales long randomized tests down under the race detector.
const raceOn = true
