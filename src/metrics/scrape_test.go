package metrics_test

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
)

// TestScrapeMovesWithLoad scrapes a real server before and after a known load and checks that
// every counter the load touches moved by exactly what was sent.
func TestScrapeMovesWithLoad(t *testing.T) {
	s, url := startWithMetrics(t)
	const held = 3
	conns := make([]*client, held)
	for i := range conns {
		conns[i] = dial(t, s)
	}
	c := conns[0]
	c.pipeline("PING") // every connection is registered before the first scrape
	conns[1].pipeline("PING")
	conns[2].pipeline("PING")
	before := scrape(t, url)

	const sets, hits, misses, wrong = 120, 70, 30, 11
	var cmds []string
	for i := range sets {
		cmds = append(cmds, fmt.Sprintf("SET key:%d v%d", i, i))
	}
	for i := range hits {
		cmds = append(cmds, fmt.Sprintf("GET key:%d", i))
	}
	for i := range misses {
		cmds = append(cmds, fmt.Sprintf("GET nokey:%d", i))
	}
	for i := range wrong {
		cmds = append(cmds, fmt.Sprintf("LPUSH key:%d x", i)) // WRONGTYPE: a failed call
	}
	cmds = append(cmds, "SETEX vol 100 v", "SETEX vol2 100 v")
	replies := c.pipeline(cmds...)
	for i, r := range replies[sets+hits+misses : sets+hits+misses+wrong] {
		if !strings.HasPrefix(r, "-WRONGTYPE") {
			t.Fatalf("LPUSH %d: %q", i, r)
		}
	}
	after := scrape(t, url)

	delta := func(name string, labels ...string) float64 {
		t.Helper()
		a, ok := value(after, name, labels...)
		if !ok {
			t.Fatalf("%s %v missing from the scrape after the load", name, labels)
		}
		b, _ := value(before, name, labels...)
		return a - b
	}
	exact := func(name string, want float64, labels ...string) {
		t.Helper()
		if got := delta(name, labels...); got != want {
			t.Errorf("%s %v moved by %v, want %v", name, labels, got, want)
		}
	}
	exact("hotkv_commands_total", sets, "cmd", "set")
	exact("hotkv_commands_total", hits+misses, "cmd", "get")
	exact("hotkv_commands_total", wrong, "cmd", "lpush")
	exact("hotkv_commands_total", 2, "cmd", "setex")
	exact("hotkv_command_errors_total", wrong, "cmd", "lpush", "kind", "failed")
	exact("hotkv_command_errors_total", 0, "cmd", "set", "kind", "failed")
	exact("hotkv_errors_total", wrong, "prefix", "WRONGTYPE")
	exact("hotkv_error_replies_total", wrong)
	exact("hotkv_keyspace_hits_total", hits) // writes' lookups count neither, as Redis's lookupKeyWrite
	exact("hotkv_keyspace_misses_total", misses)
	exact("hotkv_commands_processed_total", sets+hits+misses+wrong+2)
	exact("hotkv_db_keys", sets+2, "db", "0")
	exact("hotkv_db_expiring_keys", 2, "db", "0")
	exact("hotkv_rdb_changes_since_last_save", sets+2)

	if got := sum(after, "hotkv_shard_commands_total") - sum(before, "hotkv_shard_commands_total"); got < sets+wrong+2 || got > float64(len(cmds)) {
		t.Errorf("the shards ran %v commands, want between %d (writes) and %d (all)", got, sets+wrong+2, len(cmds))
	}
	if grew := sum(after, "hotkv_shard_memory_used_bytes") - sum(before, "hotkv_shard_memory_used_bytes"); grew < sets*8 {
		t.Errorf("the shards' used memory grew by %v bytes for %d new keys", grew, sets)
	}
	if shards, used := sum(after, "hotkv_shard_memory_used_bytes"), sum(after, "hotkv_memory_used_bytes"); shards > used {
		t.Errorf("the shards account for %v bytes, more than used_memory %v", shards, used)
	}
	if n := len(after["hotkv_shard_queue_depth"].GetMetric()); n != len(s.Engine.Group.Shards) {
		t.Errorf("%d shards with a queue depth, want %d", n, len(s.Engine.Group.Shards))
	}
	gauge := func(name string, want float64) {
		t.Helper()
		if got, _ := value(after, name); got != want {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
	gauge("hotkv_connected_clients", held)
	gauge("hotkv_blocked_clients", 0)
	gauge("hotkv_aof_enabled", 0)
	gauge("hotkv_rdb_bgsave_in_progress", 0)
	gauge("hotkv_rdb_last_bgsave_ok", 1)
	gauge("hotkv_aof_last_write_ok", 1)
	used, _ := value(after, "hotkv_memory_used_bytes")
	rss, _ := value(after, "hotkv_memory_rss_bytes")
	if used <= 0 || rss <= 0 {
		t.Errorf("used memory %v, RSS %v: want both positive", used, rss)
	}
	if saved, _ := value(after, "hotkv_rdb_last_save_timestamp_seconds"); saved < float64(time.Now().Add(-time.Hour).Unix()) {
		t.Errorf("last save time %v is not recent", saved)
	}
	for _, name := range []string{"go_goroutines", "process_resident_memory_bytes", "hotkv_build_info"} {
		if after[name] == nil {
			t.Errorf("%s missing", name)
		}
	}
	checkHistograms(t, before, after)
	checkTimedEqualsCalls(t, before, after)
	var setHist *dto.Histogram
	for _, m := range after["hotkv_command_duration_seconds"].GetMetric() {
		if hasLabels(m, []string{"cmd", "set"}) {
			setHist = m.GetHistogram()
		}
	}
	if setHist == nil || setHist.GetSampleCount() != sets || len(setHist.GetBucket()) < 20 {
		t.Errorf("SET's latency histogram: %v, want %d samples in at least 20 buckets", setHist, sets)
	}
}

// checkHistograms checks each command's latency histogram: bucket counts never fall as the
// bound grows and never pass the sample count.
func checkHistograms(t *testing.T, fams ...map[string]*dto.MetricFamily) {
	t.Helper()
	for _, f := range fams {
		for _, m := range f["hotkv_command_duration_seconds"].GetMetric() {
			h := m.GetHistogram()
			prev := uint64(0)
			for _, b := range h.GetBucket() {
				if b.GetCumulativeCount() < prev {
					t.Errorf("%s: bucket le=%v has %d, below the previous %d", series("latency", m), b.GetUpperBound(), b.GetCumulativeCount(), prev)
				}
				prev = b.GetCumulativeCount()
			}
			if prev > h.GetSampleCount() {
				t.Errorf("%s: buckets count %d, more than the %d samples", series("latency", m), prev, h.GetSampleCount())
			}
		}
	}
}

// histCounts returns each command's histogram sample count.
func histCounts(fams map[string]*dto.MetricFamily) map[string]uint64 {
	out := map[string]uint64{}
	for _, m := range fams["hotkv_command_duration_seconds"].GetMetric() {
		for _, l := range m.GetLabel() {
			if l.GetName() == "cmd" {
				out[l.GetValue()] = m.GetHistogram().GetSampleCount()
			}
		}
	}
	return out
}

// checkTimedEqualsCalls: between two scrapes of an otherwise idle server, each command's
// histogram gained exactly as many samples as its calls counter. (Deltas: the command table's
// counters of connection commands are the process's, shared by the servers a test binary
// starts, while histograms are each engine's.)
func checkTimedEqualsCalls(t *testing.T, before, after map[string]*dto.MetricFamily) {
	t.Helper()
	hb, ha := histCounts(before), histCounts(after)
	for cmd, n := range ha {
		cb, _ := value(before, "hotkv_commands_total", "cmd", cmd)
		ca, _ := value(after, "hotkv_commands_total", "cmd", cmd)
		if float64(n-hb[cmd]) != ca-cb {
			t.Errorf("%s: %d more samples, %v more calls", cmd, n-hb[cmd], ca-cb)
		}
	}
}

// TestScrapeUnderLoad scrapes while clients write and read: every scrape parses, and no
// counter ever goes down between two scrapes.
func TestScrapeUnderLoad(t *testing.T) {
	s, url := startWithMetrics(t)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := range 4 {
		c := dial(t, s)
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				c.pipeline(fmt.Sprintf("SET w%d:%d v", w, i%500), fmt.Sprintf("GET w%d:%d", w, i%700),
					fmt.Sprintf("INCR w%d:%d", w, i%500), "MGET a b c")
			}
		})
	}
	prev := map[string]float64{}
	var scrapes int
	deadline := time.Now().Add(3 * time.Second)
	for scrapes < 10 || time.Now().Before(deadline) && scrapes < 40 {
		fams := scrape(t, url)
		scrapes++
		for name, f := range fams {
			if !strings.HasPrefix(name, "hotkv_") {
				continue
			}
			for _, m := range f.GetMetric() {
				k := series(name, m)
				grows := func(k string, v float64) {
					if v < prev[k] {
						t.Errorf("scrape %d: %s fell from %v to %v", scrapes, k, prev[k], v)
					}
					prev[k] = max(v, prev[k])
				}
				switch f.GetType() {
				case dto.MetricType_COUNTER:
					grows(k, m.GetCounter().GetValue())
				case dto.MetricType_HISTOGRAM:
					grows(k+"_count", float64(m.GetHistogram().GetSampleCount()))
					for _, b := range m.GetHistogram().GetBucket() {
						grows(fmt.Sprintf("%s_bucket{le=%v}", k, b.GetUpperBound()), float64(b.GetCumulativeCount()))
					}
				}
			}
		}
		checkHistograms(t, fams)
	}
	close(stop)
	wg.Wait()
	if prev["hotkv_commands_total{cmd=set}"] == 0 || prev["hotkv_command_duration_seconds{cmd=set}_count"] == 0 {
		t.Error("no SET counted or timed during the load")
	}
	var busy float64
	for k, v := range prev {
		if strings.HasPrefix(k, "hotkv_shard_busy_seconds_total{") {
			busy += v
		}
	}
	if busy <= 0 {
		t.Error("no shard was busy during the load")
	}
}

