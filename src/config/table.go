package config

import (
	"math"
	"net"
	"strings"
)

// The directive table: every config Redis 7.0.15 answers to (`CONFIG GET *`
// plus its hidden ones), with its alias, flags, type, bounds and default,
// then HotKV's own. Values for features HotKV lacks (cluster, TLS knobs,
// defrag, …) are accepted, validated and stored so tools see what they
// expect. Order only decides where CONFIG REWRITE appends new lines.

const (
	intMin  = math.MinInt32
	intMax  = math.MaxInt32
	longMax = math.MaxInt64
	uintMax = math.MaxUint32
)

const (
	mod = flags(0)
	imm = flagImmutable
)

var (
	noYesLocal   = items("no", 0, "yes", 1, "local", 2)
	shutdownFlag = items("default", 0, "save", 1, "nosave", 2, "now", 4, "force", 8)
)

var table = []*directive{
	yesno("rdbchecksum", "", imm, true),
	yesno("daemonize", "", imm, false),
	yesno("io-threads-do-reads", "", imm, false),
	yesno("always-show-logo", "", imm, false),
	yesno("protected-mode", "", mod, true),
	yesno("rdbcompression", "", mod, true),
	yesno("rdb-del-sync-files", "", mod, false),
	yesno("activerehashing", "", mod, true),
	yesno("stop-writes-on-bgsave-error", "", mod, true),
	yesno("set-proc-title", "", imm, true),
	yesno("dynamic-hz", "", mod, true),
	yesno("lazyfree-lazy-eviction", "", mod, false),
	yesno("lazyfree-lazy-expire", "", mod, false),
	yesno("lazyfree-lazy-server-del", "", mod, false),
	yesno("lazyfree-lazy-user-del", "", mod, false),
	yesno("lazyfree-lazy-user-flush", "", mod, false),
	yesno("repl-disable-tcp-nodelay", "", mod, false),
	yesno("repl-diskless-sync", "", mod, true),
	yesno("aof-rewrite-incremental-fsync", "", mod, true),
	yesno("no-appendfsync-on-rewrite", "", mod, false),
	yesno("cluster-require-full-coverage", "", mod, true),
	yesno("rdb-save-incremental-fsync", "", mod, true),
	yesno("aof-load-truncated", "", mod, true),
	yesno("aof-use-rdb-preamble", "", mod, true),
	yesno("aof-timestamp-enabled", "", mod, false),
	yesno("cluster-replica-no-failover", "cluster-slave-no-failover", mod, false),
	yesno("replica-lazy-flush", "slave-lazy-flush", mod, false),
	yesno("replica-serve-stale-data", "slave-serve-stale-data", mod, true),
	yesno("replica-read-only", "slave-read-only", mod, true),
	yesno("replica-ignore-maxmemory", "slave-ignore-maxmemory", mod, true),
	yesno("jemalloc-bg-thread", "", mod, true),
	yesno("activedefrag", "", mod, false),
	yesno("syslog-enabled", "", imm, false),
	yesno("cluster-enabled", "", imm, false),
	yesno("appendonly", "", flagDenyLoading, false),
	yesno("cluster-allow-reads-when-down", "", mod, false),
	yesno("cluster-allow-pubsubshard-when-down", "", mod, true),
	yesno("crash-log-enabled", "", mod, true),
	yesno("crash-memcheck-enabled", "", mod, true),
	yesno("use-exit-on-panic", "", flagHidden, false),
	yesno("disable-thp", "", imm, true),
	yesno("cluster-allow-replica-migration", "", mod, true),
	yesno("replica-announced", "", mod, true),
	yesno("latency-tracking", "", mod, true),
	yesno("aof-disable-auto-gc", "", mod, false),
	yesno("replica-ignore-disk-write-errors", "", mod, false),

	str("aclfile", "", imm, "", nil),
	nullStr("unixsocket", "", imm, nil),
	nullStr("pidfile", "", imm, nil),
	nullStr("replica-announce-ip", "slave-announce-ip", mod, nil),
	nullStr("masteruser", "", flagSensitive, nil),
	nullStr("cluster-announce-ip", "", mod, nil),
	str("cluster-config-file", "", imm, "nodes.conf", nil),
	nullStr("cluster-announce-hostname", "", mod, checkHostname),
	str("syslog-ident", "", imm, "redis", nil),
	str("dbfilename", "", flagProtected, "dump.rdb", checkBaseName("dbfilename", "filename")),
	str("appendfilename", "", imm, "appendonly.aof", checkBaseName("appendfilename", "filename")),
	str("appenddirname", "", imm, "appendonlydir", checkBaseName("appenddirname", "dirname")),
	nullStr("server_cpulist", "", imm, nil),
	nullStr("bio_cpulist", "", imm, nil),
	nullStr("aof_rewrite_cpulist", "", imm, nil),
	nullStr("bgsave_cpulist", "", imm, nil),
	str("ignore-warnings", "", mod, "", nil),
	str("proc-title-template", "", mod, "{title} {listen-addr} {server-mode}", checkProcTitle),
	nullStr("bind-source-addr", "", mod, nil),
	str("logfile", "", imm, "", nil),
	nullStr("masterauth", "", flagSensitive, nil),
	nullStr("requirepass", "", flagSensitive, nil),

	enum("supervised", "", imm, items("upstart", 1, "systemd", 2, "auto", 3, "no", 0), "no"),
	enum("syslog-facility", "", imm, items("user", 8, "local0", 128, "local1", 136, "local2", 144,
		"local3", 152, "local4", 160, "local5", 168, "local6", 176, "local7", 184), "local0"),
	enum("repl-diskless-load", "", flagDenyLoading, items("disabled", 0, "on-empty-db", 1, "swapdb", 2), "disabled"),
	enum("loglevel", "", mod, items("debug", 0, "verbose", 1, "notice", 2, "warning", 3), "notice"),
	enum("maxmemory-policy", "", mod, append(items("volatile-lru", 0, "volatile-lfu", 1, "volatile-random", 2,
		"volatile-ttl", 3, "allkeys-lru", 4, "allkeys-lfu", 5, "allkeys-random", 6, "noeviction", 7),
		enumItem{name: "allkeys-tinylfu", val: 8, own: true}), "noeviction"), // HotKV's own policy (src/command/evict_policy.go)
	enum("appendfsync", "", mod, items("everysec", 0, "always", 1, "no", 2), "everysec"),
	enum("oom-score-adj", "", mod, items("no", 0, "yes", 1, "relative", 1, "absolute", 2), "no"),
	enum("acl-pubsub-default", "", mod, items("allchannels", 1, "resetchannels", 0), "resetchannels"),
	enum("sanitize-dump-payload", "", mod, items("no", 0, "yes", 1, "clients", 2), "no"),
	enum("enable-protected-configs", "", imm, noYesLocal, "no"),
	enum("enable-debug-command", "", imm, noYesLocal, "no"),
	enum("enable-module-command", "", imm, noYesLocal, "no"),
	enum("cluster-preferred-endpoint-type", "", mod, items("ip", 0, "hostname", 1, "unknown-endpoint", 2), "ip"),
	enum("propagation-error-behavior", "", mod, items("ignore", 0, "panic", 1, "panic-on-replicas", 2), "ignore"),
	bitEnum("shutdown-on-sigint", "", mod, shutdownFlag, "default"),
	bitEnum("shutdown-on-sigterm", "", mod, shutdownFlag, "default"),

	num("databases", "", imm, 1, intMax, "16", 0),
	num("port", "", mod, 0, 65535, "6379", 0),
	num("io-threads", "", imm, 1, 128, "1", 0),
	num("auto-aof-rewrite-percentage", "", mod, 0, intMax, "100", 0),
	num("cluster-replica-validity-factor", "cluster-slave-validity-factor", mod, 0, intMax, "10", 0),
	num("list-max-listpack-size", "list-max-ziplist-size", mod, intMin, intMax, "-2", 0),
	num("tcp-keepalive", "", mod, 0, intMax, "300", 0),
	num("cluster-migration-barrier", "", mod, 0, intMax, "1", 0),
	num("active-defrag-cycle-min", "", mod, 1, 99, "1", 0),
	num("active-defrag-cycle-max", "", mod, 1, 99, "25", 0),
	num("active-defrag-threshold-lower", "", mod, 0, 1000, "10", 0),
	num("active-defrag-threshold-upper", "", mod, 0, 1000, "100", 0),
	num("lfu-log-factor", "", mod, 0, intMax, "10", 0),
	num("lfu-decay-time", "", mod, 0, intMax, "1", 0),
	num("replica-priority", "slave-priority", mod, 0, intMax, "100", 0),
	num("repl-diskless-sync-delay", "", mod, 0, intMax, "5", 0),
	num("maxmemory-samples", "", mod, 1, intMax, "5", 0),
	num("maxmemory-eviction-tenacity", "", mod, 0, 100, "10", 0),
	num("timeout", "", mod, 0, intMax, "0", 0),
	num("replica-announce-port", "slave-announce-port", mod, 0, 65535, "0", 0),
	num("tcp-backlog", "", imm, 0, intMax, "511", 0),
	num("cluster-port", "", imm, 0, 65535, "0", 0),
	num("cluster-announce-bus-port", "", mod, 0, 65535, "0", 0),
	num("cluster-announce-port", "", mod, 0, 65535, "0", 0),
	num("cluster-announce-tls-port", "", mod, 0, 65535, "0", 0),
	num("repl-timeout", "", mod, 1, intMax, "60", 0),
	num("repl-ping-replica-period", "repl-ping-slave-period", mod, 1, intMax, "10", 0),
	num("list-compress-depth", "", mod, 0, intMax, "0", 0),
	num("rdb-key-save-delay", "", flagHidden, intMin, intMax, "0", 0),
	num("key-load-delay", "", flagHidden, intMin, intMax, "0", 0),
	num("active-expire-effort", "", mod, 1, 10, "1", 0),
	clamped(num("hz", "", mod, 0, intMax, "10", 0), 1, 500),
	num("min-replicas-to-write", "min-slaves-to-write", mod, 0, intMax, "0", 0),
	num("min-replicas-max-lag", "min-slaves-max-lag", mod, 0, intMax, "10", 0),
	num("watchdog-period", "", flagHidden, 0, intMax, "0", 0),
	num("shutdown-timeout", "", mod, 0, intMax, "10", 0),
	num("repl-diskless-sync-max-replicas", "", mod, 0, intMax, "0", 0),
	unum("maxclients", "", mod, 1, uintMax, "10000", 0),
	unum("unixsocketperm", "", imm, 0, 0o777, "0", numOctal),
	unum("socket-mark-id", "", imm, 0, uintMax, "0", 0),
	num("active-defrag-max-scan-fields", "", mod, 1, longMax, "1000", 0),
	num("slowlog-max-len", "", mod, 0, longMax, "128", 0),
	num("acllog-max-len", "", mod, 0, longMax, "128", 0),
	num("busy-reply-threshold", "lua-time-limit", mod, 0, longMax, "5000", 0),
	num("cluster-node-timeout", "", mod, 0, longMax, "15000", 0),
	num("slowlog-log-slower-than", "", mod, -1, longMax, "10000", 0),
	num("latency-monitor-threshold", "", mod, 0, longMax, "0", 0),
	num("proto-max-bulk-len", "", mod, 1024*1024, longMax, "536870912", numMemory),
	num("stream-node-max-entries", "", mod, 0, longMax, "100", 0),
	setClamped(num("repl-backlog-size", "", mod, 1, longMax, "1048576", numMemory), 16384),
	unum("maxmemory", "", mod, 0, math.MaxUint64, "0", numMemory),
	unum("cluster-link-sendbuf-limit", "", mod, 0, math.MaxUint64, "0", numMemory),
	unum("hash-max-listpack-entries", "hash-max-ziplist-entries", mod, 0, longMax, "512", 0),
	unum("set-max-intset-entries", "", mod, 0, longMax, "512", 0),
	unum("zset-max-listpack-entries", "zset-max-ziplist-entries", mod, 0, longMax, "128", 0),
	unum("active-defrag-ignore-bytes", "", mod, 1, longMax, "104857600", numMemory),
	unum("hash-max-listpack-value", "hash-max-ziplist-value", mod, 0, longMax, "64", numMemory),
	unum("stream-node-max-bytes", "", mod, 0, longMax, "4096", numMemory),
	unum("zset-max-listpack-value", "zset-max-ziplist-value", mod, 0, longMax, "64", numMemory),
	unum("hll-sparse-max-bytes", "", mod, 0, longMax, "3000", numMemory),
	unum("tracking-table-max-keys", "", mod, 0, longMax, "1000000", 0),
	unum("client-query-buffer-limit", "", mod, 1024*1024, longMax, "1073741824", numMemory),
	num("maxmemory-clients", "", mod, -100, longMax, "0", numMemory|numPercent),
	num("repl-backlog-ttl", "", mod, 0, longMax, "3600", 0),
	num("auto-aof-rewrite-min-size", "", mod, 0, longMax, "67108864", numMemory),
	num("loading-process-events-interval-bytes", "", flagHidden, 1024, intMax, "2097152", 0),

	num("tls-port", "", mod, 0, 65535, "0", 0),
	num("tls-session-cache-size", "", mod, 0, intMax, "20480", 0),
	num("tls-session-cache-timeout", "", mod, 0, intMax, "300", 0),
	yesno("tls-cluster", "", mod, false),
	yesno("tls-replication", "", mod, false),
	enum("tls-auth-clients", "", mod, items("no", 0, "yes", 1, "optional", 2), "yes"),
	yesno("tls-prefer-server-ciphers", "", mod, false),
	yesno("tls-session-caching", "", mod, true),
	nullStr("tls-cert-file", "", mod|flagVolatile, nil),
	nullStr("tls-key-file", "", mod|flagVolatile, nil),
	nullStr("tls-key-file-pass", "", mod, nil),
	nullStr("tls-client-cert-file", "", mod|flagVolatile, nil),
	nullStr("tls-client-key-file", "", mod|flagVolatile, nil),
	nullStr("tls-client-key-file-pass", "", mod, nil),
	nullStr("tls-dh-params-file", "", mod|flagVolatile, nil),
	nullStr("tls-ca-cert-file", "", mod|flagVolatile, nil),
	nullStr("tls-ca-cert-dir", "", mod|flagVolatile, nil),
	nullStr("tls-protocols", "", mod, nil),
	nullStr("tls-ciphers", "", mod, nil),
	nullStr("tls-ciphersuites", "", mod, nil),

	specialDir("dir", "", flagProtected|flagDenyLoading, "", dirSpecial),
	specialDir("save", "", flagMultiArg, "3600 1 300 100 60 10000", saveSpecial),
	specialDir("client-output-buffer-limit", "", flagMultiArg,
		"normal 0 0 0 slave 268435456 67108864 60 pubsub 33554432 8388608 60", obufSpecial),
	specialDir("oom-score-adj-values", "", flagMultiArg, "0 200 800", oomValuesSpecial),
	specialDir("notify-keyspace-events", "", mod, "", notifySpecial),
	specialDir("bind", "", flagMultiArg, DefaultBind, bindSpecial),
	specialDir("replicaof", "slaveof", imm|flagMultiArg, "", replicaofSpecial),
	specialDir("latency-tracking-info-percentiles", "", flagMultiArg, "50 99 99.9", percentilesSpecial),

	// HotKV's own directives.
	num("threads", "", imm, 0, 1024, "0", 0),
	yesno("sched-batch", "", mod, true),
	// The Go collector (src/server/gc.go): GOGC, the soft memory limit (0: derived from
	// maxmemory) and a collection when the server falls idle with garbage in its heap.
	num("gc-percent", "", mod, -1, 10000, "100", 0),
	unum("gc-memory-limit", "", mod, 0, math.MaxInt64, "0", numMemory),
	yesno("gc-idle", "", mod, true),
	// The Prometheus endpoint (src/server/metrics.go): off at port 0; one address, loopback
	// unless set otherwise.
	num("metrics-port", "", mod, 0, 65535, "0", 0),
	str("metrics-bind", "", mod, "127.0.0.1", checkMetricsBind),
	// Value compression (src/command/strings_packed.go): strings longer than the threshold are
	// held compressed when that saves an eighth; values stored before a change stay as they are.
	enum("value-compression", "", mod, items("no", 0, "lz4", 1, "zstd", 2), "no"),
	unum("value-compression-threshold", "", mod, 0, uintMax, "512", numMemory),
	// Scripts (src/command/scripting.go): how far the heap may grow during one run, and
	// whether a script's undeclared keys are an error.
	unum("lua-max-memory", "", mod, 0, longMax, "268435456", numMemory),
	yesno("lua-strict-keys", "", mod, false),
	// Redis 7.2's names for set listpacks, accepted ahead of time.
	unum("set-max-listpack-entries", "", mod, 0, longMax, "128", 0),
	unum("set-max-listpack-value", "", mod, 0, longMax, "64", numMemory),
}

