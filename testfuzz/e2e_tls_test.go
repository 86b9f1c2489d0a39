package testfuzz

import (
	"bufio"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hotkv/hotkv/net/transport/tlstest"
	"github.com/redis/go-redis/v9"
)

// tlsPair is one HotKV and (when installed) one redis-server, each with a plain port and a TLS
// port on the same throwaway certificates.
type tlsPair struct {
	files   tlstest.Files
	certs   *tlstest.Certs
	servers []tlsServer
}

type tlsServer struct{ name, plain, tls string }

// startTLSPair starts both servers with tls-cert-file, tls-key-file and tls-ca-cert-file set,
// and extra arguments after them.
func startTLSPair(t *testing.T, extra ...string) *tlsPair {
	t.Helper()
	p := &tlsPair{certs: tlstest.New(t, "HotKV test CA")}
	p.files = p.certs.Write(t, t.TempDir())
	args := func(tlsPort int) []string {
		return append([]string{"--tls-port", strconv.Itoa(tlsPort), "--tls-cert-file", p.files.Cert,
			"--tls-key-file", p.files.Key, "--tls-ca-cert-file", p.files.CA}, extra...)
	}
	ports := freePorts(t, 3)
	_, s := startHotKV(t, append([]string{"--port", strconv.Itoa(ports[0])}, args(ports[1])...)...)
	p.servers = append(p.servers, tlsServer{"HotKV", s.Addrs()[0].String(), s.TLSAddrs()[0].String()})
	if haveRedis() {
		tlsPort := ports[2]
		plain := startRedis(t, args(tlsPort)...)
		p.servers = append(p.servers, tlsServer{"redis-server", plain, "127.0.0.1:" + strconv.Itoa(tlsPort)})
	}
	return p
}

// freePorts returns n distinct free loopback ports (held open together while they are chosen, so
// that two calls of freePort cannot return the same one).
func freePorts(t *testing.T, n int) []int {
	t.Helper()
	var ports []int
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports
}

// cli runs redis-cli --tls against addr with stdin as its input, and returns its output.
func (p *tlsPair) cli(t *testing.T, addr string, withCert bool, stdin string, args ...string) (string, error) {
	t.Helper()
	host, port, _ := net.SplitHostPort(addr)
	all := []string{"-h", host, "-p", port, "--tls", "--cacert", p.files.CA}
	if withCert {
		all = append(all, "--cert", p.files.ClientCert, "--key", p.files.ClientKey)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "redis-cli", append(all, args...)...)
	cmd.Stdin = strings.NewReader(stdin)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// tlsSession is a redis-cli transcript (one command a line, raw output) that the TLS port must
// answer as the plain one does.
const tlsSession = `FLUSHALL
SET k v
GET k
INCR n
INCRBY n 41
LPUSH l a b c
LRANGE l 0 -1
HSET h f1 v1 f2 v2
HGETALL h
SADD s x
SMEMBERS s
ZADD z 1 a 2 b
ZRANGE z 0 -1 WITHSCORES
EXPIRE k 100
TTL k
GET nosuch
DEL k l h s z n
DBSIZE
NOSUCHCOMMAND a
SET big ` + "x" + `
APPEND big yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy
STRLEN big
CONFIG GET tls-auth-clients
CONFIG GET tls-protocols
`

func needRedisCLI(t *testing.T) {
	if _, err := exec.LookPath("redis-cli"); err != nil {
		t.Skip("redis-cli not on PATH: install redis-tools to run the TLS tests")
	}
}

// redis-cli --tls with a client certificate runs the same transcript on HotKV's TLS port as on
// its plain port and as on redis-server's TLS port; without a certificate both servers refuse it
// under tls-auth-clients yes and serve it once CONFIG SET makes them optional.
func TestTLSRedisCLI(t *testing.T) {
	needRedisCLI(t)
	p := startTLSPair(t)
	var first string
	for _, s := range p.servers {
		got, err := p.cli(t, s.tls, true, tlsSession)
		if err != nil {
			t.Fatalf("%s: redis-cli --tls: %v\n%s", s.name, err, got)
		}
		host, port, _ := net.SplitHostPort(s.plain)
		cmd := exec.Command("redis-cli", "-h", host, "-p", port)
		cmd.Stdin = strings.NewReader(tlsSession)
		plain, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s: redis-cli plain: %v", s.name, err)
		}
		if got != string(plain) {
			t.Errorf("%s: TLS transcript\n%s\ndiffers from the plain one\n%s", s.name, got, plain)
		}
		if first == "" {
			first = got
		} else if got != first {
			t.Errorf("%s's TLS transcript\n%s\ndiffers from HotKV's\n%s", s.name, got, first)
		}
		if out, err := p.cli(t, s.tls, false, "", "PING"); err == nil && strings.Contains(out, "PONG") {
			t.Errorf("%s: a client without a certificate was served under tls-auth-clients yes: %q", s.name, out)
		}
		if out, err := p.cli(t, s.tls, true, "", "CONFIG", "SET", "tls-auth-clients", "optional"); err != nil || out != "OK\n" {
			t.Fatalf("%s: CONFIG SET tls-auth-clients optional: %q %v", s.name, out, err)
		}
		if out, err := p.cli(t, s.tls, false, "", "PING"); err != nil || out != "PONG\n" {
			t.Errorf("%s: a client without a certificate under optional: %q %v", s.name, out, err)
		}
	}
	if !strings.Contains(first, "\nOK\n") || !strings.Contains(first, "42") {
		t.Errorf("unexpected transcript:\n%s", first)
	}
}

