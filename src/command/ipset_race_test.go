//go:build race

package command

const raceEnabledCmd = true
