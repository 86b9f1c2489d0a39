package server

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hotkv/hotkv/persist/aof"
	"github.com/hotkv/hotkv/src/command"
)

// SAVE, then BGSAVE: each file, loaded by a restarted server, answers the read-back commands
// as the server did when it saved (every type, two databases, a TTL).
func TestRDBSaveRestart(t *testing.T) {
	for _, cmd := range []string{"SAVE", "BGSAVE"} {
		t.Run(cmd, func(t *testing.T) {
			dir := t.TempDir()
			s := newPersistServer(t, dir, nil)
			c := dialTestServer(t, s)
			reads := fillTypes(t, c)
			want := readBack(t, c, reads)
			if got := c.query(cmd); !strings.HasPrefix(got, "+") {
				t.Fatalf("%s: %q", cmd, got)
			}
			waitFor(t, func() bool { return infoField(t, c, "rdb_saves") == "1" }, "the save")
			if v := infoField(t, c, "rdb_changes_since_last_save"); v != "0" {
				t.Fatalf("rdb_changes_since_last_save after %s: %s", cmd, v)
			}
			c.query("SET after-save 1") // not in the file
			s.Stop()
			s2 := newPersistServer(t, dir, nil)
			c2 := dialTestServer(t, s2)
			sameLines(t, "after restart", want, readBack(t, c2, reads))
			if got := c2.query("EXISTS after-save"); got != ":0\r\n" {
				t.Fatalf("a write after the save is in the file: %q", got)
			}
			if v := infoField(t, c2, "rdb_last_load_keys_loaded"); v == "0" {
				t.Fatal("rdb_last_load_keys_loaded is 0 after loading")
			}
		})
	}
}

// redis-server 7.0.15 loads the RDB HotKV saved and answers as HotKV did.
func TestRedisLoadsSavedRDB(t *testing.T) {
	dir := t.TempDir()
	s := newPersistServer(t, dir, nil)
	c := dialTestServer(t, s)
	reads := fillTypes(t, c)
	want := readBack(t, c, reads)
	if got := c.query("SAVE"); got != "+OK\r\n" {
		t.Fatalf("SAVE: %q", got)
	}
	rc, _ := startRedisIn(t, dir, "--dbfilename", "dump.rdb")
	sameLines(t, "redis-server on HotKV's RDB", want, readBack(t, rc, reads))
}

// BGREWRITEAOF: the base is a point-in-time RDB preamble; writes after it go to the new INCR
// file; a restart, and redis-server 7.0.15 on a copy of the directory, both answer as the
// server did.
func TestBGRewriteAOFRestart(t *testing.T) {
	for _, preamble := range []string{"yes", "no"} {
		t.Run("preamble-"+preamble, func(t *testing.T) { bgRewriteRestart(t, preamble) })
	}
}

func bgRewriteRestart(t *testing.T, preamble string) {
	dir := t.TempDir()
	args := []string{"--appendonly", "yes", "--appendfsync", "always", "--aof-use-rdb-preamble", preamble}
	s := newPersistServer(t, dir, nil, args...)
	c := dialTestServer(t, s)
	reads := fillTypes(t, c)
	for _, w := range []string{"XGROUP CREATE x g 0", "XREADGROUP GROUP g alice COUNT 1 STREAMS x >",
		"XGROUP CREATECONSUMER x g bob", "XADD empty 5-5 a b", "XDEL empty 5-5", "ZADD z 2.5 half",
		"EXPIRE l 5000"} {
		if got := c.query(w); strings.HasPrefix(got, "-") {
			t.Fatalf("%s: %q", w, got)
		}
	}
	reads = append(reads, "XPENDING x g", "XINFO GROUPS x", "XLEN empty", "XINFO STREAM empty", "PTTL l")
	if got := c.query("BGREWRITEAOF"); got != "+Background append only file rewriting started\r\n" {
		t.Fatalf("BGREWRITEAOF: %q", got)
	}
	waitFor(t, func() bool { return infoField(t, c, "aof_rewrites") == "1" }, "the rewrite")
	suffix, magic := ".base.rdb", "REDIS"
	if preamble == "no" {
		suffix, magic = ".base.aof", "*2\r\n$6\r\nSELECT"
	}
	base, err := os.ReadFile(filepath.Join(dir, "appendonlydir", "appendonly.aof.1"+suffix))
	if err != nil || !strings.HasPrefix(string(base), magic) {
		t.Fatalf("base file: %v, starts %q", err, base[:min(len(base), 20)])
	}
	c.query("SET s1 rewritten")
	c.query("RPUSH l after")
	want := readBack(t, c, reads)
	s.Stop()
	c2 := dialTestServer(t, newPersistServer(t, dir, nil, args...))
	sameLines(t, "after restart", want, readBack(t, c2, reads))
	rc, _ := startRedisIn(t, dir, "--appendonly", "yes")
	sameLines(t, "redis-server on HotKV's rewritten AOF", want, readBack(t, rc, reads))
}

