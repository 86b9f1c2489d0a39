//go:build !race

package command

// sortRace reports a -race build (see sort_race_test.go).
const sortRace = false
