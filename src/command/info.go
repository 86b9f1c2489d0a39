package command

import (
	"hash/fnv"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/hotkv/hotkv/ds/keyspace"
	"github.com/hotkv/hotkv/src/pubsub"
)

// INFO runs with every shard held (ScopeAll) so the keyspace section reads all databases at one
// instant. Its handler is installed by init: it reads the command table (commandstats), which
// is built from this very list, and Go rejects that initialization cycle.
var infoCommands = []*Spec{
	{Name: "info", Arity: -1, Flags: Loading | Stale, Scope: ScopeAll},
}

func init() { infoCommands[0].Run = infoCmd }

// HotKVVersion is reported as hotkv_version in INFO server.
var HotKVVersion = "0.1.0"

// infoSection is one INFO section, in Redis 7.0's order.
type infoSection struct {
	name  string // lower case, as INFO's argument names it
	title string
	dflt  bool // part of INFO with no argument and of "default"
	// hookOwned sections are the server's (persistence, replication): when Hooks.Info writes
	// their fields, the command layer's placeholders are left out.
	hookOwned bool
	gen       func(w *infoWriter, c *Ctx)
}

var infoSections = []infoSection{
	{name: "server", title: "Server", dflt: true, gen: infoServer},
	{name: "clients", title: "Clients", dflt: true, gen: infoClients},
	{name: "memory", title: "Memory", dflt: true, gen: infoMemory},
	{name: "persistence", title: "Persistence", dflt: true, hookOwned: true, gen: infoPersistence},
	{name: "stats", title: "Stats", dflt: true, gen: infoStats},
	{name: "replication", title: "Replication", dflt: true, hookOwned: true, gen: infoReplication},
	{name: "cpu", title: "CPU", dflt: true, gen: infoCPU},
	{name: "modules", title: "Modules", dflt: true, gen: func(*infoWriter, *Ctx) {}},
	{name: "commandstats", title: "Commandstats", gen: infoCommandStats},
	{name: "errorstats", title: "Errorstats", dflt: true, gen: infoErrorStats},
	{name: "latencystats", title: "Latencystats", gen: infoLatencyStats}, // stats_info.go
	{name: "cluster", title: "Cluster", dflt: true, gen: infoCluster},
	{name: "keyspace", title: "Keyspace", dflt: true, gen: infoKeyspace},
}

// INFO [section [section ...]]
func infoCmd(c *Ctx) {
	want := selectSections(c.Args[1:])
	c.E.sampleMetrics(c.Now)
	w := &infoWriter{}
	n := 0
	for i := range infoSections {
		if !want[i] {
			continue
		}
		if n > 0 {
			w.b = append(w.b, "\r\n"...)
		}
		n++
		s := &infoSections[i]
		w.b = append(append(append(w.b, "# "...), s.title...), "\r\n"...)
		c.E.genSection(w, c, s)
	}
	c.Verbatim(w.b)
}

// selectSections maps INFO's arguments to the sections to print; unknown names select nothing,
// as in Redis.
func selectSections(args [][]byte) []bool {
	want := make([]bool, len(infoSections))
	if len(args) == 0 {
		args = [][]byte{[]byte("default")}
	}
	for _, a := range args {
		name := strings.ToLower(string(a))
		for i, s := range infoSections {
			switch name {
			case "all", "everything":
				want[i] = true
			case "default":
				want[i] = want[i] || s.dflt
			case s.name:
				want[i] = true
			}
		}
	}
	return want
}

// genSection writes one section's fields, then lets the server append the fields it owns.
func (e *Engine) genSection(w *infoWriter, c *Ctx, s *infoSection) {
	if e.Hooks.Info == nil {
		s.gen(w, c)
		return
	}
	if s.hookOwned {
		n := len(w.b)
		if w.b = e.Hooks.Info(s.name, w.b); len(w.b) > n {
			return
		}
	}
	s.gen(w, c)
	if !s.hookOwned {
		w.b = e.Hooks.Info(s.name, w.b)
	}
}

// infoWriter appends "field:value\r\n" lines.
type infoWriter struct{ b []byte }

func (w *infoWriter) str(k, v string) {
	w.b = append(append(append(append(w.b, k...), ':'), v...), "\r\n"...)
}

func (w *infoWriter) int(k string, v int64) {
	w.b = append(append(w.b, k...), ':')
	w.b = append(strconv.AppendInt(w.b, v, 10), "\r\n"...)
}

