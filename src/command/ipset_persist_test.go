package command

import (
	"bufio"
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hotkv/hotkv/ds/ipset"
	"github.com/hotkv/hotkv/ds/keyspace"
	"github.com/hotkv/hotkv/pipeline"
)

// fillIPSets stores IP sets of every kind of entry: plain hosts (many: past the flat index's
// bucket threshold in "big"), CIDRs, ranges, IPv6, labels (one holding '=', '!' and binary),
// NOMATCH and far expiries.
func fillIPSets(t *testing.T, tc *testConn) {
	t.Helper()
	far := fmt.Sprint(time.Now().UnixMilli() + 3600_000)
	for _, cmd := range [][]string{
		{"IPSET.ADD", "small", "1.2.3.4", "10.0.0.0/8", "5.5.5.0-5.5.5.9", "2001:db8::/32", "::1"},
		{"IPSET.ADD", "small", "NOMATCH", "10.1.0.0/16"},
		{"IPSET.ADD", "small", "LABELS", "10.1.2.3", "a=b!c", "2001:db8::5-2001:db8::9", "\x00\xff\r\n", "7.7.7.7", ""},
		{"IPSET.ADD", "small", "PXAT", far, "LABEL", "soon", "8.8.8.0/24", "2001:db8:1::/48"},
		{"IPSET.ADD", "small", "PXAT", far, "NOMATCH", "8.8.8.8"},
	} {
		if r := tc.do(cmd...); r[0] != ':' {
			t.Fatalf("%v: %q", cmd, r)
		}
	}
	cmd := []string{"IPSET.ADD", "big"}
	for i := range 70_000 {
		cmd = append(cmd, fmt.Sprintf("10.%d.%d.%d", i>>16, i>>8&255, i&255))
	}
	cmd = append(cmd, "192.168.0.0/16")
	tc.do(cmd...)
}

// ipsetEntriesOf returns key's entries (absolute expiry), holding its shard.
func ipsetEntriesOf(t *testing.T, e *Engine, key string) []ipset.Entry {
	var out []ipset.Entry
	e.Group.Do(int(e.shardOf([]byte(key))), func(*pipeline.Shard) {
		en := e.keyspace(0, []byte(key)).Peek([]byte(key), time.Now().UnixNano())
		if en == nil || en.Kind != keyspace.KindIPSet {
			return
		}
		out = keyspace.Obj[ipsetValue](en).set.Entries(0)
	})
	if out == nil {
		t.Fatalf("%s: no IP set", key)
	}
	return out
}

