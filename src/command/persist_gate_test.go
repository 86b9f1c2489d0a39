package command

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// gateCmds are sent to a refusing server; replies are compared with redis-server's.
var gateCmds = [][]string{
	{"SET", "k", "v"}, {"GET", "k"}, {"PING"}, {"DEL", "k"}, {"INCR", "n"}, {"ECHO", "x"},
	{"MULTI"}, {"GET", "k"}, {"EXEC"},
	{"MULTI"}, {"SET", "k", "v"}, {"EXEC"},
	{"DBSIZE"}, {"EXISTS", "k"}, {"LASTSAVE"},
}

// gateReplies runs gateCmds, with LASTSAVE's number dropped.
func gateReplies(do doer) []string {
	var out []string
	for _, c := range gateCmds {
		r := do(c...)
		if c[0] == "LASTSAVE" && strings.HasPrefix(r, ":") {
			r = ":n"
		}
		out = append(out, r)
	}
	return out
}

// -MISCONF: redis-server 7.0.15 after a failed BGSAVE (its dir removed, save rules on) refuses
// writes, PING and EXEC of a write as the engine does under SetWriteError(WriteErrRDB); clearing
// the error lets writes through again.
func TestMisconfAgainstRedis(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "gone")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	rs := startRedisIn(t, dir, "--save", "3600 1")
	os.RemoveAll(dir)
	rs.do("BGSAVE")
	for i := 0; !strings.Contains(rs.do("INFO", "persistence"), "rdb_last_bgsave_status:err"); i++ {
		if i > 200 {
			t.Fatal("BGSAVE did not fail")
		}
		time.Sleep(10 * time.Millisecond)
	}
	want := gateReplies(rs.do)
	e := newTestEngine()
	tc := newTestConn(t, e)
	e.SetWriteError(WriteErrRDB, "cannot rename temp file")
	got := gateReplies(tc.do)
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("%q:\n got %q\nwant %q", gateCmds[i], got[i], want[i])
		}
	}
	e.SetWriteError(WriteErrAOF, "No space left on device")
	e.SetWriteError(WriteErrRDB, "")
	if r := tc.do("SET", "k", "v"); r != "-MISCONF Errors writing to the AOF file: No space left on device\r\n" {
		t.Errorf("AOF error: %q", r)
	}
	e.SetWriteError(WriteErrAOF, "")
	if r := tc.do("SET", "k", "v"); r != "+OK\r\n" {
		t.Errorf("after clearing: %q", r)
	}
}

// -LOADING: redis-server 7.0.15 loading an RDB slowly (key-load-delay) refuses what the engine
// refuses under SetLoading(true); a client exempted (the AOF loader's) is served.
func TestLoadingAgainstRedis(t *testing.T) {
	dir := t.TempDir()
	src := newTestEngine()
	sc := newTestConn(t, src)
	for i := range 2000 {
		sc.do("SET", "key"+strconv.Itoa(i), "v")
	}
	if err := os.WriteFile(filepath.Join(dir, "dump.rdb"), writeRDB(t, src, RDBOptions{Checksum: true}), 0o600); err != nil {
		t.Fatal(err)
	}
	rs := startRedisIn(t, dir, "--key-load-delay", "2000", // 2000 keys, 2 ms each: 4 s of loading
		"--loading-process-events-interval-bytes", "1024") // serving clients every KiB read
	if !strings.HasPrefix(rs.do("GET", "x"), "-LOADING") {
		t.Skip("redis-server finished loading before the test could ask")
	}
	want := gateReplies(rs.do)
	if !strings.Contains(rs.do("INFO", "persistence"), "loading:1") {
		t.Skip("redis-server finished loading during the comparison")
	}
	e := newTestEngine()
	tc := newTestConn(t, e)
	e.SetLoading(true)
	got := gateReplies(tc.do)
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("%q:\n got %q\nwant %q", gateCmds[i], got[i], want[i])
		}
	}
	loader := newTestConn(t, e)
	e.ExemptFromLoading(loader.client)
	if r := loader.do("SET", "k", "v"); r != "+OK\r\n" {
		t.Errorf("exempt client: %q", r)
	}
	e.SetLoading(false)
	if r := tc.do("GET", "k"); r != "$1\r\nv\r\n" {
		t.Errorf("after loading: %q", r)
	}
}
