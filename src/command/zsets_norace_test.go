//go:build !race

package command

// zsetRace reports a -race build (see zsets_race_test.go).
const zsetRace = false
