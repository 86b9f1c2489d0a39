package server

import (
	"fmt"
	"math"
	"net"
	"time"

	"github.com/hotkv/hotkv/src/cluster"
	"github.com/hotkv/hotkv/src/cluster/mode"
)

// startCluster runs cluster mode when cluster-enabled is yes: nodes.conf (cluster-config-file, in
// dir), the bus on cluster-port or port+10000, and the engine's redirection hook. It runs after the
// listeners are bound (the announced port is the real one) and before they serve (route reads the
// hook without synchronization).
func (s *Server) startCluster() error {
	if !s.cfg.Bool("cluster-enabled") {
		return nil
	}
	port := int(s.cfg.Int("cluster-announce-port"))
	bind := ""
	for _, a := range s.Addrs() {
		if t, ok := a.(*net.TCPAddr); ok {
			if port == 0 {
				port = t.Port
			}
			if !t.IP.IsUnspecified() && bind == "" {
				bind = t.IP.String()
			}
		}
	}
	bus := int(s.cfg.Int("cluster-port"))
	if bus == 0 {
		bus = port + 10000
	}
	cport := bus
	if p := int(s.cfg.Int("cluster-announce-bus-port")); p != 0 {
		cport = p
	}
	m, err := mode.Open(mode.Options{
		ConfigFile: s.cfg.String("cluster-config-file"), IP: s.cfg.String("cluster-announce-ip"),
		Port: port, BusPort: cport, BusListen: bus, BusBind: bind,
		Hostname: s.cfg.String("cluster-announce-hostname"), Config: s.clusterConfig(),
		OnPublish:     s.Engine.PublishFromBus,
		OnReplicate:   func(host string, port int) { s.repl.setMaster(host, port) },
		OnPromote:     func() { s.repl.promote() },
		ReplOffset:    s.repl.busOffset,
		DataAge:       s.repl.busDataAge,
		OnPauseWrites: s.repl.clusterPause,
	})
	if err != nil {
		return err
	}
	s.cluster = m
	// CONFIG SET of the settings the state machine reads takes effect at once, as in Redis.
	apply := func(string) {
		m.Configure(func(c *cluster.Config) { *c = s.clusterConfig() })
	}
	for _, name := range []string{"cluster-node-timeout", "cluster-require-full-coverage",
		"cluster-allow-replica-migration", "cluster-migration-barrier", "cluster-replica-no-failover",
		"cluster-replica-validity-factor", "repl-ping-replica-period"} {
		s.cfg.OnChange(name, apply)
	}
	s.Engine.EnableSlotIndex() // COUNTKEYSINSLOT, GETKEYSINSLOT and the key checks read it
	s.Engine.Hooks.Cluster = m
	return nil
}

// clusterConfig is the cluster state machine's settings as the configuration has them now.
func (s *Server) clusterConfig() cluster.Config {
	return cluster.Config{
		NodeTimeout:           s.cfg.Int("cluster-node-timeout"),
		RequireFullCoverage:   s.cfg.Bool("cluster-require-full-coverage"),
		AllowReadsWhenDown:    s.cfg.Bool("cluster-allow-reads-when-down"),
		AllowReplicaMigration: s.cfg.Bool("cluster-allow-replica-migration"),
		MigrationBarrier:      s.cfg.Int("cluster-migration-barrier"),
		ReplicaNoFailover:     s.cfg.Bool("cluster-replica-no-failover"),
		ReplicaValidityFactor: s.cfg.Int("cluster-replica-validity-factor"),
		ReplPingPeriod:        s.cfg.Int("repl-ping-replica-period"),
	}
}

// followClusterMaster starts replication when nodes.conf says myself is a replica.
func (s *Server) followClusterMaster() {
	if s.cluster != nil {
		s.cluster.FollowMaster()
	}
}

func (s *Server) stopCluster() {
	if s.cluster != nil {
		s.cluster.Close()
	}
}

// busOffset is the replication offset the cluster bus headers carry: master_repl_offset, or a
// replica's applied offset (what Redis's replicationGetSlaveOffset gives). It runs under the bus
// lock, so it never waits for rs.mu: when that is busy the last value read stands in (offsets
// only grow; the next message reads again), and a paused master's is the pause's.
func (r *replState) busOffset() uint64 {
	if r.mfPause.Load() {
		return uint64(r.mfPauseOff.Load())
	}
	if !r.mu.TryLock() {
		return uint64(r.busOff.Load())
	}
	var off int64
	if r.link != nil {
		off = r.link.off.Load()
	} else if r.bl != nil {
		off = r.bl.Offset()
	}
	r.mu.Unlock()
	r.busOff.Store(off)
	return uint64(off)
}

// busDataAge is how long ago, in ms, this replica last heard from its primary, for the cluster's
// cluster-replica-validity-factor rule: since its last byte while the link is up, since the link
// went down otherwise, and math.MaxInt64 when it never was up (Redis's repl_down_since of 0). It
// runs under the bus lock like busOffset, and when rs.mu is busy the last value read stands in.
func (r *replState) busDataAge() int64 {
	if !r.mu.TryLock() {
		return r.busAge.Load()
	}
	age := int64(math.MaxInt64)
	if l := r.link; l != nil {
		now := time.Now().UnixNano()
		if l.up.Load() {
			age = 0 // the link just came up, its first read still to be stamped
			if io := l.lastIO.Load(); io > 0 {
				age = max(now-io, 0) / int64(time.Millisecond)
			}
		} else if d := l.downSince.Load(); d > 0 {
			age = max(now-d, 0) / int64(time.Millisecond)
		}
	}
	r.mu.Unlock()
	r.busAge.Store(age)
	return age
}

// clusterPause is a manual failover's write pause on a master (cluster/manual.go): on, writes
// wait in the route stage (FAILOVER's pause: FAILOVER itself is refused in cluster mode), the
// writes already past it finish and reach the stream, and the offset they end at is the one the
// replica must reach. No PING is written while it holds (pumpLocked).
func (r *replState) clusterPause(on bool) {
	if !on {
		r.mfPause.Store(false)
		r.s.Engine.SetFailoverPause(false)
		r.s.log.Info("Manual failover: client writes unpaused")
		return
	}
	r.s.Engine.SetFailoverPause(true)
	g := r.s.Engine.Group
	g.LockAll() // every write that passed the pause before it began is in the feed
	g.UnlockAll()
	r.mu.Lock()
	var off int64
	if r.bl != nil {
		r.pumpLocked()
		off = r.bl.Offset()
	}
	r.mfPauseOff.Store(off)
	r.mfPause.Store(true)
	r.mu.Unlock()
	r.s.log.Info(fmt.Sprintf("Manual failover requested by a replica: client writes paused at offset %d", off))
}
