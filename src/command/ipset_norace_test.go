//go:build !race

package command

const raceEnabledCmd = false
