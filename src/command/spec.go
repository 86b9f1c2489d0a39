package command

import "sync/atomic"

// Flags are a command's properties, named as COMMAND INFO names them.
type Flags uint32

// The command flags.
const (
	Write Flags = 1 << iota
	ReadOnly
	DenyOOM
	Admin
	PubSub
	NoScript
	Blocking
	Loading
	Stale
	SkipMonitor
	SkipSlowlog
	Fast
	NoAuth
	MayReplicate
	NoMulti
	MovableKeys
	AllowBusy
	NoMandatoryKeys
	Sentinel
	OnlySentinel
	NoAsyncLoading
	TouchesArbitraryKeys
	Asking // served in an importing slot without ASKING (RESTORE-ASKING)
)

var flagNames = []string{
	"write", "readonly", "denyoom", "admin", "pubsub", "noscript", "blocking", "loading", "stale",
	"skip_monitor", "skip_slowlog", "fast", "no_auth", "may_replicate", "no_multi", "movablekeys",
	"allow_busy", "no_mandatory_keys", "sentinel", "only_sentinel", "no_async_loading",
	"touches_arbitrary_keys", "asking",
}

// Names returns the flag names in COMMAND INFO's order. may_replicate is left out: Redis 7.0.15
// sets it inside (PUBLISH, SPUBLISH, PFCOUNT, EVAL, EVALSHA, FCALL) for CLIENT PAUSE WRITE,
// MONITOR clients and scripts, but its COMMAND shows it for no command.
func (f Flags) Names() []string {
	var out []string
	for i, n := range flagNames {
		if f&(1<<i) != 0 && Flags(1<<i) != MayReplicate {
			out = append(out, n)
		}
	}
	return out
}

// Scope says where a command runs, and so which data its handler may touch.
type Scope uint8

const (
	// ScopeKeys (the default for commands with keys): the shards of its keys, locked for the call.
	// Handlers reach data only through Ctx.KS and friends.
	ScopeKeys Scope = iota
	// ScopeConn: on the connection while the batch is routed; touches no shard data (PING,
	// SELECT, CLIENT, CONFIG).
	ScopeConn
	// ScopeAll: every shard locked (FLUSHALL, DBSIZE, KEYS, SWAPDB, INFO).
	ScopeAll
	// ScopeSelf: a barrier on the connection that locks what it needs itself (SCAN).
	ScopeSelf
)

// Spec is one command: a row of data next to its handler. Arity and key positions follow Redis's
// conventions: a negative arity is a minimum, LastKey -1 means the last argument.
type Spec struct {
	Name     string // lower case; a subcommand is "container|sub"
	Arity    int
	Flags    Flags
	FirstKey int
	LastKey  int
	Step     int
	Scope    Scope
	// Member, when set, is the position of an argument the command looks up inside its key's
	// collection (SISMEMBER's member): batch warming loads that lookup's data too (warm.go).
	Member int
	// Rank, when set, is the position of a rank the command starts reading at (ZRANGE's start):
	// batch warming loads the sorted set's node and member at that rank (warm.go).
	Rank int
	Run  func(c *Ctx)
	// NumKeys, when set, is the position of a numkeys argument: the command's keys are the
	// numkeys arguments after it, plus FirstKey..LastKey when those are set (a STORE
	// destination). As Redis's key extraction (genericGetKeys) does, a numkeys that is not a
	// positive integer or counts more arguments than follow it gives no keys at all, the
	// destination included: the handler then replies the error without touching data.
	NumKeys int
	// Keys extracts key positions when they are not a simple range (movablekeys); it returns the
	// indexes of the keys in args.
	Keys func(args [][]byte, dst []int) []int
	// Subs are the subcommands of a container command (CLIENT, CONFIG, …), by lower-case name.
	Subs map[string]*Spec
	// Waits, when set on a Blocking command, reports whether this call may wait (XREAD with a
	// BLOCK option); one that cannot is routed like any command of its keys, not as a barrier.
	// It may answer true wrongly, never false wrongly.
	Waits func(args [][]byte) bool

	id int // index into per-shard statistics, set when the table is built
	// shared marks a command that may run without its shards' tokens (shared.go): it reads
	// its keys only through FindRead and writes nothing else.
	shared bool
	stats  cmdStats
}

type cmdStats struct {
	calls    atomic.Int64
	nsec     atomic.Int64 // time spent, shared evenly among a work item's commands
	rejected atomic.Int64
	failed   atomic.Int64
}

// mayWait reports whether a call of s with args may wait for a key (see Waits).
func (s *Spec) mayWait(args [][]byte) bool {
	return s.Flags&Blocking != 0 && (s.Waits == nil || s.Waits(args))
}

// Sub registers a container's subcommands.
func (s *Spec) sub(specs ...*Spec) *Spec {
	if s.Subs == nil {
		s.Subs = map[string]*Spec{}
	}
	for _, c := range specs {
		s.Subs[c.Name[len(s.Name)+1:]] = c
	}
	return s
}

// FullName returns the name as errors and stats print it ("client|list").
func (s *Spec) FullName() string { return s.Name }

// keyIndexes appends the positions of s's keys in args to dst.
func (s *Spec) keyIndexes(args [][]byte, dst []int) []int {
	if s.Keys != nil {
		return s.Keys(args, dst)
	}
	if s.NumKeys > 0 {
		return s.numKeysIndexes(args, dst)
	}
	return s.rangeIndexes(args, dst)
}

// numKeysIndexes appends the keys of a numkeys command (Spec.NumKeys).
func (s *Spec) numKeysIndexes(args [][]byte, dst []int) []int {
	if s.NumKeys >= len(args) {
		return dst
	}
	n, ok := ParseInt(args[s.NumKeys])
	if !ok || n < 1 || n > int64(len(args)-s.NumKeys-1) {
		return dst
	}
	dst = s.rangeIndexes(args, dst)
	for i := range int(n) {
		dst = append(dst, s.NumKeys+1+i)
	}
	return dst
}

// rangeIndexes appends the keys FirstKey..LastKey (every Step).
func (s *Spec) rangeIndexes(args [][]byte, dst []int) []int {
	if s.FirstKey <= 0 {
		return dst
	}
	last := s.LastKey
	if last < 0 {
		last = len(args) + last
	}
	step := max(s.Step, 1)
	for i := s.FirstKey; i <= last && i < len(args); i += step {
		dst = append(dst, i)
	}
	return dst
}