// CONFIG SET appendonly yes on a filled server writes a base holding what was there (Redis's
// startAppendOnly); a restart with appendonly yes has it all.
func TestConfigSetAppendOnlyFilled(t *testing.T) {
	dir := t.TempDir()
	s := newPersistServer(t, dir, nil)
	c := dialTestServer(t, s)
	reads := fillTypes(t, c)
	if got := c.query("CONFIG SET appendonly yes"); got != "+OK\r\n" {
		t.Fatalf("CONFIG SET appendonly yes: %q", got)
	}
	waitFor(t, func() bool { return infoField(t, c, "aof_rewrites") == "1" }, "the rewrite")
	c.query("INCR n1")
	want := readBack(t, c, reads)
	s.Stop()
	c2 := dialTestServer(t, newPersistServer(t, dir, nil, "--appendonly", "yes"))
	sameLines(t, "after restart", want, readBack(t, c2, reads))
}

// Rewrites while writers pipeline INCRs under always: each rewrite succeeds (the writer's
// source is paused across the snapshot's instant, so it never routes past the point) and after
// a clean stop and restart every counter equals its last acknowledged value: nothing between
// the base and the new INCR file was lost or doubled.
func TestBGRewriteAOFUnderLoad(t *testing.T) {
	dir := t.TempDir()
	args := []string{"--appendonly", "yes", "--appendfsync", "always"}
	s := newPersistServer(t, dir, nil, args...)
	rewriteInstantDelay.Store(int64(30 * time.Millisecond))
	defer rewriteInstantDelay.Store(0)
	acked, stop := incrWriters(t, s, 4, 20)
	admin := dialTestServer(t, s)
	for i := range 3 {
		time.Sleep(100 * time.Millisecond)
		if got := admin.query("BGREWRITEAOF"); !strings.HasPrefix(got, "+Background append only file rewriting") {
			t.Fatalf("BGREWRITEAOF: %q", got)
		}
		want := strconv.Itoa(i + 1)
		waitFor(t, func() bool { return infoField(t, admin, "aof_rewrites") == want }, "rewrite "+want)
	}
	if v := infoField(t, admin, "aof_rewrites_consecutive_failures"); v != "0" {
		t.Fatalf("failed rewrites: %s", v)
	}
	stop()
	s.Stop()
	c := dialTestServer(t, newPersistServer(t, dir, nil, args...))
	for w := range acked {
		if got, want := getInt(c, "ctr:"+strconv.Itoa(w)), acked[w].Load(); got != want || want == 0 {
			t.Errorf("writer %d: %d after the restart, acknowledged %d", w, got, want)
		}
	}
}

