//go:build !race

package command

// lazyfreeElems is TestLazyfreeNoStall's default collection size.
const lazyfreeElems = 1_000_000
