package command

import (
	"math/bits"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hotkv/hotkv/ds/keyspace"
	"github.com/hotkv/hotkv/ds/tags"
	"github.com/hotkv/hotkv/net/resp"
	"github.com/hotkv/hotkv/pipeline"
	"github.com/hotkv/hotkv/pipeline/feed"
	"github.com/hotkv/hotkv/src/acl"
	"github.com/hotkv/hotkv/src/cluster"
	"github.com/hotkv/hotkv/src/pubsub"
	"github.com/puzpuzpuz/xsync/v3"
)

// Settings are the configuration values the command layer reads on its hot path. The server
// replaces the whole snapshot when CONFIG SET changes one of them.
type Settings struct {
	RequirePass     string
	ProtoMaxBulkLen int64
	QueryBufLimit   int64
	MaxClients      int
	ProtectedMode   bool

	// Encoding thresholds (OBJECT ENCODING answers Redis's names by these).
	ListMaxListpackSize    int64 // list-max-listpack-size (negative: a size class in KB)
	HashMaxListpackEntries int64
	HashMaxListpackValue   int64
	SetMaxIntsetEntries    int64
	SetMaxListpackEntries  int64
	SetMaxListpackValue    int64
	ZSetMaxListpackEntries int64
	ZSetMaxListpackValue   int64

	LazyfreeLazyExpire bool // expired keys propagate as UNLINK, not DEL
	// The other lazyfree-lazy-* directives (lazyfree.go): DEL as UNLINK, FLUSHDB/FLUSHALL
	// without an argument as ASYNC; server-del and eviction are kept for the paths that read them.
	LazyfreeUserDel   bool
	LazyfreeUserFlush bool
	LazyfreeServerDel bool
	LazyfreeEviction  bool
	// ReplicaIgnoreMaxmemory: a replica leaves eviction to its primary (replica-ignore-maxmemory).
	ReplicaIgnoreMaxmemory bool
	PubSubOutputLimit      OutputLimit
	// NormalOutputLimit and ReplicaOutputLimit are client-output-buffer-limit's other classes
	// (replicas' is kept for replication); MaxMemoryClients is maxmemory-clients in bytes (a
	// percentage already applied to maxmemory), 0 = off (client_limits.go).
	NormalOutputLimit    OutputLimit
	ReplicaOutputLimit   OutputLimit
	MaxMemoryClients     int64
	TrackingTableMaxKeys int64
	// NotifyKeyspaceEvents are notify-keyspace-events' classes (Class bits).
	NotifyKeyspaceEvents int64
	HllSparseMaxBytes    int64 // hll-sparse-max-bytes: a larger sparse HLL turns dense
	// StreamNodeMaxBytes and StreamNodeMaxEntries are stream-node-max-bytes and
	// stream-node-max-entries (0: no limit), the node limits new stream entries are packed under.
	StreamNodeMaxBytes   int64
	StreamNodeMaxEntries int64
	// ValueCompression is value-compression's algorithm (ds/compress.Algo: 0 no, 1 lz4, 2 zstd);
	// longer strings than ValueCompressionThreshold bytes are packed (strings_packed.go).
	ValueCompression          int64
	ValueCompressionThreshold int64

	// Scripts (scripting.go): busy-reply-threshold in milliseconds, lua-max-memory in bytes
	// (HotKV's), lua-strict-keys (HotKV's: a script's undeclared key is an error).
	BusyReplyThreshold int64
	LuaMaxMemory       int64
	LuaStrictKeys      bool

	// Observability (stats_call.go): slowlog-log-slower-than (µs, negative off), slowlog-max-len,
	// latency-monitor-threshold (ms, 0 off), latency-tracking.
	SlowlogLogSlowerThan    int64
	SlowlogMaxLen           int64
	LatencyMonitorThreshold int64
	LatencyTracking         bool
}

// DefaultSettings are Redis 7.0.15's defaults.
func DefaultSettings() Settings {
	return Settings{ProtoMaxBulkLen: 512 << 20, QueryBufLimit: 1 << 30, MaxClients: 10000,
		ProtectedMode: true, ListMaxListpackSize: -2, HashMaxListpackEntries: 512,
		HashMaxListpackValue: 64, SetMaxIntsetEntries: 512, SetMaxListpackEntries: 128,
		SetMaxListpackValue: 64, ZSetMaxListpackEntries: 128, ZSetMaxListpackValue: 64,
		PubSubOutputLimit: OutputLimit{Hard: 32 << 20, Soft: 8 << 20, SoftSeconds: 60}, TrackingTableMaxKeys: 1_000_000,
		ReplicaOutputLimit: OutputLimit{Hard: 256 << 20, Soft: 64 << 20, SoftSeconds: 60},
		HllSparseMaxBytes:  3000, BusyReplyThreshold: 5000, LuaMaxMemory: 256 << 20,
		StreamNodeMaxBytes: 4096, StreamNodeMaxEntries: 100,
		SlowlogLogSlowerThan: 10000, SlowlogMaxLen: 128, LatencyTracking: true,
		ValueCompressionThreshold: 512, ReplicaIgnoreMaxmemory: true}
}