// incrWriters starts n clients pipelining depth INCRs of their own counter; stop ends them.
func incrWriters(t *testing.T, s *Server, n, depth int) ([]atomic.Int64, func()) {
	acked := make([]atomic.Int64, n)
	done := make(chan struct{})
	var wg sync.WaitGroup
	for w := range n {
		c := dialTestServer(t, s)
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := strings.Repeat("INCR ctr:"+strconv.Itoa(w)+"\r\n", depth)
			for {
				select {
				case <-done:
					return
				default:
				}
				c.conn.SetDeadline(time.Now().Add(10 * time.Second))
				if _, err := c.conn.Write([]byte(cmd)); err != nil {
					t.Error(err)
					return
				}
				for range depth {
					line, err := c.r.ReadString('\n')
					if err != nil {
						t.Error(err)
						return
					}
					v, _ := strconv.ParseInt(strings.TrimSpace(line[1:]), 10, 64)
					acked[w].Store(v)
				}
			}
		}()
	}
	return acked, func() { close(done); wg.Wait() }
}

// A value larger than a feed ring (1 MB) is dropped from the feed, so the writer loses it
// (feed.ErrLost); the server rewrites the AOF from a fresh reader and a snapshot, the client's
// reply under always waits for that base, and a restart has the value and the writes after.
func TestAOFFeedLostRewrites(t *testing.T) {
	for _, policy := range []string{"always", "everysec"} {
		t.Run(policy, func(t *testing.T) {
			dir := t.TempDir()
			args := []string{"--appendonly", "yes", "--appendfsync", policy}
			s := newPersistServer(t, dir, nil, args...)
			c := dialTestServer(t, s)
			c.query("SET before 1")
			big := strings.Repeat("b", 2<<20)
			c.conn.SetDeadline(time.Now().Add(10 * time.Second))
			c.conn.Write([]byte("*3\r\n$3\r\nSET\r\n$3\r\nbig\r\n$" + strconv.Itoa(len(big)) + "\r\n" + big + "\r\n"))
			if got := c.reply(); got != "+OK\r\n" {
				t.Fatalf("SET big: %q", got)
			}
			waitFor(t, func() bool { return infoField(t, c, "aof_rewrites") == "1" }, "the rewrite after the lost feed")
			c.query("SET after 1")
			s.Stop()
			c2 := dialTestServer(t, newPersistServer(t, dir, nil, args...))
			if got := c2.query("STRLEN big"); got != ":2097152\r\n" {
				t.Fatalf("STRLEN big after restart: %q", got)
			}
			if got := c2.query("MGET before after"); got != "*2\r\n$1\r\n1\r\n$1\r\n1\r\n" {
				t.Fatalf("MGET before after: %q", got)
			}
		})
	}
}

// DEBUG RELOAD saves, empties and loads back (the same answers); NOSAVE reloads the file as it
// was (a later write is gone); NOFLUSH MERGE keeps keys the file lacks; with the AOF on, a
// rewrite follows, so a restart has the reloaded data.
func TestDebugReload(t *testing.T) {
	dir := t.TempDir()
	args := []string{"--appendonly", "yes", "--enable-debug-command", "yes"}
	s := newPersistServer(t, dir, nil, args...)
	c := dialTestServer(t, s)
	reads := fillTypes(t, c)
	want := readBack(t, c, reads)
	if got := c.query("DEBUG RELOAD"); got != "+OK\r\n" {
		t.Fatalf("DEBUG RELOAD: %q", got)
	}
	sameLines(t, "after DEBUG RELOAD", want, readBack(t, c, reads))
	c.query("SET later 1")
	if got := c.query("DEBUG RELOAD NOSAVE"); got != "+OK\r\n" {
		t.Fatalf("DEBUG RELOAD NOSAVE: %q", got)
	}
	if got := c.query("EXISTS later"); got != ":0\r\n" {
		t.Fatalf("a key not in the file survived DEBUG RELOAD NOSAVE: %q", got)
	}
	c.query("SET later 2")
	if got := c.query("DEBUG RELOAD NOSAVE NOFLUSH MERGE"); got != "+OK\r\n" {
		t.Fatalf("DEBUG RELOAD NOSAVE NOFLUSH MERGE: %q", got)
	}
	if got := c.query("GET later"); got != "$1\r\n2\r\n" {
		t.Fatalf("NOFLUSH MERGE lost a key the file lacks: %q", got)
	}
	c.query("DEL later")
	sameLines(t, "after MERGE", want, readBack(t, c, reads))
	s.Stop()
	c2 := dialTestServer(t, newPersistServer(t, dir, nil, args...))
	sameLines(t, "restart after DEBUG RELOAD", want, readBack(t, c2, reads))
}

