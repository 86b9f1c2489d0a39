package command

import (
	"strconv"
	"testing"
)

// The stream commands of issue 15's benchmark rows on the in-process path of
// strings_timing_test.go (a pipelined batch of 30). XADD with * appends to a stream that keeps
// growing, and XREADGROUP COUNT 1 > delivers a new entry each call, so the PEL grows too: both
// allocate only as their data grows (a new block or PEL node every so many entries), not per call.

// streamsSetup is the stream xg of n entries of one field with the group g on it from 0, and
// the stream xr of 100 entries of three fields.
func streamsSetup(n int) [][]string {
	var setup [][]string
	for i := 1; i <= n; i++ {
		setup = append(setup, []string{"XADD", "xg", strconv.Itoa(i) + "-1", "f", strconv.Itoa(i)})
	}
	setup = append(setup, []string{"XGROUP", "CREATE", "xg", "g", "0"})
	for i := 1; i <= 100; i++ {
		setup = append(setup, []string{"XADD", "xr", strconv.Itoa(i) + "-1", "a", "val1", "b", "val2", "c", strconv.Itoa(i % 100)})
	}
	return setup
}

var streamsHotCases = []struct {
	name  string
	setup int
	cmds  [][]string
}{
	{"XADD", 0, [][]string{{"XADD", "xs", "*", "f", "0123456789abcdef"}}},
	{"XRANGE-COUNT-10", 0, [][]string{{"XRANGE", "xr", "-", "+", "COUNT", "10"}}},
	{"XREADGROUP", 20_000, [][]string{{"XREADGROUP", "GROUP", "g", "c1", "COUNT", "1", "STREAMS", "xg", ">"}}},
	// A queue in balance: each XREADGROUP takes the entry an XADD put, so a long run never
	// drains the stream into null replies (XREADGROUP's cost is this row's less XADD's half).
	{"XADD+XREADGROUP", 1, [][]string{{"XADD", "xg", "*", "f", "0123456789abcdef"},
		{"XREADGROUP", "GROUP", "g", "c1", "COUNT", "1", "STREAMS", "xg", ">"}}},
}

// TestStreamsHotPathAllocations checks that XADD and XREADGROUP allocate, on average, at most
// three times per batch of 30 (growth only: a new block every 100 entries, a slab of 16 NACKs,
// the PEL's doublings), and XRANGE not at all.
func TestStreamsHotPathAllocations(t *testing.T) {
	for _, sc := range streamsHotCases {
		h := newBatchConn(t, streamsSetup(sc.setup), sc.cmds...)
		hotReplies(t, sc.name, h)
		if zsetRace { // -race makes sync.Pool drop the iterators' scratch at random
			continue
		}
		if sc.name == "XRANGE-COUNT-10" {
			checkNoAllocs(t, sc.name, h)
			continue
		}
		if n := testing.AllocsPerRun(200, func() { h.run(t) }); n > 3 {
			t.Errorf("%s: %v allocations per batch of %d", sc.name, n, hotBatch)
		}
	}
}

func BenchmarkStreamsHotPath(b *testing.B) {
	for _, sc := range streamsHotCases {
		b.Run(sc.name, func(b *testing.B) { benchHot(b, newBatchConn(b, streamsSetup(sc.setup), sc.cmds...)) })
	}
}
