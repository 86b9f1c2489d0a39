package command

import (
	"testing"
)

// The accounting's cost. Every write command is measured before and after (memory_acct.go):
// TestStringsHotPathAllocatesNothing and TestSetsHotPathAllocatesNothing already hold it to no
// allocation. These add the memory gate: a budget (maxmemory 1 GB, allkeys-lru) the data is far
// from, so each denyoom command passes the gate's first check, and one the data is over, so
// each SET evicts one key first.

// maxmemoryConn is h's engine under maxmemory limit and allkeys-lru.
func maxmemoryConn(tb testing.TB, h *hotConn, limit string) *hotConn {
	h.tc.do("CONFIG", "SET", "maxmemory-policy", "allkeys-lru")
	h.tc.do("CONFIG", "SET", "maxmemory", limit)
	for range 3 {
		h.run(tb)
	}
	return h
}

var gateCases = []struct {
	name  string
	setup [][]string
	cmd   []string
}{
	{"GET", [][]string{{"SET", "key:1", value}}, []string{"GET", "key:1"}},
	{"SET", [][]string{{"SET", "key:1", value}}, []string{"SET", "key:1", value}},
	{"SADD", [][]string{{"SADD", "s", "a"}}, []string{"SADD", "s", "a"}},
}

func TestMemoryGateAllocatesNothing(t *testing.T) {
	for _, gc := range gateCases {
		h := maxmemoryConn(t, newHotConn(t, gc.setup, gc.cmd...), "1gb")
		hotReplies(t, gc.name, h)
		checkNoAllocs(t, gc.name+" under maxmemory", h)
	}
}

func BenchmarkMemoryGate(b *testing.B) {
	for _, gc := range gateCases {
		b.Run(gc.name, func(b *testing.B) {
			benchHot(b, maxmemoryConn(b, newHotConn(b, gc.setup, gc.cmd...), "1gb"))
		})
	}
}