// go-redis over a tls.Config (RESP3 and RESP2) against HotKV's TLS port; with redis-server
// installed the same calls give the same results there.
func TestTLSGoRedis(t *testing.T) {
	p := startTLSPair(t)
	for _, proto := range []int{3, 2} {
		var results []string
		for _, s := range p.servers {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			rdb := redis.NewClient(&redis.Options{Addr: s.tls, Protocol: proto, DialTimeout: 5 * time.Second,
				TLSConfig: p.certs.ClientConfig(t, true), PoolSize: 4})
			var out []string
			add := func(v any, err error) { out = append(out, fmt.Sprintf("%v %v", v, err)) }
			add(rdb.FlushAll(ctx).Result())
			add(rdb.Set(ctx, "g:k", strings.Repeat("v", 100000), 0).Result())
			add(rdb.StrLen(ctx, "g:k").Result())
			add(rdb.HSet(ctx, "g:h", "a", "1", "b", "2").Result())
			add(rdb.HGetAll(ctx, "g:h").Result())
			pipe := rdb.Pipeline()
			for i := range 100 {
				pipe.Incr(ctx, "g:n")
				pipe.Get(ctx, "g:k"+strconv.Itoa(i%2))
			}
			cmds, err := pipe.Exec(ctx)
			add(len(cmds), nil)
			add(cmds[len(cmds)-2].(*redis.IntCmd).Val(), err)
			add(rdb.Do(ctx, "HELLO", proto).Err() == nil, nil)
			add(rdb.Get(ctx, "nosuch").Result())
			rdb.Close()
			cancel()
			results = append(results, strings.Join(out, "\n"))
		}
		for i, r := range results[1:] {
			if r != results[0] {
				t.Errorf("RESP%d: %s gave\n%s\nHotKV gave\n%s", proto, p.servers[i+1].name, r, results[0])
			}
		}
		if !strings.Contains(results[0], "\n100 redis: nil\n") { // the pipeline's error: GET of a missing key
			t.Errorf("RESP%d: HotKV results\n%s", proto, results[0])
		}
	}
}

