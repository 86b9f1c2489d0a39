package command

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/hotkv/hotkv/ds/keyspace"
	"github.com/hotkv/hotkv/ds/strs"
)

// memorySpec is MEMORY: what the keys and the server hold (memsize.go, evict.go).
var memorySpec = (&Spec{Name: "memory", Arity: -2}).sub(
	&Spec{Name: "memory|usage", Arity: -3, Flags: ReadOnly, FirstKey: 2, LastKey: 2, Step: 1, Run: memoryUsage},
	&Spec{Name: "memory|stats", Arity: 2, Scope: ScopeAll, Run: memoryStats},
	&Spec{Name: "memory|doctor", Arity: 2, Scope: ScopeConn, Run: memoryDoctor},
	&Spec{Name: "memory|malloc-stats", Arity: 2, Scope: ScopeConn, Run: memoryMallocStats},
	&Spec{Name: "memory|purge", Arity: 2, Scope: ScopeConn, Run: memoryPurge},
	&Spec{Name: "memory|help", Arity: 2, Flags: Loading | Stale, Scope: ScopeConn, Run: memoryHelp},
)

// MEMORY USAGE key [SAMPLES count]: the key's entry and its value's estimate, sampling count
// elements of a collection (default 5, 0 all). Options are checked before the key is looked up,
// as Redis does.
func memoryUsage(c *Ctx) {
	samples := int64(5)
	for j := 3; j < len(c.Args); j++ {
		if !strs.EqualFold(c.Args[j], "SAMPLES") || j+1 >= len(c.Args) {
			c.Err(ErrSyntax)
			return
		}
		n, ok := ParseInt(c.Args[j+1])
		switch {
		case !ok:
			c.Err(ErrNotInt)
			return
		case n < 0:
			c.Err(ErrSyntax)
			return
		}
		samples = n
		j++
	}
	// Redis finds the key in the table without checking its expiry.
	e := c.KS(c.Args[2]).PeekAny(c.Args[2], keyspace.Hash(c.Args[2]))
	if e == nil {
		c.Null()
		return
	}
	c.Int(keySize(e, int(min(samples, 1<<30))))
}

// memFigures are MEMORY STATS's and MEMORY DOCTOR's numbers.
type memFigures struct {
	used, peak, dataset, overhead, clients, rss int64
	rt                                          memStats
}

func (e *Engine) memFigures() memFigures {
	f := memFigures{dataset: e.dataUsed(), overhead: e.mem.overhead.Load(), rss: e.mem.rss.Load()}
	if f.overhead == 0 {
		f.overhead = e.memOverhead()
	}
	f.used = f.dataset + f.overhead
	f.clients = int64(e.ClientCount()) * memPerClient
	f.rt = readMem()
	if f.rss == 0 {
		f.rss = int64(f.rt.resident)
	}
	f.peak = max(e.notePeak(uint64(f.used)), f.used)
	return f
}

// notePeak raises the recorded peak (INFO's used_memory_peak) to used and returns it.
func (e *Engine) notePeak(used uint64) int64 {
	peak := e.info.peak.Load()
	for used > peak && !e.info.peak.CompareAndSwap(peak, used) {
		peak = e.info.peak.Load()
	}
	return int64(max(peak, used))
}

func ratio(a, b int64) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

