package command

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"os"
	"runtime"
	"runtime/metrics"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// infoState is what INFO keeps between calls: the instance's ids, the peak memory seen and the
// command-rate sampler behind instantaneous_ops_per_sec.
type infoState struct {
	idsOnce sync.Once
	runID   string
	replID  string

	peak atomic.Uint64

	mu     sync.Mutex
	lastAt int64 // unix ns of the last sample
	// Commands, network input bytes and output bytes per second, as Redis's
	// STATS_METRIC_COMMAND, _NET_INPUT and _NET_OUTPUT.
	series [3]rateSeries
}

// rateSeries is one instantaneous metric: the rate over each of the last opsSamples periods.
type rateSeries struct {
	rates  [opsSamples]float64
	filled int
	next   int
	last   int64 // the counter at the last sample
}

func (r *rateSeries) add(v int64, elapsed int64) {
	r.rates[r.next] = float64(max(v-r.last, 0)) * float64(time.Second) / float64(elapsed)
	r.next = (r.next + 1) % opsSamples
	r.filled = min(r.filled+1, opsSamples)
}

// mean is the average rate over the recorded samples (getInstantaneousMetric).
func (r *rateSeries) mean() float64 {
	if r.filled == 0 {
		return 0
	}
	sum := 0.0
	for _, v := range r.rates[:r.filled] {
		sum += v
	}
	return sum / float64(r.filled)
}

// opsSamples is how many periods instantaneous_ops_per_sec averages, as Redis (STATS_METRIC_SAMPLES).
const opsSamples = 16

// opsPeriod is the shortest sampling period, Redis's cron rate for this metric.
const opsPeriod = 100 * time.Millisecond

func (st *infoState) ids() (runID, replID string) {
	st.idsOnce.Do(func() {
		st.runID, st.replID = randomHexID(20), randomHexID(20)
	})
	st.mu.Lock() // DEBUG CHANGE-REPL-ID replaces replID
	defer st.mu.Unlock()
	return st.runID, st.replID
}

// changeReplID gives the instance a new replication ID (DEBUG CHANGE-REPL-ID).
func (st *infoState) changeReplID() {
	st.ids()
	st.mu.Lock()
	st.replID = randomHexID(20)
	st.mu.Unlock()
}

