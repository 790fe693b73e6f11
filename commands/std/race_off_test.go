//go:build !race

package std_test

const raceEnabled = false
