//go:build race

package command

// zsetRace reports a -race build: the memory comparison is skipped there, where the race
// detector's shadow memory would make it slow and huge.
const zsetRace = true