// ConfigStore is the run-time configuration behind CONFIG (src/config implements it).
type ConfigStore interface {
	Get(pattern string) [][2]string
	Set(pairs [][2]string) error
	Rewrite() error
}

// Hooks are the server's services the command layer calls.
type Hooks struct {
	// Cluster is cluster mode (cluster.go); nil when cluster-enabled is no.
	Cluster ClusterHooks
	// Shutdown stops the server (SHUTDOWN); save asks for a snapshot first. A non-nil error is
	// replied to the client and the server keeps running.
	Shutdown func(save, nosave, now, force bool) error
	// Info appends server-level INFO fields the command layer does not own.
	Info func(section string, dst []byte) []byte
	// Persistence (persist_cmds.go): nil answers as a server without the feature. A
	// ReplyError is replied as it is; other errors as each command's Redis text.
	Save         func() error                                    // SAVE: a foreground snapshot
	BGSave       func(schedule bool) (scheduled bool, err error) // BGSAVE [SCHEDULE]
	LastSave     func() int64                                    // LASTSAVE: unix seconds of the last successful save
	BGRewriteAOF func() (scheduled bool, err error)              // BGREWRITEAOF
	DebugReload  func(merge, noflush, nosave bool) error         // DEBUG RELOAD
	// Repl is the server's replication (repl.go); nil answers as a lone primary.
	Repl ReplHooks
}

// shardData is one shard's databases.
type shardData struct {
	id       int32
	dbs      []*keyspace.Keyspace
	ctx      Ctx // for the shard's own work
	serve    Ctx // for serving blocked clients while ctx is in use
	block    blockState
	stats    shardStats
	warmSink uint64     // keeps warm's loads from being optimised away
	hfe      hfeQueues  // hash field expiry queues (hashes_expire.go)
	vexp     vexpQueues // vector-set element expiry queues (vset_expire.go); nil until used
	ipexp    vexpQueues // IP set entry expiry queues (ipsets.go); nil until used
	memexp   vexpQueues // agent-memory expiry queues (mem_expire.go); nil until used
	watch    watchState // WATCHed keys of the shard (watch.go)
	// epoch advances where no handler holds an entry of the shard (after a work item, a
	// barrier, before the expiry sweep): the keyspaces reuse removed entries only after it
	// moved (ds/keyspace/slab.go).
	epoch uint64
	// running is the Ctx of the call that holds the shard now, which keys found expired are
	// reported to; nil outside calls (the active expiry), which report to bg.
	running *Ctx
	bg      Ctx
	tags    []*tags.Index // each database's key tags (tags.go)
	mem     shardMem      // used memory and the eviction pool (evict.go)
	busy    busyMark      // the last script run that was busy holding the shard (scripting_busy.go)
}

// Engine is the command layer of one server: the table, the shards' data, the clients.
type Engine struct {
	Group     *pipeline.Group
	warmOn    bool // warm.go; off with HOTKV_NOWARM=1
	shardBits int
	// slotShards: a key's shard is its cluster slot mod shards (Options.SlotShards), else the
	// high bits of its hash.
	slotShards bool
	dbCount    int
	settings   atomic.Pointer[Settings]
	acl        *acl.Registry          // users (acl.go)
	aclPass    atomic.Pointer[string] // requirepass as last applied to the default user
	Config     ConfigStore
	Hooks      Hooks
	// Feed is the write-effect feed the shards append replicated writes to (effects.go).
	Feed *feed.Feed
	// PubSub holds the subscriptions of every client (pubsub.go).
	PubSub *pubsub.Registry
	track  trackingState // client-side caching (tracking.go)
	notify atomic.Int64  // NotifyKeyspaceEvents of the settings, read on every Notify
	// eventsMu makes one write's keyspace events reach every subscriber together, each keyspace
	// message beside its keyevent one, as a single-threaded Redis sends them: connections on
	// different shards publish at once.
	eventsMu sync.Mutex
	watching atomic.Int64 // WATCHes registered in every shard (watch.go)

	clients  *xsync.MapOf[uint64, *Client]
	climits  clientLimits  // the client cron's measurements (client_limits.go)
	lazy     lazyfreeState // lazy freeing's counters (lazyfree.go)
	clientID atomic.Uint64
	stats    serverStats
	started  time.Time
	pause    pauseState
	rng      atomic.Uint64
	info     infoState     // INFO's ids, peak memory and ops sampler (info_metrics.go)
	repl     replGate      // the replica gates' master client (repl.go)
	net      netState      // closed clients' network bytes (stats_net.go)
	reclaim  reclaimState  // collection after mass deletion (reclaim.go)
	readers  []readerState // per P, for shared work (shared.go)
	// scripting is the Lua engine and the scripts' locking state (scripting.go).
	scripting scriptingState
	// snapshot is the point-in-time snapshot running now, nil when none (snapshot.go).
	snapshot atomic.Pointer[Snapshot]
	// persist holds the -LOADING and -MISCONF gates (persist_gate.go).
	persist persistState
	// mem is the memory budget and eviction (evict.go).
	mem memState
	// lat is SLOWLOG, LATENCY, MONITOR and the command histograms (stats_call.go).
	lat obsState
	// tagsOn is set by the first TAG.SET: until then overwrites skip the tag index (tags.go).
	tagsOn atomic.Bool
	// names is rename-command's table, set before serving (rename.go); nil without renames.
	names *renameTable
	// vsetUID numbers vector sets for VINFO's vset-uid (vset.go).
	vsetUID atomic.Uint64
}

