package command

import (
	"bufio"
	"cmp"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hotkv/hotkv/net/resp/resptest"
	"github.com/hotkv/hotkv/pipeline"
)

// A transaction sent as one pipelined batch: the commands after EXEC are routed once EXEC (a
// barrier) has run, so they are not queued and see its writes.
func TestMultiPipelined(t *testing.T) {
	tc := newTestConn(t, newTestEngine())
	var req []byte
	for _, c := range [][]string{{"MULTI"}, {"SET", "a", "1"}, {"INCR", "a"}, {"MSET", "b", "1", "c", "2", "d", "3"},
		{"EXEC"}, {"GET", "a"}, {"MGET", "b", "c", "d"}, {"EXEC"}} {
		req = append(req, encodeCommand(c)...)
	}
	out, err := tc.send(req)
	if err != nil {
		t.Fatal(err)
	}
	got := splitReplies(t, out)
	want := []string{"+OK\r\n", "+QUEUED\r\n", "+QUEUED\r\n", "+QUEUED\r\n", "*3\r\n+OK\r\n:2\r\n+OK\r\n",
		"$1\r\n2\r\n", "*3\r\n$1\r\n1\r\n$1\r\n2\r\n$1\r\n3\r\n", "-ERR EXEC without MULTI\r\n"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("replies\n got %q\nwant %q", got, want)
	}
}

// Queued arguments are copied out of the read buffer (DESIGN invariant 7): overwriting the bytes
// a command arrived in does not change what EXEC runs.
func TestMultiCopiesArguments(t *testing.T) {
	tc := newTestConn(t, newTestEngine())
	tc.do("MULTI")
	req := encodeCommand([]string{"SET", "key", "AAAA"})
	if err := tc.serveRaw(req); err != nil {
		t.Fatal(err)
	}
	for i := range req {
		req[i] = 'B'
	}
	tc.stream.out.Reset()
	if got := tc.do("EXEC"); got != "*1\r\n+OK\r\n" {
		t.Fatalf("EXEC = %q", got)
	}
	if got := tc.do("GET", "key"); got != "$4\r\nAAAA\r\n" {
		t.Fatalf("GET = %q", got)
	}
}

// CLIENT LIST shows multi=<queued> and flag x inside MULTI (and while EXEC runs), d once a
// watched key changed, as Redis 7.0.15 does (checked by hand: CLIENT INFO inside EXEC after five
// queued commands showed flags=x multi=6 cmd=exec).
func TestClientInfoMulti(t *testing.T) {
	e := newTestEngine()
	a, b := newTestConn(t, e), newTestConn(t, e)
	field := func(line, name string) string {
		for _, f := range strings.Fields(line) {
			if v, ok := strings.CutPrefix(f, name+"="); ok {
				return v
			}
		}
		t.Fatalf("no %s in %q", name, line)
		return ""
	}
	info := func() string { return replyText(t, a.do("CLIENT", "INFO")) }
	if l := info(); field(l, "multi") != "-1" || field(l, "flags") != "N" {
		t.Fatalf("outside MULTI: %q", l)
	}
	a.do("WATCH", "w")
	b.do("SET", "w", "1")
	if l := info(); field(l, "flags") != "d" {
		t.Fatalf("after a watched key changed: %q", l)
	}
	a.do("MULTI")
	a.do("SET", "x", "1")
	a.do("CLIENT", "INFO")
	var other string
	for _, l := range strings.Split(replyText(t, b.do("CLIENT", "LIST")), "\n") {
		if strings.HasPrefix(l, "id="+strconv.FormatUint(a.client.ID, 10)+" ") {
			other = l
		}
	}
	if field(other, "multi") != "2" || field(other, "flags") != "xd" || field(other, "multi-mem") == "0" {
		t.Fatalf("seen from another client inside MULTI: %q", other)
	}
	if got := a.do("EXEC"); got != "*-1\r\n" {
		t.Fatalf("EXEC after the watched key changed = %q", got)
	}
	a.do("MULTI")
	a.do("PING")
	a.do("CLIENT", "INFO")
	got := replyElems(t, a.do("EXEC"))
	in := replyText(t, got[1])
	if field(in, "multi") != "2" || field(in, "flags") != "x" || field(in, "cmd") != "exec" {
		t.Fatalf("CLIENT INFO inside EXEC: %q", in)
	}
	if l := info(); field(l, "multi") != "-1" || field(l, "flags") != "N" {
		t.Fatalf("after EXEC: %q", l)
	}
}

