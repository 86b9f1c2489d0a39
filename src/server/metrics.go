package server

import (
	"errors"
	"net"
	"net/http"
	"strconv"
	"sync"

	"github.com/hotkv/hotkv/src/metrics"
)

// The Prometheus endpoint (src/metrics): metrics-port 0 is off, and then nothing listens.
// metrics-bind is one address, loopback unless set otherwise. CONFIG SET of either rebinds at
// run time; a bind that fails leaves the old listener serving and fails the CONFIG SET with
// Redis's message for a port it cannot bind.

// metricsState is the endpoint's listener; mu orders the rebinds of CONFIG SET against Listen
// and Stop.
type metricsState struct {
	mu      sync.Mutex
	handler http.Handler
	ep      *metrics.Endpoint // nil while off
	bind    string            // what ep serves, or will when it is on
	port    int
	started bool // Listen has run: a rebind binds at once
	stopped bool
}

// errMetricsListen is what CONFIG SET answers when the new address cannot be bound (Redis's
// words for port).
var errMetricsListen = errors.New("Unable to listen on this port. Check server logs.")

// initMetrics builds the collector and registers the rebinds; the listener starts in Listen.
func (s *Server) initMetrics() {
	m := &s.metrics
	m.handler = metrics.NewHandler(metrics.EngineSource(s.Engine))
	m.bind, m.port = s.cfg.String("metrics-bind"), int(s.cfg.Int("metrics-port"))
	s.cfg.OnApply("metrics-port", func(v string) error {
		port, _ := strconv.Atoi(v)
		return s.rebindMetrics(m.bind, port)
	})
	s.cfg.OnApply("metrics-bind", func(v string) error { return s.rebindMetrics(v, m.port) })
}

// listenMetrics starts the endpoint configured at start-up.
func (s *Server) listenMetrics() error {
	m := &s.metrics
	m.mu.Lock()
	defer m.mu.Unlock()
	m.started = true
	if m.port == 0 || m.ep != nil {
		return nil
	}
	ep, err := s.openMetrics(m.bind, m.port)
	if err != nil {
		return err
	}
	m.ep = ep
	return nil
}

func (s *Server) openMetrics(bind string, port int) (*metrics.Endpoint, error) {
	ep, err := metrics.Listen(net.JoinHostPort(bind, strconv.Itoa(port)), s.metrics.handler)
	if err != nil {
		s.log.Warn("cannot serve metrics", "err", err)
		return nil, err
	}
	if ip := net.ParseIP(bind); bind != "localhost" && (ip == nil || !ip.IsLoopback()) {
		s.log.Warn("the metrics endpoint is reachable beyond this host", "metrics-bind", bind)
	}
	s.log.Info("metrics endpoint listening", "addr", ep.Addr().String(), "path", "/metrics")
	return ep, nil
}

// rebindMetrics moves the endpoint to bind:port (port 0: off). The new address is bound before
// the old is let go; when the two collide (same port, another address of this host) the old
// one is closed first and taken back if the new one still cannot be bound.
func (s *Server) rebindMetrics(bind string, port int) error {
	m := &s.metrics
	m.mu.Lock()
	defer m.mu.Unlock()
	if bind == m.bind && port == m.port {
		return nil
	}
	if m.stopped || !m.started { // not listening yet (or any more): just record it
		m.bind, m.port = bind, port
		return nil
	}
	var ep *metrics.Endpoint
	if port != 0 {
		var err error
		if ep, err = s.openMetrics(bind, port); err != nil && m.ep != nil {
			m.ep.Close()
			m.ep = nil
			if ep, err = s.openMetrics(bind, port); err != nil {
				m.ep, _ = s.openMetrics(m.bind, m.port)
			}
		}
		if err != nil {
			return errMetricsListen
		}
	}
	if m.ep != nil {
		m.ep.Close()
		s.log.Info("metrics endpoint closed", "addr", m.ep.Addr().String())
	}
	m.ep, m.bind, m.port = ep, bind, port
	return nil
}

// closeMetrics stops the endpoint for good (Stop).
func (s *Server) closeMetrics() {
	m := &s.metrics
	m.mu.Lock()
	defer m.mu.Unlock()
	m.stopped = true
	if m.ep != nil {
		m.ep.Close()
		m.ep = nil
	}
}

// MetricsAddr is the metrics endpoint's bound address, nil while it is off.
func (s *Server) MetricsAddr() net.Addr {
	m := &s.metrics
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.ep == nil {
		return nil
	}
	return m.ep.Addr()
}
