// Package metrics is HotKV's Prometheus endpoint: a collector that reads the command engine's
// own counters at scrape time (so serving metrics costs the hot path nothing), the Go runtime
// and process collectors, and the HTTP listener that serves them on /metrics. It is the only
// package that uses github.com/prometheus/client_golang.
//
// Every value is read at one instant by command.Engine.ReadMetrics, which holds every shard as
// INFO does; the scalar metrics are INFO's own fields (infoMetrics), so they mean what INFO's
// mean as the sections that print them change.
package metrics

import (
	"strconv"
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hotkv/hotkv/src/command"
)

// Source is what the collector reads: a snapshot filled at one instant (Engine.ReadMetrics in
// the server, a fake in tests).
type Source struct {
	Read func(m *command.MetricsSnapshot)
}

// Collector is a prometheus.Collector over a Source. Scrapes are serialized: each holds every
// shard while it reads, and two at once would only queue behind each other.
type Collector struct {
	src  Source
	mu   sync.Mutex
	snap command.MetricsSnapshot
}

// NewCollector returns a collector over src.
func NewCollector(src Source) *Collector { return &Collector{src: src} }

func desc(name, help string, labels ...string) *prometheus.Desc {
	return prometheus.NewDesc(name, help, labels, nil)
}

var (
	commandsDesc     = desc("hotkv_commands_total", "Calls of each command (INFO commandstats calls).", "cmd")
	commandErrsDesc  = desc("hotkv_command_errors_total", "Calls of each command that failed (kind=\"failed\": an error reply) or were rejected before running (kind=\"rejected\").", "cmd", "kind")
	commandSecsDesc  = desc("hotkv_command_seconds_total", "Time spent running each command (INFO commandstats usec: timed per call while latency-tracking is on, else one batch in 32).", "cmd")
	errorsDesc       = desc("hotkv_errors_total", "Error replies by their first word (INFO errorstats).", "prefix")
	clientsDesc      = desc("hotkv_connected_clients", "Client connections open (INFO connected_clients).")
	blockedDesc      = desc("hotkv_blocked_clients", "Clients blocked in a blocking command (INFO blocked_clients).")
	dbKeysDesc       = desc("hotkv_db_keys", "Keys in each non-empty database (INFO keyspace keys).", "db")
	dbExpiresDesc    = desc("hotkv_db_expiring_keys", "Keys with an expiry in each non-empty database (INFO keyspace expires).", "db")
	shardCmdsDesc    = desc("hotkv_shard_commands_total", "Commands run by each shard's executor.", "shard")
	shardBusyDesc    = desc("hotkv_shard_busy_seconds_total", "Time each shard's executor spent running commands (commandstats' time of the commands it ran).", "shard")
	shardWorkDesc    = desc("hotkv_shard_work_items_total", "Work items (one batch's commands for one shard) run by each shard.", "shard")
	shardQueueDesc   = desc("hotkv_shard_queue_depth", "Work items waiting in or running from each shard's mailbox when the scrape began.", "shard")
	shardWaitersDesc = desc("hotkv_shard_token_waiters", "Goroutines waiting for each shard's token when the scrape began.", "shard")
	shardMemDesc     = desc("hotkv_shard_memory_used_bytes", "Each shard's part of used memory: what its keys and values account for.", "shard")
	buildDesc        = desc("hotkv_build_info", "Always 1: the HotKV version and the Redis version it is compatible with.", "version", "redis_version")
)

// Describe sends the descriptors of the metrics the collector always knows of; the INFO-derived
// ones are described too, so the registry checks them all for consistency.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{commandsDesc, commandErrsDesc, commandSecsDesc, errorsDesc,
		clientsDesc, blockedDesc, dbKeysDesc, dbExpiresDesc, shardCmdsDesc, shardBusyDesc,
		shardWorkDesc, shardQueueDesc, shardWaitersDesc, shardMemDesc, buildDesc} {
		ch <- d
	}
	for i := range infoMetrics {
		ch <- infoMetrics[i].desc
	}
	ch <- latencyDesc
}

// Collect reads a snapshot and sends it as constant metrics.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	defer c.mu.Unlock()
	m := &c.snap
	c.src.Read(m)
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	counter := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, v, labels...)
	}
	gauge(buildDesc, 1, command.HotKVVersion, command.RedisVersion)
	for _, cm := range m.Commands {
		counter(commandsDesc, float64(cm.Calls), cm.Name)
		counter(commandErrsDesc, float64(cm.Failed), cm.Name, "failed")
		counter(commandErrsDesc, float64(cm.Rejected), cm.Name, "rejected")
		counter(commandSecsDesc, float64(cm.Nanos)/1e9, cm.Name)
	}
	for _, e := range m.Errors {
		counter(errorsDesc, float64(e.Count), e.Code)
	}
	gauge(clientsDesc, float64(m.Clients))
	gauge(blockedDesc, float64(m.BlockedClients))
	for _, db := range m.DBs {
		name := strconv.Itoa(db.DB)
		gauge(dbKeysDesc, float64(db.Keys), name)
		gauge(dbExpiresDesc, float64(db.Expires), name)
	}
	for i, sh := range m.Shards {
		id := strconv.Itoa(i)
		counter(shardCmdsDesc, float64(sh.Commands), id)
		counter(shardBusyDesc, float64(sh.BusyNanos)/1e9, id)
		counter(shardWorkDesc, float64(sh.WorkItems), id)
		gauge(shardQueueDesc, float64(sh.QueueLen), id)
		gauge(shardWaitersDesc, float64(sh.Waiters), id)
		gauge(shardMemDesc, float64(sh.UsedBytes), id)
	}
	collectInfo(ch, m.Info)
	collectLatency(ch, m.Commands)
}
