package metrics_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/hotkv/hotkv/src/config"
	"github.com/hotkv/hotkv/src/server"
)

// metricsPorts is this package's loopback range for metrics-port (7160-7161 are for hand runs).
const metricsPortLo, metricsPortHi = 7162, 7179

// freeMetricsPort returns a port of the range that nothing listens on now.
func freeMetricsPort(t testing.TB) int {
	t.Helper()
	for p := metricsPortLo; p <= metricsPortHi; p++ {
		ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", p))
		if err == nil {
			ln.Close()
			return p
		}
	}
	t.Fatal("no free port in 7162-7179")
	return 0
}

// startServer starts HotKV in-process on a free RESP port with args until the test ends.
func startServer(t testing.TB, args ...string) *server.Server {
	t.Helper()
	cfg, err := config.Load(append([]string{"--port", "0", "--save", "", "--loglevel", "warning"}, args...))
	if err != nil {
		t.Fatal(err)
	}
	s, err := server.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Listen(); err != nil {
		t.Fatal(err)
	}
	s.Start()
	t.Cleanup(s.Stop)
	return s
}

// startWithMetrics starts HotKV serving metrics on a free port of the range.
func startWithMetrics(t testing.TB, args ...string) (*server.Server, string) {
	t.Helper()
	port := freeMetricsPort(t)
	s := startServer(t, append([]string{"--metrics-port", fmt.Sprint(port)}, args...)...)
	addr := s.MetricsAddr()
	if addr == nil {
		t.Fatal("metrics-port set but MetricsAddr is nil")
	}
	return s, "http://" + addr.String() + "/metrics"
}

// client is a RESP connection speaking inline commands.
type client struct {
	t    testing.TB
	conn net.Conn
	r    *bufio.Reader
}

func dial(t testing.TB, s *server.Server) *client {
	t.Helper()
	conn, err := net.Dial("tcp", s.Addrs()[0].String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return &client{t: t, conn: conn, r: bufio.NewReader(conn)}
}

// pipeline sends cmds in one write and returns each reply's first line; the rest of a bulk
// string or array is read and dropped.
func (c *client) pipeline(cmds ...string) []string {
	c.t.Helper()
	c.conn.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := c.conn.Write([]byte(strings.Join(cmds, "\r\n") + "\r\n")); err != nil {
		c.t.Fatal(err)
	}
	out := make([]string, len(cmds))
	for i := range cmds {
		out[i] = c.reply()
	}
	return out
}

// reply reads one RESP2 reply and returns its first line.
func (c *client) reply() string {
	c.t.Helper()
	line, err := c.r.ReadString('\n')
	if err != nil {
		c.t.Fatalf("reading a reply: %v", err)
	}
	line = strings.TrimRight(line, "\r\n")
	n, _ := strconv.Atoi(line[1:])
	switch line[0] {
	case '$':
		if n >= 0 {
			if _, err := io.ReadFull(c.r, make([]byte, n+2)); err != nil {
				c.t.Fatal(err)
			}
		}
	case '*':
		for range max(n, 0) {
			c.reply()
		}
	}
	return line
}

// scrape fetches url and parses it with the Prometheus text parser.
func scrape(t testing.TB, url string) map[string]*dto.MetricFamily {
	t.Helper()
	cl := &http.Client{Timeout: 10 * time.Second}
	resp, err := cl.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s", url, resp.Status)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("parsing the scrape: %v", err)
	}
	return fams
}

// series is one sample's identity: the family name and its labels, sorted.
func series(name string, m *dto.Metric) string {
	var ls []string
	for _, l := range m.GetLabel() {
		ls = append(ls, l.GetName()+"="+l.GetValue())
	}
	sort.Strings(ls)
	return name + "{" + strings.Join(ls, ",") + "}"
}

// value reads a counter or gauge sample of fams: name with the given label pairs. ok is false
// when the series is absent.
func value(fams map[string]*dto.MetricFamily, name string, labels ...string) (v float64, ok bool) {
	f := fams[name]
	if f == nil {
		return 0, false
	}
	for _, m := range f.GetMetric() {
		if !hasLabels(m, labels) {
			continue
		}
		switch {
		case m.Counter != nil:
			return m.Counter.GetValue(), true
		case m.Gauge != nil:
			return m.Gauge.GetValue(), true
		case m.Untyped != nil:
			return m.Untyped.GetValue(), true
		}
	}
	return 0, false
}

func hasLabels(m *dto.Metric, labels []string) bool {
	for i := 0; i+1 < len(labels); i += 2 {
		found := false
		for _, l := range m.GetLabel() {
			if l.GetName() == labels[i] && l.GetValue() == labels[i+1] {
				found = true
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// sum adds every sample of a counter or gauge family.
func sum(fams map[string]*dto.MetricFamily, name string) float64 {
	var s float64
	for _, m := range fams[name].GetMetric() {
		s += m.GetCounter().GetValue() + m.GetGauge().GetValue()
	}
	return s
}

// info runs INFO section and returns its fields.
func (c *client) info(section string) map[string]string {
	c.t.Helper()
	c.conn.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := c.conn.Write([]byte("INFO " + section + "\r\n")); err != nil {
		c.t.Fatal(err)
	}
	line, err := c.r.ReadString('\n')
	if err != nil || line[0] != '$' {
		c.t.Fatalf("INFO: %q %v", line, err)
	}
	n, _ := strconv.Atoi(strings.TrimSpace(line[1:]))
	body := make([]byte, n+2)
	if _, err := io.ReadFull(c.r, body); err != nil {
		c.t.Fatal(err)
	}
	out := map[string]string{}
	for l := range strings.SplitSeq(string(body), "\r\n") {
		if k, v, ok := strings.Cut(l, ":"); ok {
			out[k] = v
		}
	}
	return out
}
