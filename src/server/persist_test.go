package server

import (
	"bytes"
	"errors"
	"io"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hotkv/hotkv/persist/aof"
	"github.com/hotkv/hotkv/src/command"
)

// fakeRDB stands in for Engine.WriteRDB: it writes a header and the dirty count, or fails
// after the header when fail is set.
func fakeRDB(t *testing.T, fail *bool) {
	t.Helper()
	testWriteRDB = func(s *Server, w io.Writer, _ rdbOpts) (rdbStats, error) {
		if _, err := io.WriteString(w, "REDIS0010"); err != nil {
			return rdbStats{}, err
		}
		if fail != nil && *fail {
			return rdbStats{}, syscall.ENOSPC
		}
		_, err := io.WriteString(w, strconv.FormatInt(s.dirty(), 10))
		return rdbStats{keys: 1}, err
	}
	t.Cleanup(func() { testWriteRDB = nil })
}

func infoField(t *testing.T, c *testClient, name string) string {
	t.Helper()
	return sectionField(t, c, "persistence", name)
}

// sectionField is field name of INFO section.
func sectionField(t *testing.T, c *testClient, section, name string) string {
	t.Helper()
	for _, l := range strings.Split(c.query("INFO "+section), "\r\n") {
		if v, ok := strings.CutPrefix(l, name+":"); ok {
			return v
		}
	}
	t.Fatalf("INFO %s has no %s", section, name)
	return ""
}

// SAVE's file protocol: the file appears whole under its name only after fsync, rename and the
// directory's fsync (a crash right after keeps it); a failed save leaves the previous file and
// no temp file and rdb_last_bgsave_status as it was.
func TestSaveFileProtocol(t *testing.T) {
	fail := false
	fakeRDB(t, &fail)
	fsys := aof.NewCrashFS()
	fsys.MkdirAll("/data")
	s := newPersistServer(t, "/data", fsys)
	c := dialTestServer(t, s)
	c.query("SET a 1")
	if err := s.save(); err != nil {
		t.Fatal(err)
	}
	crashed := fsys.CrashCopy()
	got, err := crashed.ReadFile("/data/dump.rdb")
	if err != nil || string(got) != "REDIS00101" {
		t.Fatalf("after a crash the saved file is %q (%v)", got, err)
	}
	c.query("SET b 2")
	fail = true
	if err := s.save(); err == nil {
		t.Fatal("a failing snapshot saved")
	}
	if got, _ := fsys.ReadFile("/data/dump.rdb"); string(got) != "REDIS00101" {
		t.Fatalf("a failed save changed the file: %q", got)
	}
	if names, _ := fsys.ReadDir("/data"); len(names) != 1 {
		t.Fatalf("files left after a failed save: %v", names)
	}
	if v := infoField(t, c, "rdb_last_bgsave_status"); v != "ok" {
		t.Fatalf("rdb_last_bgsave_status after a failed SAVE (Redis's rdbSave leaves it): %s", v)
	}
}

// A save rule fires from the cron once its seconds passed with its changes; the changes count
// from the snapshot's start; a failed BGSAVE with save rules sets the MISCONF gate, is not
// retried before 5 s, and a good one clears the gate.
func TestSaveRulesAndMisconf(t *testing.T) {
	fail := false
	fakeRDB(t, &fail)
	s := newPersistServer(t, t.TempDir(), nil, "--save", "1 3")
	c := dialTestServer(t, s)
	s.rdb.lastSave.Store(time.Now().Unix() - 5)
	c.query("SET a 1")
	c.query("SET b 1")
	time.Sleep(300 * time.Millisecond)
	if v := infoField(t, c, "rdb_saves"); v != "0" {
		t.Fatalf("saved with 2 changes of 3: rdb_saves %s", v)
	}
	c.query("SET c 1")
	waitFor(t, func() bool { return infoField(t, c, "rdb_saves") == "1" }, "the save rule to fire")
	if v := infoField(t, c, "rdb_changes_since_last_save"); v != "0" {
		t.Fatalf("rdb_changes_since_last_save after the save: %s", v)
	}
	fail = true
	s.rdb.lastSave.Store(time.Now().Unix() - 5)
	c.query("SET d 1")
	c.query("SET e 1")
	c.query("SET f 1")
	waitFor(t, func() bool { return infoField(t, c, "rdb_last_bgsave_status") == "err" }, "the failed bgsave")
	if got := c.query("SET x 1"); got != "-"+command.ErrMisconfRDB+"\r\n" {
		t.Fatalf("SET after a failed bgsave: %q", got)
	}
	tries := s.rdb.lastTry.Load()
	time.Sleep(500 * time.Millisecond)
	if s.rdb.lastTry.Load() != tries {
		t.Fatal("a failed bgsave was retried before the 5 s delay")
	}
	fail = false
	if _, err := s.bgsave(false); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { return infoField(t, c, "rdb_last_bgsave_status") == "ok" }, "the good bgsave")
	if got := c.query("SET x 1"); got != "+OK\r\n" {
		t.Fatalf("SET after a good bgsave: %q", got)
	}
}

