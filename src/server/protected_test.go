package server

import (
	"net"
	"strconv"
	"testing"
	"time"
)

// The Prometheus endpoint listens on loopback unless metrics-bind says otherwise: with only
// metrics-port set it is bound to 127.0.0.1, and this host's other addresses (when it has any)
// refuse the port.
func TestMetricsLoopbackByDefault(t *testing.T) {
	port := freeTCPPort(t)
	s := startTestServer(t, "--metrics-port", strconv.Itoa(port))
	a, ok := s.MetricsAddr().(*net.TCPAddr)
	if !ok || !a.IP.Equal(net.IPv4(127, 0, 0, 1)) || a.Port != port {
		t.Fatalf("metrics endpoint on %v, want 127.0.0.1:%d", s.MetricsAddr(), port)
	}
	addrs, _ := net.InterfaceAddrs()
	tried := 0
	for _, ia := range addrs {
		ipn, ok := ia.(*net.IPNet)
		if !ok || ipn.IP.IsLoopback() || ipn.IP.IsLinkLocalUnicast() {
			continue
		}
		tried++
		c, err := net.DialTimeout("tcp", net.JoinHostPort(ipn.IP.String(), strconv.Itoa(port)), time.Second)
		if err == nil {
			c.Close()
			t.Errorf("the metrics endpoint answers on %s", ipn.IP)
		}
	}
	t.Logf("checked %d non-loopback addresses of this host", tried)
}
