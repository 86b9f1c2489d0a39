package command

import (
	"fmt"
	"os"
	"time"
)

// LATENCY DOCTOR: Redis 7.0's createLatencyReport, for the event classes HotKV raises. Its
// texts are Redis's, so tools that grep them keep working.
func latencyDoctor(c *Ctx) {
	ev := &c.E.lat.events
	ev.mu.Lock()
	defer ev.mu.Unlock()
	c.Verbatim([]byte(c.E.latencyReport(ev, time.Now().Unix())))
}

// latencyAdvice flags, in the order the report prints them.
const (
	adviseSlowlogEnabled = iota
	adviseSlowlogTuning
	adviseSlowlogInspect
	adviseScheduler
	adviseLocalDisk
	adviseSSD
	adviseDataWriteback
	adviseDiskContention
	adviseNoAppendfsync
	adviseRelaxFsync
	adviseWriteLoadInfo
	adviseHz
	adviseLargeObjects
	adviseMassEviction
	adviseDisableTHP
	adviceKinds
)

func (e *Engine) latencyReport(ev *latencyEvents, now int64) string {
	threshold := e.lat.monitorMs.Load()
	if len(ev.series) == 0 && threshold == 0 {
		return "I'm sorry, Dave, I can't do that. Latency monitoring is disabled in this Redis instance. You may use \"CONFIG SET latency-monitor-threshold <milliseconds>.\" in order to enable it. If we weren't in a deep space mission I'd suggest to take a look at https://redis.io/topics/latency-monitor.\n"
	}
	var advise [adviceKinds]bool
	advices := 0
	set := func(kinds ...int) {
		for _, k := range kinds {
			advise[k] = true
			advices++
		}
	}
	report := ""
	for n, name := range ev.sortedNames() {
		ts := ev.series[name]
		if n == 0 {
			report += "Dave, I have observed latency spikes in this Redis instance. You don't mind talking about it, do you Dave?\n\n"
		}
		ls := analyzeLatency(ts, now)
		report += fmt.Sprintf("%d. %s: %d latency spikes (average %dms, mean deviation %dms, period %.2f sec). Worst all time event %dms.",
			n+1, name, ls.samples, ls.avg, ls.mad, float64(ls.period)/float64(max(ls.samples, 1)), ts.max)
		switch name {
		case "command":
			if us := e.lat.slowerUs.Load(); us < 0 {
				set(adviseSlowlogEnabled)
			} else if us/1000 > threshold {
				set(adviseSlowlogTuning)
			}
			set(adviseSlowlogInspect, adviseLargeObjects)
		case "fast-command":
			set(adviseScheduler)
		case "aof-write-pending-fsync":
			set(adviseLocalDisk, adviseDiskContention, adviseSSD, adviseDataWriteback)
		case "aof-write-active-child":
			set(adviseNoAppendfsync, adviseDataWriteback, adviseSSD)
		case "aof-write-alone":
			set(adviseLocalDisk, adviseDataWriteback, adviseSSD)
		case "aof-fsync-always":
			set(adviseRelaxFsync)
		case "aof-fstat", "rdb-unlink-temp-file":
			set(adviseDiskContention, adviseLocalDisk)
		case "aof-rewrite-diff-write", "aof-rename":
			set(adviseWriteLoadInfo, adviseDataWriteback, adviseSSD, adviseLocalDisk)
		case "expire-cycle":
			set(adviseHz, adviseLargeObjects)
		case "eviction-del":
			set(adviseLargeObjects)
		case "eviction-cycle":
			set(adviseMassEviction)
		}
		report += "\n"
	}
	if anonHugePages() {
		set(adviseDisableTHP)
	}
	switch {
	case len(ev.series) == 0 && advices == 0:
		return report + "Dave, no latency spike was observed during the lifetime of this Redis instance, not in the slightest bit. I honestly think you ought to sit down calmly, take a stress pill, and think things over.\n"
	case len(ev.series) > 0 && advices == 0:
		return report + "\nWhile there are latency events logged, I'm not able to suggest any easy fix. Please use the Redis community to get some help, providing this report in your help request.\n"
	}
	report += "\nI have a few advices for you:\n\n"
	for k, on := range advise {
		if on {
			report += e.adviceText(k, threshold)
		}
	}
	return report
}

