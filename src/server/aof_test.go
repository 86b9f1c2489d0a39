package server

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hotkv/hotkv/persist/aof"
)

// newPersistServer is a test server whose dir is dir (on fsys when not nil), serving once its
// start-up load ended.
func newPersistServer(t *testing.T, dir string, fsys aof.FS, args ...string) *Server {
	t.Helper()
	s := newTestServer(t, args...)
	s.dataDir = dir
	if fsys != nil {
		s.aof.fs = fsys
	}
	serveTestServer(t, s)
	select {
	case <-s.Loaded():
	case <-time.After(20 * time.Second):
		t.Fatal("the start-up load did not end")
	}
	if err := s.LoadErr(); err != nil {
		t.Fatalf("start-up load: %v", err)
	}
	return s
}

// readAll reads a whole reply (inline test client: arrays and bulks followed line by line).
func (c *testClient) reply() string {
	c.t.Helper()
	line := c.line()
	switch line[0] {
	case '*':
		n, _ := strconv.Atoi(strings.TrimSpace(line[1:]))
		var b strings.Builder
		b.WriteString(line)
		for range max(n, 0) {
			b.WriteString(c.reply())
		}
		return b.String()
	case '$':
		n, _ := strconv.Atoi(strings.TrimSpace(line[1:]))
		if n < 0 {
			return line
		}
		buf := make([]byte, n+2)
		for got := 0; got < len(buf); {
			k, err := c.r.Read(buf[got:])
			if err != nil {
				c.t.Fatal(err)
			}
			got += k
		}
		return line + string(buf)
	}
	return line
}

// query sends cmd and returns its whole reply.
func (c *testClient) query(cmd string) string {
	c.t.Helper()
	c.send(cmd)
	return c.reply()
}

// fillTypes writes every type into two databases and returns the read-back commands whose
// replies a restarted server must repeat.
func fillTypes(t *testing.T, c *testClient) []string {
	t.Helper()
	writes := []string{
		"SET s1 hello", "SET n1 10", "INCRBY n1 5", "APPEND s1 world", "SET vol v EX 1000",
		"RPUSH l a b c d", "LPOP l", "HSET h f1 v1 f2 v2", "HDEL h f1", "SADD st x y z", "SREM st y",
		"ZADD z 1 a 2 b 3 c", "ZINCRBY z 10 a", "XADD x 1-1 f v", "XADD x 2-1 g w",
		"SELECT 3", "SET other db3", "RPUSH l3 q", "SELECT 0", "SET gone 1", "DEL gone",
		"MSET m1 a m2 b m3 c",
	}
	for _, w := range writes {
		if r := c.reply2(w); strings.HasPrefix(r, "-") {
			t.Fatalf("%s: %q", w, r)
		}
	}
	return []string{"GET s1", "GET n1", "GET vol", "TTL vol", "LRANGE l 0 -1", "HGETALL h", "SMEMBERS st",
		"ZRANGE z 0 -1 WITHSCORES", "XRANGE x - +", "EXISTS gone", "MGET m1 m2 m3", "DBSIZE",
		"SELECT 3", "GET other", "LRANGE l3 0 -1", "DBSIZE", "SELECT 0"}
}

func (c *testClient) reply2(cmd string) string { c.t.Helper(); return c.query(cmd) }

// readBack runs the read commands and returns their replies (SMEMBERS sorted by the server's
// order may differ: it is compared as a set of lines).
func readBack(t *testing.T, c *testClient, reads []string) []string {
	t.Helper()
	out := make([]string, len(reads))
	for i, r := range reads {
		rep := c.query(r)
		if strings.HasPrefix(r, "SMEMBERS") || strings.HasPrefix(r, "HGETALL") {
			lines := strings.Split(rep, "\r\n")
			sortStrings(lines)
			rep = strings.Join(lines, "|")
		}
		if strings.HasPrefix(r, "TTL") {
			n, _ := strconv.Atoi(strings.TrimSpace(rep[1:]))
			rep = fmt.Sprint(n > 900 && n <= 1000)
		}
		if strings.HasPrefix(r, "PTTL") { // set with 5000 s to go
			n, _ := strconv.Atoi(strings.TrimSpace(rep[1:]))
			rep = fmt.Sprint(n > 4_900_000 && n <= 5_000_000)
		}
		out[i] = r + " -> " + rep
	}
	return out
}

