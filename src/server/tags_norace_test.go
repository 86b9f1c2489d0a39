//go:build !race

package server

// raceBuild reports a -race build (tags_race_test.go).
const raceBuild = false