// TestMetricsPortOff: with metrics-port 0 (the default) nothing listens; CONFIG SET turns the
// endpoint on, moves it and turns it off at run time, and a port that cannot be bound fails the
// CONFIG SET and keeps the endpoint where it was.
func TestMetricsPortOff(t *testing.T) {
	s := startServer(t)
	if a := s.MetricsAddr(); a != nil {
		t.Fatalf("metrics-port 0 but listening on %v", a)
	}
	c := dial(t, s)
	if got := c.pipeline("CONFIG GET metrics-bind")[0]; got != "*2" {
		t.Fatalf("CONFIG GET metrics-bind: %q", got)
	}
	port := freeMetricsPort(t)
	if got := c.pipeline(fmt.Sprintf("CONFIG SET metrics-port %d", port))[0]; got != "+OK" {
		t.Fatalf("CONFIG SET metrics-port: %q", got)
	}
	url := fmt.Sprintf("http://127.0.0.1:%d/metrics", port)
	if scrape(t, url)["hotkv_commands_total"] == nil {
		t.Fatal("no hotkv_commands_total after CONFIG SET metrics-port")
	}

	// A port taken by someone else: refused, the old listener still serves.
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	takenPort := taken.Addr().(*net.TCPAddr).Port
	if got := c.pipeline(fmt.Sprintf("CONFIG SET metrics-port %d", takenPort))[0]; !strings.HasPrefix(got, "-ERR CONFIG SET failed (possibly related to argument 'metrics-port') - Unable to listen on this port") {
		t.Fatalf("CONFIG SET metrics-port to a taken port: %q", got)
	}
	scrape(t, url)
	if got := c.pipeline("CONFIG GET metrics-port"); got[0] != "*2" {
		t.Fatalf("CONFIG GET metrics-port: %q", got)
	}

	if got := c.pipeline("CONFIG SET metrics-port 0")[0]; got != "+OK" {
		t.Fatalf("CONFIG SET metrics-port 0: %q", got)
	}
	if a := s.MetricsAddr(); a != nil {
		t.Fatalf("metrics-port 0 but listening on %v", a)
	}
	if conn, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), time.Second); err == nil {
		conn.Close()
		t.Fatalf("port %d still accepts connections after CONFIG SET metrics-port 0", port)
	}
	if got := c.pipeline("CONFIG SET metrics-bind 'not an address'")[0]; !strings.HasPrefix(got, "-ERR") {
		t.Fatalf("CONFIG SET metrics-bind to a bad address: %q", got)
	}
}