func sortStrings(s []string) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}

func sameLines(t *testing.T, what string, want, got []string) {
	t.Helper()
	if len(want) != len(got) {
		t.Fatalf("%s: %d replies, want %d", what, len(got), len(want))
	}
	for i := range want {
		if want[i] != got[i] {
			t.Errorf("%s: %q, before the restart %q", what, got[i], want[i])
		}
	}
}

// appendonly yes under each fsync policy: every type written, the server stopped, a new one on
// the same directory loads the AOF and answers the same.
func TestAOFRestartEachPolicy(t *testing.T) {
	for _, policy := range []string{"always", "everysec", "no"} {
		t.Run(policy, func(t *testing.T) {
			dir := t.TempDir()
			args := []string{"--appendonly", "yes", "--appendfsync", policy}
			s := newPersistServer(t, dir, nil, args...)
			c := dialTestServer(t, s)
			reads := fillTypes(t, c)
			want := readBack(t, c, reads)
			if info := c.query("INFO persistence"); !strings.Contains(info, "aof_enabled:1") {
				t.Fatalf("INFO persistence: %q", info)
			}
			s.Stop()
			s2 := newPersistServer(t, dir, nil, args...)
			got := readBack(t, dialTestServer(t, s2), reads)
			sameLines(t, "after restart", want, got)
		})
	}
}

// The crash model under always: writers pipeline INCRs on their own counters, the file system
// is crashed (CrashCopy: every byte not fsynced dropped) at a random point, and a server
// started on what is left has every counter at least at the value its writer had been
// acknowledged before the crash.
func TestAOFCrashAlwaysKeepsAcknowledged(t *testing.T) {
	for round := range 3 {
		t.Run(strconv.Itoa(round), func(t *testing.T) { crashRound(t, round) })
	}
}

func crashRound(t *testing.T, round int) {
	fsys := aof.NewCrashFS()
	fsys.SetSyncDelay(time.Millisecond)
	s := newPersistServer(t, "/data", fsys, "--appendonly", "yes", "--appendfsync", "always")
	const writers, depth = 8, 30
	acked, stop := incrWriters(t, s, writers, depth)
	time.Sleep(time.Duration(150+rand.IntN(300)) * time.Millisecond)
	before := make([]int64, writers)
	for i := range acked {
		before[i] = acked[i].Load()
	}
	crashed := fsys.CrashCopy()
	stop()
	s.Stop()
	var total int64
	for _, v := range before {
		total += v
	}
	if total == 0 {
		t.Fatal("no write was acknowledged before the crash")
	}
	s2 := newPersistServer(t, "/data", crashed, "--appendonly", "yes", "--appendfsync", "always")
	c := dialTestServer(t, s2)
	var recovered int64
	for w := range writers {
		v := getInt(c, "ctr:"+strconv.Itoa(w))
		recovered += v
		if v < before[w] {
			t.Errorf("writer %d: acknowledged %d before the crash, recovered %d", w, before[w], v)
		}
	}
	t.Logf("round %d: acknowledged %d INCRs before the crash, recovered %d, %d fsyncs", round, total, recovered, fsys.Syncs())
}

// getInt is GET key as a number (0 when missing).
func getInt(c *testClient, key string) int64 {
	c.t.Helper()
	parts := strings.Split(c.query("GET "+key), "\r\n")
	if len(parts) < 2 || parts[0] == "$-1" {
		return 0
	}
	v, err := strconv.ParseInt(parts[1], 10, 64)
	if err != nil {
		c.t.Fatalf("GET %s: %q", key, parts)
	}
	return v
}

