//go:build race

package command

// tagPropOps is TestTagsAgainstModel's operation count under -race, where each costs ~10x.
const tagPropOps = 100_000