// Other clients get -LOADING while DEBUG RELOAD loads (Redis answers them so from rdbLoad),
// and the data once it is done; the client that asked gets +OK.
//
// Every read has its own deadline and none calls t.Fatal off the test goroutine: the save and
// load of 300,000 keys under -race on a loaded 2-vCPU VM took over testClient.send's 5 s, and a
// t.Fatal in the goroutine that read the +OK ended only that goroutine, leaving the GET loop
// below spinning until the package timed out.
func TestDebugReloadAnswersLoading(t *testing.T) {
	const (
		reloadWait = 2 * time.Minute  // DEBUG RELOAD's reply
		replyWait  = 30 * time.Second // any other reply
	)
	s := newPersistServer(t, t.TempDir(), nil, "--enable-debug-command", "yes")
	c, other := dialTestServer(t, s), dialTestServer(t, s)
	const keys = 300_000
	for i := 0; i < keys; i += 1000 { // DEBUG POPULATE's keys, pipelined
		var req strings.Builder
		for j := i; j < i+1000; j++ {
			k, v := "key:"+strconv.Itoa(j), "value:"+strconv.Itoa(j)
			fmt.Fprintf(&req, "*3\r\n$3\r\nSET\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n", len(k), k, len(v), v)
		}
		c.conn.SetDeadline(time.Now().Add(replyWait))
		if _, err := c.conn.Write([]byte(req.String())); err != nil {
			t.Fatal(err)
		}
		for range 1000 {
			if got := c.reply(); got != "+OK\r\n" {
				t.Fatalf("SET: %q", got)
			}
		}
	}
	type reply struct {
		line string
		err  error
	}
	done := make(chan reply, 1)
	c.send("DEBUG RELOAD")
	c.conn.SetReadDeadline(time.Now().Add(reloadWait))
	start := time.Now()
	go func() { // the reply is one line, +OK or an error; the deadline above ends the read
		line, err := c.r.ReadString('\n')
		done <- reply{line, err}
	}()
	loading, served := 0, 0
	for {
		select {
		case r := <-done:
			took := time.Since(start).Round(time.Millisecond)
			if r.err != nil {
				t.Fatalf("DEBUG RELOAD: no reply in %v: %v (have %q; meanwhile %d GETs answered -LOADING, %d answered)",
					took, r.err, r.line, loading, served)
			}
			if r.line != "+OK\r\n" {
				t.Fatalf("DEBUG RELOAD: %q", r.line)
			}
			t.Logf("DEBUG RELOAD of %d keys took %v: %d GETs answered -LOADING, %d answered", keys, took, loading, served)
			if loading == 0 {
				t.Fatal("no GET answered -LOADING during DEBUG RELOAD")
			}
			if got := other.query("GET key:1"); got != "$7\r\nvalue:1\r\n" {
				t.Fatalf("GET key:1 after DEBUG RELOAD: %q", got)
			}
			if got := other.query("DBSIZE"); got != ":"+strconv.Itoa(keys)+"\r\n" {
				t.Fatalf("DBSIZE after DEBUG RELOAD: %q", got)
			}
			if got := infoField(t, other, "loading"); got != "0" {
				t.Fatalf("INFO loading:%s after DEBUG RELOAD", got)
			}
			return
		default:
		}
		other.send("GET key:1")
		other.conn.SetReadDeadline(time.Now().Add(replyWait))
		switch got := other.reply(); got { // an unanswered GET fails here, on the test goroutine
		case "-" + command.ErrLoading + "\r\n":
			loading++
		case "$7\r\nvalue:1\r\n", "$-1\r\n": // before the flush, or (nil) between it and the key's load
			served++
		default:
			t.Fatalf("GET during DEBUG RELOAD: %q", got)
		}
	}
}

