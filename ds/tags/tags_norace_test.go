//go:build !race

package tags

// modelOps is TestIndexAgainstModel's operation count (tags_race_test.go: fewer under -race).
const modelOps = 200_000

const raceBuild = false