// checkMetricsBind accepts one IP address or host name.
func checkMetricsBind(c *setCtx, v string) string {
	if v == "" || strings.ContainsAny(v, " \t") {
		return "metrics-bind must be one address"
	}
	if net.ParseIP(v) != nil {
		return ""
	}
	return checkHostname(c, v)
}

// DefaultBind is HotKV's default listen list: loopback only, where Redis
// listens on every interface ("* -::*") and relies on protected mode.
const DefaultBind = "127.0.0.1 -::1"

func items(kv ...any) []enumItem {
	out := make([]enumItem, 0, len(kv)/2)
	for i := 0; i < len(kv); i += 2 {
		out = append(out, enumItem{name: kv[i].(string), val: int64(kv[i+1].(int))})
	}
	return out
}

func yesno(name, alias string, f flags, def bool) *directive {
	d := &directive{name: name, alias: alias, flags: f, kind: kindBool, def: "no"}
	if def {
		d.def = "yes"
	}
	return d
}

// str is a string that may be empty and has a default.
func str(name, alias string, f flags, def string, check func(*setCtx, string) string) *directive {
	return &directive{name: name, alias: alias, flags: f, kind: kindString, def: def, check: check}
}

// nullStr is a string whose empty value means unset, Redis's NULL default.
func nullStr(name, alias string, f flags, check func(*setCtx, string) string) *directive {
	return &directive{name: name, alias: alias, flags: f, kind: kindString, noDef: true, emptyNull: true, check: check}
}

