package command

import "testing"

// observedModes are the observability settings GET is measured under: everything off (the
// executors' 1-in-32 sampled timing only), latency-tracking alone (Redis's default apart from
// the slowlog), the slowlog alone, Redis's defaults (both), and the latency monitor too.
var observedModes = []struct {
	name                 string
	tracking             bool
	slowlogUs, monitorMs int64
}{
	{"off", false, -1, 0},
	{"tracking", true, -1, 0},
	{"slowlog", false, 10000, 0},
	{"default", true, 10000, 0},
	{"all", true, 10000, 100},
}

func newObservedGet(tb testing.TB, tracking bool, slowlogUs, monitorMs int64) *hotConn {
	h := newHotConn(tb, [][]string{{"SET", "key:1", value}}, "GET", "key:1")
	h.tc.client.SetFD(100) // as a socket's client, so the byte counters run
	e := h.tc.client.e
	s := *e.Settings()
	s.LatencyTracking, s.SlowlogLogSlowerThan, s.LatencyMonitorThreshold = tracking, slowlogUs, monitorMs
	e.SetSettings(s)
	for range 3 {
		h.run(tb)
	}
	return h
}

// A GET allocates nothing whatever is tracked.
func TestObservedGetAllocatesNothing(t *testing.T) {
	for _, m := range observedModes {
		checkNoAllocs(t, "GET, "+m.name, newObservedGet(t, m.tracking, m.slowlogUs, m.monitorMs))
	}
}

// BenchmarkObservedGet: a pipelined batch of GETs under each mode (ns/cmd).
func BenchmarkObservedGet(b *testing.B) {
	for _, m := range observedModes {
		b.Run(m.name, func(b *testing.B) { benchHot(b, newObservedGet(b, m.tracking, m.slowlogUs, m.monitorMs)) })
	}
}
