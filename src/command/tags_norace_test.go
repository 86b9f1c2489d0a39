//go:build !race

package command

// tagPropOps is TestTagsAgainstModel's operation count (tags_race_test.go: fewer under -race).
const tagPropOps = 1_000_000