func (e *Engine) adviceText(kind int, threshold int64) string {
	switch kind {
	case adviseSlowlogEnabled:
		return fmt.Sprintf("- There are latency issues with potentially slow commands you are using. Try to enable the Slow Log Redis feature using the command 'CONFIG SET slowlog-log-slower-than %d'. If the Slow log is disabled Redis is not able to log slow commands execution for you.\n", threshold*1000)
	case adviseSlowlogTuning:
		return fmt.Sprintf("- Your current Slow Log configuration only logs events that are slower than your configured latency monitor threshold. Please use 'CONFIG SET slowlog-log-slower-than %d'.\n", threshold*1000)
	case adviseSlowlogInspect:
		return "- Check your Slow Log to understand what are the commands you are running which are too slow to execute. Please check https://redis.io/commands/slowlog for more information.\n"
	case adviseScheduler:
		return "- The system is slow to execute Redis code paths not containing system calls. This usually means the system does not provide Redis CPU time to run for long periods. You should try to:\n" +
			"  1) Lower the system load.\n" +
			"  2) Use a computer / VM just for Redis if you are running other software in the same system.\n" +
			"  3) Check if you have a \"noisy neighbour\" problem.\n" +
			"  4) Check with 'redis-cli --intrinsic-latency 100' what is the intrinsic latency in your system.\n" +
			"  5) Check if the problem is allocator-related by recompiling Redis with MALLOC=libc, if you are using Jemalloc. However this may create fragmentation problems.\n"
	case adviseLocalDisk:
		return "- It is strongly advised to use local disks for persistence, especially if you are using AOF. Remote disks provided by platform-as-a-service providers are known to be slow.\n"
	case adviseSSD:
		return "- SSD disks are able to reduce fsync latency, and total time needed for snapshotting and AOF log rewriting (resulting in smaller memory usage and smaller final AOF rewrite buffer flushes). With extremely high write load SSD disks can be a good option. However Redis should perform reasonably with high load using normal disks. Use this advice as a last resort.\n"
	case adviseDataWriteback:
		return "- Mounting ext3/4 filesystems with data=writeback can provide a performance boost compared to data=ordered, however this mode of operation provides less guarantees, and sometimes it can happen that after a hard crash the AOF file will have a half-written command at the end and will require to be repaired before Redis restarts.\n"
	case adviseDiskContention:
		return "- Try to lower the disk contention. This is often caused by other disk intensive processes running in the same computer (including other Redis instances).\n"
	case adviseNoAppendfsync:
		return "- Assuming from the point of view of data safety this is viable in your environment, you could try to enable the 'no-appendfsync-on-rewrite' option, so that fsync will not be performed while there is a child rewriting the AOF file or producing an RDB file (the moment where there is high disk contention).\n"
	case adviseRelaxFsync:
		if e.configValue("appendfsync", "everysec") == "always" {
			return "- Your fsync policy is set to 'always'. It is very hard to get good performances with such a setup, if possible try to relax the fsync policy to 'onesec'.\n"
		}
	case adviseWriteLoadInfo:
		return "- Latency during the AOF atomic rename operation or when the final difference is flushed to the AOF file at the end of the rewrite, sometimes is caused by very high write load, causing the AOF buffer to get very large. If possible try to send less commands to accomplish the same work, or use Lua scripts to group multiple operations into a single EVALSHA call.\n"
	case adviseHz:
		if e.configInt("hz", 10) < 100 {
			return "- In order to make the Redis keys expiring process more incremental, try to set the 'hz' configuration parameter to 100 using 'CONFIG SET hz 100'.\n"
		}
	case adviseLargeObjects:
		return "- Deleting, expiring or evicting (because of maxmemory policy) large objects is a blocking operation. If you have very large objects that are often deleted, expired, or evicted, try to fragment those objects into multiple smaller objects.\n"
	case adviseMassEviction:
		return "- Sudden changes to the 'maxmemory' setting via 'CONFIG SET', or allocation of large objects via sets or sorted sets intersections, STORE option of SORT, Redis Cluster large keys migrations (RESTORE command), may create sudden memory pressure forcing the server to block trying to evict keys. \n"
	case adviseDisableTHP:
		return "- I detected a non zero amount of anonymous huge pages used by your process. This creates very serious latency events in different conditions, especially when Redis is persisting on disk. To disable THP support use the command 'echo never > /sys/kernel/mm/transparent_hugepage/enabled', make sure to also add it into /etc/rc.local so that the command will be executed again after a reboot. Note that even if you have already disabled THP, you still need to restart the Redis process to get rid of the huge pages already created.\n"
	}
	return ""
}

// anonHugePages reports whether the process has anonymous huge pages (THPGetAnonHugePagesSize
// > 0), from /proc/self/smaps_rollup; false where it cannot tell.
func anonHugePages() bool {
	data, err := os.ReadFile("/proc/self/smaps_rollup")
	if err != nil {
		return false
	}
	for _, line := range splitLines(data) {
		if rest, ok := cutPrefix(line, "AnonHugePages:"); ok {
			for _, ch := range rest {
				if ch >= '1' && ch <= '9' {
					return true
				}
			}
		}
	}
	return false
}

func splitLines(b []byte) []string {
	var out []string
	start := 0
	for i, ch := range b {
		if ch == '\n' {
			out = append(out, string(b[start:i]))
			start = i + 1
		}
	}
	return append(out, string(b[start:]))
}

func cutPrefix(s, p string) (string, bool) {
	if len(s) >= len(p) && s[:len(p)] == p {
		return s[len(p):], true
	}
	return "", false
}
