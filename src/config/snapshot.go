package config

import (
	"runtime"
	"strings"
)

// LogLevel is loglevel's value.
type LogLevel int

const (
	LogDebug LogLevel = iota
	LogVerbose
	LogNotice
	LogWarning
)

// Policy is maxmemory-policy's value.
type Policy int

const (
	VolatileLRU Policy = iota
	VolatileLFU
	VolatileRandom
	VolatileTTL
	AllKeysLRU
	AllKeysLFU
	AllKeysRandom
	NoEviction
)

// Fsync is appendfsync's value.
type Fsync int

const (
	FsyncEverySec Fsync = iota
	FsyncAlways
	FsyncNo
)

// Config is an immutable typed snapshot of the settings the server reads
// while serving. Store.Current returns the latest one without locking; a
// successful CONFIG SET publishes a new snapshot and never changes an old
// one, so a command may keep using the snapshot it started with. Callers
// must not modify it (slices included). Units are Redis's: seconds for
// Timeout and TCPKeepAlive, microseconds for SlowlogLogSlowerThan,
// milliseconds for BusyReplyThreshold and LatencyMonitorThreshold.
type Config struct {
	Version uint64 // bumped by every successful Set

	Port           int
	Bind           []string
	UnixSocket     string
	UnixSocketPerm uint32
	TCPBacklog     int
	TCPKeepAlive   int
	ProtectedMode  bool
	RequirePass    string
	MaxClients     int
	Timeout        int
	Threads        int // 0: one per CPU (see ThreadCount)
	IOThreads      int
	MetricsPort    int

	Databases              int
	ProtoMaxBulkLen        int64
	ClientQueryBufferLimit int64
	ClientOutputLimits     [numClasses]BufferLimit
	MaxMemoryClients       int64 // negative: percent of maxmemory

	Dir            string
	DBFilename     string
	Save           []SaveParam
	AppendOnly     bool
	AppendFilename string
	AppendDirname  string
	AppendFsync    Fsync
	LogFile        string
	LogLevel       LogLevel
	PidFile        string
	Daemonize      bool

	Hz                 int
	DynamicHz          bool
	ActiveRehashing    bool
	ActiveExpireEffort int

	MaxMemory        uint64
	MaxMemoryPolicy  Policy
	MaxMemorySamples int
	LazyfreeEviction bool
	LazyfreeExpire   bool
	LazyfreeServer   bool
	LazyfreeUserDel  bool
	LazyfreeFlush    bool

	HashMaxListpackEntries int64
	HashMaxListpackValue   int64
	SetMaxIntsetEntries    int64
	SetMaxListpackEntries  int64
	SetMaxListpackValue    int64
	ZsetMaxListpackEntries int64
	ZsetMaxListpackValue   int64
	ListMaxListpackSize    int64
	ListCompressDepth      int64
	StreamNodeMaxBytes     int64
	StreamNodeMaxEntries   int64
	HllSparseMaxBytes      int64

	// value-compression (0 no, 1 lz4, 2 zstd) and its threshold in bytes (src/command
	// strings_packed.go).
	ValueCompression          int64
	ValueCompressionThreshold int64

	SlowlogLogSlowerThan    int64
	SlowlogMaxLen           int64
	LatencyMonitorThreshold int64
	LatencyTracking         bool
	LatencyPercentiles      []float64
	NotifyKeyspaceEvents    int64 // Notify* bits
	BusyReplyThreshold      int64
	TrackingTableMaxKeys    int64

	ReplicaOf       string // "host port", or "" for a master
	ReplicaReadOnly bool
}

// ThreadCount is the number of worker threads to run: threads, or one per
// CPU when it is 0.
func (c *Config) ThreadCount() int {
	if c.Threads > 0 {
		return c.Threads
	}
	return runtime.GOMAXPROCS(0)
}

