package server

import (
	"crypto/tls"
	"io"
	"net"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/hotkv/hotkv/net/transport/tlstest"
)

// The server refuses to start without a usable TLS context, with Redis's message, as
// redis-server 7.0.15 exits ("No tls-cert-file configured!" and the CA check are its log lines).
func TestTLSStartErrors(t *testing.T) {
	f := tlstest.New(t, "server test CA").Write(t, t.TempDir())
	for _, args := range [][]string{
		{"--tls-port", "0", "--tls-replication", "yes"},
		{"--tls-port", "1"},
		{"--tls-port", "1", "--tls-cert-file", f.Cert},
		{"--tls-port", "1", "--tls-cert-file", f.Cert, "--tls-key-file", f.Key},
		{"--tls-port", "1", "--tls-cert-file", f.Cert, "--tls-key-file", f.CA, "--tls-auth-clients", "no"},
	} {
		s := newTestServer(t, args...)
		err := s.Listen()
		if err == nil || err.Error() != errTLSConfigure {
			t.Errorf("%q: Listen = %v, want %q", args, err, errTLSConfigure)
		}
		if err == nil {
			s.tr.Close()
		}
	}
}

// A TLS-only server (port 0 with a tls-port) binds no plain port, and session resumption
// follows tls-session-caching and tls-session-cache-timeout.
func TestTLSSessions(t *testing.T) {
	certs := tlstest.New(t, "server test CA")
	f := certs.Write(t, t.TempDir())
	s := startTestServer(t, "--tls-port", strconv.Itoa(freeTCPPort(t)), "--tls-cert-file", f.Cert,
		"--tls-key-file", f.Key, "--tls-auth-clients", "no")
	if n := len(s.Addrs()); n != 0 {
		t.Errorf("port 0 with a tls-port bound %d plain addresses", n)
	}
	cc := certs.ClientConfig(t, false)
	cc.ClientSessionCache = tls.NewLRUClientSessionCache(8)
	resumed := func() bool {
		t.Helper()
		c, err := tls.Dial("tcp", s.TLSAddrs()[0].String(), cc)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		c.Write([]byte("PING\r\n")) // reads the TLS 1.3 ticket
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		buf := make([]byte, 7)
		if _, err := c.Read(buf); err != nil || string(buf) != "+PONG\r\n" {
			t.Fatalf("PING over TLS: %q %v", buf, err)
		}
		return c.ConnectionState().DidResume
	}
	if resumed() || !resumed() {
		t.Error("a second connection did not resume the first one's session")
	}
	if err := s.cfg.Set([][2]string{{"tls-session-cache-timeout", "0"}}); err != nil {
		t.Fatal(err)
	}
	resumed() // a ticket of the new context
	time.Sleep(1100 * time.Millisecond)
	if resumed() {
		t.Error("a session older than tls-session-cache-timeout resumed")
	}
	if err := s.cfg.Set([][2]string{{"tls-session-caching", "no"}, {"tls-session-cache-timeout", "300"}}); err != nil {
		t.Fatal(err)
	}
	resumed()
	if resumed() {
		t.Error("a session resumed with tls-session-caching no")
	}
}

func freeTCPPort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func TestTLSCiphers(t *testing.T) {
	for v, want := range map[string][]uint16{
		"":                                  nil,
		"BOGUS":                             {0},
		"ECDHE-RSA-AES256-GCM-SHA384:BOGUS": {tls.TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384},
		"ECDHE-RSA-AES128-GCM-SHA256 AES128-SHA": {tls.TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,
			tls.TLS_RSA_WITH_AES_128_CBC_SHA},
		"!ECDHE-RSA-AES128-GCM-SHA256": {0},
		"@STRENGTH":                    {0},
	} {
		got, err := tlsCiphers(v)
		if want != nil && want[0] == 0 {
			if err == nil {
				t.Errorf("tlsCiphers(%q) = %v, want an error", v, got)
			}
			continue
		}
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("tlsCiphers(%q) = %v, %v; want %v", v, got, err, want)
		}
	}
	got, err := tlsCiphers("HIGH:!aNULL:!ECDHE-ECDSA-AES128-GCM-SHA256")
	if err != nil || len(got) == 0 || slices.Contains(got, tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256) {
		t.Errorf("keyword list: %v %v", got, err)
	}
	for v, ok := range map[string]bool{"": true, "TLS_AES_128_GCM_SHA256": true,
		"TLS_AES_128_GCM_SHA256:TLS_AES_128_CCM_SHA256": true, "TLS_AES_128_GCM_SHA256:X": false} {
		if err := tlsCipherSuites13(v); (err == nil) != ok {
			t.Errorf("tlsCipherSuites13(%q) = %v", v, err)
		}
	}
	for v, want := range map[string][2]uint16{"": {tls.VersionTLS12, tls.VersionTLS13},
		"TLSv1.3": {tls.VersionTLS13, tls.VersionTLS13}, "tlsv1 TLSv1.2": {tls.VersionTLS10, tls.VersionTLS12}} {
		lo, hi, err := tlsProtocols(v)
		if err != nil || lo != want[0] || hi != want[1] {
			t.Errorf("tlsProtocols(%q) = %x %x %v", v, lo, hi, err)
		}
	}
	if _, _, err := tlsProtocols("TLSv1.2 "); err == nil {
		t.Error("a trailing space (an empty protocol) was accepted")
	}
}