// The replicated form of EXEC, as Redis 7.0.15 writes it in its AOF (recorded with appendonly
// yes): one write alone, two or more inside MULTI … EXEC, a SELECT where the database changes,
// nothing for a read-only transaction.
func TestMultiFeed(t *testing.T) {
	e := newTestEngine()
	rd := e.AttachFeed()
	defer rd.Close()
	tc := newTestConn(t, e)
	run := func(cmds ...[]string) {
		tc.do("MULTI")
		for _, c := range cmds {
			tc.do(c...)
		}
		tc.do("EXEC")
	}
	feed := func() []string { return feedEntries(t, rd) }
	cases := []struct {
		cmds [][]string
		want string
	}{
		{[][]string{{"SET", "a", "1"}}, "[db0: SET a 1]"},
		{[][]string{{"GET", "a"}}, "[]"},
		{[][]string{{"SET", "a", "2"}, {"INCR", "b"}}, "[db0: MULTI; SET a 2; INCR b; EXEC]"},
		{[][]string{{"SET", "x", "1"}, {"SELECT", "2"}, {"SET", "y", "2"}},
			"[db0: MULTI; SET x 1; SELECT 2; SET y 2; SELECT 0; EXEC]"},
		{[][]string{{"SET", "z", "1"}, {"INCR", "a"}}, "[db2: MULTI; SET z 1; INCR a; EXEC]"},
	}
	for _, c := range cases {
		run(c.cmds...)
		if got := fmt.Sprint(feed()); got != c.want {
			t.Errorf("%q: feed %s, want %s", c.cmds, got, c.want)
		}
	}
}

// 50 clients increment one counter by WATCH, GET, MULTI, SET, EXEC, retrying when EXEC fails:
// no increment is lost (the final value is the number of successful EXECs).
func TestWatchIncrements(t *testing.T) {
	e := newTestEngine()
	const clients, each = 50, 40
	var wg sync.WaitGroup
	var ok, retries atomic.Int64
	deadline := time.Now().Add(20 * time.Second)
	for range clients {
		tc := newTestConn(t, e)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for done := 0; done < each && time.Now().Before(deadline); {
				tc.do("WATCH", "counter")
				n := int64(0)
				if v := tc.do("GET", "counter"); v != "$-1\r\n" {
					n, _ = strconv.ParseInt(replyText(t, v), 10, 64)
				}
				tc.do("MULTI")
				tc.do("SET", "counter", strconv.FormatInt(n+1, 10))
				switch r := tc.do("EXEC"); r {
				case "*1\r\n+OK\r\n":
					ok.Add(1)
					done++
				case "*-1\r\n":
					retries.Add(1)
				default:
					t.Errorf("EXEC = %q", r)
					return
				}
			}
		}()
	}
	wg.Wait()
	got := replyText(t, newTestConn(t, e).do("GET", "counter"))
	if got != strconv.FormatInt(ok.Load(), 10) || ok.Load() != clients*each {
		t.Fatalf("counter %s after %d successful EXECs of %d (%d retries)", got, ok.Load(), clients*each, retries.Load())
	}
	t.Logf("%d increments, %d retries", ok.Load(), retries.Load())
}