func enum(name, alias string, f flags, it []enumItem, def string) *directive {
	return &directive{name: name, alias: alias, flags: f, kind: kindEnum, enum: it, def: def}
}

func bitEnum(name, alias string, f flags, it []enumItem, def string) *directive {
	d := enum(name, alias, f|flagMultiArg, it, def)
	d.bitflags = true
	d.checkN = checkShutdownFlags
	return d
}

func num(name, alias string, f flags, lo, hi int64, def string, nf numFlags) *directive {
	return &directive{name: name, alias: alias, flags: f, kind: kindNum, lo: lo, hi: hi, def: def, num: nf}
}

func unum(name, alias string, f flags, lo int64, hi uint64, def string, nf numFlags) *directive {
	d := num(name, alias, f, lo, int64(hi), def, nf)
	d.unsigned = true
	return d
}

// clamped makes a directive accept any value in its bounds but keep it in
// [lo, hi], as Redis does for hz.
func clamped(d *directive, lo, hi int64) *directive {
	d.clamp = func(n int64) int64 { return min(max(n, lo), hi) }
	return d
}

// setClamped raises values set by CONFIG SET to at least lo, as Redis's
// resizeReplicationBacklog does for repl-backlog-size.
func setClamped(d *directive, lo int64) *directive {
	d.setClamp = func(n int64) int64 { return max(n, lo) }
	return d
}

func specialDir(name, alias string, f flags, def string, s *special) *directive {
	return &directive{name: name, alias: alias, flags: f, kind: kindSpecial, def: def, spec: s}
}
