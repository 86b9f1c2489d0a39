package testfuzz

// Round trips of the whole keyspace between redis-server 7.0.15 and HotKV through RDB files,
// AOF directories and DUMP/RESTORE, in every direction (Redis to Redis proves the harness).

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// persistKinds are the servers a round trip goes between.
var persistKinds = []string{"redis", "hotkv"}

// TestPersistRDBRoundTrip: a server filled with every type saves (SAVE, BGSAVE or SHUTDOWN
// SAVE), the other server (and the same kind) starts on the file with dir and dbfilename, and
// the two servers' dumps are equal, TTLs and function libraries included.
func TestPersistRDBRoundTrip(t *testing.T) {
	if !haveRedis() {
		t.Skip("redis-server not on PATH")
	}
	t.Parallel()
	for _, from := range persistKinds {
		hows := []string{"SAVE", "BGSAVE", "SHUTDOWN SAVE"}
		if from == "redis" {
			hows = hows[:1] // Redis's other ways write the same file
		}
		for _, how := range hows {
			for _, to := range persistKinds {
				name := from + "/" + strings.ReplaceAll(how, " ", "_") + "/" + to
				t.Run(name, func(t *testing.T) {
					t.Parallel()
					redisOnlyUnderRace(t, from, to)
					onlyWithoutRace(t, how != "SAVE")
					dir := t.TempDir()
					src := startNode(t, from, dir, "--dbfilename", "src.rdb")
					f := newFiller(t, src.addr, 1, "rdb")
					f.fill()
					want := dumpServer(t, src.addr, dumpOpts{})
					saveNode(t, src, how)
					if _, err := os.Stat(filepath.Join(dir, "src.rdb")); err != nil {
						t.Fatalf("%s %s wrote no file: %v", from, how, err)
					}
					checkTool(t, "redis-check-rdb", filepath.Join(dir, "src.rdb"), "RDB looks OK")
					dir2 := t.TempDir()
					if err := copyFile(filepath.Join(dir, "src.rdb"), filepath.Join(dir2, "moved.rdb")); err != nil {
						t.Fatal(err)
					}
					dst := startNode(t, to, dir2, "--dbfilename", "moved.rdb")
					got := dumpServer(t, dst.addr, dumpOpts{})
					compareDumps(t, from+" "+how+" loaded by "+to, want, got)
					t.Logf("%s", want.stats())
				})
			}
		}
	}
}

// saveNode makes the node write its RDB file: SAVE, BGSAVE (waiting for it to end) or
// SHUTDOWN SAVE (waiting for the exit).
func saveNode(t *testing.T, n *node, how string) {
	t.Helper()
	c := dial(t, n.addr)
	switch how {
	case "SAVE":
		if got := c.do("SAVE"); got != "+OK\r\n" {
			t.Fatalf("%s SAVE: %s", n.kind, quote(got))
		}
	case "BGSAVE":
		before := c.do("LASTSAVE")
		if got := c.do("BGSAVE"); got != "+Background saving started\r\n" {
			t.Fatalf("%s BGSAVE: %s", n.kind, quote(got))
		}
		waitBgsave(t, c, before)
	case "SHUTDOWN SAVE":
		n.shutdown(t, "SAVE")
	default:
		t.Fatalf("no save %q", how)
	}
}

// checkTool runs Redis's checker (redis-check-rdb or redis-check-aof 7.0.15) on a file and
// requires its verdict of a good file.
func checkTool(t *testing.T, tool, path, verdict string) {
	t.Helper()
	out, err := exec.Command(tool, path).CombinedOutput()
	if err != nil || !strings.Contains(string(out), verdict) {
		t.Errorf("%s %s: %v\n%s", tool, path, err, tail(string(out), 1500))
	}
}

