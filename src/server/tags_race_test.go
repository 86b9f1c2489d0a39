//go:build race

package server

// raceBuild reports a -race build: timing bounds (TestTagInvalidateLatency) do not hold there.
const raceBuild = true