// Options configure a new Engine.
type Options struct {
	Shards    int // rounded up to a power of two
	Databases int
	Settings  Settings
	Config    ConfigStore
	// SlotShards places keys by cluster slot (cluster-enabled yes): shard = slot mod shards, so
	// every command a cluster allows (its keys in one slot) runs on one shard.
	SlotShards bool
}

// NewEngine builds the shards and their empty databases.
func NewEngine(o Options) *Engine {
	bitsN := bits.Len(uint(max(o.Shards, 1) - 1))
	e := &Engine{shardBits: bitsN, slotShards: o.SlotShards, dbCount: o.Databases, Config: o.Config,
		started: time.Now()}
	e.clients = xsync.NewMapOf[uint64, *Client]()
	e.stats.errorKinds = xsync.NewMapOf[string, *atomic.Int64]()
	e.rng.Store(uint64(time.Now().UnixNano()) | 1)
	e.initObs()
	e.acl = acl.NewRegistry(aclTablesOnce().cat)
	e.SetSettings(o.Settings)
	e.Group = pipeline.NewGroup(1<<bitsN, e.execWork, func(i int) any {
		d := &shardData{id: int32(i), dbs: make([]*keyspace.Keyspace, o.Databases), hfe: hfeQueues{}}
		for db := range d.dbs {
			d.dbs[db] = keyspace.New()
			d.dbs[db].SetEpoch(&d.epoch)
			d.dbs[db].OnExpire = func(key string) { e.expiredLocked(d, db, key) }
			d.dbs[db].OnNew = func(key string) { e.newKeyLocked(d, db, key) }
		}
		e.initShardMem(d)
		e.initTags(d)
		d.stats.cmds, d.stats.hists = make([]cmdCounter, numSpecs), newHistSet()
		d.ctx.E, d.serve.E, d.bg.E = e, e, e
		d.ctx.stats, d.serve.stats, d.bg.stats = &d.stats, &d.stats, &d.stats
		d.ctx.fx.ring, d.serve.fx.ring, d.bg.fx.ring = int32(i), int32(i), int32(i)
		return d
	})
	e.readers = newReaders(e.Group.Readers())
	e.initScripting()
	e.Feed = feed.New(len(e.Group.Shards), feedRingBytes)
	e.PubSub = pubsub.New()
	e.track.init()
	// HOTKV_NOWARM=1 runs batches without warming, for A/B benchmarks (benchmarks/README.md).
	if e.warmOn = os.Getenv("HOTKV_NOWARM") == ""; e.warmOn {
		e.Group.Warm = e.warm
	}
	return e
}

// feedRingBytes is each shard's share of the write-effect feed: what a consumer may lag behind
// one shard before it loses entries.
const feedRingBytes = 1 << 20

// SetSettings replaces the hot-path configuration snapshot.
func (e *Engine) SetSettings(s Settings) {
	e.settings.Store(&s)
	e.applyRequirePass(s.RequirePass)
	e.notify.Store(s.NotifyKeyspaceEvents)
	e.track.maxKeys.Store(s.TrackingTableMaxKeys)
	e.applyScriptSettings(&s)
	e.applyObsSettings(&s)
}

// Settings returns the current hot-path configuration.
func (e *Engine) Settings() *Settings { return e.settings.Load() }

// Databases returns the number of databases.
func (e *Engine) Databases() int { return e.dbCount }

// shardOf maps a key to its shard: the high bits of its hash, or in cluster mode its slot mod
// the shard count.
func (e *Engine) shardOf(key []byte) int32 { return e.shardOfKey(key, keyspace.Hash(key)) }

