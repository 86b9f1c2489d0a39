package command

import (
	"bytes"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/hotkv/hotkv/ds/keyspace"
)

// Read-only accessors for the Prometheus endpoint (src/metrics). A scrape reads everything at one
// instant holding every shard's token, as INFO does: the per-shard counters are plain fields of
// their token holder, so reading them costs the hot path nothing, and a scrape costs what an
// INFO costs.

// MetricsSnapshot is what one scrape reads. ReadMetrics refills it, reusing its slices, so a
// collector that keeps one allocates little per scrape.
type MetricsSnapshot struct {
	// Commands are the (sub)commands called, rejected or failed at least once, by name.
	Commands []CommandMetric
	// Errors are INFO errorstats: error replies by their first word, sorted.
	Errors []ErrorMetric
	// DBs are the non-empty databases.
	DBs []DBMetric
	// Shards are every shard's own counters, by shard id.
	Shards []ShardMetric
	// Info holds the fields of INFO's clients, memory, persistence and stats sections, exactly as
	// INFO prints them (so the endpoint means what INFO means as those sections change).
	Info []InfoField
	// Clients and BlockedClients are INFO's connected_clients and blocked_clients.
	Clients, BlockedClients int64
	info                    []byte
}

// CommandMetric is one command's INFO commandstats line.
type CommandMetric struct {
	Name                    string // lower case; a subcommand is "container|sub" as in INFO
	Calls, Rejected, Failed int64
	Nanos                   int64 // time spent running it (commandstats' usec, in ns)
	// Timed calls and their latency distribution (CommandLatency), read after the shards are
	// let go: merging a histogram costs about 80 µs (32 shards), too long to hold every shard
	// for each called command. Under load Timed may differ from Calls by the calls run between.
	Timed   uint64
	Latency []LatencyBucket
}

// ErrorMetric is one INFO errorstats line.
type ErrorMetric struct {
	Code  string
	Count int64
}

// DBMetric is one database's INFO keyspace counts.
type DBMetric struct {
	DB            int
	Keys, Expires int64
}

// ShardMetric is one shard's executor counters.
type ShardMetric struct {
	// Commands run on the shard, and the time spent running them (commandstats' time: timed per
	// call while latency tracking is on, else one work item in timeSample, charged timeSample
	// times over).
	Commands, BusyNanos int64
	// WorkItems run, QueueLen waiting or running when the scrape began, Waiters waiting for the
	// token then.
	WorkItems, QueueLen int64
	Waiters             int64
	// UsedBytes is the shard's part of used_memory: what its keyspaces account for (evict.go).
	UsedBytes int64
}

// InfoField is one "name:value" line of INFO.
type InfoField struct{ Name, Value string }

// metricsSections are the INFO sections whose fields MetricsSnapshot.Info holds.
var metricsSections = []string{"clients", "memory", "persistence", "stats"}

// ReadMetrics fills m at one instant. It holds every shard's token meanwhile, like INFO.
func (e *Engine) ReadMetrics(m *MetricsSnapshot) {
	m.Shards = m.Shards[:0]
	for _, sh := range e.Group.Shards {
		// Before the tokens are taken: holding them queues work behind this very scrape.
		m.Shards = append(m.Shards, ShardMetric{WorkItems: sh.WorkItems(), QueueLen: sh.QueueLen(),
			Waiters: int64(sh.Waiters()), UsedBytes: sh.Data.(*shardData).mem.load()})
	}
	m.Clients = int64(e.ClientCount())
	m.BlockedClients, _ = e.blockedCounts()
	e.readMetricsLocked(m)
	for i := range m.Commands {
		if cm := &m.Commands[i]; cm.Calls > 0 {
			cm.Timed, cm.Latency = e.CommandLatency(cm.Name)
		}
	}
}

// readMetricsLocked reads what the shards' token holders count, holding every token.
func (e *Engine) readMetricsLocked(m *MetricsSnapshot) {
	e.Group.LockAll()
	defer e.Group.UnlockAll()
	e.readCommandMetricsLocked(m)
	e.readShardMetricsLocked(m)
	e.readDBMetricsLocked(m)
	e.readInfoLocked(m)
	m.Errors = m.Errors[:0]
	e.stats.kinds().Range(func(code string, n *atomic.Int64) bool {
		m.Errors = append(m.Errors, ErrorMetric{code, n.Load()})
		return true
	})
	slices.SortFunc(m.Errors, func(a, b ErrorMetric) int { return strings.Compare(a.Code, b.Code) })
}

func (e *Engine) readCommandMetricsLocked(m *MetricsSnapshot) {
	m.Commands = m.Commands[:0]
	add := func(s *Spec) {
		calls, nsec, rejected, failed := e.cmdStats(s)
		if calls == 0 && rejected == 0 && failed == 0 {
			return
		}
		m.Commands = append(m.Commands, CommandMetric{Name: s.Name, Calls: calls, Rejected: rejected,
			Failed: failed, Nanos: nsec})
	}
	for _, s := range table {
		add(s)
		for _, sub := range s.Subs {
			add(sub)
		}
	}
	slices.SortFunc(m.Commands, func(a, b CommandMetric) int { return strings.Compare(a.Name, b.Name) })
}

func (e *Engine) readShardMetricsLocked(m *MetricsSnapshot) {
	for i := range m.Shards {
		st := &e.data(int32(i)).stats
		var busy int64
		for j := range st.cmds {
			busy += st.cmds[j].nsec
		}
		m.Shards[i].Commands, m.Shards[i].BusyNanos = st.done.Load(), busy
	}
}

func (e *Engine) readDBMetricsLocked(m *MetricsSnapshot) {
	m.DBs = m.DBs[:0]
	for db := range e.dbCount {
		var keys, expires int64
		e.eachKeyspace(db, func(ks *keyspace.Keyspace) {
			keys += int64(ks.Len())
			expires += int64(ks.Volatile())
		})
		if keys > 0 {
			m.DBs = append(m.DBs, DBMetric{db, keys, expires})
		}
	}
}

// readInfoLocked runs INFO's generators of metricsSections, the server's hooks included, and
// splits their lines.
func (e *Engine) readInfoLocked(m *MetricsSnapshot) {
	c := &Ctx{E: e, Now: time.Now().UnixNano()}
	w := &infoWriter{b: m.info[:0]}
	for i := range infoSections {
		if slices.Contains(metricsSections, infoSections[i].name) {
			e.genSection(w, c, &infoSections[i])
		}
	}
	m.info = w.b
	m.Info = m.Info[:0]
	for line := range bytes.SplitSeq(w.b, []byte("\r\n")) {
		name, value, ok := bytes.Cut(line, []byte(":"))
		if ok {
			m.Info = append(m.Info, InfoField{string(name), string(value)})
		}
	}
}
