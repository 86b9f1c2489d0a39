//go:build race

package script

// raceEnabled: the race detector's shadow memory multiplies RSS, so RSS bounds are not checked.
const raceEnabled = true