// MEMORY STATS: Redis's map of fields, in its order. The allocator's figures are the Go heap's;
// startup.allocated is the fixed overhead counted for the server, clients.normal what its
// clients are charged (evict.go).
func memoryStats(c *Ctx) {
	f := c.E.memFigures()
	type dbInfo struct{ id, keys, volatile int }
	var dbs []dbInfo
	for db := range c.E.dbCount {
		var n, v int
		for i := range c.E.Group.Shards {
			ks := c.E.data(int32(i)).dbs[db]
			n, v = n+ks.Len(), v+ks.Volatile()
		}
		if n > 0 {
			dbs = append(dbs, dbInfo{db, n, v})
		}
	}
	var keys int
	for _, d := range dbs {
		keys += d.keys
	}
	// HotKV's key tag index (ds/tags), counted in used_memory and dataset.bytes: a field of
	// HotKV's own, there only while some key carries a tag, so Redis's reply is unchanged.
	tagBytes := c.E.tagBytes()
	n := 27 + len(dbs)
	if tagBytes > 0 {
		n++
	}
	c.MapLen(n)
	kv := func(k string, v int64) { c.BulkString(k); c.Int(v) }
	kf := func(k string, v float64) { c.BulkString(k); c.Double(v) }
	kv("peak.allocated", f.peak)
	kv("total.allocated", f.used)
	kv("startup.allocated", memFixedOverhead)
	for _, k := range []string{"replication.backlog", "clients.slaves"} {
		kv(k, 0)
	}
	kv("clients.normal", f.clients)
	for _, k := range []string{"cluster.links", "aof.buffer", "lua.caches", "functions.caches"} {
		kv(k, 0)
	}
	for _, d := range dbs {
		c.BulkString(fmt.Sprintf("db.%d", d.id))
		c.MapLen(3)
		// The keyspace's buckets: one pointer a key at the table's load (ds/keyspace).
		kv("overhead.hashtable.main", int64(d.keys)*8)
		kv("overhead.hashtable.expires", 0)
		kv("overhead.hashtable.slot-to-keys", 0)
	}
	kv("overhead.total", f.overhead)
	kv("keys.count", int64(keys))
	perKey := int64(0)
	if keys > 0 {
		perKey = (f.used - memFixedOverhead) / int64(keys)
	}
	kv("keys.bytes-per-key", perKey)
	kv("dataset.bytes", f.dataset)
	if tagBytes > 0 {
		kv("hotkv.tags.bytes", tagBytes)
	}
	kf("dataset.percentage", 100*ratio(f.dataset, f.used-memFixedOverhead))
	kf("peak.percentage", 100*ratio(f.used, f.peak))
	alloc, active, resident := int64(f.rt.used), int64(f.rt.active), int64(f.rt.resident)
	kv("allocator.allocated", alloc)
	kv("allocator.active", active)
	kv("allocator.resident", resident)
	kf("allocator-fragmentation.ratio", ratio(active, alloc))
	kv("allocator-fragmentation.bytes", active-alloc)
	kf("allocator-rss.ratio", ratio(resident, active))
	kv("allocator-rss.bytes", resident-active)
	kf("rss-overhead.ratio", ratio(f.rss, resident))
	kv("rss-overhead.bytes", f.rss-resident)
	kf("fragmentation", ratio(f.rss, f.used))
	kv("fragmentation.bytes", f.rss-f.used)
}

// MEMORY DOCTOR: Redis's report for the cases that apply to HotKV (the allocator's are the Go
// heap's; HotKV has no replicas' buffers yet).
func memoryDoctor(c *Ctx) {
	f := c.E.memFigures()
	c.Verbatim([]byte(doctorReport(f, c.E.ClientCount())))
}

// The texts of Redis 7.0.15's getMemoryDoctorReport.
const (
	doctorFine  = "Hi Sam, I can't find any memory issue in your instance. I can only account for what occurs on this base.\n"
	doctorEmpty = "Hi Sam, this instance is empty or is using very little memory, my issues detector can't be used in these conditions. Please, leave for your mission on Earth and fill it with some data. The new Sam and I will be back to our programming as soon as I finished rebooting.\n"
	doctorHead  = "Sam, I detected a few issues in this Redis instance memory implants:\n\n"
	doctorPeak  = " * Peak memory: In the past this instance used more than 150% the memory that is currently using. The allocator is normally not able to release memory after a peak, so you can expect to see a big fragmentation ratio, however this is actually harmless and is only due to the memory peak, and if the Redis instance Resident Set Size (RSS) is currently bigger than expected, the memory will be used as soon as you fill the Redis instance with more data. If the memory peak was only occasional and you want to try to reclaim memory, please try the MEMORY PURGE command, otherwise the only other option is to shutdown and restart the instance.\n\n"
	doctorFrag  = " * High total RSS: This instance has a memory fragmentation and RSS overhead greater than 1.4 (this means that the Resident Set Size of the Redis process is much larger than the sum of the logical allocations Redis performed). This problem is usually due either to a large peak memory (check if there is a peak memory entry above in the report) or may result from a workload that causes the allocator to fragment memory a lot. If the problem is a large peak memory, then there is no issue. Otherwise, make sure you are using the Jemalloc allocator and not the default libc malloc. Note: The currently used allocator is \"go\".\n\n"
	doctorAFrag = " * High allocator fragmentation: This instance has an allocator external fragmentation greater than 1.1. This problem is usually due either to a large peak memory (check if there is a peak memory entry above in the report) or may result from a workload that causes the allocator to fragment memory a lot. You can try enabling 'activedefrag' config option.\n\n"
	doctorARSS  = " * High allocator RSS overhead: This instance has an RSS memory overhead is greater than 1.1 (this means that the Resident Set Size of the allocator is much larger than the sum what the allocator actually holds). This problem is usually due to a large peak memory (check if there is a peak memory entry above in the report), you can try the MEMORY PURGE command to reclaim it.\n\n"
	doctorPRSS  = " * High process RSS overhead: This instance has non-allocator RSS memory overhead is greater than 1.1 (this means that the Resident Set Size of the Redis process is much larger than the RSS the allocator holds). This problem may be due to Lua scripts or Modules.\n\n"
	doctorBig   = " * Big client buffers: The clients output buffers in this instance are greater than 200K per client (on average). This may result from different causes, like Pub/Sub clients subscribed to channels bot not receiving data fast enough, so that data piles on the Redis instance output buffer, or clients sending commands with large replies or very large sequences of commands in the same pipeline. Please use the CLIENT LIST command in order to investigate the issue if it causes problems in your instance, or to understand better why certain clients are using a big amount of memory.\n\n"
	doctorTail  = "I'm here to keep you safe, Sam. I want to help you.\n"
)