// ipsetStartRedis starts redis-server 7.0.15 on port (IP1's range) in dir, loading dir/dump.rdb.
func ipsetStartRedis(t *testing.T, dir string, port int) *redisSession {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		t.Skip("redis-server not on PATH")
	}
	cmd := exec.Command(bin, "--port", fmt.Sprint(port), "--bind", "127.0.0.1", "--save", "",
		"--appendonly", "no", "--dir", dir, "--dbfilename", "dump.rdb")
	cmd.Dir = dir
	var log bytes.Buffer
	cmd.Stdout = &log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	t.Cleanup(func() { cmd.Process.Kill(); <-exited })
	for range 250 {
		select {
		case <-exited:
			t.Fatalf("redis-server exited: %s", log.String())
		default:
		}
		conn, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err == nil {
			conn.SetDeadline(time.Now().Add(time.Minute))
			t.Cleanup(func() { conn.Close() })
			rs := &redisSession{t: t, r: bufio.NewReader(conn), w: conn.Write}
			for j := 0; j < 200 && strings.HasPrefix(rs.do("PING"), "-LOADING"); j++ {
				time.Sleep(10 * time.Millisecond)
			}
			return rs
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatal("redis-server did not start")
	return nil
}

// TestIPSetPersistence: an IP set written to RDB (the zset form) and loaded back, and DUMP then
// RESTORE, are identical (entries, labels, flags, absolute expiry); redis-server 7.0.15 loads the
// file as sorted sets holding exactly the members and scores of the form (ZCARD, ZRANGE), and the
// file it saves from them loads back into HotKV as the same IP sets.
func TestIPSetPersistence(t *testing.T) {
	src := newTestEngine()
	tc := newTestConn(t, src)
	fillIPSets(t, tc)
	keys := []string{"small", "big"}
	want := map[string][]ipset.Entry{}
	for _, k := range keys {
		want[k] = ipsetEntriesOf(t, src, k)
	}
	check := func(what string, e *Engine, suffix string) {
		t.Helper()
		for _, k := range keys {
			if got := ipsetEntriesOf(t, e, k+suffix); !slices.Equal(got, want[k]) {
				t.Errorf("%s: %s differs: %d entries, want %d", what, k, len(got), len(want[k]))
			}
		}
		c := newTestConn(t, e)
		if got := c.do("TYPE", "small"+suffix); got != "+ipset\r\n" {
			t.Errorf("%s: TYPE %q", what, got)
		}
		if got := c.do("IPSET.MCONTAINS", "small"+suffix, "10.1.2.3", "10.1.9.9", "8.8.8.8", "8.8.8.9", "2001:db8::7"); got != "*5\r\n:1\r\n:0\r\n:0\r\n:1\r\n:1\r\n" {
			t.Errorf("%s: MCONTAINS %q", what, got)
		}
	}
	file := writeRDB(t, src, RDBOptions{Compress: true, Checksum: true})
	dst := newTestEngine()
	if _, err := dst.LoadRDB(bytes.NewReader(file), LoadOptions{Size: int64(len(file))}); err != nil {
		t.Fatal(err)
	}
	check("RDB", dst, "")
	for _, k := range keys {
		blob := bulkBody(t, tc.do("DUMP", k))
		if got := newTestConn(t, dst).do("RESTORE", k+"2", "0", blob); got != "+OK\r\n" {
			t.Fatalf("RESTORE %s: %q", k, got)
		}
	}
	check("DUMP/RESTORE", dst, "2")
	// A payload cut short is refused.
	blob := bulkBody(t, tc.do("DUMP", "small"))
	if got := tc.do("RESTORE", "bad", "0", blob[:len(blob)/2]); got[0] != '-' {
		t.Errorf("RESTORE of half a payload: %q", got)
	}

	// redis-server loads the file.
	dir := t.TempDir()
	path := filepath.Join(dir, "dump.rdb")
	if err := os.WriteFile(path, file, 0o600); err != nil {
		t.Fatal(err)
	}
	rs := ipsetStartRedis(t, dir, 27101)
	for _, k := range keys {
		var v *ipsetValue
		src.Group.Do(int(src.shardOf([]byte(k))), func(*pipeline.Shard) {
			en := src.keyspace(0, []byte(k)).Peek([]byte(k), time.Now().UnixNano())
			v = keyspace.Obj[ipsetValue](en)
		})
		members, scores := ipsetZSetMembers(v, time.Now().UnixNano())
		if got := rs.do("TYPE", k); got != "+zset\r\n" {
			t.Fatalf("Redis TYPE %s: %q", k, got)
		}
		if got, w := rs.do("ZCARD", k), fmt.Sprintf(":%d\r\n", len(members)); got != w {
			t.Errorf("Redis ZCARD %s: %q, want %q", k, got, w)
		}
		var eb strings.Builder
		fmt.Fprintf(&eb, "*%d\r\n", 2*len(members))
		for i, m := range members {
			sc := fmt.Sprint(int64(scores[i]))
			fmt.Fprintf(&eb, "$%d\r\n%s\r\n$%d\r\n%s\r\n", len(m), m, len(sc), sc)
		}
		exp := eb.String()
		if got := rs.do("ZRANGE", k, "0", "-1", "WITHSCORES"); got != exp {
			t.Errorf("Redis ZRANGE %s differs from the zset form (%d bytes, want %d)", k, len(got), len(exp))
		}
	}
	// ... and what Redis saves loads back as the same IP sets.
	if got := rs.do("SAVE"); got != "+OK\r\n" {
		t.Fatal(got)
	}
	back, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	again := newTestEngine()
	if _, err := again.LoadRDB(bytes.NewReader(back), LoadOptions{Size: int64(len(back))}); err != nil {
		t.Fatal(err)
	}
	check("Redis's SAVE", again, "")
}