// A full disk (CrashFS's space limit) fails the save rules' BGSAVE: writes get Redis's RDB
// MISCONF; once there is room, the next BGSAVE succeeds and writes are accepted again; the old
// file stays whole throughout.
func TestRDBDiskFullMisconf(t *testing.T) {
	fsys := aof.NewCrashFS()
	fsys.MkdirAll("/data")
	s := newPersistServer(t, "/data", fsys, "--save", "1 1")
	c := dialTestServer(t, s)
	c.query("SET small 1")
	if got := c.query("SAVE"); got != "+OK\r\n" {
		t.Fatalf("SAVE: %q", got)
	}
	saved, _ := fsys.ReadFile("/data/dump.rdb")
	fsys.SetSpace(int64(len(saved)) + 1000)
	var big strings.Builder // letters LZF cannot shrink much
	for range 4000 {
		big.WriteByte(byte('a' + rand.IntN(26)))
	}
	c.query("SET big " + big.String())
	s.rdb.lastSave.Store(time.Now().Unix() - 5)
	waitFor(t, func() bool { return infoField(t, c, "rdb_last_bgsave_status") == "err" }, "the failed bgsave")
	if got := c.query("SET x 1"); got != "-"+command.ErrMisconfRDB+"\r\n" {
		t.Fatalf("SET with a full disk: %q", got)
	}
	if now, _ := fsys.ReadFile("/data/dump.rdb"); !bytes.Equal(now, saved) {
		t.Fatal("the failed save changed dump.rdb")
	}
	fsys.SetSpace(0)
	if got := c.query("BGSAVE"); got != "+Background saving started\r\n" {
		t.Fatalf("BGSAVE: %q", got)
	}
	waitFor(t, func() bool { return infoField(t, c, "rdb_last_bgsave_status") == "ok" }, "the good bgsave")
	if got := c.query("SET x 1"); got != "+OK\r\n" {
		t.Fatalf("SET after the disk recovered: %q", got)
	}
}

// BGSAVE while a rewrite runs is refused with Redis's error, BGSAVE SCHEDULE is started by the
// cron once the rewrite ended; BGREWRITEAOF with appendonly no writes the AOF files (a base and
// a manifest) and leaves the AOF off, as Redis 7.0.15 does.
func TestBgsaveScheduleAndRewriteOff(t *testing.T) {
	dir := t.TempDir()
	s := newPersistServer(t, dir, nil, "--appendonly", "yes")
	c := dialTestServer(t, s)
	c.query("SET a 1")
	rewriteInstantDelay.Store(int64(500 * time.Millisecond))
	defer rewriteInstantDelay.Store(0)
	if got := c.query("BGREWRITEAOF"); got != "+Background append only file rewriting started\r\n" {
		t.Fatalf("BGREWRITEAOF: %q", got)
	}
	if got := c.query("BGSAVE"); got != "-"+command.ErrBGSaveBusy+"\r\n" {
		t.Fatalf("BGSAVE during a rewrite: %q", got)
	}
	if got := c.query("BGREWRITEAOF"); got != "-"+command.ErrAOFRewriteBusy+"\r\n" {
		t.Fatalf("BGREWRITEAOF during a rewrite: %q", got)
	}
	if got := c.query("BGSAVE SCHEDULE"); got != "+Background saving scheduled\r\n" {
		t.Fatalf("BGSAVE SCHEDULE: %q", got)
	}
	waitFor(t, func() bool { return infoField(t, c, "rdb_saves") == "1" }, "the scheduled bgsave")
	if v := infoField(t, c, "aof_rewrites"); v != "1" {
		t.Fatalf("aof_rewrites: %s", v)
	}
	rewriteInstantDelay.Store(0)

	dir2 := t.TempDir()
	c2 := dialTestServer(t, newPersistServer(t, dir2, nil))
	c2.query("SET k v")
	if got := c2.query("BGREWRITEAOF"); got != "+Background append only file rewriting started\r\n" {
		t.Fatalf("BGREWRITEAOF with appendonly no: %q", got)
	}
	waitFor(t, func() bool { return infoField(t, c2, "aof_rewrites") == "1" }, "the rewrite with appendonly no")
	if v := infoField(t, c2, "aof_enabled"); v != "0" {
		t.Fatalf("aof_enabled after BGREWRITEAOF with appendonly no: %s", v)
	}
	for _, f := range []string{"appendonly.aof.manifest", "appendonly.aof.1.base.rdb"} {
		if _, err := os.Stat(filepath.Join(dir2, "appendonlydir", f)); err != nil {
			t.Fatal(err)
		}
	}
}