func (w *infoWriter) uint(k string, v uint64) {
	w.b = append(append(w.b, k...), ':')
	w.b = append(strconv.AppendUint(w.b, v, 10), "\r\n"...)
}

func (w *infoWriter) float(k string, v float64, prec int) {
	w.b = append(append(w.b, k...), ':')
	w.b = append(strconv.AppendFloat(w.b, v, 'f', prec, 64), "\r\n"...)
}

// zeros writes fields whose value HotKV does not track or that stay 0 in its design.
func (w *infoWriter) zeros(keys ...string) {
	for _, k := range keys {
		w.int(k, 0)
	}
}

// configValue returns a configuration parameter's value, or def without a store.
func (e *Engine) configValue(name, def string) string {
	if e.Config == nil {
		return def
	}
	if kv := e.Config.Get(name); len(kv) == 1 {
		return kv[0][1]
	}
	return def
}

func (e *Engine) configInt(name string, def int64) int64 {
	n, err := strconv.ParseInt(e.configValue(name, ""), 10, 64)
	if err != nil {
		return def
	}
	return n
}

var infoBuildID = func() string {
	h := fnv.New64a()
	h.Write([]byte(HotKVVersion))
	return strconv.FormatUint(h.Sum64(), 16)
}()

func infoServer(w *infoWriter, c *Ctx) {
	e := c.E
	runID, _ := e.info.ids()
	now := time.Now()
	uptime := int64(now.Sub(e.started) / time.Second)
	hz := e.configInt("hz", 10)
	w.str("redis_version", RedisVersion)
	w.str("redis_git_sha1", "00000000")
	w.int("redis_git_dirty", 0)
	w.str("redis_build_id", infoBuildID)
	w.str("redis_mode", "standalone")
	w.str("os", hostFacts.os)
	w.int("arch_bits", strconv.IntSize)
	w.str("monotonic_clock", "POSIX clock_gettime")
	w.str("multiplexing_api", hostFacts.multiplexer)
	w.str("atomicvar_api", "sync/atomic")
	w.str("gcc_version", "0.0.0")
	w.int("process_id", int64(os.Getpid()))
	w.str("process_supervised", "no")
	w.str("run_id", runID)
	w.int("tcp_port", e.configInt("port", 0))
	w.int("server_time_usec", now.UnixMicro())
	w.int("uptime_in_seconds", uptime)
	w.int("uptime_in_days", uptime/86400)
	w.int("hz", hz)
	w.int("configured_hz", hz)
	w.int("lru_clock", now.Unix()&lruClockMax)
	w.str("executable", hostFacts.executable)
	w.str("config_file", "")
	w.int("io_threads_active", 0)
	w.str("hotkv_version", HotKVVersion)
}

func infoClients(w *infoWriter, c *Ctx) {
	w.int("connected_clients", int64(c.E.ClientCount()))
	w.int("cluster_connections", 0)
	w.int("maxclients", int64(c.E.Settings().MaxClients))
	in, out := c.E.ClientBufferPeaks() // client_limits.go
	w.int("client_recent_max_input_buffer", in)
	w.int("client_recent_max_output_buffer", out)
	blocked, timed := c.E.blockedCounts()
	w.int("blocked_clients", blocked)
	w.int("tracking_clients", int64(c.E.track.clients.Load()))
	w.int("clients_in_timeout_table", timed)
}

