package metrics

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/hotkv/hotkv/src/command"
)

// NewRegistry returns a registry holding c and the Go runtime and process collectors.
func NewRegistry(c *Collector) *prometheus.Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(c, collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return reg
}

// scrapeTimeout bounds one request: a scrape holds every shard only for the time it reads them,
// but a client that reads its response slowly must not keep a connection forever.
const scrapeTimeout = 10 * time.Second

// Endpoint is the HTTP listener serving /metrics.
type Endpoint struct {
	srv  *http.Server
	ln   net.Listener
	done chan struct{}
}

// Listen binds addr (host:port) and serves h on GET /metrics until Close; every other path is
// 404.
func Listen(addr string, h http.Handler) (*Endpoint, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("cannot listen on %s: %w", addr, err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", h)
	ep := &Endpoint{ln: ln, done: make(chan struct{}), srv: &http.Server{Handler: mux,
		ReadHeaderTimeout: scrapeTimeout, WriteTimeout: scrapeTimeout, IdleTimeout: time.Minute,
		MaxHeaderBytes: 16 << 10}}
	go func() {
		defer close(ep.done)
		if err := ep.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			_ = err // Serve fails only when the listener does; Close reports nothing more useful
		}
	}()
	return ep, nil
}

// Addr is the bound address.
func (ep *Endpoint) Addr() net.Addr { return ep.ln.Addr() }

// Close closes the listener and every connection, and waits for the server's goroutine.
func (ep *Endpoint) Close() error {
	err := ep.srv.Close()
	<-ep.done
	return err
}

// maxScrapes bounds the scrapes in flight: they run one at a time (Collector), so more would only
// queue goroutines; past it a scraper gets 503 at once.
const maxScrapes = 4

// NewHandler serves src's metrics with the Go runtime and process collectors beside them.
func NewHandler(src Source) http.Handler {
	return promhttp.HandlerFor(NewRegistry(NewCollector(src)),
		promhttp.HandlerOpts{Timeout: scrapeTimeout, MaxRequestsInFlight: maxScrapes})
}

// EngineSource reads e's counters.
func EngineSource(e *command.Engine) Source { return Source{Read: e.ReadMetrics} }
