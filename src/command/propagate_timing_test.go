package command

import "testing"

// propagateConn is a hot batch of writes served with a replication feed reader attached, so that
// every write builds its replicated form and appends it to the feed (propagateLocked).
func propagateConn(tb testing.TB, cmds ...[]string) *hotConn {
	h := newBatchConn(tb, nil, cmds...)
	rd := h.tc.e.AttachFeed()
	tb.Cleanup(rd.Close)
	for range 3 { // warm again: the replicated forms' buffers reach their steady sizes
		h.run(tb)
	}
	return h
}

var propagateCases = []struct {
	name string
	cmds [][]string
}{
	{"set", [][]string{{"SET", "key:1", "value"}, {"SET", "key:2", "other value"}}},
	{"set-px", [][]string{{"SET", "key:1", "value", "PX", "100000"}}}, // propagated as SET ... PXAT
	{"incr", [][]string{{"INCR", "counter"}}},
}

// A write propagated to an attached feed allocates nothing once warm.
func TestPropagateAllocatesNothing(t *testing.T) {
	for _, tc := range propagateCases {
		h := propagateConn(t, tc.cmds...)
		hotReplies(t, tc.name, h)
		checkNoAllocs(t, tc.name, h)
	}
}

// BenchmarkPropagate serves pipelined writes with and without a feed reader: the difference is
// what building and appending the replicated form costs per write.
func BenchmarkPropagate(b *testing.B) {
	for _, tc := range propagateCases {
		b.Run(tc.name+"/nofeed", func(b *testing.B) { benchHot(b, newBatchConn(b, nil, tc.cmds...)) })
		b.Run(tc.name+"/feed", func(b *testing.B) { benchHot(b, propagateConn(b, tc.cmds...)) })
	}
}