// waitBgsave waits until the background save that BGSAVE just started has ended (both servers
// show rdb_bgsave_in_progress:1 before BGSAVE replies) and checks that it succeeded and that
// LASTSAVE did not go back from before.
func waitBgsave(t *testing.T, c *rawConn, before string) {
	t.Helper()
	end := time.Now().Add(60 * time.Second)
	for time.Now().Before(end) {
		if infoField(t, c, "persistence", "rdb_bgsave_in_progress") == "0" {
			if st := infoField(t, c, "persistence", "rdb_last_bgsave_status"); st != "ok" {
				t.Fatalf("background save failed: rdb_last_bgsave_status:%s", st)
			}
			b, _ := parseReply(t, before).Int()
			if a, _ := parseReply(t, c.do("LASTSAVE")).Int(); a < b {
				t.Fatalf("LASTSAVE went back from %d to %d", b, a)
			}
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatal("background save did not end within 60 s")
}

// TestPersistAOFRoundTrip: a server with appendonly yes (aof-use-rdb-preamble yes or no) is
// filled, rewrites its AOF (BGREWRITEAOF), takes more writes into the new incremental file and
// stops; the other server (and the same kind) starts with appendonly yes on a copy of the
// directory, and the dumps are equal. Consumers' seen-time is left out: replaying an AOF sets
// it to the time of the replay, in Redis as in HotKV.
func TestPersistAOFRoundTrip(t *testing.T) {
	if !haveRedis() {
		t.Skip("redis-server not on PATH")
	}
	t.Parallel()
	for _, from := range persistKinds {
		for _, preamble := range []string{"yes", "no"} {
			for _, to := range persistKinds {
				t.Run(from+"/preamble_"+preamble+"/"+to, func(t *testing.T) {
					t.Parallel()
					redisOnlyUnderRace(t, from, to)
					onlyWithoutRace(t, preamble == "no")
					aofRoundTrip(t, from, to, preamble)
				})
			}
		}
	}
}

func aofRoundTrip(t *testing.T, from, to, preamble string) {
	dir := t.TempDir()
	args := []string{"--appendonly", "yes", "--appendfsync", "always", "--aof-use-rdb-preamble", preamble}
	src := startNode(t, from, dir, args...)
	f := newFiller(t, src.addr, 2, "aof")
	f.fill()
	c := dial(t, src.addr)
	if got := c.do("BGREWRITEAOF"); !strings.HasPrefix(got, "+Background append only file rewriting") {
		t.Fatalf("%s BGREWRITEAOF: %s", from, quote(got))
	}
	waitRewrite(t, c)
	f.mutate()
	// Writes after the mutation, in one more database.
	c.do("SELECT", "7")
	c.do("SET", "after:rewrite", "1")
	c.do("INCR", "after:rewrite")
	want := dumpServer(t, src.addr, dumpOpts{aof: true})
	src.shutdown(t, "NOSAVE")
	listAOF(t, dir)
	checkTool(t, "redis-check-aof", filepath.Join(dir, "appendonlydir", "appendonly.aof.manifest"), "is valid")
	dir2 := t.TempDir()
	copyTree(t, filepath.Join(dir, "appendonlydir"), filepath.Join(dir2, "appendonlydir"))
	dst := startNode(t, to, dir2, "--appendonly", "yes")
	got := dumpServer(t, dst.addr, dumpOpts{aof: true})
	compareDumps(t, from+" AOF (preamble "+preamble+") loaded by "+to, want, got)
	if to == "hotkv" {
		// Redis's own load of the same directory is the reference for what replay keeps.
		dir3 := t.TempDir()
		copyTree(t, filepath.Join(dir, "appendonlydir"), filepath.Join(dir3, "appendonlydir"))
		ref := startNode(t, "redis", dir3, "--appendonly", "yes")
		strict := dumpOpts{aof: true, replay: true}
		compareDumps(t, from+" AOF (preamble "+preamble+") loaded by hotkv against redis's load",
			dumpServer(t, ref.addr, strict), dumpServer(t, dst.addr, strict))
	}
	t.Logf("%s", want.stats())
}

// waitRewrite waits until an AOF rewrite has run and ended well.
func waitRewrite(t *testing.T, c *rawConn) {
	t.Helper()
	end := time.Now().Add(60 * time.Second)
	for time.Now().Before(end) {
		if infoField(t, c, "persistence", "aof_rewrite_in_progress") == "0" &&
			infoField(t, c, "persistence", "aof_rewrite_scheduled") == "0" {
			if st := infoField(t, c, "persistence", "aof_last_bgrewrite_status"); st != "ok" {
				t.Fatalf("AOF rewrite failed: aof_last_bgrewrite_status:%s", st)
			}
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatal("AOF rewrite did not end within 60 s")
}

// listAOF logs the AOF directory's manifest and files.
func listAOF(t *testing.T, dir string) {
	t.Helper()
	ents, err := os.ReadDir(filepath.Join(dir, "appendonlydir"))
	if err != nil {
		t.Fatalf("no AOF directory: %v", err)
	}
	var parts []string
	for _, e := range ents {
		info, _ := e.Info()
		parts = append(parts, e.Name()+" "+strconv.FormatInt(info.Size(), 10))
		if strings.HasSuffix(e.Name(), ".manifest") {
			m, _ := os.ReadFile(filepath.Join(dir, "appendonlydir", e.Name()))
			parts = append(parts, "manifest: "+strings.TrimSpace(string(m)))
		}
	}
	t.Logf("AOF directory: %s", strings.Join(parts, "; "))
}

// TestPersistDumpRestore: every key DUMPed by one server is RESTOREd (ABSTTL, with its
// PEXPIRETIME) into the other, and FUNCTION DUMP into FUNCTION RESTORE; the dumps are equal.
func TestPersistDumpRestore(t *testing.T) {
	if !haveRedis() {
		t.Skip("redis-server not on PATH")
	}
	t.Parallel()
	for _, from := range persistKinds {
		for _, to := range persistKinds {
			t.Run(from+"/"+to, func(t *testing.T) {
				t.Parallel()
				redisOnlyUnderRace(t, from, to)
				onlyWithoutRace(t, from == to)
				src := startNode(t, from, t.TempDir())
				dst := startNode(t, to, t.TempDir())
				newFiller(t, src.addr, 3, "dump").fill()
				want := dumpServer(t, src.addr, dumpOpts{})
				copyByDump(t, src, dst, want)
				got := dumpServer(t, dst.addr, dumpOpts{})
				compareDumps(t, "DUMP from "+from+", RESTORE into "+to, want, got)
			})
		}
	}
}

func copyByDump(t *testing.T, src, dst *node, d serverDump) {
	sc, dc := dial(t, src.addr), dial(t, dst.addr)
	db := ""
	for k, kd := range d.keys {
		kdb, key, _ := strings.Cut(k, "/")
		if kdb != db {
			sc.do("SELECT", kdb)
			dc.do("SELECT", kdb)
			db = kdb
		}
		v := parseReply(t, sc.do("DUMP", key))
		if v.Null {
			t.Fatalf("%s DUMP %q: nil", src.kind, key)
		}
		ttl := "0"
		if kd.exp > 0 {
			ttl = strconv.FormatInt(kd.exp, 10)
		}
		if got := dc.do("RESTORE", key, ttl, v.Str, "ABSTTL"); got != "+OK\r\n" {
			t.Fatalf("%s RESTORE %q (payload of %d bytes from %s): %s", dst.kind, key, len(v.Str), src.kind, quote(got))
		}
	}
	fv := parseReply(t, sc.do("FUNCTION", "DUMP"))
	if got := dc.do("FUNCTION", "RESTORE", fv.Str); got != "+OK\r\n" {
		t.Fatalf("%s FUNCTION RESTORE: %s", dst.kind, quote(got))
	}
}

// sigtermSave: a server process with a save rule is filled and sent SIGTERM; it saves on the
// way out, and redis-server and HotKV started on the file dump what it held.
func sigtermSave(t *testing.T, kind, bin string) {
	dir := t.TempDir()
	p := startProc(t, bin, dir, "--save", "3600 1")
	p.ready(30 * time.Second)
	newFiller(t, p.addr, 4, "term").fill()
	want := dumpServer(t, p.addr, dumpOpts{})
	p.term(60 * time.Second)
	if p.err != nil {
		t.Errorf("%s exited with %v after SIGTERM\n%s", kind, p.err, tail(p.out.String(), 2000))
	}
	for _, to := range persistKinds {
		d := t.TempDir()
		if err := copyFile(filepath.Join(dir, "dump.rdb"), filepath.Join(d, "dump.rdb")); err != nil {
			t.Fatalf("%s saved no dump.rdb on SIGTERM: %v", kind, err)
		}
		n := startNode(t, to, d)
		compareDumps(t, kind+" SIGTERM save loaded by "+to, want, dumpServer(t, n.addr, dumpOpts{}))
		n.stop(t)
	}
}

// TestPersistDebugReload: DEBUG RELOAD (save, empty, load) keeps the whole dump; after a SAVE
// and more writes, DEBUG RELOAD NOSAVE brings back the saved state and drops the writes.
func TestPersistDebugReload(t *testing.T) {
	if !haveRedis() {
		t.Skip("redis-server not on PATH")
	}
	t.Parallel()
	for _, kind := range persistKinds {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			redisOnlyUnderRace(t, kind)
			n := startNode(t, kind, t.TempDir(), "--enable-debug-command", "yes")
			f := newFiller(t, n.addr, 5, "reload")
			f.fill()
			want := dumpServer(t, n.addr, dumpOpts{})
			c := dial(t, n.addr)
			if got := c.do("DEBUG", "RELOAD"); got != "+OK\r\n" {
				t.Fatalf("%s DEBUG RELOAD: %s", kind, quote(got))
			}
			compareDumps(t, kind+" DEBUG RELOAD", want, dumpServer(t, n.addr, dumpOpts{}))
			f.mutate()
			if got := c.do("DEBUG", "RELOAD", "NOSAVE"); got != "+OK\r\n" {
				t.Fatalf("%s DEBUG RELOAD NOSAVE: %s", kind, quote(got))
			}
			compareDumps(t, kind+" DEBUG RELOAD NOSAVE after more writes", want, dumpServer(t, n.addr, dumpOpts{}))
		})
	}
}

// TestPersistInProgressAtReply: what waitBgsave and waitRewrite rely on, as Redis does it: right
// after BGSAVE or BGREWRITEAOF replies (over 50 MB, so that neither can have ended), INFO
// persistence says rdb_bgsave_in_progress:1 or aof_rewrite_in_progress:1, and a second request
// is refused while the first runs.
func TestPersistInProgressAtReply(t *testing.T) {
	if !haveRedis() {
		t.Skip("redis-server not on PATH")
	}
	t.Parallel()
	for _, kind := range persistKinds {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			redisOnlyUnderRace(t, kind)
			n := startNode(t, kind, t.TempDir(), "--appendonly", "yes", "--rdbcompression", "no")
			c := dial(t, n.addr)
			fillKeys(t, c, 100_000, 500, "p")
			for _, step := range []struct{ cmd, reply, field, again string }{
				{"BGSAVE", "+Background saving started\r\n", "rdb_bgsave_in_progress",
					"-ERR Background save already in progress\r\n"},
				{"BGREWRITEAOF", "+Background append only file rewriting started\r\n", "aof_rewrite_in_progress",
					"-ERR Background append only file rewriting already in progress\r\n"},
			} {
				c.write(appendCommand(appendCommand(appendCommand(nil, step.cmd), "INFO", "persistence"), step.cmd))
				if got := string(c.reply()); got != step.reply {
					t.Fatalf("%s %s: %s", kind, step.cmd, quote(got))
				}
				info := string(c.reply())
				again := string(c.reply())
				if !strings.Contains(info, step.field+":1\r\n") {
					at := strings.Index(info, step.field)
					t.Errorf("%s: INFO right after %s replied says %s, Redis says %s:1", kind, step.cmd,
						quote(info[at:min(len(info), at+len(step.field)+2)]), step.field)
				}
				if again != step.again {
					t.Errorf("%s: a second %s while one runs: %s, want %s", kind, step.cmd, quote(again), quote(step.again))
				}
				if step.cmd == "BGSAVE" {
					waitBgsave(t, c, ":0\r\n")
				} else {
					waitRewrite(t, c)
				}
			}
		})
	}
}
