//go:build race

package tags

// modelOps is TestIndexAgainstModel's operation count under -race, where each costs ~20x.
const modelOps = 20_000

const raceBuild = true
