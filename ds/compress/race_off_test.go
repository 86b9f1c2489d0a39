//go:build !race

package compress

const raceOn = false