// Transfers by MULTI/DECRBY/INCRBY/EXEC between accounts on different shards, while readers read
// every account in one MULTI … EXEC: the total never changes.
func TestMultiTransfers(t *testing.T) {
	e := newTestEngine()
	const accounts, start = 8, 1000
	names := make([]string, 0, accounts)
	seen := map[int32]bool{}
	for i := 0; len(names) < accounts; i++ {
		k := "acct:" + strconv.Itoa(i)
		if sh := e.shardOf([]byte(k)); !seen[sh] {
			seen[sh] = true
			names = append(names, k)
		}
	}
	setup := newTestConn(t, e)
	for _, k := range names {
		setup.do("SET", k, strconv.Itoa(start))
	}
	transfers := 100_000
	if txRace {
		transfers = 20_000
	}
	const writers, readers = 4, 2
	var wg sync.WaitGroup
	var stop atomic.Bool
	var reads atomic.Int64
	for w := range writers {
		tc := newTestConn(t, e)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range transfers / writers {
				from, to := names[(i+w)%accounts], names[(i*3+w+1)%accounts]
				if from == to {
					to = names[(i+w+1)%accounts]
				}
				req := encodeCommand([]string{"MULTI"})
				req = append(req, encodeCommand([]string{"DECRBY", from, "7"})...)
				req = append(req, encodeCommand([]string{"INCRBY", to, "7"})...)
				req = append(req, encodeCommand([]string{"EXEC"})...)
				out, err := tc.send(req)
				if err != nil {
					t.Error(err)
					return
				}
				if r := splitReplies(t, out); len(r) != 4 || !strings.HasPrefix(r[3], "*2\r\n:") {
					t.Errorf("transfer replies %q", r)
					return
				}
			}
		}()
	}
	var rg sync.WaitGroup
	for range readers {
		tc := newTestConn(t, e)
		rg.Add(1)
		go func() {
			defer rg.Done()
			for !stop.Load() {
				req := encodeCommand([]string{"MULTI"})
				for _, k := range names {
					req = append(req, encodeCommand([]string{"GET", k})...)
				}
				req = append(req, encodeCommand([]string{"EXEC"})...)
				out, err := tc.send(req)
				if err != nil {
					t.Error(err)
					return
				}
				r := splitReplies(t, out)
				total := 0
				for _, v := range replyStrings(t, r[len(r)-1]) {
					n, _ := strconv.Atoi(v)
					total += n
				}
				if total != accounts*start {
					t.Errorf("total %d, want %d", total, accounts*start)
					return
				}
				reads.Add(1)
			}
		}()
	}
	wg.Wait()
	stop.Store(true)
	rg.Wait()
	t.Logf("%d transfers, %d consistent reads", transfers, reads.Load())
}

