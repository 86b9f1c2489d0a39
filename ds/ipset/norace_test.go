//go:build !race

package ipset

const raceEnabled = false