// TestMetricsStopCloses: Stop closes the endpoint, and its goroutines end: the listener's and
// those of connections a keep-alive client left open.
func TestMetricsStopCloses(t *testing.T) {
	s, url := startWithMetrics(t)
	scrape(t, url) // http.Client keeps the connection alive: a server goroutine waits on it
	scrape(t, url)
	addr := s.MetricsAddr().String()
	if n := serverGoroutines(); n == 0 {
		t.Fatal("no endpoint goroutine found while it serves: the check below would prove nothing")
	}
	s.Stop()
	if conn, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
		conn.Close()
		t.Fatalf("%s accepts connections after Stop", addr)
	}
	deadline := time.Now().Add(5 * time.Second)
	for serverGoroutines() > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("%d endpoint goroutines 5 s after Stop", serverGoroutines())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// serverGoroutines counts the goroutines of HTTP servers: connections served and Serve loops.
func serverGoroutines() int {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	n := 0
	for g := range strings.SplitSeq(string(buf), "\n\n") {
		if strings.Contains(g, "net/http.(*conn).serve") || strings.Contains(g, "net/http.(*Server).Serve(") {
			n++
		}
	}
	return n
}

// TestMetricsRebind: CONFIG SET metrics-bind moves the endpoint to another address at run time,
// including one that collides with the current listener (the wildcard on the same port), and
// CONFIG GET reports what serves.
func TestMetricsRebind(t *testing.T) {
	s, url := startWithMetrics(t)
	port := s.MetricsAddr().(*net.TCPAddr).Port
	c := dial(t, s)
	refused := func(host string) {
		t.Helper()
		if conn, err := net.DialTimeout("tcp", fmt.Sprintf("%s:%d", host, port), time.Second); err == nil {
			conn.Close()
			t.Fatalf("%s:%d still accepts connections", host, port)
		}
	}
	if got := c.pipeline("CONFIG SET metrics-bind 127.0.0.2")[0]; got != "+OK" {
		t.Fatalf("CONFIG SET metrics-bind 127.0.0.2: %q", got)
	}
	scrape(t, fmt.Sprintf("http://127.0.0.2:%d/metrics", port))
	refused("127.0.0.1")
	if got := s.MetricsAddr().String(); got != fmt.Sprintf("127.0.0.2:%d", port) {
		t.Fatalf("MetricsAddr %s", got)
	}
	// The wildcard on the same port collides with 127.0.0.2's listener: closed first, then bound.
	if got := c.pipeline("CONFIG SET metrics-bind 0.0.0.0")[0]; got != "+OK" {
		t.Fatalf("CONFIG SET metrics-bind 0.0.0.0: %q", got)
	}
	scrape(t, url)
	if got := c.pipeline("CONFIG SET metrics-bind 127.0.0.1")[0]; got != "+OK" {
		t.Fatalf("CONFIG SET metrics-bind 127.0.0.1: %q", got)
	}
	scrape(t, url)
	refused("127.0.0.2")
}

