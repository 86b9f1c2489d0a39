// Package server wires HotKV together: configuration, the command engine, the pipeline, the
// transport and background work. It starts them in that order and stops them in reverse.
package server

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/hotkv/hotkv/net/transport"
	"github.com/hotkv/hotkv/persist/aof"
	"github.com/hotkv/hotkv/pipeline"
	"github.com/hotkv/hotkv/src/cluster/mode"
	"github.com/hotkv/hotkv/src/command"
	"github.com/hotkv/hotkv/src/config"
)

// Server is one running HotKV instance.
type Server struct {
	cfg    *config.Store
	Engine *command.Engine
	env    *pipeline.Env
	tr     *transport.Server
	log    *slog.Logger

	reclaim func()        // the cron's Engine.Reclaim; a test makes it panic
	gc      *gcTuner      // the Go collector's settings and idle collection (gc.go)
	grace   time.Duration // stopGrace; a test shortens it

	stopOnce sync.Once
	stopped  chan struct{}
	bgDone   chan struct{}

	// Persistence (persist*.go, aof*.go). dataDir is dir, absolute (tests set their own).
	dataDir     string
	aof         aofState
	rdb         rdbState
	load        loadState
	loading     atomic.Bool
	loaded      chan struct{} // closed when the start-up load ended
	loadErr     error         // set before loaded is closed
	aofManifest *aof.Manifest // what the start-up load found
	writeErr    [2]atomic.Pointer[string]
	bgWork      sync.WaitGroup // background saves and rewrites

	metrics metricsState // the Prometheus endpoint (metrics.go)
	tls     tlsState     // the TLS context (tls.go)
	repl    replState    // PSYNC replication (repl*.go)
	cluster *mode.Mode   // cluster mode, nil when cluster-enabled is no (cluster.go)
}

// New builds a server from a configuration without listening yet.
func New(cfg *config.Store) (*Server, error) {
	log, err := newLogger(cfg)
	if err != nil {
		return nil, err
	}
	threads := int(cfg.Int("threads"))
	if threads <= 0 {
		threads = runtime.NumCPU()
	}
	runtime.GOMAXPROCS(threads)
	s := &Server{cfg: cfg, log: log, grace: stopGrace,
		stopped: make(chan struct{}), bgDone: make(chan struct{}), loaded: make(chan struct{})}
	s.initPersistence()
	s.Engine = command.NewEngine(command.Options{
		Shards:    shardCount(threads),
		Databases: int(cfg.Int("databases")),
		Settings:  settings(cfg),
		Config:    configStore{cfg},
		// Cluster mode places keys by slot (cluster-enabled is immutable).
		SlotShards: cfg.Bool("cluster-enabled"),
	})
	if err := s.Engine.SetRenames(cfg.Renames()); err != nil { // rename.go
		return nil, err
	}
	s.Engine.Hooks.Shutdown = s.shutdownCommand
	s.Engine.Hooks.Info = s.infoHook
	s.persistHooks()
	s.reclaim = s.Engine.Reclaim
	cfg.OnChange("timeout", func(string) { s.applyIdleTimeout() })
	cfg.OnChange("sched-batch", func(string) { s.applySched() })
	if err := s.Engine.InitACL(cfg.Users()); err != nil { // users: config file or aclfile (acl.go)
		return nil, err
	}
	s.Engine.SetACLLog(cfg.Int("acllog-max-len"), cfg.Int("acl-pubsub-default") == 1)
	cfg.SetUserLines(s.Engine.ACLUserLines) // CONFIG REWRITE writes the users
	for _, name := range []string{"acllog-max-len", "acl-pubsub-default"} {
		cfg.OnChange(name, func(string) { s.Engine.SetACLLog(cfg.Int("acllog-max-len"), cfg.Int("acl-pubsub-default") == 1) })
	}
	for _, name := range settingNames {
		cfg.OnChange(name, func(string) { s.Engine.SetSettings(settings(cfg)) })
	}
	s.applyMemory() // evict.go
	s.gc = newGCTuner(cfg, log, s.Engine.TotalCommands)
	s.gc.apply()
	for _, name := range []string{"gc-percent", "gc-memory-limit", "maxmemory"} {
		cfg.OnChange(name, func(string) { s.gc.apply() })
	}
	s.env = s.Engine.Env()
	s.env.Durable = s.durable
	s.env.MayBlock = s.mayBlock(s.env.MayBlock)
	s.persistenceHooks()
	s.initRepl() // after env: it wraps Durable and MayBlock (repl.go)
	s.initMetrics()
	s.initTLS()
	return s, nil
}

