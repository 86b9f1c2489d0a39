//go:build race

package testfuzz

// raceEnabled reports a -race build: load tests shrink there.
const raceEnabled = true