// CONFIG SET appendfsync while writers pipeline INCRs (always, everysec, no, always): every
// switch closes the writer and reopens it on the same reader, so after a clean stop and a
// restart each counter is exactly what its writer was last acknowledged (none lost, none
// written twice).
func TestAOFPolicySwitchUnderLoad(t *testing.T) {
	dir := t.TempDir()
	args := []string{"--appendonly", "yes", "--appendfsync", "always"}
	s := newPersistServer(t, dir, nil, args...)
	const writers, depth = 4, 20
	acked, stop := incrWriters(t, s, writers, depth)
	admin := dialTestServer(t, s)
	for _, p := range []string{"everysec", "no", "always", "everysec"} {
		time.Sleep(100 * time.Millisecond)
		if got := admin.do("CONFIG SET appendfsync " + p); got != "+OK\r\n" {
			t.Fatalf("CONFIG SET appendfsync %s: %q", p, got)
		}
	}
	time.Sleep(100 * time.Millisecond)
	stop()
	s.Stop()
	c := dialTestServer(t, newPersistServer(t, dir, nil, args...))
	for w := range writers {
		if got, want := getInt(c, "ctr:"+strconv.Itoa(w)), acked[w].Load(); got != want || want == 0 {
			t.Errorf("writer %d: %d after the restart, acknowledged %d", w, got, want)
		}
	}
}

// Under everysec a crash loses at most about the last second or two of acknowledged writes
// (Redis's promise): writers pipeline INCRs for 3-3.5 s (longer than the bound, so a policy
// that never fsyncs fails), the file system is crashed, and for
// each writer the last recovered value was acknowledged no more than 2.5 s before the crash.
func TestAOFCrashEverysecWindow(t *testing.T) {
	fsys := aof.NewCrashFS()
	s := newPersistServer(t, "/data", fsys, "--appendonly", "yes", "--appendfsync", "everysec")
	const writers, depth = 4, 20
	type ack struct {
		v  int64
		at time.Time
	}
	var mu sync.Mutex
	acks := make([][]ack, writers)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := range writers {
		c := dialTestServer(t, s)
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := strings.Repeat("INCR ctr:"+strconv.Itoa(w)+"\r\n", depth)
			for {
				select {
				case <-stop:
					return
				default:
				}
				c.conn.SetDeadline(time.Now().Add(10 * time.Second))
				if _, err := c.conn.Write([]byte(cmd)); err != nil {
					return
				}
				var v int64
				for range depth {
					line, err := c.r.ReadString('\n')
					if err != nil {
						return
					}
					v, _ = strconv.ParseInt(strings.TrimSpace(line[1:]), 10, 64)
				}
				mu.Lock()
				acks[w] = append(acks[w], ack{v, time.Now()})
				mu.Unlock()
			}
		}()
	}
	time.Sleep(time.Duration(3000+rand.IntN(500)) * time.Millisecond)
	mu.Lock()
	crashAt := time.Now()
	crashed := fsys.CrashCopy()
	mu.Unlock()
	close(stop)
	wg.Wait()
	s.Stop()
	c := dialTestServer(t, newPersistServer(t, "/data", crashed, "--appendonly", "yes"))
	var worst time.Duration
	for w := range writers {
		got := getInt(c, "ctr:"+strconv.Itoa(w))
		// the newest acknowledgement the recovered value covers; everything after it was lost
		var lostFrom time.Time
		for _, a := range acks[w] {
			if a.at.After(crashAt) {
				break
			}
			if a.v > got {
				lostFrom = a.at
				break
			}
		}
		if !lostFrom.IsZero() {
			worst = max(worst, crashAt.Sub(lostFrom))
		}
	}
	t.Logf("everysec: acknowledged writes lost from at most %v before the crash", worst)
	if worst > 2500*time.Millisecond {
		t.Fatalf("everysec lost %v of acknowledged writes", worst)
	}
}