// shardCount gives each thread several shards, so that contention on one shard's token is rare
// and a shard's table stays small.
func shardCount(threads int) int { return max(16, threads*16) }

func settings(cfg *config.Store) command.Settings {
	return command.Settings{
		RequirePass:            cfg.String("requirepass"),
		ProtoMaxBulkLen:        cfg.Int("proto-max-bulk-len"),
		QueryBufLimit:          cfg.Int("client-query-buffer-limit"),
		MaxClients:             int(cfg.Int("maxclients")),
		ProtectedMode:          cfg.Bool("protected-mode"),
		ListMaxListpackSize:    cfg.Int("list-max-listpack-size"),
		HashMaxListpackEntries: cfg.Int("hash-max-listpack-entries"),
		HashMaxListpackValue:   cfg.Int("hash-max-listpack-value"),
		SetMaxIntsetEntries:    cfg.Int("set-max-intset-entries"),
		SetMaxListpackEntries:  cfg.Int("set-max-listpack-entries"),
		SetMaxListpackValue:    cfg.Int("set-max-listpack-value"),
		ZSetMaxListpackEntries: cfg.Int("zset-max-listpack-entries"),
		ZSetMaxListpackValue:   cfg.Int("zset-max-listpack-value"),
		LazyfreeLazyExpire:     cfg.Bool("lazyfree-lazy-expire"),
		LazyfreeUserDel:        cfg.Bool("lazyfree-lazy-user-del"),
		LazyfreeUserFlush:      cfg.Bool("lazyfree-lazy-user-flush"),
		LazyfreeServerDel:      cfg.Bool("lazyfree-lazy-server-del"),
		LazyfreeEviction:       cfg.Bool("lazyfree-lazy-eviction"),
		ReplicaIgnoreMaxmemory: cfg.Bool("replica-ignore-maxmemory"),
		NotifyKeyspaceEvents:   cfg.Int("notify-keyspace-events"),
		HllSparseMaxBytes:      cfg.Int("hll-sparse-max-bytes"),
		StreamNodeMaxBytes:     cfg.Int("stream-node-max-bytes"),
		StreamNodeMaxEntries:   cfg.Int("stream-node-max-entries"),
		BusyReplyThreshold:     cfg.Int("busy-reply-threshold"),
		LuaMaxMemory:           cfg.Int("lua-max-memory"),
		LuaStrictKeys:          cfg.Bool("lua-strict-keys"),
		PubSubOutputLimit:      outputLimit(cfg, config.ClassPubsub),
		NormalOutputLimit:      outputLimit(cfg, config.ClassNormal),
		ReplicaOutputLimit:     outputLimit(cfg, config.ClassReplica),
		MaxMemoryClients:       maxMemoryClients(cfg),

		SlowlogLogSlowerThan:    cfg.Int("slowlog-log-slower-than"),
		SlowlogMaxLen:           cfg.Int("slowlog-max-len"),
		LatencyMonitorThreshold: cfg.Int("latency-monitor-threshold"),
		LatencyTracking:         cfg.Bool("latency-tracking"),

		ValueCompression:          cfg.Int("value-compression"),
		ValueCompressionThreshold: cfg.Int("value-compression-threshold"),
	}
}

