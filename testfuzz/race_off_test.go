//go:build !race

package testfuzz

const raceEnabled = false