func infoMemory(w *infoWriter, c *Ctx) {
	// used_memory is HotKV's own count (evict.go): the keyspaces' plus the overhead; the
	// allocator_* fields are the Go heap's.
	f := c.E.memFigures()
	m := f.rt
	used, peak, dataset := uint64(f.used), uint64(f.peak), uint64(f.dataset)
	rss := uint64(max(f.rss, 0))
	ratio := func(a, b uint64) float64 {
		if b == 0 {
			return 0
		}
		return float64(a) / float64(b)
	}
	sized := func(k string, n uint64) {
		w.uint(k, n)
		w.str(k+"_human", bytesToHuman(n))
	}
	sized("used_memory", used)
	sized("used_memory_rss", rss)
	sized("used_memory_peak", peak)
	w.str("used_memory_peak_perc", strconv.FormatFloat(100*ratio(used, peak), 'f', 2, 64)+"%")
	w.uint("used_memory_overhead", uint64(f.overhead))
	w.int("used_memory_startup", memFixedOverhead)
	w.uint("used_memory_dataset", dataset)
	w.str("used_memory_dataset_perc", strconv.FormatFloat(100*ratio(dataset, used-min(used, memFixedOverhead)), 'f', 2, 64)+"%")
	w.uint("allocator_allocated", m.used)
	w.uint("allocator_active", m.active)
	w.uint("allocator_resident", m.resident)
	sized("total_system_memory", hostFacts.totalMemory)
	// The Lua engine's memory is the Go heap's (gopher-lua has no allocator of its own): its
	// fields stay zero; the counts are the engine's (scripting.go).
	scripts, libs, fns := c.E.scriptCounts()
	w.int("used_memory_lua", 0)
	w.int("used_memory_vm_eval", 0)
	w.str("used_memory_lua_human", "0B")
	w.zeros("used_memory_scripts_eval")
	w.int("number_of_cached_scripts", int64(scripts))
	w.int("number_of_functions", int64(fns))
	w.int("number_of_libraries", int64(libs))
	w.zeros("used_memory_vm_functions")
	sized("used_memory_vm_total", 0)
	w.zeros("used_memory_functions")
	sized("used_memory_scripts", 0)
	sized("maxmemory", uint64(c.E.mem.limit.Load()))
	w.str("maxmemory_policy", c.E.configValue("maxmemory-policy", "noeviction"))
	w.float("allocator_frag_ratio", ratio(m.active, m.used), 2)
	w.uint("allocator_frag_bytes", m.active-min(m.used, m.active))
	w.float("allocator_rss_ratio", ratio(m.resident, m.active), 2)
	w.uint("allocator_rss_bytes", m.resident-min(m.active, m.resident))
	w.float("rss_overhead_ratio", ratio(rss, m.resident), 2)
	w.int("rss_overhead_bytes", int64(rss)-int64(m.resident))
	w.float("mem_fragmentation_ratio", ratio(rss, used), 2)
	w.int("mem_fragmentation_bytes", int64(rss)-int64(used))
	w.zeros("mem_not_counted_for_evict", "mem_replication_backlog", "mem_total_replication_buffers",
		"mem_clients_slaves")
	w.int("mem_clients_normal", f.clients)
	w.zeros("mem_cluster_links", "mem_aof_buffer")
	w.str("mem_allocator", "go")
	w.zeros("active_defrag_running")
	pending, freed := c.E.LazyfreeStats() // lazyfree.go
	w.int("lazyfree_pending_objects", pending)
	w.int("lazyfreed_objects", freed)
}

// infoPersistence is the section of a server that has not saved or loaded anything; the
// server's hook replaces it once persistence exists.
func infoPersistence(w *infoWriter, c *Ctx) {
	w.zeros("loading", "async_loading", "current_cow_peak", "current_cow_size", "current_cow_size_age")
	w.str("current_fork_perc", "0.00")
	w.zeros("current_save_keys_processed", "current_save_keys_total")
	w.int("rdb_changes_since_last_save", c.E.dirtyLocked())
	w.zeros("rdb_bgsave_in_progress")
	w.int("rdb_last_save_time", c.E.started.Unix())
	w.str("rdb_last_bgsave_status", "ok")
	w.int("rdb_last_bgsave_time_sec", -1)
	w.int("rdb_current_bgsave_time_sec", -1)
	w.zeros("rdb_saves", "rdb_last_cow_size", "rdb_last_load_keys_expired", "rdb_last_load_keys_loaded",
		"aof_enabled", "aof_rewrite_in_progress", "aof_rewrite_scheduled")
	w.int("aof_last_rewrite_time_sec", -1)
	w.int("aof_current_rewrite_time_sec", -1)
	w.str("aof_last_bgrewrite_status", "ok")
	w.zeros("aof_rewrites", "aof_rewrites_consecutive_failures")
	w.str("aof_last_write_status", "ok")
	w.zeros("aof_last_cow_size", "module_fork_in_progress", "module_fork_last_cow_size")
}

