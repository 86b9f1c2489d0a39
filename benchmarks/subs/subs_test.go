package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeServer answers SUBSCRIBE, PSUBSCRIBE and PING as Redis does in RESP2 subscribed mode and
// writes what publish hands it to every subscriber, cut into small writes so that frames arrive
// split across reads.
type fakeServer struct {
	mu    sync.Mutex
	conns []*fakeConn
	addr  string
	// release, when not nil, holds back the replies to PING until it is closed.
	release chan struct{}
}

type fakeConn struct {
	mu   sync.Mutex
	c    net.Conn
	name string // the channel or pattern subscribed
	kind string // subscribe or psubscribe
}

func startFake(t *testing.T) *fakeServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &fakeServer{addr: ln.Addr().String()}
	t.Cleanup(func() {
		ln.Close()
		s.mu.Lock()
		defer s.mu.Unlock()
		for _, c := range s.conns {
			c.c.Close()
		}
	})
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go s.serve(&fakeConn{c: c})
		}
	}()
	return s
}

func (s *fakeServer) serve(fc *fakeConn) {
	rd := bufio.NewReader(fc.c)
	for {
		args, err := readCommand(rd)
		if err != nil {
			return
		}
		switch strings.ToUpper(args[0]) {
		case "SUBSCRIBE", "PSUBSCRIBE":
			fc.kind, fc.name = strings.ToLower(args[0]), args[1]
			fc.write(fmt.Sprintf("*3\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n:1\r\n", len(fc.kind), fc.kind, len(fc.name), fc.name))
			s.mu.Lock()
			s.conns = append(s.conns, fc)
			s.mu.Unlock()
		case "PING":
			if s.release != nil {
				<-s.release
			}
			fc.write("*2\r\n$4\r\npong\r\n$0\r\n\r\n")
		default:
			fc.write("-ERR unknown command\r\n")
		}
	}
}

// write sends b in writes of at most 7 bytes, holding the connection's lock.
func (fc *fakeConn) write(b string) {
	fc.mu.Lock()
	defer fc.mu.Unlock()
	for len(b) > 0 {
		n := min(len(b), 7)
		if _, err := io.WriteString(fc.c, b[:n]); err != nil {
			return
		}
		b = b[n:]
	}
}

// publish sends n messages to every subscriber, as a channel's or a pattern's message.
func (s *fakeServer) publish(channel, msg string, n int) {
	s.mu.Lock()
	conns := append([]*fakeConn(nil), s.conns...)
	s.mu.Unlock()
	for _, fc := range conns {
		var frame string
		if fc.kind == "psubscribe" {
			frame = fmt.Sprintf("*4\r\n$8\r\npmessage\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n", len(fc.name), fc.name,
				len(channel), channel, len(msg), msg)
		} else {
			frame = fmt.Sprintf("*3\r\n$7\r\nmessage\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n", len(channel), channel, len(msg), msg)
		}
		fc.write(strings.Repeat(frame, n))
	}
}

func readCommand(rd *bufio.Reader) ([]string, error) {
	line, err := rd.ReadString('\n')
	if err != nil {
		return nil, err
	}
	n, err := strconv.Atoi(strings.TrimSpace(line[1:]))
	if err != nil {
		return nil, err
	}
	args := make([]string, n)
	for i := range args {
		line, err := rd.ReadString('\n')
		if err != nil {
			return nil, err
		}
		l, _ := strconv.Atoi(strings.TrimSpace(line[1:]))
		b := make([]byte, l+2)
		if _, err := io.ReadFull(rd, b); err != nil {
			return nil, err
		}
		args[i] = string(b[:l])
	}
	return args, nil
}

