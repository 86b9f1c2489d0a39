package transport

import (
	"crypto/tls"
	"fmt"
	"net"
	"testing"

	"github.com/hotkv/hotkv/net/transport/tlstest"
)

// BenchmarkTLSPing is BenchmarkPing's std engine over TLS 1.3 (the connections shake hands before
// the timer starts): N clients each send P pipelined "PING\r\n" and read P "+PONG\r\n"; one op is
// one request. cpu-ns/op counts client and server, which share the process.
func BenchmarkTLSPing(b *testing.B) {
	certs := tlstest.New(b, "bench CA")
	for _, useTLS := range []bool{true, false} {
		for _, pipe := range []int{1, 30} {
			for _, clients := range []int{1, 16} {
				name := fmt.Sprintf("tls=%v/P%d/C%d", useTLS, pipe, clients)
				b.Run(name, func(b *testing.B) { benchTLS(b, certs, useTLS, pipe, clients) })
			}
		}
	}
}

func benchTLS(b *testing.B, certs *tlstest.Certs, useTLS bool, pipe, clients int) {
	cfg := certs.ServerConfig(b, tls.NoClientCert)
	s := startServer(b, Options{Engine: "std", TLSAddrs: []string{"127.0.0.1:0"},
		TLS: TLSOptions{Config: func() *tls.Config { return cfg }}}, &lineHandler{})
	conns := make([]net.Conn, clients)
	for i := range conns {
		if !useTLS {
			conns[i] = dial(b, s)
			continue
		}
		c, err := tls.Dial("tcp", s.TLSAddrs()[0].String(), certs.ClientConfig(b, false))
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { c.Close() })
		conns[i] = c
	}
	var req []byte
	for range pipe {
		req = append(req, "PING\r\n"...)
	}
	runRequestLoops(b, conns, req, len("+PONG\r\n")*pipe, pipe)
}