func infoStats(w *infoWriter, c *Ctx) {
	st := &c.E.stats
	w.int("total_connections_received", st.connections.Load())
	w.int("total_commands_processed", c.E.totalCommands())
	w.int("instantaneous_ops_per_sec", c.E.info.opsPerSec())
	in, out := c.E.NetBytes() // stats_net.go
	w.int("total_net_input_bytes", in)
	w.int("total_net_output_bytes", out)
	w.zeros("total_net_repl_input_bytes", "total_net_repl_output_bytes") // no replication yet
	w.str("instantaneous_input_kbps", strconv.FormatFloat(c.E.info.kbps(1), 'f', 2, 64))
	w.str("instantaneous_output_kbps", strconv.FormatFloat(c.E.info.kbps(2), 'f', 2, 64))
	for _, k := range []string{"instantaneous_input_repl_kbps", "instantaneous_output_repl_kbps"} {
		w.str(k, "0.00")
	}
	w.int("rejected_connections", st.rejectedConns.Load())
	if h := c.E.Hooks.Repl; h != nil { // src/server/repl_info.go
		full, ok, failed := h.SyncStats()
		w.int("sync_full", full)
		w.int("sync_partial_ok", ok)
		w.int("sync_partial_err", failed)
	} else {
		w.zeros("sync_full", "sync_partial_ok", "sync_partial_err")
	}
	w.int("expired_keys", st.expiredKeys.Load())
	w.str("expired_stale_perc", "0.00")
	w.zeros("expired_time_cap_reached_count")
	w.int("expire_cycle_cpu_milliseconds", c.E.lat.expireCycleNs.Load()/1e6) // expire.go
	w.int("evicted_keys", c.E.mem.evicted.Load())
	w.int("evicted_clients", c.E.EvictedClients()) // client_limits.go
	total, current := c.E.evictionExceeded(c.Now)  // evict.go
	w.int("total_eviction_exceeded_time", total)
	w.int("current_eviction_exceeded_time", current)
	hits, misses := c.E.keyspaceHits()
	w.int("keyspace_hits", hits)
	w.int("keyspace_misses", misses)
	w.int("pubsub_channels", int64(c.E.PubSub.Len(pubsub.Channel)))
	w.int("pubsub_patterns", int64(c.E.PubSub.Len(pubsub.Pattern)))
	w.int("pubsubshard_channels", int64(c.E.PubSub.Len(pubsub.ShardChannel)))
	w.zeros("latest_fork_usec", "total_forks")
	w.int("migrate_cached_sockets", int64(migrateSockets.len()))
	w.zeros("slave_expires_tracked_keys", "active_defrag_hits",
		"active_defrag_misses", "active_defrag_key_hits", "active_defrag_key_misses",
		"total_active_defrag_time", "current_active_defrag_time")
	keys, items, prefixes := c.E.trackingTotals() // stats_info.go
	w.int("tracking_total_keys", keys)
	w.int("tracking_total_items", items)
	w.int("tracking_total_prefixes", prefixes)
	w.zeros("unexpected_error_replies")
	w.int("total_error_replies", st.errorReplies.Load())
	w.zeros("dump_payload_sanitizations", "total_reads_processed", "total_writes_processed",
		"io_threaded_reads_processed", "io_threaded_writes_processed", "reply_buffer_shrinks",
		"reply_buffer_expands")
	infoCompression(w, c)
}

// infoReplication describes a master without replicas; the server's hook replaces it once
// replication exists.
func infoReplication(w *infoWriter, c *Ctx) {
	if h := c.E.Hooks.Repl; h != nil { // the server's replication (src/server/repl.go)
		w.b = h.Info(w.b)
		return
	}
	_, replID := c.E.info.ids()
	w.str("role", "master")
	w.int("connected_slaves", 0)
	w.str("master_failover_state", "no-failover")
	w.str("master_replid", replID)
	w.str("master_replid2", strings.Repeat("0", 40))
	w.int("master_repl_offset", 0)
	w.int("second_repl_offset", -1)
	w.int("repl_backlog_active", 0)
	w.int("repl_backlog_size", 1<<20)
	w.zeros("repl_backlog_first_byte_offset", "repl_backlog_histlen")
}

// infoCPU reports the process's CPU time; HotKV has no main thread, so the main-thread fields
// repeat the process's.
func infoCPU(w *infoWriter, _ *Ctx) {
	user, sys, childUser, childSys := cpuTimes()
	w.float("used_cpu_sys", sys, 6)
	w.float("used_cpu_user", user, 6)
	w.float("used_cpu_sys_children", childSys, 6)
	w.float("used_cpu_user_children", childUser, 6)
	w.float("used_cpu_sys_main_thread", sys, 6)
	w.float("used_cpu_user_main_thread", user, 6)
}

