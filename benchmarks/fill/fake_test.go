package main

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"strconv"
	"sync"
	"testing"
)

// fakeServer is a dumb model of the commands fill sends: maps of members, answering as Redis does
// (SADD, HSET and ZADD count what they added, RPUSH and LLEN give the length, SCARD, HLEN and ZCARD
// the size). failOn makes the
// server answer that command with an error reply.
type fakeServer struct {
	mu     sync.Mutex
	sets   map[string]map[string]bool
	hashes map[string]map[string]string
	zsets  map[string]map[string]string // member -> score as sent
	lists  map[string]int
	failOn string
	addr   string
}

// startFake listens on loopback and serves every connection until the test ends.
func startFake(t *testing.T) *fakeServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	s := &fakeServer{sets: map[string]map[string]bool{}, hashes: map[string]map[string]string{},
		zsets: map[string]map[string]string{}, lists: map[string]int{}, addr: ln.Addr().String()}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go s.serve(c)
		}
	}()
	return s
}

func (s *fakeServer) serve(c net.Conn) {
	defer c.Close()
	rd, w := bufio.NewReader(c), bufio.NewWriter(c)
	for {
		args, err := readCommand(rd)
		if err != nil {
			return
		}
		s.mu.Lock()
		reply := s.exec(args)
		s.mu.Unlock()
		w.WriteString(reply)
		if rd.Buffered() == 0 {
			w.Flush()
		}
	}
}

// readCommand reads one RESP array of bulk strings.
func readCommand(rd *bufio.Reader) ([]string, error) {
	var n int
	if _, err := fmt.Fscanf(rd, "*%d\r\n", &n); err != nil {
		return nil, err
	}
	args := make([]string, n)
	for i := range args {
		var size int
		if _, err := fmt.Fscanf(rd, "$%d\r\n", &size); err != nil {
			return nil, err
		}
		b := make([]byte, size+2)
		if _, err := io.ReadFull(rd, b); err != nil {
			return nil, err
		}
		args[i] = string(b[:size])
	}
	return args, nil
}

func (s *fakeServer) exec(args []string) string {
	if args[0] == s.failOn {
		return "-ERR injected failure\r\n"
	}
	key, added := args[1], 0
	switch args[0] {
	case "SADD":
		if s.sets[key] == nil {
			s.sets[key] = map[string]bool{}
		}
		for _, m := range args[2:] {
			if !s.sets[key][m] {
				s.sets[key][m] = true
				added++
			}
		}
	case "HSET", "ZADD":
		m := s.hashes
		if args[0] == "ZADD" {
			m = s.zsets
		}
		if m[key] == nil {
			m[key] = map[string]string{}
		}
		for i := 2; i+1 < len(args); i += 2 {
			field, value := args[i], args[i+1]
			if args[0] == "ZADD" {
				field, value = args[i+1], args[i]
			}
			if _, ok := m[key][field]; !ok {
				added++
			}
			m[key][field] = value
		}
	case "RPUSH":
		s.lists[key] += len(args) - 2
		added = s.lists[key]
	case "LLEN":
		added = s.lists[key]
	case "SCARD":
		added = len(s.sets[key])
	case "HLEN":
		added = len(s.hashes[key])
	case "ZCARD":
		added = len(s.zsets[key])
	default:
		return "-ERR unknown command '" + args[0] + "'\r\n"
	}
	return ":" + strconv.Itoa(added) + "\r\n"
}