// CONFIG SET tls-port moves the TLS listener as Redis's does: the old port stops accepting, the
// new one serves with the same context, a port in use fails with Redis's message and changes
// nothing, and 0 stops TLS; a server started without TLS starts it (building the context).
func TestTLSSetPort(t *testing.T) {
	certs := tlstest.New(t, "server test CA")
	f := certs.Write(t, t.TempDir())
	s := startTestServer(t, "--tls-cert-file", f.Cert, "--tls-key-file", f.Key, "--tls-auth-clients", "no")
	c := dialTestServer(t, s)
	if n := len(s.TLSAddrs()); n != 0 {
		t.Fatalf("tls-port 0 bound %d TLS addresses", n)
	}
	ping := func(addr string) error {
		tc, err := tls.Dial("tcp", addr, certs.ClientConfig(t, false))
		if err != nil {
			return err
		}
		defer tc.Close()
		tc.Write([]byte("PING\r\n"))
		tc.SetReadDeadline(time.Now().Add(5 * time.Second))
		buf := make([]byte, 7)
		_, err = io.ReadFull(tc, buf)
		return err
	}
	port := freeTCPPort(t)
	if got := c.do("CONFIG SET tls-port " + strconv.Itoa(port)); got != "+OK\r\n" {
		t.Fatalf("CONFIG SET tls-port: %q", got)
	}
	first := s.TLSAddrs()[0].String()
	if err := ping(first); err != nil {
		t.Fatalf("TLS on the new port: %v", err)
	}
	_, plainPort, _ := net.SplitHostPort(s.Addrs()[0].String())
	want := "-ERR CONFIG SET failed (possibly related to argument 'tls-port') - Unable to listen on this port. Check server logs.\r\n"
	if got := c.do("CONFIG SET tls-port " + plainPort); got != want {
		t.Errorf("CONFIG SET tls-port to a port in use: %q", got)
	}
	if got := c.do("CONFIG GET tls-port"); got != "*2\r\n" {
		t.Fatalf("CONFIG GET tls-port: %q", got)
	}
	if got := c.line() + c.line() + c.line(); got != "$8\r\ntls-port\r\n$"+strconv.Itoa(len(strconv.Itoa(port)))+"\r\n" {
		t.Errorf("CONFIG GET tls-port after the failure: %q", got)
	}
	c.line()
	second := freeTCPPort(t)
	if got := c.do("CONFIG SET tls-port " + strconv.Itoa(second)); got != "+OK\r\n" {
		t.Fatalf("CONFIG SET tls-port again: %q", got)
	}
	if err := ping(first); err == nil {
		t.Error("the old TLS port still accepts")
	}
	if err := ping(s.TLSAddrs()[0].String()); err != nil {
		t.Errorf("TLS on the second port: %v", err)
	}
	if got := c.do("CONFIG SET tls-port 0"); got != "+OK\r\n" || len(s.TLSAddrs()) != 0 {
		t.Errorf("CONFIG SET tls-port 0: %q, %d TLS addresses", got, len(s.TLSAddrs()))
	}
	// As redis-server 7.0.15: with TLS off a certificate may be unset, and TLS comes back on the
	// context it had.
	if got := c.do("CONFIG SET tls-cert-file \"\""); got != "+OK\r\n" {
		t.Errorf("CONFIG SET tls-cert-file \"\" with TLS off: %q", got)
	}
	if got := c.do("CONFIG SET tls-port " + strconv.Itoa(second)); got != "+OK\r\n" {
		t.Errorf("CONFIG SET tls-port back on: %q", got)
	}
	if err := ping(s.TLSAddrs()[0].String()); err != nil {
		t.Errorf("TLS back on the old context: %v", err)
	}
}