// infoCommandStats lists every command called, rejected or failed at least once, by name
// (Redis's order is its hash table's; sorting keeps the output stable).
func infoCommandStats(w *infoWriter, c *Ctx) {
	var specs []*Spec
	for _, s := range table {
		specs = append(specs, s)
		for _, sub := range s.Subs {
			specs = append(specs, sub)
		}
	}
	slices.SortFunc(specs, func(a, b *Spec) int { return strings.Compare(a.Name, b.Name) })
	for _, s := range specs {
		calls, nsec, rejected, failed := c.E.cmdStats(s)
		usec := nsec / 1000
		if calls == 0 && rejected == 0 && failed == 0 {
			continue
		}
		perCall := 0.0
		if calls > 0 {
			perCall = float64(usec) / float64(calls)
		}
		w.b = append(w.b, "cmdstat_"...)
		w.b = append(w.b, s.Name...)
		w.b = append(w.b, ":calls="...)
		w.b = strconv.AppendInt(w.b, calls, 10)
		w.b = append(w.b, ",usec="...)
		w.b = strconv.AppendInt(w.b, usec, 10)
		w.b = append(w.b, ",usec_per_call="...)
		w.b = strconv.AppendFloat(w.b, perCall, 'f', 2, 64)
		w.b = append(w.b, ",rejected_calls="...)
		w.b = strconv.AppendInt(w.b, rejected, 10)
		w.b = append(w.b, ",failed_calls="...)
		w.b = append(strconv.AppendInt(w.b, failed, 10), "\r\n"...)
	}
}

// infoErrorStats lists error replies by code, sorted as Redis's radix tree keeps them.
func infoErrorStats(w *infoWriter, c *Ctx) {
	type kind struct {
		code string
		n    int64
	}
	var kinds []kind
	c.E.stats.kinds().Range(func(code string, n *atomic.Int64) bool {
		kinds = append(kinds, kind{code, n.Load()})
		return true
	})
	slices.SortFunc(kinds, func(a, b kind) int { return strings.Compare(a.code, b.code) })
	for _, k := range kinds {
		w.b = append(append(append(w.b, "errorstat_"...), k.code...), ":count="...)
		w.b = append(strconv.AppendInt(w.b, k.n, 10), "\r\n"...)
	}
}

// infoKeyspace lists the non-empty databases. avg_ttl is estimated, as in Redis, from a sample
// of each shard's keys with an expiry.
func infoKeyspace(w *infoWriter, c *Ctx) {
	for db := range c.E.dbCount {
		var keys, expires, ttlSum, ttlN int64
		c.E.eachKeyspace(db, func(ks *keyspace.Keyspace) {
			keys += int64(ks.Len())
			expires += int64(ks.Volatile())
			if ks.Volatile() > 0 {
				sum, n := sampleTTL(ks, c.Now, c.E.rand())
				ttlSum, ttlN = addTTL(ttlSum, sum), ttlN+n
			}
		})
		if keys == 0 {
			continue
		}
		avg := int64(0)
		if ttlN > 0 {
			avg = ttlSum / ttlN
		}
		w.b = append(w.b, "db"...)
		w.b = strconv.AppendInt(w.b, int64(db), 10)
		w.b = append(w.b, ":keys="...)
		w.b = strconv.AppendInt(w.b, keys, 10)
		w.b = append(w.b, ",expires="...)
		w.b = strconv.AppendInt(w.b, expires, 10)
		w.b = append(w.b, ",avg_ttl="...)
		w.b = append(strconv.AppendInt(w.b, avg, 10), "\r\n"...)
	}
}

// ttlSampleBuckets bounds the work avg_ttl does per shard and database.
const ttlSampleBuckets = 16

// sampleTTL sums the remaining TTLs (ms) of the live volatile keys in a few buckets from a
// random cursor. A key set past 2262 counts with its exact TTL, so the sum saturates (addTTL).
func sampleTTL(ks *keyspace.Keyspace, now int64, cursor uint64) (sum, n int64) {
	nowMs := now / int64(time.Millisecond)
	for range ttlSampleBuckets {
		cursor = ks.Scan(cursor, func(e *keyspace.Entry) {
			if at := e.ExpireAt(); at > now {
				sum = addTTL(sum, ks.ExpireMs(e)-nowMs)
				n++
			}
		})
		if cursor == 0 {
			break
		}
	}
	return sum, n
}

// addTTL adds TTLs in milliseconds, saturating at math.MaxInt64: keys can expire up to int64
// milliseconds away, and Redis's own sum would overflow there.
func addTTL(a, b int64) int64 {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}
