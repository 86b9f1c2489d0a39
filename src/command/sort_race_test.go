//go:build race

package command

// sortRace reports a -race build, where sync.Pool drops pooled sorters at random on purpose,
// so the allocation check is skipped.
const sortRace = true
