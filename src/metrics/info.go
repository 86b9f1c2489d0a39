package metrics

import (
	"strconv"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hotkv/hotkv/src/command"
)

// infoMetric exports one INFO field. A field INFO does not print (a section without it yet) is
// left out of the scrape rather than reported as 0.
type infoMetric struct {
	field string
	name  string
	desc  *prometheus.Desc
	kind  prometheus.ValueType
	// status fields ("ok"/"err") become 1 for ok, 0 otherwise.
	status bool
}

func infoCounter(field, name, help string) infoMetric {
	return infoMetric{field: field, name: name, desc: desc(name, help), kind: prometheus.CounterValue}
}

func infoGauge(field, name, help string) infoMetric {
	return infoMetric{field: field, name: name, desc: desc(name, help), kind: prometheus.GaugeValue}
}

func infoStatus(field, name, help string) infoMetric {
	return infoMetric{field: field, name: name, desc: desc(name, help), kind: prometheus.GaugeValue, status: true}
}

// infoMetrics are the INFO fields exported, by section.
var infoMetrics = []infoMetric{
	// clients
	infoGauge("maxclients", "hotkv_max_clients", "The maxclients limit (INFO maxclients)."),
	infoGauge("clients_in_timeout_table", "hotkv_clients_in_timeout_table", "Blocked clients with a timeout (INFO clients_in_timeout_table)."),
	// memory
	infoGauge("used_memory", "hotkv_memory_used_bytes", "Memory HotKV counts as used (INFO used_memory)."),
	infoGauge("used_memory_rss", "hotkv_memory_rss_bytes", "Resident memory (INFO used_memory_rss)."),
	infoGauge("used_memory_peak", "hotkv_memory_peak_bytes", "Peak of used memory (INFO used_memory_peak)."),
	infoGauge("used_memory_dataset", "hotkv_memory_dataset_bytes", "Used memory that holds data (INFO used_memory_dataset)."),
	infoGauge("used_memory_overhead", "hotkv_memory_overhead_bytes", "Used memory that holds no data (INFO used_memory_overhead)."),
	infoGauge("maxmemory", "hotkv_memory_max_bytes", "The maxmemory budget, 0 for none (INFO maxmemory)."),
	infoGauge("mem_fragmentation_ratio", "hotkv_memory_fragmentation_ratio", "RSS over used memory (INFO mem_fragmentation_ratio)."),
	// persistence
	infoGauge("loading", "hotkv_loading", "1 while the dataset loads at start-up (INFO loading)."),
	infoGauge("rdb_changes_since_last_save", "hotkv_rdb_changes_since_last_save", "Writes since the last successful save (INFO rdb_changes_since_last_save)."),
	infoGauge("rdb_bgsave_in_progress", "hotkv_rdb_bgsave_in_progress", "1 while a BGSAVE runs (INFO rdb_bgsave_in_progress)."),
	infoGauge("rdb_last_save_time", "hotkv_rdb_last_save_timestamp_seconds", "Unix time of the last successful save (INFO rdb_last_save_time)."),
	infoStatus("rdb_last_bgsave_status", "hotkv_rdb_last_bgsave_ok", "1 if the last BGSAVE succeeded (INFO rdb_last_bgsave_status ok), else 0."),
	infoGauge("rdb_last_bgsave_time_sec", "hotkv_rdb_last_bgsave_duration_seconds", "How long the last BGSAVE took, -1 before the first (INFO rdb_last_bgsave_time_sec)."),
	infoCounter("rdb_saves", "hotkv_rdb_saves_total", "Saves since start-up (INFO rdb_saves)."),
	infoGauge("aof_enabled", "hotkv_aof_enabled", "1 when the append-only file is on (INFO aof_enabled)."),
	infoGauge("aof_rewrite_in_progress", "hotkv_aof_rewrite_in_progress", "1 while an AOF rewrite runs (INFO aof_rewrite_in_progress)."),
	infoStatus("aof_last_bgrewrite_status", "hotkv_aof_last_bgrewrite_ok", "1 if the last AOF rewrite succeeded (INFO aof_last_bgrewrite_status ok), else 0."),
	infoStatus("aof_last_write_status", "hotkv_aof_last_write_ok", "1 if the last AOF write succeeded (INFO aof_last_write_status ok), else 0."),
	infoCounter("aof_rewrites", "hotkv_aof_rewrites_total", "AOF rewrites since start-up (INFO aof_rewrites)."),
	// stats
	infoCounter("total_connections_received", "hotkv_connections_received_total", "Connections accepted (INFO total_connections_received)."),
	infoCounter("rejected_connections", "hotkv_rejected_connections_total", "Connections refused for maxclients (INFO rejected_connections)."),
	infoCounter("total_commands_processed", "hotkv_commands_processed_total", "Commands run, all of them (INFO total_commands_processed)."),
	infoGauge("instantaneous_ops_per_sec", "hotkv_instantaneous_ops_per_second", "Commands per second over the last 1.6 s (INFO instantaneous_ops_per_sec)."),
	infoCounter("total_error_replies", "hotkv_error_replies_total", "Error replies sent (INFO total_error_replies)."),
	infoCounter("expired_keys", "hotkv_expired_keys_total", "Keys deleted because their TTL passed (INFO expired_keys)."),
	infoCounter("evicted_keys", "hotkv_evicted_keys_total", "Keys evicted to stay under maxmemory (INFO evicted_keys)."),
	infoCounter("evicted_clients", "hotkv_evicted_clients_total", "Clients closed by maxmemory-clients (INFO evicted_clients)."),
	infoCounter("keyspace_hits", "hotkv_keyspace_hits_total", "Key lookups that found the key (INFO keyspace_hits)."),
	infoCounter("keyspace_misses", "hotkv_keyspace_misses_total", "Key lookups that found nothing (INFO keyspace_misses)."),
	infoGauge("pubsub_channels", "hotkv_pubsub_channels", "Channels with subscribers (INFO pubsub_channels)."),
	infoGauge("pubsub_patterns", "hotkv_pubsub_patterns", "Patterns with subscribers (INFO pubsub_patterns)."),
}

// infoIndex maps an INFO field to its entry in infoMetrics.
var infoIndex = func() map[string]int {
	m := make(map[string]int, len(infoMetrics))
	for i, im := range infoMetrics {
		m[im.field] = i
	}
	return m
}()

// collectInfo sends the exported fields of an INFO snapshot. A value that is not a number (a
// field whose format changed) is skipped: a scrape never fails for one field.
// A field printed twice is sent once (the registry refuses a repeated series).
func collectInfo(ch chan<- prometheus.Metric, fields []command.InfoField) {
	var seen [64]bool
	for _, f := range fields {
		i, ok := infoIndex[f.Name]
		if !ok || seen[i] {
			continue
		}
		seen[i] = true
		im := &infoMetrics[i]
		var v float64
		if im.status {
			if f.Value == "ok" {
				v = 1
			}
		} else {
			n, err := strconv.ParseFloat(f.Value, 64)
			if err != nil {
				continue
			}
			v = n
		}
		ch <- prometheus.MustNewConstMetric(im.desc, im.kind, v)
	}
}