// doctorReport applies Redis's thresholds to f.
func doctorReport(f memFigures, clients int) string {
	if f.used < 5<<20 {
		return doctorEmpty
	}
	alloc, active, resident := int64(f.rt.used), int64(f.rt.active), int64(f.rt.resident)
	var b strings.Builder
	add := func(cond bool, s string) {
		if cond {
			b.WriteString(s)
		}
	}
	add(ratio(f.peak, f.used) > 1.5, doctorPeak)
	add(ratio(f.rss, f.used) > 1.4 && f.rss-f.used > 10<<20, doctorFrag)
	add(ratio(active, alloc) > 1.1 && active-alloc > 10<<20, doctorAFrag)
	add(ratio(resident, active) > 1.1 && resident-active > 10<<20, doctorARSS)
	add(ratio(f.rss, resident) > 1.1 && f.rss-resident > 10<<20, doctorPRSS)
	add(clients > 0 && f.clients/int64(clients) > 200<<10, doctorBig)
	if b.Len() == 0 {
		return doctorFine
	}
	return doctorHead + b.String() + doctorTail
}

// MEMORY MALLOC-STATS: the Go runtime's memory statistics, as text (Redis prints jemalloc's).
func memoryMallocStats(c *Ctx) {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	var b strings.Builder
	fmt.Fprintf(&b, "___ Begin Go runtime memory statistics ___\n")
	fmt.Fprintf(&b, "Version: %s\n", runtime.Version())
	rows := []struct {
		k string
		v uint64
	}{
		{"heap_alloc", m.HeapAlloc}, {"heap_inuse", m.HeapInuse}, {"heap_idle", m.HeapIdle},
		{"heap_released", m.HeapReleased}, {"heap_objects", m.HeapObjects}, {"heap_sys", m.HeapSys},
		{"stack_inuse", m.StackInuse}, {"stack_sys", m.StackSys}, {"mspan_inuse", m.MSpanInuse},
		{"mcache_inuse", m.MCacheInuse}, {"gc_sys", m.GCSys}, {"other_sys", m.OtherSys},
		{"sys", m.Sys}, {"total_alloc", m.TotalAlloc}, {"mallocs", m.Mallocs}, {"frees", m.Frees},
		{"next_gc", m.NextGC}, {"num_gc", uint64(m.NumGC)}, {"pause_total_ns", m.PauseTotalNs},
	}
	for _, r := range rows {
		fmt.Fprintf(&b, "%s: %d\n", r.k, r.v)
	}
	fmt.Fprintf(&b, "gc_cpu_fraction: %.6f\n", m.GCCPUFraction)
	b.WriteString("--- End Go runtime memory statistics ---\n")
	c.Verbatim([]byte(b.String()))
}

// MEMORY PURGE: returns freed heap pages to the system (a collection first).
func memoryPurge(c *Ctx) {
	debug.FreeOSMemory()
	c.OK()
}

var memoryHelpLines = []string{
	"MEMORY <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
	"DOCTOR",
	"    Return memory problems reports.",
	"MALLOC-STATS",
	"    Return internal statistics report from the memory allocator.",
	"PURGE",
	"    Attempt to purge dirty pages for reclamation by the allocator.",
	"STATS",
	"    Return information about the memory usage of the server.",
	"USAGE <key> [SAMPLES <count>]",
	"    Return memory in bytes used by <key> and its value. Nested values are",
	"    sampled up to <count> times (default: 5, 0 means sample all).",
	"HELP",
	"    Prints this help.",
}

// MEMORY HELP
func memoryHelp(c *Ctx) { replyHelpLines(c, memoryHelpLines) }

// memoryCommands is the MEMORY family.
var memoryCommands = []*Spec{memorySpec}