// CONFIG SET appendfsync during a rewrite answers at once and takes effect after it.
func TestFsyncChangeDuringRewrite(t *testing.T) {
	s := newPersistServer(t, t.TempDir(), nil, "--appendonly", "yes", "--appendfsync", "everysec")
	c := dialTestServer(t, s)
	c.query("SET a 1")
	rewriteInstantDelay.Store(int64(time.Second))
	defer rewriteInstantDelay.Store(0)
	c.query("BGREWRITEAOF")
	t0 := time.Now()
	if got := c.do("CONFIG SET appendfsync always"); got != "+OK\r\n" {
		t.Fatalf("CONFIG SET appendfsync always: %q", got)
	}
	if el := time.Since(t0); el > 500*time.Millisecond {
		t.Fatalf("CONFIG SET waited %v for the rewrite", el)
	}
	waitFor(t, func() bool { r := s.aof.run.Load(); return r != nil && r.always }, "the policy change")
	if v := infoField(t, c, "aof_rewrites"); v != "1" {
		t.Fatalf("the rewrite did not complete: aof_rewrites %s", v)
	}
}

// CONFIG SET appendonly yes leaves the AOF directory as it was until its rewrite's base is in
// (Redis 7.0 writes no manifest before that either): a crash in between restarts from the old
// AOF exactly, not from the old files plus the writes made since appendonly yes.
func TestConfigSetAppendOnlyCrashBeforeBase(t *testing.T) {
	fsys := aof.NewCrashFS()
	s := newPersistServer(t, "/data", fsys, "--appendonly", "yes", "--appendfsync", "always")
	c := dialTestServer(t, s)
	c.query("SET a 1")
	c.query("SET b 1")
	if got := c.query("CONFIG SET appendonly no"); got != "+OK\r\n" {
		t.Fatalf("CONFIG SET appendonly no: %q", got)
	}
	c.query("SET a 2") // not in the AOF
	c.query("CONFIG SET appendfsync everysec")
	rewriteInstantDelay.Store(int64(300 * time.Millisecond)) // the window before the base
	defer rewriteInstantDelay.Store(0)
	if got := c.query("CONFIG SET appendonly yes"); got != "+OK\r\n" {
		t.Fatalf("CONFIG SET appendonly yes: %q", got)
	}
	if got := c.query("SET c 1"); got != "+OK\r\n" {
		t.Fatalf("SET c during the rewrite: %q", got)
	}
	time.Sleep(50 * time.Millisecond) // the writer had time to put SET c somewhere
	if infoField(t, c, "aof_rewrites") != "0" {
		t.Fatal("the rewrite ended before the crash point; widen rewriteInstantDelay")
	}
	crashed := fsys.CrashCopy()
	waitFor(t, func() bool { return infoField(t, c, "aof_rewrites") == "1" }, "the rewrite")
	final := fsys.CrashCopy()
	s.Stop()
	c2 := dialTestServer(t, newPersistServer(t, "/data", crashed, "--appendonly", "yes"))
	for _, kv := range [][2]string{{"a", "$1\r\n1\r\n"}, {"b", "$1\r\n1\r\n"}, {"c", "$-1\r\n"}} {
		if got := c2.query("GET " + kv[0]); got != kv[1] {
			t.Errorf("after a crash before the base: GET %s = %q, want %q (the old AOF as it was)", kv[0], got, kv[1])
		}
	}
	c3 := dialTestServer(t, newPersistServer(t, "/data", final, "--appendonly", "yes"))
	for _, kv := range [][2]string{{"a", "$1\r\n2\r\n"}, {"b", "$1\r\n1\r\n"}, {"c", "$1\r\n1\r\n"}} {
		if got := c3.query("GET " + kv[0]); got != kv[1] {
			t.Errorf("after the rewrite: GET %s = %q, want %q", kv[0], got, kv[1])
		}
	}
}