func outputLimit(cfg *config.Store, class int) command.OutputLimit {
	lim := cfg.Current().ClientOutputLimits[class]
	return command.OutputLimit{Hard: int64(lim.Hard), Soft: int64(lim.Soft), SoftSeconds: int64(lim.Seconds)}
}

// maxMemoryClients is maxmemory-clients in bytes: a percentage (stored negative) is of maxmemory,
// and without maxmemory it is off, as Redis's applyClientMaxMemoryUsage.
func maxMemoryClients(cfg *config.Store) int64 {
	n := cfg.Int("maxmemory-clients")
	if n >= 0 {
		return n
	}
	return int64(float64(cfg.Int("maxmemory")) * float64(-n) / 100)
}

// settingNames are the directives the command layer's hot-path snapshot holds.
var settingNames = []string{"requirepass", "proto-max-bulk-len", "client-query-buffer-limit",
	"maxclients", "protected-mode", "list-max-listpack-size", "hash-max-listpack-entries",
	"hash-max-listpack-value", "set-max-intset-entries", "set-max-listpack-entries",
	"set-max-listpack-value", "zset-max-listpack-entries", "zset-max-listpack-value",
	"lazyfree-lazy-expire", "notify-keyspace-events", "client-output-buffer-limit",
	"hll-sparse-max-bytes", "busy-reply-threshold", "lua-max-memory", "lua-strict-keys",
	"maxmemory-clients", "maxmemory", "lazyfree-lazy-user-del", "lazyfree-lazy-user-flush",
	"lazyfree-lazy-server-del", "lazyfree-lazy-eviction", "replica-ignore-maxmemory",
	"slowlog-log-slower-than", "slowlog-max-len", "latency-monitor-threshold", "latency-tracking",
	"value-compression", "value-compression-threshold",
	"stream-node-max-bytes", "stream-node-max-entries"}

// Listen binds the configured addresses.
func (s *Server) Listen() error {
	addrs, tlsAddrs, err := s.listenAddrs()
	if err != nil {
		return err
	}
	if err := s.startTLS(); err != nil { // tls.go
		return err
	}
	opts := transport.Options{
		TLSAddrs:  tlsAddrs,
		TLS:       transport.TLSOptions{Config: s.tlsConfig, OnError: s.logTLSError},
		Addrs:     addrs,
		Backlog:   int(s.cfg.Int("tcp-backlog")),
		KeepAlive: time.Duration(s.cfg.Int("tcp-keepalive")) * time.Second,
		Engine:    os.Getenv("HOTKV_TRANSPORT"),
		// netpoll's input beside a busy worker counts as the query buffer (net/transport offload.go).
		MaxStash: func() int { return int(s.Engine.Settings().QueryBufLimit) },
	}
	tr, err := transport.Listen(opts, &handler{s: s})
	if err != nil {
		return fmt.Errorf("cannot listen on %s: %w", strings.Join(append(addrs, tlsAddrs...), " "), err)
	}
	s.tr = tr
	if err := s.listenMetrics(); err != nil {
		tr.Close()
		s.tr = nil
		return err
	}
	return nil
}

// listenAddrs are the plain and TLS listen addresses. As in Redis, port 0 with a tls-port means
// TLS only; port 0 without one binds a port the kernel chooses (tests rely on it).
func (s *Server) listenAddrs() (plain, tls []string, err error) {
	if tls, err = s.tlsListenAddrs(); err != nil {
		return nil, nil, err
	}
	if port := int(s.cfg.Int("port")); port != 0 || len(tls) == 0 {
		plain, err = bindAddrs(s.cfg.String("bind"), port)
	}
	return plain, tls, err
}

