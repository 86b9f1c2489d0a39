//go:build race

package main

// raceOn: the race detector is on (the large-file tests skip: no goroutines to check, 10x slower).
const raceOn = true
