package command

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/hotkv/hotkv/persist/rdb"
)

// rdbFile builds a small file with the codec: key "a" twice when dup, an expired key "old", a
// key "soon" expiring in an hour, and n keys "k..." in database db.
func rdbFile(dup bool, db, n int) []byte {
	var enc rdb.Encoder
	enc.Header(rdb.Version)
	enc.SelectDB(db)
	enc.StringValue([]byte("a"), []byte("first"))
	if dup {
		enc.StringValue([]byte("a"), []byte("second"))
	}
	enc.ExpireMs(time.Now().Add(-time.Minute).UnixMilli())
	enc.StringValue([]byte("old"), []byte("x"))
	enc.ExpireMs(time.Now().Add(time.Hour).UnixMilli())
	enc.StringValue([]byte("soon"), []byte("y"))
	for i := range n {
		enc.StringValue([]byte("k"+itoa(i)), []byte("v"))
	}
	enc.EOF(0)
	return enc.Buf
}

// LoadRDB's rules: expired keys skipped and counted (kept with KeepExpired), a duplicated key
// fails with Redis's message naming it (replaced with Replace), a database past the configured
// count fails, progress reaches the end.
func TestLoadRDBRules(t *testing.T) {
	e := newTestEngine()
	st, err := e.LoadRDB(bytes.NewReader(rdbFile(false, 3, 0)), LoadOptions{})
	if err != nil || st.Keys != 2 || st.Expired != 1 {
		t.Fatalf("stats %+v, err %v; want 2 keys, 1 expired", st, err)
	}
	tc := newTestConn(t, e)
	tc.do("SELECT", "3")
	if got := tc.do("EXISTS", "a", "old", "soon"); got != ":2\r\n" {
		t.Errorf("EXISTS a old soon: %q", got)
	}
	_, err = e.LoadRDB(bytes.NewReader(rdbFile(false, 3, 0)), LoadOptions{})
	// Either duplicate may be named: batches go in shard by shard, not in file order.
	if !errors.Is(err, ErrDuplicateKey) || !regexp.MustCompile(`RDB has duplicated key '(a|soon)' in DB 3`).MatchString(err.Error()) {
		t.Errorf("second load: %v", err)
	}
	if _, err := newTestEngine().LoadRDB(bytes.NewReader(rdbFile(true, 0, 0)), LoadOptions{}); !errors.Is(err, ErrDuplicateKey) {
		t.Errorf("a file holding a key twice: %v", err)
	}
	e2 := newTestEngine()
	st, err = e2.LoadRDB(bytes.NewReader(rdbFile(true, 0, 0)), LoadOptions{Replace: true, KeepExpired: true})
	if err != nil || st.Keys != 4 || st.Expired != 0 {
		t.Fatalf("Replace, KeepExpired: stats %+v, err %v", st, err)
	}
	t2 := newTestConn(t, e2)
	if got := t2.do("GET", "a"); got != "$6\r\nsecond\r\n" {
		t.Errorf("Replace: GET a = %q", got)
	}
	if got := t2.do("DBSIZE"); got != ":3\r\n" { // "old" is in, and expires as soon as it is seen
		t.Errorf("KeepExpired: DBSIZE %q", got)
	}
	if _, err := newTestEngine().LoadRDB(bytes.NewReader(rdbFile(false, 16, 0)), LoadOptions{}); err == nil ||
		!strings.Contains(err.Error(), "configured to handle more than 16 databases") {
		t.Errorf("database 16 of 16: %v", err)
	}
	var reports []LoadProgress
	file := rdbFile(false, 0, 2500)
	st, err = newTestEngine().LoadRDB(bytes.NewReader(file), LoadOptions{Size: int64(len(file)), ProgressKeys: 1000,
		Progress: func(p LoadProgress) { reports = append(reports, p) }})
	if err != nil || len(reports) != 3 {
		t.Fatalf("%d progress reports (%+v), err %v; want 3", len(reports), reports, err)
	}
	if last := reports[len(reports)-1]; last.Keys != st.Keys || last.Bytes != int64(len(file)) || last.Percent != 100 {
		t.Errorf("last report %+v, want %d keys, %d bytes, 100%%", last, st.Keys, len(file))
	}
	if reports[0].Keys+reports[0].Expired != 1000 || reports[0].Percent <= 0 || reports[0].Percent >= 100 {
		t.Errorf("first report %+v", reports[0])
	}
}

