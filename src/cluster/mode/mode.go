// Package mode is a server's cluster mode: the node state (cluster.State) on its bus (link.Bus), its
// nodes.conf, the CLUSTER command's replies, and the lock-free slot table the command route reads to
// redirect (MOVED, CLUSTERDOWN). It implements command.ClusterHooks.
package mode

import (
	"bytes"
	"cmp"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hotkv/hotkv/src/cluster"
	"github.com/hotkv/hotkv/src/cluster/link"
)

// Options configure cluster mode (the cluster-* directives).
type Options struct {
	ConfigFile    string // cluster-config-file, relative to the working directory (dir)
	IP            string // the address the node is known at; "" learns it from the first MEET
	Port, BusPort int    // announced client and bus ports
	BusListen     int    // the port the bus listens on (BusPort unless cluster-announce-bus-port)
	BusBind       string // address the bus listens on ("" = all)
	Hostname      string // cluster-announce-hostname
	// Config is the state machine's settings from the cluster-* directives (and
	// repl-ping-replica-period); its AllowReadsWhenDown is also the routing's, read at start.
	Config cluster.Config
	// OnPublish delivers a PUBLISH or SPUBLISH that arrived on the bus to local subscribers.
	OnPublish func(shard bool, channel, message []byte)
	// OnReplicate makes the server a replica of host:port (CLUSTER REPLICATE, or a nodes.conf that
	// says myself is a replica); the data replication is the server's (src/server/repl*.go).
	OnReplicate func(host string, port int)
	// OnPromote makes the server a master again (an election won: REPLICAOF NO ONE's replication
	// side, keeping the history for its siblings' PSYNC).
	OnPromote func()
	// ReplOffset is the server's replication offset (master_repl_offset, or a replica's applied
	// offset) for the bus headers; called under the bus lock, so it must not wait on the bus.
	ReplOffset func() uint64
	// DataAge is how long ago, in ms, a replica last heard from its primary (cluster.Local's
	// DataAge); called under the bus lock like ReplOffset.
	DataAge func() int64
	// OnPauseWrites pauses client writes (on) until it is called with false, for a manual failover
	// a replica asked for (cluster/manual.go). Pausing returns once the writes already under way
	// are in the replication stream, so ReplOffset no longer moves.
	OnPauseWrites func(on bool)
}

// Mode is a running cluster mode.
type Mode struct {
	opts  Options
	bus   *link.Bus
	route atomic.Pointer[routeTable]
	built uint64     // the State.Version route was built at (under the bus lock)
	rnd   *rand.Rand // for elections run from commands (under the bus lock)

	// actions run the replication changes the state asks for, in order, off the bus lock.
	actions chan func()
	done    chan struct{}

	pausing bool // the state's WantPause as last acted on (under the bus lock)

	saveMu    sync.Mutex
	lastSaved []byte
	lastSave  int64
}

// routeTable is an immutable snapshot of who serves each slot, rebuilt under the bus lock when the
// state changes and read by Redirect without locks.
type routeTable struct {
	owner     [cluster.Slots]int16 // index into addrs, -1 unassigned
	importing [cluster.Slots]bool
	migrating [cluster.Slots]int16 // index into addrs of the node a slot of myself migrates to, -1 none
	addrs     []string             // "ip:port" of each master
	self      int16                // myself's index when a master, else -1
	master    int16                // myself's master's index when a replica, else -1
	ok        bool
}

// Open loads or creates nodes.conf and starts the bus.
func Open(o Options) (*Mode, error) {
	cfg := o.Config
	now := time.Now().UnixMilli()
	var st *cluster.State
	if b, err := os.ReadFile(o.ConfigFile); err == nil {
		if st, err = cluster.LoadConfig(b, cfg, now); err != nil {
			return nil, err
		}
	} else if !os.IsNotExist(err) {
		return nil, fmt.Errorf("cannot read the cluster config file %s: %w", o.ConfigFile, err)
	}
	if st == nil {
		st = cluster.New("", cfg)
	}
	me := st.Myself
	me.Port, me.CPort, me.Hostname = o.Port, o.BusPort, o.Hostname
	if o.IP != "" {
		me.IP = o.IP
	}
	m := &Mode{opts: o, actions: make(chan func(), 64), done: make(chan struct{}),
		rnd: rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 2))}
	go m.runActions()
	bus, err := link.Start(net.JoinHostPort(o.BusBind, strconv.Itoa(cmp.Or(o.BusListen, o.BusPort))), st,
		cluster.Local{Port: o.Port, CPort: o.BusPort, AnnounceIP: o.IP, Hostname: o.Hostname})
	if err != nil {
		return nil, err
	}
	m.bus = bus
	bus.SetSources(o.ReplOffset, o.DataAge)
	bus.OnPublish = o.OnPublish
	bus.OnChange = m.changed
	bus.Do(func(st *cluster.State, now int64) []cluster.Out {
		m.changed(st)
		return nil
	})
	return m, nil
}

// FollowMaster starts replication from myself's master when nodes.conf made myself a replica; the
// server calls it once its start-up load has begun (Open runs before the listeners serve, so the
// route sees the hook from the first command on).
func (m *Mode) FollowMaster() {
	var master *cluster.Node
	m.bus.Do(func(st *cluster.State, now int64) []cluster.Out {
		master = st.Myself.Master
		return nil
	})
	if master != nil && m.opts.OnReplicate != nil {
		m.opts.OnReplicate(master.IP, master.Port)
	}
}