// buildConfig derives the typed snapshot from directive values.
func buildConfig(vals []value, version uint64) *Config {
	n := func(name string) int64 { return vals[mustDir(name)].n }
	b := func(name string) bool { return n(name) != 0 }
	s := func(name string) string { return vals[mustDir(name)].s }
	i := func(name string) int { return int(n(name)) }
	c := &Config{
		Version:        version,
		Port:           i("port"),
		Bind:           splitList(s("bind")),
		UnixSocket:     s("unixsocket"),
		UnixSocketPerm: uint32(n("unixsocketperm")),
		TCPBacklog:     i("tcp-backlog"),
		TCPKeepAlive:   i("tcp-keepalive"),
		ProtectedMode:  b("protected-mode"),
		RequirePass:    s("requirepass"),
		MaxClients:     i("maxclients"),
		Timeout:        i("timeout"),
		Threads:        i("threads"),
		IOThreads:      i("io-threads"),
		MetricsPort:    i("metrics-port"),

		Databases:              i("databases"),
		ProtoMaxBulkLen:        n("proto-max-bulk-len"),
		ClientQueryBufferLimit: n("client-query-buffer-limit"),
		ClientOutputLimits:     parseLimits(s("client-output-buffer-limit")),
		MaxMemoryClients:       n("maxmemory-clients"),

		Dir:            s("dir"),
		DBFilename:     s("dbfilename"),
		Save:           parseSave(s("save")),
		AppendOnly:     b("appendonly"),
		AppendFilename: s("appendfilename"),
		AppendDirname:  s("appenddirname"),
		AppendFsync:    Fsync(n("appendfsync")),
		LogFile:        s("logfile"),
		LogLevel:       LogLevel(n("loglevel")),
		PidFile:        s("pidfile"),
		Daemonize:      b("daemonize"),

		Hz:                 i("hz"),
		DynamicHz:          b("dynamic-hz"),
		ActiveRehashing:    b("activerehashing"),
		ActiveExpireEffort: i("active-expire-effort"),

		MaxMemory:        uint64(n("maxmemory")),
		MaxMemoryPolicy:  Policy(n("maxmemory-policy")),
		MaxMemorySamples: i("maxmemory-samples"),
		LazyfreeEviction: b("lazyfree-lazy-eviction"),
		LazyfreeExpire:   b("lazyfree-lazy-expire"),
		LazyfreeServer:   b("lazyfree-lazy-server-del"),
		LazyfreeUserDel:  b("lazyfree-lazy-user-del"),
		LazyfreeFlush:    b("lazyfree-lazy-user-flush"),

		HashMaxListpackEntries: n("hash-max-listpack-entries"),
		HashMaxListpackValue:   n("hash-max-listpack-value"),
		SetMaxIntsetEntries:    n("set-max-intset-entries"),
		SetMaxListpackEntries:  n("set-max-listpack-entries"),
		SetMaxListpackValue:    n("set-max-listpack-value"),
		ZsetMaxListpackEntries: n("zset-max-listpack-entries"),
		ZsetMaxListpackValue:   n("zset-max-listpack-value"),
		ListMaxListpackSize:    n("list-max-listpack-size"),
		ListCompressDepth:      n("list-compress-depth"),
		StreamNodeMaxBytes:     n("stream-node-max-bytes"),
		StreamNodeMaxEntries:   n("stream-node-max-entries"),
		HllSparseMaxBytes:      n("hll-sparse-max-bytes"),

		ValueCompression:          n("value-compression"),
		ValueCompressionThreshold: n("value-compression-threshold"),

		SlowlogLogSlowerThan:    n("slowlog-log-slower-than"),
		SlowlogMaxLen:           n("slowlog-max-len"),
		LatencyMonitorThreshold: n("latency-monitor-threshold"),
		LatencyTracking:         b("latency-tracking"),
		LatencyPercentiles:      parsePercentiles(s("latency-tracking-info-percentiles")),
		NotifyKeyspaceEvents:    n("notify-keyspace-events"),
		BusyReplyThreshold:      n("busy-reply-threshold"),
		TrackingTableMaxKeys:    n("tracking-table-max-keys"),

		ReplicaOf:       s("replicaof"),
		ReplicaReadOnly: b("replica-read-only"),
	}
	return c
}

// splitList splits a space-separated list; "" is an empty list.
func splitList(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, " ")
}
