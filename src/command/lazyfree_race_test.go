//go:build race

package command

// lazyfreeElems is TestLazyfreeNoStall's default collection size: building a million elements
// takes minutes under the race detector.
const lazyfreeElems = 50_000