// bindAddrs turns Redis's bind list into listen addresses. An address prefixed with '-' is
// optional: it is skipped when it cannot be bound (no IPv6, for example).
func bindAddrs(bind string, port int) ([]string, error) {
	var out []string
	for _, a := range strings.Fields(bind) {
		optional := strings.HasPrefix(a, "-")
		a = strings.TrimPrefix(a, "-")
		if a == "*" {
			a = "0.0.0.0"
		}
		hp := net.JoinHostPort(a, strconv.Itoa(port))
		if optional {
			l, err := net.Listen("tcp", hp)
			if err != nil {
				continue
			}
			l.Close()
		}
		out = append(out, hp)
	}
	if len(out) == 0 {
		return nil, errors.New("no address to bind")
	}
	return out, nil
}

// Addrs returns the bound addresses.
func (s *Server) Addrs() []net.Addr { return s.tr.Addrs() }

// TLSAddrs returns the bound TLS addresses.
func (s *Server) TLSAddrs() []net.Addr { return s.tr.TLSAddrs() }

// applySched sets the threads' scheduling policy from sched-batch (sched_linux.go).
func (s *Server) applySched() {
	if err := setSchedBatch(s.cfg.Bool("sched-batch")); err != nil {
		s.log.Warn("cannot set the scheduling policy", "sched-batch", s.cfg.String("sched-batch"), "err", err)
	}
}

// Start serves connections and runs background work until Stop.
func (s *Server) Start() {
	s.applySched()
	if err := s.startCluster(); err != nil { // cluster mode (cluster.go)
		s.log.Error("cannot start cluster mode", "err", err)
		go s.Stop()
	}
	go func() {
		if err := s.tr.Serve(); err != nil && !errors.Is(err, transport.ErrServerClosed) {
			s.log.Error("transport stopped", "err", err)
			s.Stop()
		}
	}()
	s.startLoad()
	s.startRepl()           // replicaof in the config (repl_replica.go)
	s.followClusterMaster() // nodes.conf's myself a replica (cluster.go)
	go s.background()
	s.log.Info("ready to accept connections", "addrs", fmt.Sprint(s.Addrs()), "pid", os.Getpid(),
		"threads", runtime.GOMAXPROCS(0), "shards", len(s.Engine.Group.Shards))
}

// stopGrace bounds Stop's wait for connections and background work to end. The transport waits
// for every connection's Serve to return, so one stuck by a bug would otherwise keep a signalled
// server from ever exiting; 5 seconds is ample for a healthy one, whose Serve returns as soon as its
// connection is closed.
const stopGrace = 5 * time.Second

// Stop closes the listeners and every connection, and ends background work. It returns after at
// most s.grace, leaving behind what has not ended by then.
func (s *Server) Stop() {
	s.stopOnce.Do(func() {
		close(s.stopped)
		s.Engine.StopScripts() // a busy script's connection would hold tr.Close for the grace
		ended := make(chan struct{})
		go func() {
			if s.tr != nil {
				s.tr.Close()
			}
			s.closeMetrics()
			<-s.bgDone
			s.bgWork.Wait()
			s.aof.mu.Lock()
			if err := s.closeAOF(); err != nil {
				s.log.Warn("Error closing the append only file", "err", err)
			}
			s.aof.mu.Unlock()
			s.stopCluster()  // cluster.go
			s.Engine.Close() // the Lua engine's watchdog
			close(ended)
		}()
		select {
		case <-ended:
			s.log.Info("server stopped")
		case <-time.After(s.grace):
			s.log.Warn("server stopped before connections and background work ended",
				"open", s.Engine.ClientCount(), "grace", s.grace)
		}
	})
}

// Done is closed when the server has been asked to stop.
func (s *Server) Done() <-chan struct{} { return s.stopped }