// auto-aof-rewrite-percentage/min-size: once the AOF passes the minimum size and has doubled
// over its base, the cron rewrites it (once: the base then holds the data).
func TestAutoAOFRewrite(t *testing.T) {
	s := newPersistServer(t, t.TempDir(), nil, "--appendonly", "yes", "--auto-aof-rewrite-min-size", "4096",
		"--auto-aof-rewrite-percentage", "100")
	c := dialTestServer(t, s)
	if v := infoField(t, c, "aof_rewrites"); v != "0" {
		t.Fatalf("aof_rewrites before any write: %s", v)
	}
	for i := range 200 {
		c.query("SET key:" + strconv.Itoa(i) + " " + strings.Repeat("v", 20))
	}
	// A rewrite the cron starts while the SETs still arrive leaves the rest to double a small
	// base, which rightly starts a second one; with no writes after, the count must settle.
	waitFor(t, func() bool { return infoField(t, c, "aof_rewrites") != "0" }, "the automatic rewrite")
	var v string
	for prev, deadline := "", time.Now().Add(10*time.Second); ; prev = v {
		if v = infoField(t, c, "aof_rewrites"); v == prev && infoField(t, c, "aof_rewrite_in_progress") == "0" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("aof_rewrites kept growing without writes: %s", v)
		}
		time.Sleep(300 * time.Millisecond)
	}
	if v != "1" && v != "2" {
		t.Fatalf("aof_rewrites settled at %s, want 1 (or 2 when the first began before the last SET)", v)
	}
	base, _ := strconv.Atoi(infoField(t, c, "aof_base_size"))
	cur, _ := strconv.Atoi(infoField(t, c, "aof_current_size"))
	if base == 0 || cur < base {
		t.Fatalf("aof_base_size %d, aof_current_size %d", base, cur)
	}
}

// SHUTDOWN SAVE during a long BGSAVE aborts it, as Redis kills the child, then saves: the file
// holds every key and the server stops.
func TestShutdownAbortsBgsave(t *testing.T) {
	dir := t.TempDir()
	s := newPersistServer(t, dir, nil)
	logs := captureLog(s)
	c := dialTestServer(t, s)
	const keys = 100_000
	var buf strings.Builder
	for i := range keys {
		buf.WriteString("SET key:" + strconv.Itoa(i) + " " + strings.Repeat("v", 64) + "\r\n")
	}
	c.conn.SetDeadline(time.Now().Add(30 * time.Second))
	c.conn.Write([]byte(buf.String()))
	for range keys {
		c.line()
	}
	if got := c.query("BGSAVE"); got != "+Background saving started\r\n" {
		t.Fatalf("BGSAVE: %q", got)
	}
	c.send("SHUTDOWN SAVE")
	select {
	case <-s.Done():
	case <-time.After(20 * time.Second):
		t.Fatal("SHUTDOWN SAVE did not stop the server")
	}
	s.Stop()
	if s.rdb.saves.Load() == 0 {
		t.Fatal("no save completed")
	}
	c2 := dialTestServer(t, newPersistServer(t, dir, nil))
	if got := c2.query("DBSIZE"); got != ":100000\r\n" {
		t.Fatalf("DBSIZE after restart: %q", got)
	}
	t.Logf("aborted the bgsave: %v", strings.Contains(logs.String(), "Killing it!"))
}

