//go:build !race

package vfs

const raceOn = false