// IDLE and FREQ records: under allkeys-lru WriteRDB writes idle times that redis-server 7.0.15
// serves as OBJECT IDLETIME, under allkeys-lfu counters it serves as OBJECT FREQ; and the engine
// loads Redis's own records back the same way.
func TestRDBAccessRecordsAgainstRedis(t *testing.T) {
	for _, c := range []struct{ policy, obj, opt, val string }{
		{"allkeys-lru", "IDLETIME", "IDLETIME", "1000"},
		{"allkeys-lfu", "FREQ", "FREQ", "77"},
	} {
		e := newTestEngine()
		tc := newTestConn(t, e)
		tc.do("CONFIG", "SET", "maxmemory-policy", c.policy)
		tc.do("SET", "s", "v")
		p := replyText(t, tc.do("DUMP", "s"))
		tc.do("RESTORE", "k", "0", p, c.opt, c.val)
		want := tc.do("OBJECT", c.obj, "k")
		if want != ":"+c.val+"\r\n" {
			t.Fatalf("%s: OBJECT %s after RESTORE: %q", c.policy, c.obj, want)
		}
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "dump.rdb"), writeRDB(t, e, RDBOptions{Checksum: true}), 0o600); err != nil {
			t.Fatal(err)
		}
		// An idle time goes on growing: the LRU clock's second may turn between the RESTORE
		// and a read (redis-server's clock too), so IDLETIME may read one more.
		same := func(got string) bool {
			return got == want || c.obj == "IDLETIME" && got == ":1001\r\n"
		}
		rs := startRedisIn(t, dir, "--maxmemory-policy", c.policy)
		if got := rs.do("OBJECT", c.obj, "k"); !same(got) {
			t.Errorf("%s: redis-server loaded OBJECT %s %q, want %q", c.policy, c.obj, got, want)
		}
		if r := rs.do("SAVE"); r != "+OK\r\n" {
			t.Fatal(r)
		}
		file, err := os.ReadFile(filepath.Join(dir, "dump.rdb"))
		if err != nil {
			t.Fatal(err)
		}
		e2 := newTestEngine()
		t2 := newTestConn(t, e2)
		t2.do("CONFIG", "SET", "maxmemory-policy", c.policy)
		if _, err := e2.LoadRDB(bytes.NewReader(file), LoadOptions{}); err != nil {
			t.Fatal(err)
		}
		if got := t2.do("OBJECT", c.obj, "k"); !same(got) {
			t.Errorf("%s: loaded from Redis's file OBJECT %s %q, want %q", c.policy, c.obj, got, want)
		}
	}
}

// After a load the used-memory count is what RecountMemory's walk of every value makes: the
// loader estimates each collection as it inserts it (insertLocked), small and large ones, and
// keys present before (DEBUG RELOAD NOFLUSH) keep theirs.
func TestLoadAccountsLikeRecount(t *testing.T) {
	src := newTestEngine()
	sc := newTestConn(t, src)
	fillEveryType(t, sc.do, false)
	fillBig(t, sc, "list", "big:list", 5000)
	fillBig(t, sc, "zset", "big:zset", 5000)
	file := writeRDB(t, src, RDBOptions{})
	e := newTestEngine()
	newTestConn(t, e).do("RPUSH", "present", "a", "b")
	if _, err := e.LoadRDB(bytes.NewReader(file), LoadOptions{}); err != nil {
		t.Fatal(err)
	}
	e.Group.LockAll()
	loaded := e.dataUsed()
	e.Group.UnlockAll()
	e.RecountMemory()
	e.Group.LockAll()
	recounted := e.dataUsed()
	e.Group.UnlockAll()
	if loaded != recounted || loaded == 0 {
		t.Fatalf("used after the load %d, after a recount %d", loaded, recounted)
	}
}