// Commands that need every shard or lock for themselves (SCAN, SORT with BY, KEYS, DBSIZE,
// RANDOMKEY, FLUSHALL, INFO, CONFIG RESETSTAT) run inside EXEC under the tokens it holds, without
// taking them again: each transaction here would hang otherwise.
func TestMultiSelfLocking(t *testing.T) {
	e := newTestEngine()
	tc := newTestConn(t, e)
	tc.do("RPUSH", "l", "3", "1", "2")
	tc.do("SET", "w_1", "10")
	cmds := [][]string{{"SCAN", "0", "COUNT", "100"}, {"SORT", "l"}, {"SORT", "l", "BY", "w_*"},
		{"SORT", "l", "STORE", "dst"}, {"KEYS", "*"}, {"DBSIZE"}, {"RANDOMKEY"}, {"INFO", "keyspace"},
		{"CONFIG", "RESETSTAT"}, {"FLUSHALL"}, {"DBSIZE"}}
	done := make(chan []string, 1)
	go func() {
		tc.do("MULTI")
		for _, c := range cmds {
			tc.do(c...)
		}
		done <- replyElems(t, tc.do("EXEC"))
	}()
	select {
	case got := <-done:
		if len(got) != len(cmds) || got[1] != "*3\r\n$1\r\n1\r\n$1\r\n2\r\n$1\r\n3\r\n" || got[3] != ":3\r\n" ||
			got[9] != "+OK\r\n" || got[10] != ":0\r\n" {
			t.Fatalf("EXEC replies %q", got)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("EXEC of self-locking commands did not finish")
	}
}

// INFO commandstats and errorstats count a transaction's commands as Redis 7.0.15 does: MULTI
// and EXEC once each, queued commands when EXEC runs them (failures in place counted as failed
// calls of their command), queuing errors as rejected calls. The same script runs on a
// redis-server and in-process; calls, rejected_calls and failed_calls must agree.
func TestMultiStatsLikeRedis(t *testing.T) {
	rc, stop := startRedis(t)
	defer stop()
	rr := bufio.NewReader(rc)
	script := [][]string{{"CONFIG", "RESETSTAT"},
		{"MULTI"}, {"SET", "a", "1"}, {"INCR", "a"}, {"LPUSH", "a", "x"}, {"GET"}, {"EXEC"},
		{"MULTI"}, {"SET", "a", "1"}, {"LPUSH", "a", "x"}, {"SHUTDOWN"}, {"EXEC"},
		{"MULTI"}, {"SET", "a", "1"}, {"LPUSH", "a", "x"}, {"INCR", "a"}, {"EXEC"},
		{"MULTI"}, {"NOSUCH"}, {"DISCARD"}, {"WATCH", "a"}, {"UNWATCH"}, {"EXEC"}, {"DISCARD"},
		{"WATCH", "a"}, {"SET", "a", "2"}, {"MULTI"}, {"GET", "a"}, {"EXEC"}, {"MULTI"}, {"MULTI"},
		{"EXEC", "x"}}
	tc := newTestConn(t, newTestEngine())
	for _, c := range script {
		if _, err := rc.Write(encodeCommand(c)); err != nil {
			t.Fatal(err)
		}
		if _, err := resptest.ReadRaw(rr); err != nil {
			t.Fatal(err)
		}
		tc.do(c...)
	}
	stats := func(info string) map[string]string {
		out := map[string]string{}
		for _, l := range strings.Split(info, "\r\n") {
			name, rest, ok := strings.Cut(l, ":")
			if !ok || strings.HasPrefix(name, "cmdstat_info") || strings.HasPrefix(name, "cmdstat_config") {
				continue
			}
			var keep []string
			for _, f := range strings.Split(rest, ",") {
				if !strings.HasPrefix(f, "usec") {
					keep = append(keep, f)
				}
			}
			out[name] = strings.Join(keep, ",")
		}
		return out
	}
	for _, section := range []string{"commandstats", "errorstats"} {
		if _, err := rc.Write(encodeCommand([]string{"INFO", section})); err != nil {
			t.Fatal(err)
		}
		raw, err := resptest.ReadRaw(rr)
		if err != nil {
			t.Fatal(err)
		}
		want := stats(replyText(t, string(raw)))
		got := stats(replyText(t, tc.do("INFO", section)))
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("INFO %s\n got %v\nwant %v", section, got, want)
		}
	}
}