// shardOfKey is shardOf for a key whose hash h the caller has.
func (e *Engine) shardOfKey(key []byte, h uint64) int32 {
	switch {
	case e.shardBits == 0:
		return 0
	case e.slotShards:
		return int32(cluster.KeySlot(key) & (1<<e.shardBits - 1))
	}
	return int32(h >> (64 - e.shardBits))
}

// SlotShards reports whether keys are placed by cluster slot (Options.SlotShards).
func (e *Engine) SlotShards() bool { return e.slotShards }

func (e *Engine) data(shard int32) *shardData { return e.Group.Shards[shard].Data.(*shardData) }

func (e *Engine) keyspace(db int, key []byte) *keyspace.Keyspace {
	return e.data(e.shardOf(key)).dbs[db]
}

// rand returns a pseudo-random number, safe for concurrent use: splitmix64 over an atomic
// counter (one atomic add, no retry loop). It was xorshift, whose next number's lowest bit is a
// function of bits 0 and 7 of the one before: Keyspace.Sample takes a bucket from one number and
// a place in the bucket's chain from the next, so in a table of 256 buckets or more a chain of
// two always gave the same key, and RANDOMKEY never returned 22% of the keys
// (TestRandomKeyReachesEveryKey; the eviction sampler had the same flaw, sampleRand).
func (e *Engine) rand() uint64 { return splitmix(e.rng.Add(splitmixGamma)) }

// NewClient registers a client for a new connection.
func (e *Engine) NewClient(addr, laddr string, closeFn func()) *Client {
	cl := &Client{ID: e.clientID.Add(1), Proto: 2, Addr: addr, LAddr: laddr, Close: closeFn,
		Created: time.Now().UnixNano()}
	cl.aclEnt.Store(e.acl.Default())
	cl.Authed = !e.authRequired()
	cl.User = "default"
	empty := ""
	cl.lastCmd.Store(&empty)
	cl.lastSeen.Store(cl.Created)
	cl.ctx.E, cl.ctx.Client, cl.e = e, cl, e
	cl.ctx.fx.ring = -1 // it holds no shard of its own: enter sets one while it does
	e.clients.Store(cl.ID, cl)
	e.stats.connections.Add(1)
	return cl
}

// RemoveClient unregisters a closed connection's client and drops its subscriptions.
func (e *Engine) RemoveClient(cl *Client) {
	e.netClosed(cl, func() { e.clients.Delete(cl.ID) })
	e.unwatchAll(cl)
	cl.unsubscribeAll(e)
	e.disableTracking(cl)
	e.stopMonitor(cl)
}

// EachClient calls fn for every connected client.
func (e *Engine) EachClient(fn func(cl *Client)) {
	e.clients.Range(func(_ uint64, cl *Client) bool { fn(cl); return true })
}

// ClientCount returns the number of connected clients.
func (e *Engine) ClientCount() int { return e.clients.Size() }

// RejectConnection counts a connection refused for maxclients.
func (e *Engine) RejectConnection() { e.stats.rejectedConns.Add(1) }

// limitsView caches a client's parser limits.
type limitsView struct {
	lim resp.Limits
}

// Limits returns the parser limits for cl.
func (e *Engine) Limits(cl *Client) *resp.Limits {
	s := e.Settings()
	cl.limitsV.lim = resp.Limits{MaxBulkLen: s.ProtoMaxBulkLen, Unauthenticated: !cl.Authed}
	return &cl.limitsV.lim
}

// Env returns the pipeline environment that runs this engine's commands.
func (e *Engine) Env() *pipeline.Env {
	return &pipeline.Env{
		Group:            e.Group,
		Route:            func(client any, s *pipeline.Slot) { e.route(client.(*Client), s) },
		Barrier:          e.barrier,
		Limits:           func(client any) *resp.Limits { return e.Limits(client.(*Client)) },
		QueryBufferLimit: func() int { return int(e.Settings().QueryBufLimit) },
		BeginBatch: func(client any, now int64) {
			cl := client.(*Client)
			cl.batchNow = now
			cl.lastSeen.Store(now)
		},
		MayBlock: func(client any, args [][]byte) bool { return e.mayBlock(client.(*Client), args) },
		Closing:  func(client any) bool { cl := client.(*Client); return cl.closeAfter || cl.killed.Load() },
		Completed: func(client any, slots []pipeline.Slot) {
			if cl := client.(*Client); e.notify.Load() != 0 || cl.push.size.Load() > 0 || e.track.pending.Load() > 0 ||
				len(cl.toWake) > 0 {
				e.completed(cl, slots)
			}
		},
		TakePushes: func(client any, dst []byte) []byte { return e.TakePushes(client.(*Client), dst) },
		Buffered:   func(client any, n int) { client.(*Client).shown.qbuf.Store(int64(n)) },
		NetBytes:   func(client any, in, out int) { e.noteNetBytes(client.(*Client), in, out) },
	}
}
