package command

import (
	"strings"
	"testing"
)

// newObsEngine is a test engine whose CONFIG SET of the observability directives reaches its
// settings, as src/server wires them.
func newObsEngine() *Engine {
	e := newTestEngine()
	st := e.Config.(testStore)
	for _, name := range []string{"slowlog-log-slower-than", "slowlog-max-len", "latency-monitor-threshold",
		"latency-tracking"} {
		st.OnChange(name, func(string) {
			s := *e.Settings()
			s.SlowlogLogSlowerThan, s.SlowlogMaxLen = st.Int("slowlog-log-slower-than"), st.Int("slowlog-max-len")
			s.LatencyMonitorThreshold = st.Int("latency-monitor-threshold")
			s.LatencyTracking = st.Bool("latency-tracking")
			e.SetSettings(s)
		})
	}
	return e
}

// The API the metrics endpoint reads: a command's calls show in its histogram and in
// ForEachCommandStat, on every kind of executor (shard work, a connection command, a barrier).
func TestCommandLatencyAPI(t *testing.T) {
	e := newObsEngine()
	tc := newTestConn(t, e)
	for range 5 {
		tc.do("SET", "k", "v")
		tc.do("GET", "k")
		tc.do("PING")
		tc.do("MSET", "a", "1", "b", "2")
	}
	for _, name := range []string{"set", "get", "ping", "mset"} {
		n, buckets := e.CommandLatency(name)
		if n != 5 || len(buckets) == 0 || buckets[len(buckets)-1].Count != 5 {
			t.Errorf("%s: %d calls, buckets %v", name, n, buckets)
		}
	}
	seen := map[string]int64{}
	e.ForEachCommandStat(func(name string, calls, usec, rejected, failed int64) { seen[name] = calls })
	// (Connection commands count in their Spec, which every engine of the test binary shares.)
	if seen["get"] != 5 || seen["set"] != 5 {
		t.Errorf("ForEachCommandStat: get %d, set %d", seen["get"], seen["set"])
	}
	if _, ok := seen["client|list"]; !ok {
		t.Error("ForEachCommandStat leaves out subcommands")
	}
	tc.do("CONFIG", "SET", "latency-tracking", "no")
	tc.do("GET", "k")
	if n, _ := e.CommandLatency("GET"); n != 5 {
		t.Errorf("latency-tracking no still records: %d", n)
	}
	tc.do("CONFIG", "RESETSTAT")
	if n, _ := e.CommandLatency("get"); n != 0 {
		t.Errorf("RESETSTAT left %d calls", n)
	}
}

func TestSlowlogEntries(t *testing.T) {
	e := newObsEngine()
	tc := newTestConn(t, e)
	tc.do("CONFIG", "SET", "slowlog-log-slower-than", "0")
	tc.do("CLIENT", "SETNAME", "me")
	long := strings.Repeat("x", 130)
	args := []string{"RPUSH", "l"}
	for range 40 {
		args = append(args, long)
	}
	tc.do(args...)
	got := replyAny(t, tc.do("SLOWLOG", "GET", "1")).([]any)[0].([]any)
	logged := got[3].([]any)
	if len(logged) != 32 || logged[31] != "... (11 more arguments)" ||
		logged[2] != strings.Repeat("x", 128)+"... (2 more bytes)" {
		t.Errorf("args %q", logged)
	}
	if got[4] != "127.0.0.1:50000" || got[5] != "me" {
		t.Errorf("client %v %v", got[4], got[5])
	}
}
