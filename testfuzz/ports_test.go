package testfuzz

import (
	"net"
	"strconv"
	"sync/atomic"
	"testing"
)

// portRange is a block of loopback ports a group of process-level tests binds, walked in turn so
// that a child's port is rarely one another child just left.
type portRange struct {
	lo, hi int
	next   atomic.Int32
}

// free returns a port of the range that is free right now.
func (r *portRange) free(t testing.TB) int {
	n := r.hi - r.lo + 1
	for range 2 * n {
		p := r.lo + int(r.next.Add(1)-1)%n
		if l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p))); err == nil {
			l.Close()
			return p
		}
	}
	t.Fatalf("no free port in %d-%d", r.lo, r.hi)
	return 0
}
