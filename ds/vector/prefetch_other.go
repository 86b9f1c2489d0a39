//go:build !amd64

package vector

import "unsafe"

// prefetchLines is a no-op where no prefetch instruction is wired up.
func prefetchLines(p unsafe.Pointer, n int) {}