// CLIENT REPLY OFF, ON and SKIP around and inside a transaction answer what Redis 7.0.15 sends
// (EXEC's header without the replies after OFF, SKIP inside EXEC skipping the command after it),
// and so do connection commands queued in MULTI (SUBSCRIBE, HELLO, SELECT, QUIT): each script
// runs on a redis-server and in-process, and the bytes must be equal.
func TestMultiReplyModesLikeRedis(t *testing.T) {
	addr, stop := startRedisAddr(t)
	defer stop()
	scripts := [][]string{
		{"MULTI", "CLIENT REPLY OFF", "SET a 1", "EXEC", "PING", "CLIENT REPLY ON", "PING"},
		{"MULTI", "CLIENT REPLY SKIP", "SET a 1", "GET a", "EXEC", "PING", "PING"},
		{"CLIENT REPLY SKIP", "MULTI", "SET a 1", "EXEC", "PING"},
		{"MULTI", "SET a 2", "EXEC", "CLIENT REPLY SKIP", "EXEC", "PING"},
		{"CLIENT REPLY OFF", "MULTI", "SET a 1", "EXEC", "CLIENT REPLY ON", "PING"},
		{"CLIENT REPLY OFF", "MULTI", "SET a 1", "CLIENT REPLY ON", "GET a", "EXEC", "PING"},
		{"MULTI", "CLIENT REPLY OFF", "SET a 3", "CLIENT REPLY ON", "GET a", "EXEC", "PING"},
		// Connection commands queued: SUBSCRIBE, HELLO, a bad SELECT, QUIT.
		{"MULTI", "SUBSCRIBE ch", "PING", "EXEC", "PING", "UNSUBSCRIBE ch"},
		{"MULTI", "HELLO 3", "GET a", "EXEC", "GET a", "HELLO 2"},
		{"MULTI", "SELECT 99", "SELECT x", "GET a", "EXEC"},
		{"WATCH a", "MULTI", "DEL a", "SET a 5", "EXEC", "GET a"},
		{"MULTI", "EXEC", "EXEC", "MULTI", "QUIT", "PING"},
	}
	e := newTestEngine()
	ids := regexp.MustCompile(`\$2\r\nid\r\n:[0-9]+`)
	for _, script := range scripts {
		req := encodeCommand([]string{"FLUSHALL"})
		for _, line := range script {
			req = append(req, encodeCommand(strings.Fields(line))...)
		}
		req = append(req, encodeCommand([]string{"CLIENT", "REPLY", "ON"})...) // ends every script with +OK
		rc, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := rc.Write(req); err != nil {
			t.Fatal(err)
		}
		rc.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
		want, _ := io.ReadAll(rc)
		rc.Close()
		got, err := newTestConn(t, e).send(req)
		if err != nil && !errors.Is(err, pipeline.ErrClose) {
			t.Fatal(err)
		}
		got, want = ids.ReplaceAll(got, []byte("id")), ids.ReplaceAll(want, []byte("id"))
		if string(got) != string(want) {
			t.Errorf("%q:\n got %q\nwant %q", script, got, want)
		}
	}
}

// An EXEC refused before it runs (NOAUTH, wrong arity, RESP2 subscribed mode) replies Redis's
// "EXECABORT Transaction discarded because of: …" and ends the transaction: the scripts run on
// a redis-server with requirepass and in-process, and the bytes must be equal.
func TestExecRefusedLikeRedis(t *testing.T) {
	addr, stop := startRedisAddr(t)
	defer stop()
	admin, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	if _, err := admin.Write(encodeCommand([]string{"CONFIG", "SET", "requirepass", "pw"})); err != nil {
		t.Fatal(err)
	}
	if _, err := resptest.ReadRaw(bufio.NewReader(admin)); err != nil {
		t.Fatal(err)
	}
	e := newTestEngine()
	st := *e.Settings()
	st.RequirePass = "pw"
	e.SetSettings(st)
	scripts := [][]string{
		{"EXEC", "MULTI", "AUTH pw", "EXEC"},
		{"AUTH pw", "MULTI", "SET a 1", "EXEC x", "EXEC"},
		{"AUTH pw", "WATCH a", "EXEC x", "MULTI", "EXEC"},
		{"AUTH pw", "SUBSCRIBE ch", "EXEC", "MULTI", "UNSUBSCRIBE ch", "EXEC"},
	}
	for _, script := range scripts {
		var req []byte
		for _, line := range script {
			req = append(req, encodeCommand(strings.Fields(line))...)
		}
		rc, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := rc.Write(req); err != nil {
			t.Fatal(err)
		}
		rc.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
		want, _ := io.ReadAll(rc)
		rc.Close()
		got, err := newTestConn(t, e).send(req)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(want) {
			t.Errorf("%q:\n got %q\nwant %q", script, got, want)
		}
	}
}