func waitFor(t *testing.T, cond func() bool, what string) {
	t.Helper()
	for end := time.Now().Add(10 * time.Second); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatalf("timed out waiting for %s", what)
}

// SHUTDOWN with save rules and a failing save is refused with Redis's error and the server
// keeps serving; SHUTDOWN NOSAVE stops it without saving.
func TestShutdownSaveRefusal(t *testing.T) {
	fail := true
	fakeRDB(t, &fail)
	dir := t.TempDir()
	s := newPersistServer(t, dir, nil, "--save", "3600 1")
	c := dialTestServer(t, s)
	if got := c.do("SHUTDOWN"); got != "-ERR Errors trying to SHUTDOWN. Check logs.\r\n" {
		t.Fatalf("SHUTDOWN with a failing save: %q", got)
	}
	if got := c.do("PING"); got != "+PONG\r\n" {
		t.Fatalf("server not serving after a refused SHUTDOWN: %q", got)
	}
	c.send("SHUTDOWN NOSAVE")
	select {
	case <-s.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("SHUTDOWN NOSAVE did not stop the server")
	}
	fail = false
	s2 := newPersistServer(t, t.TempDir(), nil, "--save", "3600 1")
	dialTestServer(t, s2).send("SHUTDOWN")
	select {
	case <-s2.Done():
	case <-time.After(30 * time.Second):
		t.Fatal("SHUTDOWN with save rules did not stop the server in 30s")
	}
	if s2.rdb.saves.Load() != 1 {
		t.Fatal("SHUTDOWN with save rules did not save")
	}
}

// The AOF's MISCONF: failing fsyncs set the gate with Redis's text and aof_last_write_status
// err; once fsyncs succeed again the gate clears.
func TestAOFMisconfAndRecovery(t *testing.T) {
	fsys := aof.NewCrashFS()
	s := newPersistServer(t, "/data", fsys, "--appendonly", "yes", "--appendfsync", "everysec")
	c := dialTestServer(t, s)
	fsys.SetSyncErr(syscall.EIO)
	c.query("SET a 1")
	waitFor(t, func() bool { p := s.writeErr[writeErrAOF].Load(); return p != nil && *p != "" }, "the AOF error")
	if got := c.query("SET b 1"); got != "-MISCONF Errors writing to the AOF file: Input/output error\r\n" {
		t.Fatalf("SET while fsyncs fail: %q", got)
	}
	if v := infoField(t, c, "aof_last_write_status"); v != "err" {
		t.Fatalf("aof_last_write_status: %s", v)
	}
	fsys.SetSyncErr(nil)
	waitFor(t, func() bool { p := s.writeErr[writeErrAOF].Load(); return p != nil && *p == "" }, "the recovery")
	if v := infoField(t, c, "aof_last_write_status"); v != "ok" {
		t.Fatalf("aof_last_write_status after recovery: %s", v)
	}
	if got := c.query("SET b 1"); got != "+OK\r\n" {
		t.Fatalf("SET after recovery: %q", got)
	}
}

// A slow AOF load (a test delay per command) shows loading:1 with the loading_* fields in INFO,
// then loading:0 with every key there.
func TestLoadingObserved(t *testing.T) {
	dir := t.TempDir()
	s := newPersistServer(t, dir, nil, "--appendonly", "yes")
	c := dialTestServer(t, s)
	for i := range 100 {
		c.query("SET k" + strconv.Itoa(i) + " v")
	}
	s.Stop()
	loadTestDelay = 5 * time.Millisecond
	defer func() { loadTestDelay = 0 }()
	s2 := newTestServer(t, "--appendonly", "yes")
	s2.dataDir = dir
	serveTestServer(t, s2)
	c2 := dialTestServer(t, s2)
	info := c2.query("INFO persistence")
	if !strings.Contains(info, "loading:1\r\n") || !strings.Contains(info, "loading_loaded_perc:") {
		t.Fatalf("INFO during a slow load: %q", info)
	}
	if got := c2.query("GET k1"); got != "-"+command.ErrLoading+"\r\n" {
		t.Fatalf("GET during the load: %q", got)
	}
	select { // 100 commands at 5 ms each: half a second
	case <-s2.Loaded():
	case <-time.After(30 * time.Second):
		t.Fatal("the slow AOF load did not end in 30s")
	}
	if err := s2.LoadErr(); err != nil {
		t.Fatal(err)
	}
	if v := infoField(t, c2, "loading"); v != "0" {
		t.Fatalf("loading after the load: %s", v)
	}
	if got := c2.query("DBSIZE"); got != ":100\r\n" {
		t.Fatalf("DBSIZE after the load: %q", got)
	}
}