// A plain-text client on the TLS port gets no reply and is closed; a TLS client on the plain
// port fails its handshake; both servers keep serving after either.
func TestTLSWrongPorts(t *testing.T) {
	p := startTLSPair(t, "--tls-auth-clients", "no")
	for _, s := range p.servers {
		c, err := net.DialTimeout("tcp", s.tls, 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		c.Write([]byte("PING\r\n"))
		c.SetReadDeadline(time.Now().Add(10 * time.Second))
		got, err := io.ReadAll(c)
		c.Close()
		if ne, ok := err.(net.Error); ok && ne.Timeout() {
			t.Errorf("%s: a plain client on the TLS port was not closed (got %q)", s.name, got)
		}
		if strings.Contains(string(got), "PONG") || strings.HasPrefix(string(got), "-") {
			t.Errorf("%s: a plain client on the TLS port got a RESP reply %q", s.name, got)
		}
		// The ClientHello reads as the start of an inline command: both servers wait for its end
		// (up to 64 KB) and the client gives up.
		start := time.Now()
		d := &net.Dialer{Timeout: 5 * time.Second, Deadline: time.Now().Add(time.Second)}
		if tc, err := tls.DialWithDialer(d, "tcp", s.plain, p.certs.ClientConfig(t, false)); err == nil {
			tc.Close()
			t.Errorf("%s: a TLS handshake succeeded on the plain port", s.name)
		} else {
			t.Logf("%s: TLS client on the plain port: %v after %v", s.name, err, time.Since(start).Round(time.Millisecond))
		}
		d.Deadline = time.Now().Add(10 * time.Second)
		if got := dial(t, s.plain).do("PING"); got != "+PONG\r\n" {
			t.Errorf("%s: plain PING afterwards = %q", s.name, got)
		}
		tc, err := tls.DialWithDialer(d, "tcp", s.tls, p.certs.ClientConfig(t, false))
		if err != nil {
			t.Fatalf("%s: TLS client afterwards: %v", s.name, err)
		}
		rc := &rawConn{t: t, addr: s.tls, c: tc, r: bufio.NewReader(tc)}
		if got := rc.do("PING"); got != "+PONG\r\n" {
			t.Errorf("%s: TLS PING afterwards = %q", s.name, got)
		}
		tc.Close()
	}
}

// CONFIG GET and CONFIG SET of every tls-* directive answer as redis-server's do, failures
// included, and a failed SET leaves TLS serving with the old context.
func TestTLSConfigAgainstRedis(t *testing.T) {
	p := startTLSPair(t)
	if len(p.servers) < 2 {
		t.Skip("redis-server not on PATH")
	}
	dir := t.TempDir()
	notDH := dir + "/notdh.pem"
	os.WriteFile(notDH, p.certs.CAPEM, 0o600)
	sets := [][]string{
		{"tls-cert-file", "/nonexistent"},
		{"tls-key-file", "/nonexistent"},
		{"tls-protocols", "TLSv1.9"},
		{"tls-protocols", "tlsv1.2  TLSv1.3"}, // two spaces: an empty protocol name
		{"tls-protocols", "tlsv1.2 TLSV1.3"},
		{"tls-protocols", "TLSv1.2"},
		{"tls-ciphers", "BOGUS"},
		{"tls-ciphers", "ECDHE-ECDSA-AES128-GCM-SHA256:BOGUS"},
		{"tls-ciphers", "HIGH:!aNULL:!MD5"},
		{"tls-ciphersuites", "BOGUS"},
		{"tls-ciphersuites", "TLS_AES_256_GCM_SHA384:TLS_CHACHA20_POLY1305_SHA256"},
		{"tls-auth-clients", "maybe"},
		{"tls-auth-clients", "optional"},
		{"tls-dh-params-file", "/nonexistent"},
		{"tls-dh-params-file", notDH},
		{"tls-dh-params-file", ""},
		{"tls-session-caching", "no"},
		{"tls-session-cache-size", "100"},
		{"tls-session-cache-timeout", "60"},
		{"tls-prefer-server-ciphers", "yes"},
		{"tls-replication", "yes"},
		{"tls-cluster", "no"},
		{"tls-key-file-pass", "unused"},
		{"tls-ca-cert-dir", dir},
		{"tls-session-cache-size", "-1"},
		{"tls-cert-file", p.files.Cert, "tls-key-file", "/nonexistent"},
	}
	for _, set := range sets {
		var replies []string
		for _, s := range p.servers {
			args := append([]string{"CONFIG", "SET"}, set...)
			replies = append(replies, dial(t, s.plain).do(args...))
		}
		if replies[0] != replies[1] {
			t.Errorf("CONFIG SET %q: HotKV %s, redis-server %s", set, quote(replies[0]), quote(replies[1]))
		}
	}
	var gets []string
	for _, s := range p.servers {
		raw := dial(t, s.plain).do("CONFIG", "GET", "tls-*")
		_, port, _ := net.SplitHostPort(s.tls)
		gets = append(gets, canonConfigGet(raw, port))
	}
	if gets[0] != gets[1] {
		t.Errorf("CONFIG GET tls-*:\nHotKV        %s\nredis-server %s", gets[0], gets[1])
	}
	for _, s := range p.servers {
		tc, err := tls.Dial("tcp", s.tls, p.certs.ClientConfig(t, true))
		if err != nil {
			t.Fatalf("%s: TLS after the failed SETs: %v", s.name, err)
		}
		if v := tc.ConnectionState().Version; v != tls.VersionTLS12 {
			t.Errorf("%s: tls-protocols TLSv1.2 negotiated %x", s.name, v)
		}
		tc.Close()
	}
}

// canonConfigGet sorts a CONFIG GET reply's pairs (Redis answers in its hash table's order) and
// blanks the TLS port.
func canonConfigGet(raw, port string) string {
	lines := strings.Split(strings.TrimSuffix(raw, "\r\n"), "\r\n")[1:]
	var pairs []string
	for i := 1; i+3 < len(lines)+1; i += 4 {
		k, v := lines[i], lines[i+2]
		if v == port {
			v = "PORT"
		}
		pairs = append(pairs, k+"="+v)
	}
	sort.Strings(pairs)
	return strings.Join(pairs, " ")
}

// CONFIG SET of the certificate files reloads them, even at an unchanged path: after the files
// are replaced by a certificate of a new CA, a client trusting only the new CA connects to both
// servers, and one trusting only the old CA no longer does.
func TestTLSReloadAgainstRedis(t *testing.T) {
	p := startTLSPair(t, "--tls-auth-clients", "no")
	fresh := tlstest.New(t, "HotKV rotated CA")
	for _, s := range p.servers {
		if tc, err := tls.Dial("tcp", s.tls, fresh.ClientConfig(t, false)); err == nil {
			tc.Close()
			t.Fatalf("%s: the new CA was trusted before the rotation", s.name)
		}
	}
	fresh.Write(t, strings.TrimSuffix(p.files.Cert, "/server.crt")) // same paths
	for _, s := range p.servers {
		if got := dial(t, s.plain).do("CONFIG", "SET", "tls-cert-file", p.files.Cert, "tls-key-file", p.files.Key); got != "+OK\r\n" {
			t.Fatalf("%s: CONFIG SET of the same paths: %s", s.name, quote(got))
		}
		tc, err := tls.Dial("tcp", s.tls, fresh.ClientConfig(t, false))
		if err != nil {
			t.Fatalf("%s: after the reload a client of the new CA: %v", s.name, err)
		}
		if cn := tc.ConnectionState().PeerCertificates[0].Issuer.CommonName; cn != "HotKV rotated CA" {
			t.Errorf("%s: certificate issued by %q", s.name, cn)
		}
		tc.Close()
		if tc, err := tls.Dial("tcp", s.tls, p.certs.ClientConfig(t, false)); err == nil {
			tc.Close()
			t.Errorf("%s: the old CA still trusted after the reload", s.name)
		}
	}
}

// tls-key-file-pass decrypts an encrypted key, on both servers; a wrong pass fails the reload.
func TestTLSKeyPassAgainstRedis(t *testing.T) {
	p := startTLSPair(t, "--tls-auth-clients", "no")
	enc := p.files.Key + ".enc"
	if err := os.WriteFile(enc, p.certs.EncryptedKeyPEM(t, "s3cret"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, s := range p.servers {
		c := dial(t, s.plain)
		if got := c.do("CONFIG", "SET", "tls-key-file-pass", "wrong", "tls-key-file", enc); !strings.Contains(got, "Unable to update TLS configuration") {
			t.Errorf("%s: wrong pass: %s", s.name, quote(got))
		}
		if got := c.do("CONFIG", "SET", "tls-key-file-pass", "s3cret", "tls-key-file", enc); got != "+OK\r\n" {
			t.Errorf("%s: right pass: %s", s.name, quote(got))
		}
		tc, err := tls.Dial("tcp", s.tls, p.certs.ClientConfig(t, false))
		if err != nil {
			t.Fatalf("%s: TLS with the decrypted key: %v", s.name, err)
		}
		tc.Close()
	}
}

// A flood of half-open connections on the TLS port (TCP connected, no ClientHello) does not stop
// HotKV from serving TLS and plain clients meanwhile, and they are not clients (INFO
// connected_clients counts only the real one); net/transport's TestTLSHandshakeBounds checks that
// they are closed at the handshake timeout.
func TestTLSHalfOpenFlood(t *testing.T) {
	p := startTLSPair(t, "--tls-auth-clients", "no")
	s := p.servers[0]
	const flood = 300
	for range flood {
		c, err := net.DialTimeout("tcp", s.tls, 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
	}
	d := &net.Dialer{Timeout: 5 * time.Second}
	tc, err := tls.DialWithDialer(d, "tcp", s.tls, p.certs.ClientConfig(t, false))
	if err != nil {
		t.Fatalf("TLS client during the flood: %v", err)
	}
	defer tc.Close()
	rc := &rawConn{t: t, addr: s.tls, c: tc, r: bufio.NewReader(tc)}
	if got := rc.do("SET", "k", "v"); got != "+OK\r\n" {
		t.Fatalf("SET over TLS during the flood: %q", got)
	}
	info := rc.do("INFO", "clients")
	if !strings.Contains(info, "connected_clients:1\r\n") {
		t.Errorf("INFO clients during a flood of %d half-open TLS connections:\n%s", flood, info)
	}
	if got := dial(t, s.plain).do("GET", "k"); got != "$1\r\nv\r\n" {
		t.Errorf("plain GET during the flood: %q", got)
	}
}

// Pub/sub over TLS: a message published on the plain port reaches a subscriber on the TLS port
// (the server writes it from another connection's Wake, through the TLS session), in RESP2 and
// RESP3, on HotKV and on redis-server alike.
func TestTLSPubSub(t *testing.T) {
	p := startTLSPair(t, "--tls-auth-clients", "no")
	for _, s := range p.servers {
		for _, proto := range []int{2, 3} {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			sub := redis.NewClient(&redis.Options{Addr: s.tls, Protocol: proto, TLSConfig: p.certs.ClientConfig(t, false)})
			ps := sub.Subscribe(ctx, "news")
			if _, err := ps.Receive(ctx); err != nil { // the subscription's confirmation
				t.Fatalf("%s RESP%d: subscribe over TLS: %v", s.name, proto, err)
			}
			pub := redis.NewClient(&redis.Options{Addr: s.plain, Protocol: proto})
			for i := range 3 {
				if n, err := pub.Publish(ctx, "news", "m"+strconv.Itoa(i)).Result(); err != nil || n != 1 {
					t.Fatalf("%s RESP%d: PUBLISH = %d, %v", s.name, proto, n, err)
				}
			}
			for i := range 3 {
				msg, err := ps.ReceiveMessage(ctx)
				if err != nil || msg.Payload != "m"+strconv.Itoa(i) {
					t.Errorf("%s RESP%d: message %d over TLS: %v %v", s.name, proto, i, msg, err)
				}
			}
			ps.Close()
			sub.Close()
			pub.Close()
			cancel()
		}
	}
}
