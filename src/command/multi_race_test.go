//go:build race

package command

// txRace reports a -race build: the transaction load tests shrink there.
const txRace = true
