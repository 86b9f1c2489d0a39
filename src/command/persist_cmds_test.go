package command

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// fakeHooks records the persistence hooks' calls and answers what the test sets.
type fakeHooks struct {
	calls     []string
	err       error
	scheduled bool
}

func (f *fakeHooks) install(e *Engine) {
	e.Hooks.Save = func() error { f.calls = append(f.calls, "save"); return f.err }
	e.Hooks.BGSave = func(schedule bool) (bool, error) {
		f.calls = append(f.calls, "bgsave "+map[bool]string{true: "schedule", false: "now"}[schedule])
		return f.scheduled, f.err
	}
	e.Hooks.LastSave = func() int64 { return 1234567890 }
	e.Hooks.BGRewriteAOF = func() (bool, error) { f.calls = append(f.calls, "bgrewriteaof"); return f.scheduled, f.err }
	e.Hooks.DebugReload = func(merge, noflush, nosave bool) error {
		f.calls = append(f.calls, "reload "+strings.Join(strings.Fields(map[bool]string{true: "merge"}[merge]+" "+
			map[bool]string{true: "noflush"}[noflush]+" "+map[bool]string{true: "nosave"}[nosave]), ","))
		return f.err
	}
}

// waitNoChild waits until redis-server runs no background save or rewrite.
func waitNoChild(t *testing.T, rs *redisSession) {
	for i := 0; i < 500; i++ {
		info := rs.do("INFO", "persistence")
		if strings.Contains(info, "rdb_bgsave_in_progress:0") && strings.Contains(info, "aof_rewrite_in_progress:0") &&
			strings.Contains(info, "aof_rewrite_scheduled:0") {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("redis-server's background job did not end: %q", rs.do("INFO", "persistence"))
}

// The successful replies and the argument errors of SAVE, BGSAVE, BGREWRITEAOF and DEBUG RELOAD
// against redis-server 7.0.15 (hooks that succeed), and the calls the hooks receive.
func TestPersistCommandsAgainstRedis(t *testing.T) {
	rs := startRedisIn(t, t.TempDir())
	e := newTestEngine()
	var f fakeHooks
	f.install(e)
	tc := newTestConn(t, e)
	cmds := [][]string{{"SAVE"}, {"BGSAVE"}, {"BGSAVE", "x"}, {"BGSAVE", "SCHEDULE", "x"}, {"SAVE", "x"},
		{"BGREWRITEAOF"}, {"BGREWRITEAOF", "x"}, {"DEBUG", "RELOAD"}, {"DEBUG", "RELOAD", "NOSAVE"},
		{"DEBUG", "RELOAD", "foo"}, {"DEBUG", "RELOAD", "MERGE", "NOFLUSH", "NOSAVE", "bar"},
		{"DEBUG", "reload", "merge", "noflush", "nosave"},
		{"MULTI"}, {"SAVE"}, {"BGSAVE"}, {"EXEC"},
		{"MULTI"}, {"BGSAVE"}, {"BGREWRITEAOF"}, {"EXEC"}}
	inMulti := false
	for _, c := range cmds {
		want, got := rs.do(c...), tc.do(c...)
		if inMulti = c[0] == "MULTI" || inMulti && c[0] != "EXEC"; !inMulti {
			waitNoChild(t, rs)
		}
		if got != want {
			t.Errorf("%q:\n got %q\nwant %q", c, got, want)
		}
	}
	// The first transaction is aborted (SAVE is refused inside MULTI), so its BGSAVE never
	// calls; inside the second EXEC both answer "scheduled", as Redis does there.
	wantCalls := []string{"save", "bgsave now", "bgrewriteaof", "reload ", "reload nosave", "reload merge,noflush,nosave",
		"bgsave schedule", "bgrewriteaof"}
	if strings.Join(f.calls, "|") != strings.Join(wantCalls, "|") {
		t.Errorf("hook calls %q, want %q", f.calls, wantCalls)
	}
}

// The hooks' refusals as Redis 7.0.15 words them (saveCommand, bgsaveCommand,
// bgrewriteaofCommand, debugCommand), and LASTSAVE from its hook.
func TestPersistCommandsRefusals(t *testing.T) {
	e := newTestEngine()
	tc := newTestConn(t, e)
	check := func(want string, args ...string) {
		t.Helper()
		if got := tc.do(args...); got != want {
			t.Errorf("%q = %q, want %q", args, got, want)
		}
	}
	check("-ERR\r\n", "SAVE") // no hooks: a server without persistence fails as rdbSave does
	check("-ERR\r\n", "BGSAVE")
	check("-ERR Can't execute an AOF background rewriting. Please check the server logs for more information.\r\n", "BGREWRITEAOF")
	var f fakeHooks
	f.install(e)
	check(":1234567890\r\n", "LASTSAVE")
	f.scheduled = true
	check("+Background saving scheduled\r\n", "BGSAVE", "SCHEDULE")
	check("+Background append only file rewriting scheduled\r\n", "BGREWRITEAOF")
	f.scheduled, f.err = false, ErrSnapshotRunning
	check("-ERR Background save already in progress\r\n", "SAVE")
	check("-ERR Background save already in progress\r\n", "BGSAVE")
	f.err = ErrChildActive
	check("-ERR Another child process is active (AOF?): can't BGSAVE right now. Use BGSAVE SCHEDULE in order to schedule a BGSAVE whenever possible.\r\n", "BGSAVE")
	f.err = ErrAOFRewriteRunning
	check("-ERR Background append only file rewriting already in progress\r\n", "BGREWRITEAOF")
	f.err = errors.New("disk full")
	check("-ERR\r\n", "SAVE")
	check("-ERR Error trying to load the RDB dump, check server logs.\r\n", "DEBUG", "RELOAD")
	f.err = ReplyError("ERR")
	check("-ERR\r\n", "DEBUG", "RELOAD") // a failed save before the load
	f.err = nil
	tc.do("MULTI")
	tc.do("DEBUG", "RELOAD")
	check("*1\r\n-"+ErrDebugReloadMulti+"\r\n", "EXEC")
}
