package server

import (
	"net"

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
		Hostname: s.cfg.String("cluster-announce-hostname"), NodeTimeout: s.cfg.Int("cluster-node-timeout"),
		FullCoverage:       s.cfg.Bool("cluster-require-full-coverage"),
		AllowReadsWhenDown: s.cfg.Bool("cluster-allow-reads-when-down"),
		OnPublish:          s.Engine.PublishFromBus,
		OnReplicate:        func(host string, port int) { s.repl.setMaster(host, port) },
		OnPromote:          func() { s.repl.promote() },
	})
	if err != nil {
		return err
	}
	s.cluster = m
	s.Engine.EnableSlotIndex() // COUNTKEYSINSLOT, GETKEYSINSLOT and the key checks read it
	s.Engine.Hooks.Cluster = m
	return nil
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