func randomHexID(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// TrackMetrics samples the command rate and the network byte rates for INFO's
// instantaneous_ops_per_sec and instantaneous_*_kbps. The server's cron calls it about every
// 100ms; INFO samples too, so the values mean something without a cron.
func (e *Engine) TrackMetrics() { e.sampleMetrics(time.Now().UnixNano()) }

func (e *Engine) sampleMetrics(now int64) {
	in, out := e.NetBytes()
	e.info.sample(now, e.totalCommands(), in, out)
}

// sample records the rates since the previous sample if at least opsPeriod has passed.
func (st *infoState) sample(now, ops, in, out int64) {
	st.mu.Lock()
	defer st.mu.Unlock()
	elapsed := now - st.lastAt
	if st.lastAt != 0 && elapsed < int64(opsPeriod) {
		return
	}
	vals := [3]int64{ops, in, out}
	for i := range st.series {
		if st.lastAt != 0 {
			st.series[i].add(vals[i], elapsed)
		}
		st.series[i].last = vals[i]
	}
	st.lastAt = now
}

// opsPerSec returns the average command rate over the recorded samples.
func (st *infoState) opsPerSec() int64 { return int64(st.rate(0)) }

// kbps returns instantaneous_input_kbps (i 1) or instantaneous_output_kbps (i 2).
func (st *infoState) kbps(i int) float64 { return st.rate(i) / 1024 }

func (st *infoState) rate(i int) float64 {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.series[i].mean()
}

// TotalCommands is total_commands_processed: the server's idle check watches it.
func (e *Engine) TotalCommands() int64 { return e.totalCommands() }

// totalCommands is total_commands_processed: every executed call of every (sub)command.
func (e *Engine) totalCommands() int64 {
	var n int64
	for _, s := range table {
		n += s.stats.calls.Load()
		for _, sub := range s.Subs {
			n += sub.stats.calls.Load()
		}
	}
	for i := range e.Group.Shards {
		n += e.data(int32(i)).stats.done.Load()
	}
	_, _, done := e.readerTotals()
	return n + done
}

// memStats are the Go runtime's memory figures mapped onto Redis's INFO memory fields.
type memStats struct {
	dataset  uint64 // live and not yet swept heap objects
	overhead uint64 // runtime metadata, stacks and other memory that holds no data
	used     uint64 // dataset + overhead: used_memory
	active   uint64 // used plus the free space of heap spans in use: allocator_active
	resident uint64 // mapped and not released to the OS: allocator_resident and rss
}

var memMetricNames = []string{
	"/memory/classes/heap/objects:bytes",
	"/memory/classes/heap/unused:bytes",
	"/memory/classes/total:bytes",
	"/memory/classes/heap/released:bytes",
	"/memory/classes/heap/stacks:bytes",
	"/memory/classes/os-stacks:bytes",
	"/memory/classes/metadata/other:bytes",
	"/memory/classes/other:bytes",
}

// readMem reads the runtime's memory classes: cheap, no stop-the-world (unlike ReadMemStats).
func readMem() memStats {
	s := make([]metrics.Sample, len(memMetricNames))
	for i, n := range memMetricNames {
		s[i].Name = n
	}
	metrics.Read(s)
	v := func(i int) uint64 {
		if s[i].Value.Kind() == metrics.KindUint64 {
			return s[i].Value.Uint64()
		}
		return 0
	}
	m := memStats{dataset: v(0), overhead: v(4) + v(5) + v(6) + v(7)}
	m.used = m.dataset + m.overhead
	m.active = m.used + v(1)
	m.resident = v(2) - v(3)
	return m
}

// cpuTimes returns the user and system CPU seconds of the process and of its children.
func cpuTimes() (user, sys, childUser, childSys float64) {
	var self, children syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &self)
	syscall.Getrusage(syscall.RUSAGE_CHILDREN, &children)
	sec := func(t syscall.Timeval) float64 { return float64(t.Sec) + float64(t.Usec)/1e6 }
	return sec(self.Utime), sec(self.Stime), sec(children.Utime), sec(children.Stime)
}

// host is what INFO reports about the machine; read once when the program starts, so that
// INFO does no I/O while it holds the shards.
var hostFacts = readHostFacts()

type hostInfo struct {
	os          string
	executable  string
	totalMemory uint64
	multiplexer string
}

func readHostFacts() hostInfo {
	h := hostInfo{os: runtime.GOOS, multiplexer: "epoll"}
	if runtime.GOOS != "linux" {
		h.multiplexer = "kqueue"
	}
	names := map[string]string{"linux": "Linux", "darwin": "Darwin", "freebsd": "FreeBSD"}
	if n, ok := names[runtime.GOOS]; ok {
		h.os = n
	}
	if rel, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		h.os += " " + string(bytes.TrimSpace(rel))
	}
	machines := map[string]string{"amd64": "x86_64", "arm64": "aarch64", "386": "i686"}
	arch := runtime.GOARCH
	if m, ok := machines[arch]; ok {
		arch = m
	}
	h.os += " " + arch
	h.executable, _ = os.Executable()
	h.totalMemory = memTotal()
	return h
}

// memTotal reads MemTotal from /proc/meminfo (0 where there is none).
func memTotal() uint64 {
	data, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0
	}
	for _, line := range bytes.Split(data, []byte("\n")) {
		rest, ok := bytes.CutPrefix(line, []byte("MemTotal:"))
		if !ok {
			continue
		}
		kb, _ := strconv.ParseUint(string(bytes.TrimSuffix(bytes.TrimSpace(rest), []byte(" kB"))), 10, 64)
		return kb * 1024
	}
	return 0
}

// bytesToHuman formats n like Redis's INFO *_human fields.
func bytesToHuman(n uint64) string {
	units := []string{"K", "M", "G", "T", "P"}
	if n < 1024 {
		return strconv.FormatUint(n, 10) + "B"
	}
	d := float64(n)
	for _, u := range units {
		d /= 1024
		if d < 1024 || u == "P" {
			return strconv.FormatFloat(d, 'f', 2, 64) + u
		}
	}
	return ""
}
