//go:build !race

package command

// hashRace reports a -race build (see hashes_race_test.go).
const hashRace = false