// Invariant 8 inside EXEC: a queued command that panics answers its error in place, the rest of
// the transaction runs, its client is marked for closing, and EXEC's tokens are released.
func TestPanicInsideExec(t *testing.T) {
	e := newTestEngine()
	bad, good := newTestConn(t, e), newTestConn(t, e)
	boom := &Spec{Name: "boom", Arity: 2, FirstKey: 1, LastKey: 1, Step: 1, Run: func(c *Ctx) { panic("boom") }}
	bad.do("MULTI")
	bad.do("SET", "k", "1")
	// Queued as route queues a command (boom is in no table, so it cannot be sent).
	s := &pipeline.Slot{Args: [][]byte{[]byte("boom"), []byte("k2")}}
	e.queue(bad.client, boom, s)
	bad.do("INCR", "k")
	got := within(t, "EXEC with a panicking command", func() string { return bad.do("EXEC") })
	want := "*3\r\n+OK\r\n-" + ErrInternal + "\r\n:2\r\n"
	if got != want {
		t.Fatalf("EXEC = %q, want %q", got, want)
	}
	if !bad.client.closeAfter {
		t.Fatal("the client whose command panicked was not marked for closing")
	}
	if got := within(t, "commands on EXEC's shards after the panic", func() string {
		return good.do("INCR", "k") + good.do("SET", "k2", "x")
	}); got != ":3\r\n+OK\r\n" {
		t.Fatalf("after the panic: %q", got)
	}
}

// A client that disconnects drops its watches: the shard registries are empty again and Touch
// is back to its one load.
func TestDisconnectUnwatches(t *testing.T) {
	e := newTestEngine()
	tc := newTestConn(t, e)
	tc.do("WATCH", "a", "b", "c", "d", "e", "f")
	tc.do("SELECT", "3")
	tc.do("WATCH", "a")
	if n := e.watching.Load(); n != 7 {
		t.Fatalf("%d watches registered, want 7", n)
	}
	e.RemoveClient(tc.client)
	if n := e.watching.Load(); n != 0 {
		t.Fatalf("%d watches left after the client went", n)
	}
	for i := range e.Group.Shards {
		if n := len(e.data(int32(i)).watch.keys); n != 0 {
			t.Fatalf("shard %d still holds %d watched keys", i, n)
		}
	}
}

// The queued commands' durations reach INFO commandstats (sampled, as for other commands).
func TestMultiCommandTime(t *testing.T) {
	e := newTestEngine()
	tc := newTestConn(t, e)
	tc.do("CONFIG", "RESETSTAT") // command statistics live in the table, shared by every engine
	for range 2 * timeSample {
		tc.do("MULTI")
		tc.do("SET", "k", "v")
		tc.do("EXEC")
	}
	info := replyText(t, tc.do("INFO", "commandstats"))
	for _, l := range strings.Split(info, "\r\n") {
		if strings.HasPrefix(l, "cmdstat_set:") {
			if strings.Contains(l, ",usec=0,") || !strings.Contains(l, "calls=64,") {
				t.Fatalf("SET inside EXEC: %s", l)
			}
			return
		}
	}
	t.Fatalf("no cmdstat_set in %q", info)
}

// EXEC of a transaction holding DEBUG (SLEEP) may wait, so the transport must serve it off the
// poller (Env.MayBlock), as it does DEBUG itself; other EXECs run inline.
func TestExecMayBlock(t *testing.T) {
	e := newTestEngine()
	tc := newTestConn(t, e)
	exec := [][]byte{[]byte("EXEC")}
	tc.do("MULTI")
	tc.do("SET", "k", "v")
	if e.mayBlock(tc.client, exec) {
		t.Fatal("EXEC of SET may block")
	}
	tc.do("DEBUG", "SLEEP", "0")
	if !e.mayBlock(tc.client, exec) {
		t.Fatal("EXEC of DEBUG SLEEP may not block")
	}
	tc.do("EXEC")
	if e.mayBlock(tc.client, exec) {
		t.Fatal("EXEC without MULTI may block")
	}
}