// INFO during a BGSAVE of 50k keys: rdb_bgsave_in_progress 1 with current_save_keys_total the
// instant's key count and the processed count within it; after it, rdb_last_cow_size is the
// snapshot's peak held bytes (more than 0) and the current fields are 0 again.
func TestInfoDuringBgsave(t *testing.T) {
	s := newPersistServer(t, t.TempDir(), nil)
	c := dialTestServer(t, s)
	fillKeys(t, c, 50_000)
	if got := c.query("BGSAVE"); got != "+Background saving started\r\n" {
		t.Fatalf("BGSAVE: %q", got)
	}
	seen := 0
	for infoField(t, c, "rdb_bgsave_in_progress") == "1" {
		total, _ := strconv.Atoi(infoField(t, c, "current_save_keys_total"))
		done, _ := strconv.Atoi(infoField(t, c, "current_save_keys_processed"))
		if total != 0 && total != 50_000 || done > 50_000 {
			t.Fatalf("during the save: keys total %d, processed %d", total, done)
		}
		if total > 0 {
			seen++
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Logf("%d samples during the save", seen)
	if v, _ := strconv.Atoi(infoField(t, c, "rdb_last_cow_size")); v <= 0 {
		t.Fatalf("rdb_last_cow_size after the save: %d", v)
	}
	for _, f := range []string{"current_save_keys_total", "current_save_keys_processed", "current_cow_size"} {
		if v := infoField(t, c, f); v != "0" {
			t.Fatalf("%s after the save: %s", f, v)
		}
	}
}

// fillKeys SETs key:0..n-1 to 64-byte values in one pipeline.
func fillKeys(t *testing.T, c *testClient, n int) {
	t.Helper()
	var buf strings.Builder
	for i := range n {
		buf.WriteString("SET key:" + strconv.Itoa(i) + " " + strings.Repeat("v", 64) + "\r\n")
	}
	c.conn.SetDeadline(time.Now().Add(60 * time.Second))
	c.conn.Write([]byte(buf.String()))
	for range n {
		c.line()
	}
}

// The crash model with rewrites: writers pipeline INCRs under always while BGREWRITEAOF runs
// over and over (the instant widened to 20 ms), the file system is crashed at a random point
// (CrashCopy), and a server started on what is left has every counter at least at its last
// acknowledged value before the crash.
func TestAOFCrashDuringRewrites(t *testing.T) {
	for round := range 3 {
		t.Run(strconv.Itoa(round), func(t *testing.T) {
			fsys := aof.NewCrashFS()
			fsys.SetSyncDelay(time.Millisecond)
			args := []string{"--appendonly", "yes", "--appendfsync", "always"}
			s := newPersistServer(t, "/data", fsys, args...)
			rewriteInstantDelay.Store(int64(20 * time.Millisecond))
			defer rewriteInstantDelay.Store(0)
			acked, stop := incrWriters(t, s, 6, 20)
			admin := dialTestServer(t, s)
			end := time.Now().Add(time.Duration(200+rand.IntN(400)) * time.Millisecond)
			for time.Now().Before(end) {
				admin.query("BGREWRITEAOF") // refused while one runs
				time.Sleep(30 * time.Millisecond)
			}
			before := make([]int64, len(acked))
			for i := range acked {
				before[i] = acked[i].Load()
			}
			crashed := fsys.CrashCopy()
			rewrites := infoField(t, admin, "aof_rewrites")
			stop()
			s.Stop()
			c := dialTestServer(t, newPersistServer(t, "/data", crashed, args...))
			var total int64
			for w := range acked {
				got := getInt(c, "ctr:"+strconv.Itoa(w))
				total += before[w]
				if got < before[w] {
					t.Errorf("writer %d: acknowledged %d before the crash, recovered %d", w, before[w], got)
				}
			}
			if total == 0 {
				t.Fatal("nothing acknowledged before the crash")
			}
			t.Logf("round %d: %d acknowledged before the crash, %s rewrites", round, total, rewrites)
		})
	}
}