// TestPersistenceMetrics: SAVE and BGSAVE move the RDB metrics as INFO persistence does, and
// turning the AOF on shows in hotkv_aof_enabled.
func TestPersistenceMetrics(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir) // the server moves into dir, as Redis does: back where the test was, after it
	s, url := startWithMetrics(t, "--dir", dir)
	c := dial(t, s)
	c.pipeline("SET a 1", "SET b 2", "SET c 3")
	before := scrape(t, url)
	if v, _ := value(before, "hotkv_rdb_changes_since_last_save"); v != 3 {
		t.Errorf("changes since the last save: %v, want 3", v)
	}
	start := float64(time.Now().Unix())
	if got := c.pipeline("SAVE")[0]; got != "+OK" {
		t.Fatalf("SAVE: %q", got)
	}
	after := scrape(t, url)
	if v, _ := value(after, "hotkv_rdb_changes_since_last_save"); v != 0 {
		t.Errorf("changes after SAVE: %v, want 0", v)
	}
	b, _ := value(before, "hotkv_rdb_saves_total")
	if a, _ := value(after, "hotkv_rdb_saves_total"); a-b != 1 {
		t.Errorf("saves moved by %v, want 1", a-b)
	}
	if at, _ := value(after, "hotkv_rdb_last_save_timestamp_seconds"); at < start {
		t.Errorf("last save at %v, before SAVE ran (%v)", at, start)
	}
	if got := c.pipeline("CONFIG SET appendonly yes")[0]; got != "+OK" {
		t.Fatalf("CONFIG SET appendonly yes: %q", got)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		fams := scrape(t, url)
		on, _ := value(fams, "hotkv_aof_enabled")
		rewriting, _ := value(fams, "hotkv_aof_rewrite_in_progress")
		if on == 1 && rewriting == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("hotkv_aof_enabled %v, rewrite in progress %v 10 s after appendonly yes", on, rewriting)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestConcurrentScrapes: 32 scrapes at once all end promptly, each with the metrics or a 503
// (past the in-flight bound), and at least one with the metrics.
func TestConcurrentScrapes(t *testing.T) {
	_, url := startWithMetrics(t)
	cl := &http.Client{Timeout: 10 * time.Second}
	codes := make(chan int, 32)
	var wg sync.WaitGroup
	for range 32 {
		wg.Go(func() {
			resp, err := cl.Get(url)
			if err != nil {
				t.Error(err)
				codes <- 0
				return
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			codes <- resp.StatusCode
		})
	}
	wg.Wait()
	close(codes)
	ok := 0
	for c := range codes {
		switch c {
		case http.StatusOK:
			ok++
		case http.StatusServiceUnavailable:
		default:
			t.Errorf("a scrape answered %d", c)
		}
	}
	if ok == 0 {
		t.Error("no scrape of 32 got the metrics")
	}
}

// TestListeningLogLine: the server logs one structured line with the endpoint's address.
func TestListeningLogLine(t *testing.T) {
	logfile := filepath.Join(t.TempDir(), "hotkv.log")
	s, _ := startWithMetrics(t, "--logfile", logfile, "--loglevel", "notice")
	data, err := os.ReadFile(logfile)
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf(`msg="metrics endpoint listening" addr=%s path=/metrics`, s.MetricsAddr())
	if n := strings.Count(string(data), want); n != 1 {
		t.Errorf("%d lines with %s in the log:\n%s", n, want, data)
	}
}
