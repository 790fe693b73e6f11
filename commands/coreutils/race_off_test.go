//go:build !race

package coreutils_test

const raceEnabled = false