// WATCH and the active expiry (the cron's deletions, which Redis's activeExpireCycle signals as
// modifications): a key alive when watched and deleted by the cycle fails EXEC; a key already
// expired when watched and then deleted by the cycle does not (Redis's watchedKey.expired), but
// a later write to it does. The same three steps on redis-server 7.0.15, waiting 600 ms for its
// cycle instead of calling it, answered *-1, *1 +PONG and *-1.
func TestWatchActiveExpiry(t *testing.T) {
	e := newTestEngine()
	a, b := newTestConn(t, e), newTestConn(t, e)
	expireAll := func() {
		for range 20 {
			e.ActiveExpire(10 * time.Millisecond)
		}
	}
	a.do("SET", "k", "v", "PX", "30")
	a.do("WATCH", "k")
	time.Sleep(50 * time.Millisecond)
	expireAll()
	if got := a.do("EXISTS", "k"); got != ":0\r\n" {
		t.Fatalf("EXISTS after the cycle = %q", got)
	}
	a.do("MULTI")
	a.do("PING")
	if got := a.do("EXEC"); got != "*-1\r\n" {
		t.Fatalf("EXEC after the cycle deleted a watched live key = %q", got)
	}
	a.do("SET", "k", "v", "PX", "1")
	time.Sleep(10 * time.Millisecond)
	a.do("WATCH", "k") // present, expired: watched as expired
	expireAll()
	a.do("MULTI")
	a.do("PING")
	if got := a.do("EXEC"); got != "*1\r\n+PONG\r\n" {
		t.Fatalf("EXEC after the cycle deleted a key expired when watched = %q", got)
	}
	a.do("SET", "k", "v", "PX", "1")
	time.Sleep(10 * time.Millisecond)
	a.do("WATCH", "k")
	expireAll()
	b.do("SET", "k", "new")
	a.do("MULTI")
	a.do("PING")
	if got := a.do("EXEC"); got != "*-1\r\n" {
		t.Fatalf("EXEC after a write to a key watched expired = %q", got)
	}
}

// txModel is a reference for a client's transaction and WATCH state over string keys: what
// Redis's multi.c does, written as plainly as possible.
type txModel struct {
	vals    map[string]string
	inMulti bool
	abort   bool // a queuing error: EXEC replies EXECABORT
	dirty   bool // a watched key changed
	watched map[string]bool
	queued  [][]string
}

func (m *txModel) write(key string) {
	if m.watched[key] {
		m.dirty = true
	}
}

// run applies one command of the model's own client and returns its reply.
func (m *txModel) run(args []string) string {
	switch args[0] {
	case "MULTI":
		if m.inMulti {
			return "-" + ErrMultiNested + "\r\n"
		}
		m.inMulti = true
		return "+OK\r\n"
	case "DISCARD":
		if !m.inMulti {
			return "-" + ErrDiscardNoMulti + "\r\n"
		}
		m.inMulti, m.abort, m.queued, m.dirty, m.watched = false, false, nil, false, map[string]bool{}
		return "+OK\r\n"
	case "WATCH":
		if m.inMulti {
			return "-" + ErrWatchInMulti + "\r\n"
		}
		m.watched[args[1]] = true
		return "+OK\r\n"
	case "UNWATCH":
		if !m.inMulti {
			m.watched, m.dirty = map[string]bool{}, false
		} else {
			m.queued = append(m.queued, args)
			return "+QUEUED\r\n"
		}
		return "+OK\r\n"
	case "EXEC":
		if !m.inMulti {
			return "-" + ErrExecNoMulti + "\r\n"
		}
		q, abort, dirty := m.queued, m.abort, m.dirty
		m.inMulti, m.abort, m.queued, m.dirty, m.watched = false, false, nil, false, map[string]bool{}
		switch {
		case abort:
			return "-" + ErrExecAbort + "\r\n"
		case dirty:
			return "*-1\r\n"
		}
		out := "*" + strconv.Itoa(len(q)) + "\r\n"
		for _, c := range q {
			out += m.apply(c)
		}
		return out
	}
	if len(args) == 1 && args[0] != "PING" { // GET or INCR without their key
		if m.inMulti {
			m.abort = true
		}
		return "-" + fmt.Sprintf(ErrArity, strings.ToLower(args[0])) + "\r\n"
	}
	if m.inMulti {
		m.queued = append(m.queued, args)
		return "+QUEUED\r\n"
	}
	return m.apply(args)
}