// Configure changes the state machine's settings at run time (CONFIG SET of a cluster-*
// directive): f edits them under the bus lock, so the next message or Tick reads them.
func (m *Mode) Configure(f func(*cluster.Config)) {
	m.bus.Do(func(st *cluster.State, now int64) []cluster.Out {
		f(&st.Cfg)
		st.UpdateMyselfFlags()
		return nil
	})
}

// Close stops the bus and saves nodes.conf.
func (m *Mode) Close() {
	m.bus.Do(func(st *cluster.State, now int64) []cluster.Out {
		m.save(st, true)
		return nil
	})
	m.bus.Close()
	close(m.actions)
	<-m.done
}

func (m *Mode) runActions() {
	defer close(m.done)
	for f := range m.actions {
		f()
	}
}

// changed runs under the bus lock after every message and tick.
func (m *Mode) changed(st *cluster.State) {
	if m.route.Load() == nil || st.Version != m.built {
		m.route.Store(buildRoute(st))
		m.built = st.Version
	}
	if st.Promoted {
		st.Promoted = false
		if f := m.opts.OnPromote; f != nil {
			m.actions <- f
		}
	}
	if st.Demoted {
		st.Demoted = false
		if f, ms := m.opts.OnReplicate, st.Myself.Master; f != nil && ms != nil {
			host, port := ms.IP, ms.Port
			m.actions <- func() { f(host, port) }
		}
	}
	if want := st.WantPause(); want != m.pausing {
		m.pausing = want
		m.actions <- func() { m.pauseWrites(want) }
	}
	m.save(st, false)
}

// pauseWrites runs a change of the manual failover's write pause (off the bus lock); once writes
// are paused the state sends the paused offset to the replica.
func (m *Mode) pauseWrites(on bool) {
	if f := m.opts.OnPauseWrites; f != nil {
		f(on)
	}
	if on {
		m.bus.Do(func(st *cluster.State, now int64) []cluster.Out {
			outs := st.Paused(m.bus.Local(), now, m.rnd)
			m.changed(st)
			return outs
		})
	}
}

// save writes nodes.conf when it changed, at most once a second unless now (a CLUSTER command).
func (m *Mode) save(st *cluster.State, now bool) error {
	m.saveMu.Lock()
	defer m.saveMu.Unlock()
	t := time.Now().UnixMilli()
	if !now && t-m.lastSave < 1000 {
		return nil
	}
	b := st.SaveConfig()
	if bytes.Equal(b, m.lastSaved) {
		return nil
	}
	tmp := filepath.Join(filepath.Dir(m.opts.ConfigFile), "temp-"+filepath.Base(m.opts.ConfigFile))
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return err
	}
	if err := os.Rename(tmp, m.opts.ConfigFile); err != nil {
		return err
	}
	m.lastSaved, m.lastSave = b, t
	return nil
}

func buildRoute(st *cluster.State) *routeTable {
	rt := &routeTable{self: -1, master: -1, ok: st.OK}
	idx := map[*cluster.Node]int16{}
	index := func(n *cluster.Node) int16 {
		i, ok := idx[n]
		if !ok {
			i = int16(len(rt.addrs))
			idx[n] = i
			rt.addrs = append(rt.addrs, net.JoinHostPort(n.IP, strconv.Itoa(n.Port)))
		}
		return i
	}
	for slot := range cluster.Slots {
		o := st.Owner[slot]
		rt.importing[slot] = st.Importing[slot] != nil
		rt.migrating[slot] = -1
		if o == nil {
			rt.owner[slot] = -1
			continue
		}
		rt.owner[slot] = index(o)
		if to := st.Migrating[slot]; to != nil && o == st.Myself {
			rt.migrating[slot] = index(to)
		}
	}
	if i, ok := idx[st.Myself]; ok {
		rt.self = i
	}
	if mm := st.Myself.Master; mm != nil {
		if i, ok := idx[mm]; ok {
			rt.master = i
		}
	}
	return rt
}

// Publish sends PUBLISH (or SPUBLISH, shard true) to the other nodes (command.ClusterHooks).
func (m *Mode) Publish(shard bool, channel, message []byte) {
	m.bus.Do(func(st *cluster.State, now int64) []cluster.Out {
		return st.PublishMsgs(shard, channel, message, m.bus.Local())
	})
}

// Redirect is route's check (command.ClusterHooks), as Redis's getNodeByQuery; for a slot being
// migrated from myself, or imported by an ASKING client, the command's keys decide (the command
// route tests them holding their shards, then answers -ASK or -TRYAGAIN).
func (m *Mode) Redirect(slot int, write, asking, readonly bool) (string, cluster.SlotOpen, string) {
	rt := m.route.Load()
	o := rt.owner[slot]
	switch {
	case o < 0:
		return "CLUSTERDOWN Hash slot not served", cluster.SlotStable, ""
	case !rt.ok && !m.opts.Config.AllowReadsWhenDown:
		return "CLUSTERDOWN The cluster is down", cluster.SlotStable, ""
	case !rt.ok && write:
		return "CLUSTERDOWN The cluster is down and only accepts read commands", cluster.SlotStable, ""
	case o == rt.self:
		if to := rt.migrating[slot]; to >= 0 {
			return "", cluster.SlotMigrating, rt.addrs[to]
		}
		return "", cluster.SlotStable, ""
	case asking && rt.importing[slot]:
		return "", cluster.SlotImporting, ""
	case readonly && !write && o == rt.master:
		return "", cluster.SlotStable, ""
	}
	return "MOVED " + strconv.Itoa(slot) + " " + rt.addrs[o], cluster.SlotStable, ""
}