// background runs the periodic server cron: active expiry and reclaim (Engine.Reclaim) hz times
// a second, the instantaneous metrics sampler every 100ms and the idle collection check (gc.go)
// every second.
func (s *Server) background() {
	defer close(s.bgDone)
	metrics := time.NewTicker(100 * time.Millisecond)
	defer metrics.Stop()
	gcCheck := time.NewTicker(time.Second)
	defer gcCheck.Stop()
	hz := s.hz()
	cron := time.NewTicker(time.Second / time.Duration(hz))
	defer cron.Stop()
	for {
		select {
		case <-s.stopped:
			return
		case <-metrics.C:
			s.tick("metrics", s.Engine.TrackMetrics)
		case <-gcCheck.C:
			s.tick("idle collection", s.gc.check)
			s.tick("replication", s.repl.cron)
		case <-cron.C:
			s.tick("active expire", func() { s.Engine.ActiveExpire(time.Millisecond) })
			s.tick("evict", s.evictCron)
			s.tick("reclaim", s.reclaim)
			s.tick("clients", func() { s.Engine.ClientsCron(time.Now().UnixNano()) })
			s.tick("aof", s.aofCron)
			s.tick("save rules", s.saveCron)
			if now := s.hz(); now != hz { // CONFIG SET hz
				hz = now
				cron.Reset(time.Second / time.Duration(hz))
			}
		}
	}
}

// tick runs one piece of the cron's work. A panic there is a bug in that piece, not a reason to
// end the process: it is logged and the cron goes on at the next tick, as a panic in a command
// closes only its connection. Shard tokens are released by Group.Do's own defer.
func (s *Server) tick(name string, fn func()) {
	defer func() {
		if p := recover(); p != nil {
			s.log.Error("background work panicked", "work", name, "panic", fmt.Sprint(p),
				"stack", string(debug.Stack()))
		}
	}()
	fn()
}

func (s *Server) hz() int { return max(1, min(500, int(s.cfg.Int("hz")))) }

// Run is the whole program: parse arguments, start, serve until SHUTDOWN or a signal.
func Run(args []string) error {
	cfg, err := config.Load(args)
	if err != nil {
		return err
	}
	s, err := New(cfg)
	if err != nil {
		return err
	}
	if err := s.Listen(); err != nil {
		return err
	}
	s.Start()
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	for {
		select {
		case got := <-sig:
			name := "SIGTERM"
			if got == syscall.SIGINT {
				name = "SIGINT"
			}
			s.log.Warn("Received " + name + " scheduling shutdown...")
			if err := s.shutdown(false, false, false, false); err != nil {
				s.log.Warn(name + " received but errors trying to shut down the server, check the logs for more information")
				continue
			}
		case <-s.Done():
		}
		select {
		case <-s.loaded:
			return s.loadErr
		default:
			return nil // stopped while loading
		}
	}
}

func newLogger(cfg *config.Store) (*slog.Logger, error) {
	out := os.Stderr
	if f := cfg.String("logfile"); f != "" {
		var err error
		out, err = os.OpenFile(f, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			return nil, fmt.Errorf("cannot open logfile: %w", err)
		}
	}
	level := new(slog.LevelVar)
	level.Set(logLevel(cfg.String("loglevel")))
	cfg.OnChange("loglevel", func(v string) { level.Set(logLevel(v)) })
	l := slog.New(slog.NewTextHandler(out, &slog.HandlerOptions{Level: level}))
	slog.SetDefault(l)
	return l, nil
}

// logLevel maps Redis's log levels onto slog's.
func logLevel(name string) slog.Level {
	return map[string]slog.Level{"debug": slog.LevelDebug, "verbose": slog.LevelDebug,
		"notice": slog.LevelInfo, "warning": slog.LevelWarn, "nothing": slog.LevelError + 4}[name]
}

// applyIdleTimeout applies CONFIG SET timeout to every connected client, as Redis's client cron
// checks each client against the current value.
func (s *Server) applyIdleTimeout() {
	d := time.Duration(s.cfg.Int("timeout")) * time.Second
	s.Engine.EachClient(func(cl *command.Client) {
		if cl.SetIdle != nil {
			cl.SetIdle(d)
		}
	})
}

// configStore adapts config.Store to the command layer's view (CONFIG REWRITE writes the file
// the server was started with).
type configStore struct{ *config.Store }

func (c configStore) Rewrite() error { return c.Store.Rewrite(c.Store.ConfigFile()) }
