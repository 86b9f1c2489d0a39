//go:build race

package main

// raceOn: the race detector is on (the large-file test skips: no goroutines to check, 10x slower).
const raceOn = true
