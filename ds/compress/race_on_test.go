//go:build race

package compress

const raceOn = true // sync.Pool drops items at random under -race
