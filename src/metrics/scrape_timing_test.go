package metrics_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/hotkv/hotkv/src/command"
	"github.com/hotkv/hotkv/src/metrics"
	"github.com/hotkv/hotkv/src/server"
)

// loadedServer is a 32-shard server (--threads 2) whose commandstats hold at least 200
// commands: every command of the table whose arity needs an argument is sent without one, a
// rejected call that lists it, plus a little real data.
func loadedServer(b *testing.B) *server.Server {
	s := startServer(b, "--threads", "2")
	if n := len(s.Engine.Group.Shards); n != 32 {
		b.Fatalf("%d shards, want 32", n)
	}
	var cmds []string
	for name, spec := range command.Commands() {
		if spec.Arity >= 2 || spec.Arity <= -2 {
			cmds = append(cmds, strings.ToUpper(name))
		}
	}
	sort.Strings(cmds)
	for i := range 1000 {
		cmds = append(cmds, "SET k"+string(rune('a'+i%26))+string(rune('a'+i/26%26))+" v")
	}
	dial(b, s).pipeline(cmds...)
	var m command.MetricsSnapshot
	s.Engine.ReadMetrics(&m)
	if len(m.Commands) < 200 {
		b.Fatalf("%d commands in commandstats, want at least 200", len(m.Commands))
	}
	return s
}

// BenchmarkScrape is one GET /metrics served in-process (no socket): the HotKV collector alone,
// and with the Go runtime and process collectors as the endpoint serves it.
func BenchmarkScrape(b *testing.B) {
	s := loadedServer(b)
	src := metrics.EngineSource(s.Engine)
	only := prometheus.NewRegistry()
	only.MustRegister(metrics.NewCollector(src))
	run := func(b *testing.B, h http.Handler) {
		req := httptest.NewRequest("GET", "/metrics", nil)
		b.ReportAllocs()
		for b.Loop() {
			w := httptest.NewRecorder()
			h.ServeHTTP(w, req)
			if w.Code != http.StatusOK {
				b.Fatal(w.Code)
			}
			b.SetBytes(int64(w.Body.Len()))
		}
	}
	b.Run("hotkv", func(b *testing.B) { run(b, promhttp.HandlerFor(only, promhttp.HandlerOpts{})) })
	b.Run("endpoint", func(b *testing.B) { run(b, metrics.NewHandler(src)) })
	b.Run("read", func(b *testing.B) {
		var m command.MetricsSnapshot
		b.ReportAllocs()
		for b.Loop() {
			s.Engine.ReadMetrics(&m)
		}
	})
	// What ReadMetrics would add holding the shards if 200 commands had been called: one
	// histogram merge each (SET's, which has calls on every shard).
	b.Run("latency200", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			for range 200 {
				s.Engine.CommandLatency("set")
			}
		}
	})
	b.Run("collect200", func(b *testing.B) { run(b, syntheticHandler(200, 32)) })
}

// syntheticHandler serves a snapshot of cmds called commands, each with a latency histogram
// spanning 1 us to 1 ms, and shards shards: the collector's and encoder's cost alone.
func syntheticHandler(cmds, shards int) http.Handler {
	var snap command.MetricsSnapshot
	for i := range cmds {
		var lat []command.LatencyBucket
		for k, le := 0, 1024*time.Nanosecond; le <= time.Millisecond; k, le = k+1, le*2 {
			lat = append(lat, command.LatencyBucket{Le: le, Count: uint64(100 * (k + 1))})
		}
		n := lat[len(lat)-1].Count
		snap.Commands = append(snap.Commands, command.CommandMetric{Name: fmt.Sprintf("cmd%03d", i),
			Calls: int64(n), Failed: 3, Nanos: 12345678, Timed: n, Latency: lat})
	}
	for range shards {
		snap.Shards = append(snap.Shards, command.ShardMetric{Commands: 1000, BusyNanos: 1e9, WorkItems: 100})
	}
	snap.DBs = []command.DBMetric{{DB: 0, Keys: 1000, Expires: 10}}
	reg := prometheus.NewRegistry()
	reg.MustRegister(metrics.NewCollector(metrics.Source{Read: func(m *command.MetricsSnapshot) { *m = snap }}))
	return promhttp.HandlerFor(reg, promhttp.HandlerOpts{})
}
