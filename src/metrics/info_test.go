package metrics_test

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hotkv/hotkv/src/metrics"
)

// TestInfoFieldsMatchInfo: on a server at rest, each INFO-derived metric equals the INFO field it
// names, after a load that moves them: hits and misses, errors, expiry, and eviction under a
// small maxmemory (allkeys-lru).
func TestInfoFieldsMatchInfo(t *testing.T) {
	s, url := startWithMetrics(t)
	c := dial(t, s)
	c.pipeline("SET a 1", "GET a", "GET nothere", "LPUSH a x", "SUBSCRIBE ignored")
	c = dial(t, s) // the subscriber stays subscribed: pubsub_channels 1
	c.pipeline("CONFIG SET maxmemory-policy allkeys-lru", "CONFIG SET maxmemory 8mb")
	value512 := strings.Repeat("v", 512)
	for batch := range 100 {
		cmds := make([]string, 200)
		for i := range cmds {
			cmds[i] = fmt.Sprintf("SET big:%d:%d %s", batch, i, value512)
		}
		c.pipeline(cmds...)
	}
	// Eviction ends here (INFO and the scrape are read at two moments, and a cron eviction between
	// them made evicted_keys differ by one), and the key to expire is written after it (allkeys-lru
	// sometimes evicted it first, leaving expired_keys 0).
	c.pipeline("CONFIG SET maxmemory 0", "PSETEX gone 1 v")
	time.Sleep(5 * time.Millisecond)
	c.pipeline("GET gone") // expires the key: expired_keys 1
	fields := c.info("everything")
	fams := scrape(t, url)
	stable := map[string]bool{"maxclients": true, "clients_in_timeout_table": true, "maxmemory": true,
		"loading": true, "rdb_changes_since_last_save": true, "rdb_bgsave_in_progress": true,
		"rdb_last_save_time": true, "rdb_last_bgsave_status": true, "rdb_last_bgsave_time_sec": true,
		"rdb_saves": true, "aof_enabled": true, "aof_rewrite_in_progress": true,
		"aof_last_bgrewrite_status": true, "aof_last_write_status": true, "aof_rewrites": true,
		"total_connections_received": true, "rejected_connections": true, "total_error_replies": true,
		"expired_keys": true, "evicted_keys": true, "evicted_clients": true, "keyspace_hits": true,
		"keyspace_misses": true, "pubsub_channels": true, "pubsub_patterns": true}
	for _, im := range metrics.InfoTable() {
		if !stable[im.Field] {
			continue
		}
		delete(stable, im.Field)
		want, ok := fields[im.Field]
		if !ok {
			t.Errorf("INFO has no %s", im.Field)
			continue
		}
		w, err := strconv.ParseFloat(want, 64)
		if err != nil { // a status field
			w = 0
			if want == "ok" {
				w = 1
			}
		}
		got, ok := value(fams, im.Metric)
		if !ok || got != w {
			t.Errorf("%s = %v (present %v), INFO %s:%s", im.Metric, got, ok, im.Field, want)
		}
	}
	for f := range stable {
		t.Errorf("%s is not exported", f)
	}
	if ev, _ := value(fams, "hotkv_evicted_keys_total"); ev == 0 {
		t.Error("10 MB written under maxmemory 8mb evicted nothing")
	}
	if ex, _ := value(fams, "hotkv_expired_keys_total"); ex != 1 {
		t.Errorf("expired keys %v, want 1", ex)
	}
}