// apply runs a data command (or a queued UNWATCH, which does nothing inside EXEC).
func (m *txModel) apply(args []string) string {
	switch args[0] {
	case "SET":
		m.vals[args[1]] = args[2]
		m.write(args[1])
		return "+OK\r\n"
	case "INCR":
		n, err := strconv.ParseInt(cmp.Or(m.vals[args[1]], "0"), 10, 64)
		if err != nil {
			return "-" + ErrNotInt + "\r\n"
		}
		m.vals[args[1]] = strconv.FormatInt(n+1, 10)
		m.write(args[1])
		return ":" + strconv.FormatInt(n+1, 10) + "\r\n"
	case "GET":
		v, ok := m.vals[args[1]]
		if !ok {
			return "$-1\r\n"
		}
		return "$" + strconv.Itoa(len(v)) + "\r\n" + v + "\r\n"
	case "UNWATCH", "PING":
		if args[0] == "PING" {
			return "+PONG\r\n"
		}
		return "+OK\r\n"
	}
	panic("BUG: model command " + args[0])
}

// TestMultiAgainstModel runs 20,000 random MULTI, EXEC, DISCARD, WATCH, UNWATCH, SET, INCR, GET
// and queuing errors from one client, with another client writing the same keys in between,
// against the engine and against txModel, and compares every reply.
func TestMultiAgainstModel(t *testing.T) {
	e := newTestEngine()
	a, b := newTestConn(t, e), newTestConn(t, e)
	m := &txModel{vals: map[string]string{}, watched: map[string]bool{}}
	r := rand.New(rand.NewPCG(1, uint64(time.Now().UnixNano())))
	keys := []string{"a", "b", "c", "d", "e", "f", "g", "h"} // spread over the shards
	for i := range 20_000 {
		k := keys[r.IntN(len(keys))]
		var args []string
		switch n := r.IntN(100); {
		case n < 10:
			args = []string{"MULTI"}
		case n < 20:
			args = []string{"EXEC"}
		case n < 23:
			args = []string{"DISCARD"}
		case n < 30:
			args = []string{"WATCH", k}
		case n < 32:
			args = []string{"UNWATCH"}
		case n < 34:
			args = []string{[]string{"GET", "INCR"}[r.IntN(2)]} // wrong arity: a queuing error
		case n < 50:
			args = []string{"SET", k, []string{"1", "x", "41"}[r.IntN(3)]}
		case n < 65:
			args = []string{"INCR", k}
		case n < 75:
			args = []string{"GET", k}
		default:
			// The other client writes a key (never inside a transaction of its own).
			v := strconv.Itoa(r.IntN(100))
			if got := b.do("SET", k, v); got != "+OK\r\n" {
				t.Fatalf("other client's SET = %q", got)
			}
			m.vals[k] = v
			m.write(k)
			continue
		}
		want := m.run(args)
		if got := a.do(args...); got != want {
			t.Fatalf("op %d %q: got %q, want %q", i, args, got, want)
		}
	}
}