// A corrupt AOF stops the start with Redis's message.
func TestCorruptAOFStopsStart(t *testing.T) {
	fsys := aof.NewCrashFS()
	fsys.MkdirAll("/data/appendonlydir")
	fsys.WriteFile("/data/appendonlydir/appendonly.aof.manifest",
		[]byte("file appendonly.aof.1.incr.aof seq 1 type i\n"))
	fsys.WriteFile("/data/appendonlydir/appendonly.aof.1.incr.aof",
		[]byte("*2\r\n$3\r\nGET\r\n$1\r\na\r\nxyz\r\n*1\r\n$4\r\nPING\r\n"))
	s := newTestServer(t, "--appendonly", "yes")
	s.dataDir, s.aof.fs = "/data", fsys
	serveTestServer(t, s)
	select {
	case <-s.Loaded():
	case <-time.After(20 * time.Second):
		t.Fatal("the load of a corrupt AOF did not end")
	}
	var fe *aof.FormatError
	if err := s.LoadErr(); !errors.As(err, &fe) {
		t.Fatalf("load of a corrupt AOF: %v", err)
	}
	if !s.Engine.Loading() { // the PONG testfuzz's AOFTails/torn/no once got under load
		t.Error("the loading gate opened after the failed load: until the stop, clients were served the empty dataset")
	}
	select {
	case <-s.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("the server kept running after a corrupt AOF")
	}
	_ = bytes.MinRead
}

// aof-load-truncated: a torn last command is cut and the rest loads (yes), or the start fails
// (no); an old single appendonly.aof beside the directory is moved in and loaded.
func TestAOFTruncatedAndUpgrade(t *testing.T) {
	torn := "*3\r\n$3\r\nSET\r\n$1\r\na\r\n$1\r\n1\r\n*3\r\n$3\r\nSET\r\n$1\r\nb\r\n$1"
	mk := func() *aof.CrashFS {
		fsys := aof.NewCrashFS()
		fsys.MkdirAll("/data/appendonlydir")
		fsys.WriteFile("/data/appendonlydir/appendonly.aof.manifest",
			[]byte("file appendonly.aof.1.incr.aof seq 1 type i\n"))
		fsys.WriteFile("/data/appendonlydir/appendonly.aof.1.incr.aof", []byte(torn))
		return fsys
	}
	s := newPersistServer(t, "/data", mk(), "--appendonly", "yes", "--aof-load-truncated", "yes")
	c := dialTestServer(t, s)
	if a, b := c.query("GET a"), c.query("EXISTS b"); a != "$1\r\n1\r\n" || b != ":0\r\n" {
		t.Fatalf("after a truncated load: GET a %q, EXISTS b %q", a, b)
	}
	s2 := newTestServer(t, "--appendonly", "yes", "--aof-load-truncated", "no")
	s2.dataDir, s2.aof.fs = "/data", mk()
	serveTestServer(t, s2)
	if err := s2.LoadErr(); !errors.Is(err, aof.ErrTruncated) {
		t.Fatalf("aof-load-truncated no: %v", err)
	}
	old := aof.NewCrashFS()
	old.MkdirAll("/old")
	old.WriteFile("/old/appendonly.aof", []byte("*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$3\r\nold\r\n"))
	c3 := dialTestServer(t, newPersistServer(t, "/old", old, "--appendonly", "yes"))
	if got := c3.query("GET k"); got != "$3\r\nold\r\n" {
		t.Fatalf("old single-file AOF: GET k %q", got)
	}
	if _, err := old.Stat("/old/appendonlydir/appendonly.aof.manifest"); err != nil {
		t.Fatalf("no manifest after the upgrade: %v", err)
	}
}
