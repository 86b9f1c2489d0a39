package command

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/hotkv/hotkv/src/acl"
	"github.com/hotkv/hotkv/src/pubsub"
	"github.com/hotkv/hotkv/src/script"
)

// Reply modes of CLIENT REPLY.
const (
	replyOn = iota
	replyOff
	replySkip
)

// Client is one connection's command-layer state. Fields without a lock are touched only by the
// connection's own goroutine; the ones CLIENT LIST and CLIENT KILL read from other connections
// are atomics or under mu.
type Client struct {
	ID     uint64
	DB     int
	Proto  int
	Authed bool
	User   string
	// aclEnt is the ACL user (acl_check.go); atomic: DELUSER and ACL LOAD on other connections
	// look for the clients of the users they remove.
	aclEnt atomic.Pointer[acl.Entry]
	// aclRecheck asks the connection's own goroutine to check its subscriptions against its
	// user's changed channel rules (acl.go, aclRecheckSubs).
	aclRecheck atomic.Bool
	cluster    clusterClient // ASKING, READONLY (cluster.go)

	replyMode  int
	skipNext   bool
	sha        script.ShaCache // the last EVALSHA's script (scripting.go)
	closeAfter bool            // QUIT or a panic: close once this batch's replies are written
	noEvict    bool
	noTouch    bool

	Addr, LAddr string
	Created     int64 // unix ns

	mu      sync.Mutex
	name    string
	libName string
	libVer  string

	lastCmd  atomic.Pointer[string]
	lastSeen atomic.Int64 // unix ns of the last command
	dbShown  atomic.Int32 // DB as CLIENT LIST shows it
	killed   atomic.Bool

	// shown mirrors owner-only fields for CLIENT LIST/KILL on other connections (client_info.go).
	shown clientShown
	net   netCounters // bytes in and out (stats_net.go)
	// forceReply is set by CLIENT REPLY ON: its own reply is sent even though the slot was
	// routed while replies were off or skipped (route clears Slot.Silent when it is set).
	forceReply bool
	// ownPending is set when route sent a script to its shard (scripting_place.go) and cleared
	// by the next barrier: until then connection commands run as barriers, after that work,
	// since the script reads the connection's state (its user) while it runs.
	ownPending bool
	// hintSHA and hint are route's one-entry cache of the last EVALSHA's script Hint
	// (scripting_place.go); owner only.
	hintSHA [40]byte
	hint    *atomic.Int32

	// Close closes the connection from any goroutine (CLIENT KILL).
	Close func()
	// SetIdle, when set, changes the connection's idle timeout (CONFIG SET timeout).
	SetIdle func(time.Duration)
	// Alive, when set, reports whether the connection is still open (a blocked client polls it).
	Alive func() bool
	// Wake, when set, asks the connection's own goroutine to serve it soon (its transport's
	// Conn.Wake): pushes queued by other goroutines are written then (push.go).
	Wake func()
	// pending, when set (SetPending), returns the input and output the connection's transport
	// holds beyond the pipeline (net/transport's Pending), for the output limits and tot-mem
	// (client_limits.go). Atomic: the client cron reads it from the moment NewClient listed the
	// client, while the transport's Open is still setting it.
	pending atomic.Pointer[func() (in, out int64)]
	// obufSoftSince is when the client's output last went over its soft limit (unix ns), 0 while
	// under it; the client cron and the push outbox both keep it.
	obufSoftSince atomic.Int64
	e             *Engine

	subs  subState   // its subscriptions (pubsub.go), owner-only
	track trackState // CLIENT TRACKING (tracking.go)
	tx    txState    // MULTI and WATCH (multi.go, watch.go)
	// toWake are subscribers this client\'s commands queued messages for, woken once its batch
	// has run (push.go); owner-only.
	toWake             []*pubsub.Subscriber
	push               pushBox      // pushes queued for it by other goroutines (push.go)
	nsub, npsub, nssub atomic.Int32 // subscription counts for CLIENT LIST and INFO
	protoShown         atomic.Int32 // Proto, for publishers encoding its messages
	// blockedOn is the waiter of the client's blocked command, for CLIENT UNBLOCK.
	blockedOn atomic.Pointer[waiter]

	lastSpec *Spec // the previous command, for CLIENT LIST's cmd
	// recent are the last commands without subcommands this client sent, which route checks
	// before the command table: pipelines repeat one, transactions cycle through a few.
	recent     [4]*Spec
	recentNext uint8
	ctx        Ctx    // for connection and barrier commands
	batchNow   int64  // the running batch's time (unix ns), for connection commands
	connRuns   uint32 // connection commands run, for sampling their duration (see timeSample)
	keyPos     []int  // scratch for key extraction
	shards     []int32
	limitsV    limitsView
}

// Name returns the client's name (CLIENT SETNAME).
func (cl *Client) Name() string {
	cl.mu.Lock()
	defer cl.mu.Unlock()
	return cl.name
}

// SetName sets the client's name.
func (cl *Client) SetName(n string) {
	cl.mu.Lock()
	cl.name = n
	cl.mu.Unlock()
}

// Lib returns the library name and version from CLIENT SETINFO.
func (cl *Client) Lib() (name, ver string) {
	cl.mu.Lock()
	defer cl.mu.Unlock()
	return cl.libName, cl.libVer
}

// SetLib sets one of the CLIENT SETINFO attributes.
func (cl *Client) SetLib(name, ver *string) {
	cl.mu.Lock()
	if name != nil {
		cl.libName = *name
	}
	if ver != nil {
		cl.libVer = *ver
	}
	cl.mu.Unlock()
}

// Kill marks the client killed and closes its connection.
func (cl *Client) Kill() {
	if cl.killed.CompareAndSwap(false, true) && cl.Close != nil {
		cl.Close()
	}
}

// CloseAfterReply makes the connection close once the current batch's replies are written.
func (cl *Client) CloseAfterReply() { cl.closeAfter = true }
