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
)

// startRedisIn starts a throwaway redis-server whose dir is dir (loading dir/dump.rdb if there
// is one) and returns a session with it once it has loaded (at once with --key-load-delay). It skips the test without a redis-server.
func startRedisIn(t *testing.T, dir string, extra ...string) *redisSession {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		t.Skip("redis-server not on PATH")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	args := append([]string{"--port", fmt.Sprint(port), "--bind", "127.0.0.1", "--save", "",
		"--appendonly", "no", "--dir", dir, "--dbfilename", "dump.rdb", "--enable-debug-command", "yes"}, extra...)
	cmd := exec.Command(bin, args...)
	var log bytes.Buffer
	cmd.Stdout = &log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	t.Cleanup(func() { cmd.Process.Kill(); <-exited })
	for i := 0; i < 200; i++ {
		select {
		case <-exited:
			t.Fatalf("redis-server exited: %s", log.String())
		default:
		}
		conn, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err == nil {
			conn.SetDeadline(time.Now().Add(time.Minute))
			rs := &redisSession{t: t, r: bufio.NewReader(conn), w: conn.Write}
			t.Cleanup(func() { conn.Close() })
			for j := 0; j < 200 && !slices.Contains(extra, "--key-load-delay") &&
				strings.HasPrefix(rs.do("PING"), "-LOADING"); j++ {
				time.Sleep(10 * time.Millisecond)
			}
			return rs
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatal("redis-server did not start")
	return nil
}

// redis-server 7.0.15 writes every type and encoding with SAVE; LoadRDB reads the file and the
// engine serves the same keyspace (types, encodings, exact expiry times, values) as Redis.
func TestLoadRedisRDB(t *testing.T) {
	dir := t.TempDir()
	rs := startRedisIn(t, dir)
	fillEveryType(t, rs.do, false)
	rs.do("FUNCTION", "LOAD", "#!lua name=mylib\nredis.register_function('f1', function() return 1 end)")
	if r := rs.do("SAVE"); r != "+OK\r\n" {
		t.Fatal(r)
	}
	want := canonKeys(t, rs.do, 3, nil)
	file, err := os.ReadFile(filepath.Join(dir, "dump.rdb"))
	if err != nil {
		t.Fatal(err)
	}
	e := newTestEngine()
	st, err := e.LoadRDB(bytes.NewReader(file), LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if st.Version != 10 || st.Functions != 1 || st.Keys != int64(len(want)) {
		t.Errorf("stats %+v, want version 10, 1 function, %d keys", st, len(want))
	}
	tc := newTestConn(t, e)
	compareKeys(t, canonKeys(t, tc.do, 3, nil), want)
	if got := tc.do("FCALL", "f1", "0"); got != ":1\r\n" {
		t.Errorf("FCALL: %q", got)
	}
	var aux []string
	for _, kv := range st.Aux {
		aux = append(aux, kv[0])
	}
	if got := strings.Join(aux, ","); got != "redis-ver,redis-bits,ctime,used-mem,aof-base" {
		t.Errorf("Redis's aux fields: %s", got)
	}
}

// WriteRDB's file loads into redis-server 7.0.15 (dbfilename at start), which then serves the
// same keyspace as the engine; redis-check-rdb finds it valid.
func TestRedisLoadsWriteRDB(t *testing.T) {
	e := newTestEngine()
	tc := newTestConn(t, e)
	fillEveryType(t, tc.do, false)
	tc.do("FUNCTION", "LOAD", "#!lua name=mylib\nredis.register_function('f1', function() return 1 end)")
	want := canonKeys(t, tc.do, 3, nil)
	for _, o := range []RDBOptions{{Compress: true, Checksum: true}, {Compress: false, Checksum: false}} {
		dir := t.TempDir()
		path := filepath.Join(dir, "dump.rdb")
		if err := os.WriteFile(path, writeRDB(t, e, o), 0o600); err != nil {
			t.Fatal(err)
		}
		if bin, err := exec.LookPath("redis-check-rdb"); err == nil {
			out, err := exec.Command(bin, path).CombinedOutput()
			if err != nil || !bytes.Contains(out, []byte("RDB looks OK")) {
				t.Fatalf("redis-check-rdb (%+v): %v\n%s", o, err, out)
			}
		}
		rs := startRedisIn(t, dir)
		compareKeys(t, canonKeys(t, rs.do, 3, nil), want)
		if got := rs.do("FCALL", "f1", "0"); got != ":1\r\n" {
			t.Errorf("FCALL in Redis: %q", got)
		}
	}
}

// The RDB file redis-server 7.0.15 wrote for persist/rdb's tests (testdata/redis-7.0.15.rdb):
// the engine loading it serves what redis-server serves loading the same file.
func TestLoadRecordedRedisFile(t *testing.T) {
	file, err := os.ReadFile("../../persist/rdb/testdata/redis-7.0.15.rdb")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "dump.rdb"), file, 0o600); err != nil {
		t.Fatal(err)
	}
	rs := startRedisIn(t, dir)
	want := canonKeys(t, rs.do, 16, nil)
	if len(want) == 0 {
		t.Fatal("redis-server loaded no key")
	}
	e := newTestEngine()
	st, err := e.LoadRDB(bytes.NewReader(file), LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	tc := newTestConn(t, e)
	compareKeys(t, canonKeys(t, tc.do, 16, nil), want)
	t.Logf("%d keys (%d skipped as expired)", st.Keys, st.Expired)
}

// The aux fields' order with replication info: a redis-server 7.0.15 primary with a replica
// (so it keeps a backlog) writes repl-stream-db, repl-id and repl-offset between used-mem and
// aof-base on SAVE; WriteRDB with Repl writes the same keys in the same order.
func TestRDBAuxOrderWithReplication(t *testing.T) {
	dir := t.TempDir()
	primary := startRedisIn(t, dir)
	port := replyStrings(t, primary.do("CONFIG", "GET", "port"))[1]
	replica := startRedisIn(t, t.TempDir(), "--replicaof", "127.0.0.1", port)
	for i := 0; !strings.Contains(replica.do("INFO", "replication"), "master_link_status:up"); i++ {
		if i > 500 {
			t.Fatal("the replica did not sync")
		}
		time.Sleep(10 * time.Millisecond)
	}
	primary.do("SET", "k", "v")
	// The replica's link is up a moment before the primary reaps the child that fed its sync:
	// until then SAVE answers "Background save already in progress".
	for i := 0; ; i++ {
		r := primary.do("SAVE")
		if r == "+OK\r\n" {
			break
		}
		if i > 500 || !strings.Contains(r, "already in progress") {
			t.Fatal(r)
		}
		time.Sleep(10 * time.Millisecond)
	}
	file, err := os.ReadFile(filepath.Join(dir, "dump.rdb"))
	if err != nil {
		t.Fatal(err)
	}
	auxKeys := func(file []byte) string {
		st, err := newTestEngine().LoadRDB(bytes.NewReader(file), LoadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var ks []string
		for _, kv := range st.Aux {
			ks = append(ks, kv[0])
		}
		return strings.Join(ks, ",")
	}
	want := auxKeys(file)
	if !strings.Contains(want, "repl-id") {
		t.Fatalf("Redis wrote no replication aux fields: %s", want)
	}
	e := newTestEngine()
	newTestConn(t, e).do("SET", "k", "v")
	got := auxKeys(writeRDB(t, e, RDBOptions{Repl: &ReplInfo{StreamDB: 0, ID: strings.Repeat("a", 40), Offset: 42}}))
	if got != want {
		t.Errorf("aux fields %s, want %s", got, want)
	}
}