func testConfig(t *testing.T, s *fakeServer, args ...string) *config {
	t.Helper()
	host, port, _ := net.SplitHostPort(s.addr)
	args = append([]string{"-host", host, "-port", port, "-ready", filepath.Join(t.TempDir(), "ready"), "-buffer", "64"}, args...)
	cfg, err := parseFlags(args, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// waitReady waits for the -ready file.
func waitReady(t *testing.T, cfg *config) {
	t.Helper()
	for range 500 {
		if _, err := os.Stat(cfg.ready); err == nil {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("no -ready file")
}

// runAsync starts run and returns a function that stops it and returns what it returned.
func runAsync(cfg *config) func() (*result, error) {
	stop := make(chan struct{})
	type out struct {
		res *result
		err error
	}
	done := make(chan out, 1)
	go func() {
		res, err := run(cfg, stop)
		done <- out{res, err}
	}()
	return func() (*result, error) {
		close(stop)
		o := <-done
		return o.res, o.err
	}
}

func TestCountsEveryMessage(t *testing.T) {
	for _, mode := range []string{"-channel", "-pattern"} {
		t.Run(mode, func(t *testing.T) {
			s := startFake(t)
			name := "bench:channel"
			if mode == "-pattern" {
				name = "__key*__:*"
			}
			cfg := testConfig(t, s, "-n", "3", mode, name)
			stop := runAsync(cfg)
			waitReady(t, cfg)
			// Messages longer than the 64-byte buffer make it grow.
			s.publish("bench:channel", strings.Repeat("x", 100), 500)
			s.publish("bench:channel", "", 1500)
			res, err := stop()
			if err != nil {
				t.Fatal(err)
			}
			if len(res.counts) != 3 {
				t.Fatalf("%d counts, want 3", len(res.counts))
			}
			for i, c := range res.counts {
				if c != 2000 {
					t.Errorf("connection %d counted %d messages, want 2000", i, c)
				}
			}
			var out bytes.Buffer
			res.print(&out)
			for _, want := range []string{"subscribers 3\n", "lost 0\n", "messages_min 2000\n", "messages_total 6000\n", "conn 2 2000\n"} {
				if !strings.Contains(out.String(), want) {
					t.Errorf("the output lacks %q:\n%s", want, out.String())
				}
			}
		})
	}
}

// The messages written before the reply to the stop's PING are counted even when they are still
// on their way when the stop comes.
func TestStopWaitsForThePingsReply(t *testing.T) {
	s := startFake(t)
	s.release = make(chan struct{})
	cfg := testConfig(t, s, "-n", "2", "-channel", "c")
	stop := runAsync(cfg)
	waitReady(t, cfg)
	go func() {
		time.Sleep(100 * time.Millisecond)
		s.publish("c", "late", 300)
		close(s.release)
	}()
	res, err := stop()
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range res.counts {
		if c != 300 {
			t.Errorf("connection %d counted %d, want 300", i, c)
		}
	}
}

// A connection the server closes (as Redis does past client-output-buffer-limit) fails the run.
func TestLostConnectionFails(t *testing.T) {
	s := startFake(t)
	cfg := testConfig(t, s, "-n", "2", "-channel", "c")
	stop := runAsync(cfg)
	waitReady(t, cfg)
	s.publish("c", "m", 10)
	s.mu.Lock()
	s.conns[1].c.Close()
	s.mu.Unlock()
	res, err := stop()
	if err == nil || !strings.Contains(err.Error(), "1 of 2 subscriber connections failed") {
		t.Fatalf("err = %v", err)
	}
	if res.lost() != 1 {
		t.Fatalf("lost %d, errors %v", res.lost(), res.errs)
	}
	for i, err := range res.errs {
		switch {
		case err == nil && res.counts[i] != 10:
			t.Errorf("connection %d counted %d, want 10", i, res.counts[i])
		case err != nil && !strings.Contains(err.Error(), "closed by the server"):
			t.Errorf("connection %d: %v", i, err)
		}
	}
}

func TestWrongMessagesFail(t *testing.T) {
	for name, push := range map[string]string{
		"other channel": "*3\r\n$7\r\nmessage\r\n$5\r\nother\r\n$1\r\nm\r\n",
		"error":         "-ERR nope\r\n",
		"not a push":    ":1\r\n",
		"unknown kind":  "*3\r\n$7\r\nmassage\r\n$1\r\nc\r\n$1\r\nm\r\n",
	} {
		t.Run(name, func(t *testing.T) {
			s := startFake(t)
			cfg := testConfig(t, s, "-n", "1", "-channel", "c")
			stop := runAsync(cfg)
			waitReady(t, cfg)
			s.mu.Lock()
			s.conns[0].write(push)
			s.mu.Unlock()
			if _, err := stop(); err == nil {
				t.Fatal("no error")
			}
		})
	}
}

func TestParseFrame(t *testing.T) {
	frames := []struct {
		raw          string
		elems        int
		kind, second string
	}{
		{"*3\r\n$7\r\nmessage\r\n$2\r\nch\r\n$3\r\nabc\r\n", 3, "message", "ch"},
		{"*4\r\n$8\r\npmessage\r\n$3\r\np:*\r\n$3\r\np:x\r\n$0\r\n\r\n", 4, "pmessage", "p:*"},
		{"*3\r\n$9\r\nsubscribe\r\n$2\r\nch\r\n:1\r\n", 3, "subscribe", "ch"},
		{">3\r\n$7\r\nmessage\r\n$2\r\nch\r\n$1\r\nx\r\n", 3, "message", "ch"},
		{"*2\r\n$4\r\npong\r\n$0\r\n\r\n", 2, "pong", ""},
		{"+PONG\r\n", 1, "pong", ""},
	}
	for _, fr := range frames {
		// Every proper prefix is incomplete, never an error.
		for i := range len(fr.raw) {
			if n, _, err := parseFrame([]byte(fr.raw[:i])); n != 0 || err != nil {
				t.Fatalf("%q: prefix of %d bytes gave %d, %v", fr.raw, i, n, err)
			}
		}
		n, f, err := parseFrame([]byte(fr.raw + "*1\r\n"))
		if err != nil || n != len(fr.raw) || f.elems != fr.elems || string(f.kind) != fr.kind || string(f.second) != fr.second {
			t.Errorf("%q: %d %d %q %q %v", fr.raw, n, f.elems, f.kind, f.second, err)
		}
	}
	for _, bad := range []string{"*0\r\n", "*99\r\n", "*1\r\n$-1\r\n", "*1\r\n$1\r\nxyz\r\n", "*x\r\n", "$3\r\nabc\r\n", "*1\r\n+x\r\n"} {
		if _, _, err := parseFrame([]byte(bad)); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}

func TestFlags(t *testing.T) {
	for _, args := range [][]string{{}, {"-channel", "a", "-pattern", "b"}, {"-channel", "a", "-n", "0"}, {"-channel", "a", "x"}} {
		if _, err := parseFlags(args, io.Discard); err == nil {
			t.Errorf("%q accepted", args)
		}
	}
}
