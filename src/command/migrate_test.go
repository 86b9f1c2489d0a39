package command

import (
	"bufio"
	"bytes"
	"net"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hotkv/hotkv/net/resp/resptest"
)

// serveTCP serves e on a free loopback port (one goroutine per connection, each a testConn)
// until the test ends, so that a redis-server can MIGRATE into it.
func serveTCP(t *testing.T, e *Engine) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			nc, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, nc)
			mu.Unlock()
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer nc.Close()
				tc := newTestConn(t, e)
				r := bufio.NewReader(nc)
				for {
					raw, err := resptest.ReadRaw(r)
					if err != nil {
						return
					}
					out, err := tc.send(raw)
					if _, werr := nc.Write(out); werr != nil || err != nil {
						return
					}
				}
			}()
		}
	}()
	t.Cleanup(func() {
		l.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	return l.Addr().String()
}

// silentTarget accepts connections and never answers, for MIGRATE's read timeout.
func silentTarget(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		var held []net.Conn
		defer func() {
			for _, c := range held {
				c.Close()
			}
		}()
		for {
			nc, err := l.Accept()
			if err != nil {
				return
			}
			held = append(held, nc)
		}
	}()
	t.Cleanup(func() { l.Close(); <-done })
	return l.Addr().String()
}

// closedPort is a loopback port nobody listens on.
func closedPort(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
	l.Close()
	return p
}

// redisAt starts a redis-server and returns a session with it and its port.
func redisAt(t *testing.T, extra ...string) (*redisSession, string) {
	rs := startRedisIn(t, t.TempDir(), extra...)
	if len(extra) >= 2 && extra[0] == "--requirepass" {
		rs.do("AUTH", extra[1])
	}
	return rs, replyStrings(t, rs.do("CONFIG", "GET", "port"))[1]
}

// closeMigrateSockets empties the process's MIGRATE connection cache, so a test leaves no
// connection (nor timer) behind.
func closeMigrateSockets(t *testing.T) {
	t.Cleanup(func() {
		sc := migrateSockets
		sc.mu.Lock()
		defer sc.mu.Unlock()
		for k, cs := range sc.m {
			cs.idle.Stop()
			cs.nc.Close()
			delete(sc.m, k)
		}
	})
}

var expField = regexp.MustCompile(` exp=:(-?\d+)`)

// sameKeyspaces compares two canonKeysDB maps, allowing expiry times to differ by the time a
// MIGRATE took (its TTL is relative, as Redis sends it).
func sameKeyspaces(t *testing.T, what string, got, want map[string]string) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s: %d keys, want %d", what, len(got), len(want))
	}
	for k, w := range want {
		g, ok := got[k]
		if !ok {
			t.Errorf("%s: %s missing", what, k)
			continue
		}
		gm, wm := expField.FindStringSubmatch(g), expField.FindStringSubmatch(w)
		if gm == nil || wm == nil {
			t.Fatalf("%s: %s has no exp: %q / %q", what, k, g, w)
		}
		ge, _ := strconv.ParseInt(gm[1], 10, 64)
		we, _ := strconv.ParseInt(wm[1], 10, 64)
		if (ge < 0) != (we < 0) || ge-we > 2000 || we-ge > 2000 {
			t.Errorf("%s: %s expires at %d, want %d", what, k, ge, we)
		}
		if g, w := expField.ReplaceAllString(g, ""), expField.ReplaceAllString(w, ""); g != w {
			t.Errorf("%s: %s:\n got %s\nwant %s", what, k, g, w)
		}
	}
}

// migrateAll MIGRATEs every key of databases 0-2 of src to the same database of host:port, in
// one MIGRATE with KEYS per database, and checks that src is left empty.
func migrateAll(t *testing.T, src doer, host, port string) {
	t.Helper()
	for db := range 3 {
		src("SELECT", strconv.Itoa(db))
		keys := replyStrings(t, src("KEYS", "*"))
		args := append([]string{"MIGRATE", host, port, "", strconv.Itoa(db), "5000", "KEYS"}, keys...)
		if r := src(args...); r != "+OK\r\n" {
			t.Fatalf("MIGRATE of db %d: %q", db, r)
		}
		if r := src("DBSIZE"); r != ":0\r\n" {
			t.Errorf("db %d after MIGRATE: DBSIZE %q", db, r)
		}
	}
	src("SELECT", "0")
}

// Every type and encoding fillEveryType makes, with expiry times, moves HotKV -> redis-server
// 7.0.15 and redis-server -> HotKV: what the target serves (types, encodings, values, TTLs)
// is what the source served, and the source is emptied.
func TestMigrateEveryTypeBothWays(t *testing.T) {
	closeMigrateSockets(t)
	rs, port := redisAt(t)
	e := newTestEngine()
	tc := newTestConn(t, e)
	for _, comp := range []string{"no", "yes"} {
		t.Run("rdbcompression="+comp, func(t *testing.T) {
			rs.do("FLUSHALL")
			tc.do("FLUSHALL")
			rs.do("CONFIG", "SET", "rdbcompression", comp)
			tc.do("CONFIG", "SET", "rdbcompression", comp)

			fillEveryType(t, tc.do, false)
			want := map[string]string{}
			for db := range 3 {
				for k, v := range canonKeysDB(t, tc.do, db, nil) {
					want[k] = v
				}
			}
			migrateAll(t, tc.do, "127.0.0.1", port)
			got := map[string]string{}
			for db := range 3 {
				for k, v := range canonKeysDB(t, rs.do, db, nil) {
					got[k] = v
				}
			}
			sameKeyspaces(t, "HotKV->Redis", got, want)

			host, hport, _ := net.SplitHostPort(serveTCP(t, e))
			rs.do("SELECT", "0")
			migrateAll(t, rs.do, host, hport)
			back := map[string]string{}
			for db := range 3 {
				for k, v := range canonKeysDB(t, tc.do, db, nil) {
					back[k] = v
				}
			}
			sameKeyspaces(t, "Redis->HotKV", back, got)
		})
	}
}

// migrateSteps is a transcript of MIGRATE run on a source against target T (no password),
// target A (requirepass pw), a closed port C and a silent listener S; "" is the empty key.
// Every step's reply is deterministic, so HotKV's must equal redis-server 7.0.15's byte for
// byte, and so must what the targets hold afterwards.
var migrateSteps = []string{
	"SET a 1",
	"MIGRATE T a 0 5000",
	"EXISTS a",
	"MIGRATE T nokey 0 5000",
	"SET a 2",
	"MIGRATE T a 0 5000",
	"EXISTS a",
	"MIGRATE T a 0 5000 REPLACE",
	"EXISTS a",
	"SET b x",
	"MIGRATE T b 0 5000 COPY",
	"EXISTS b",
	"MIGRATE T b 0 5000 COPY",
	"MIGRATE T b 0 5000 copy replace",
	"SET c y",
	"RPUSH d 1 2 3",
	"MIGRATE T \"\" 3 5000 KEYS b c missing d",
	"EXISTS b c d",
	"MIGRATE T \"\" 3 5000 KEYS x y",
	"MIGRATE T k 3 5000 KEYS b",
	"MIGRATE T b 3 5000 FOO",
	"MIGRATE T b 3 5000 AUTH",
	"MIGRATE T b 3 5000 AUTH2 u",
	"MIGRATE T b x 5000",
	"MIGRATE T b 3 x",
	"MIGRATE T b 3 -5 REPLACE",
	"SET e v",
	"MIGRATE T e 100 5000",
	"MIGRATE T e 0 5000 AUTH pw",
	"EXISTS e",
	"SET f v",
	"MIGRATE A f 0 5000",
	"EXISTS f",
	"MIGRATE A f 0 5000 AUTH wrong",
	"MIGRATE A f 0 5000 AUTH2 default pw",
	"EXISTS f",
	"SET g v",
	"MIGRATE A g 0 5000 AUTH pw",
	"SET h v",
	"MIGRATE C h 0 1000",
	"MIGRATE S h 0 200",
	"MIGRATE NOHOST h 0 1000",
	"MIGRATE BADHOST h 0 1000",
	"MIGRATE BADPORT h 0 1000",
	"EXISTS h",
	"SELECT 2",
	"SET i v",
	"MIGRATE T i 4 5000 KEYS",
	"MIGRATE T \"\" 4 5000 KEYS i",
	"EXISTS i",
	"SELECT 0",
	"SET j 1",
	"SET j2 2",
	"MIGRATE T j2 0 5000 COPY",
	"MIGRATE T \"\" 0 5000 KEYS j j2",
	"EXISTS j j2",
	"MULTI",
	"SET m v",
	"MIGRATE T m 0 5000",
	"EXISTS m",
	"EXEC",
	"EXISTS m",
}

// runMigrateSteps runs migrateSteps on src and returns the transcript ("> step" and the reply).
func runMigrateSteps(t *testing.T, src doer, targets map[string][]string) string {
	var out strings.Builder
	src("FLUSHALL")
	src("SELECT", "0")
	for _, step := range migrateSteps {
		var args []string
		for _, f := range strings.Fields(step) {
			switch {
			case f == `""`:
				args = append(args, "")
			case targets[f] != nil:
				args = append(args, targets[f]...)
			default:
				args = append(args, f)
			}
		}
		out.WriteString("> " + step + "\n" + src(args...) + "\n")
	}
	src("SELECT", "0")
	return out.String()
}

func TestMigrateTranscriptAgainstRedis(t *testing.T) {
	closeMigrateSockets(t)
	target, tport := redisAt(t)
	auth, aport := redisAt(t, "--requirepass", "pw")
	source, _ := redisAt(t)
	tc := newTestConn(t, newTestEngine())
	sh, sp, _ := net.SplitHostPort(silentTarget(t))
	targets := map[string][]string{
		"T": {"127.0.0.1", tport}, "A": {"127.0.0.1", aport}, "C": {"127.0.0.1", closedPort(t)}, "S": {sh, sp},
		"NOHOST": {"", "1"}, "BADHOST": {"256.256.256.256", "1"}, "BADPORT": {"127.0.0.1", "abc"},
	}
	held := func() string {
		var b strings.Builder
		for _, s := range []*redisSession{target, auth} {
			for _, db := range []int{0, 3, 4} {
				m := canonKeysDB(t, s.do, db, nil)
				keys := make([]string, 0, len(m))
				for k := range m {
					keys = append(keys, k)
				}
				slices.Sort(keys)
				for _, k := range keys {
					b.WriteString(k + " " + m[k] + "\n")
				}
			}
			s.do("FLUSHALL")
			s.do("SELECT", "0")
		}
		return b.String()
	}
	want := runMigrateSteps(t, source.do, targets)
	wantHeld := held()
	got := runMigrateSteps(t, tc.do, targets)
	gotHeld := held()
	if got != want {
		gl, wl := strings.Split(got, "\n"), strings.Split(want, "\n")
		for i := range min(len(gl), len(wl)) {
			if gl[i] != wl[i] {
				t.Errorf("line %d (%s):\n got %q\nwant %q", i, wl[max(i-1, 0)], gl[i], wl[i])
			}
		}
	}
	if gotHeld != wantHeld {
		t.Errorf("targets hold:\n%s\nwant:\n%s", gotHeld, wantHeld)
	}
	// The transcript must exercise what it claims: Redis's own replies for a few steps.
	for _, s := range []string{
		"-ERR Target instance replied with error: BUSYKEY Target key name already exists.",
		"-ERR Target instance replied with error: NOAUTH Authentication required.",
		"-ERR When using MIGRATE KEYS option, the key argument must be set to the empty string",
		"-IOERR error or timeout connecting to the client",
		"-IOERR error or timeout reading to target instance",
		"+NOKEY",
	} {
		if !strings.Contains(want, s+"\r\n") {
			t.Errorf("redis-server's transcript has no %q", s)
		}
	}
	if testing.Verbose() {
		t.Logf("redis-server 7.0.15:\n%s", want)
	}
}

// The TTL left goes with the key: a key with 100 s to live arrives with at most that.
func TestMigrateTTL(t *testing.T) {
	closeMigrateSockets(t)
	rs, port := redisAt(t)
	tc := newTestConn(t, newTestEngine())
	tc.do("SET", "k", "v", "PX", "100000")
	tc.do("SET", "p", "v")
	if r := tc.do("MIGRATE", "127.0.0.1", port, "", "5", "5000", "KEYS", "k", "p"); r != "+OK\r\n" {
		t.Fatalf("MIGRATE: %q", r)
	}
	rs.do("SELECT", "5")
	if ttl := atoiReply(t, rs.do("PTTL", "k")); ttl <= 95000 || ttl > 100000 {
		t.Errorf("PTTL on the target %d, want just under 100000", ttl)
	}
	if r := rs.do("PTTL", "p"); r != ":-1\r\n" {
		t.Errorf("PTTL p on the target %q, want -1", r)
	}
}

// Deleting the keys that moved: "del" events, one DEL replicated for them all, one change per
// key (Redis's migrateCommand: dbDelete, "del", server.dirty++, argv rewritten to DEL); COPY
// and a refused key change nothing.
func TestMigrateEffects(t *testing.T) {
	closeMigrateSockets(t)
	rs, port := redisAt(t)
	x := newStrFx(t)
	for _, k := range []string{"a", "b", "c"} {
		x.run("SET", k, "v")
	}
	rs.do("SET", "c", "there")
	x.check([]string{"MIGRATE", "127.0.0.1", port, "", "0", "5000", "KEYS", "a", "nokey", "b"}, "+OK\r\n",
		[]string{"del a", "del b"}, []string{"DEL a b"}, 2)
	x.check([]string{"MIGRATE", "127.0.0.1", port, "c", "0", "5000"},
		"-ERR Target instance replied with error: BUSYKEY Target key name already exists.\r\n", nil, nil, 0)
	x.check([]string{"MIGRATE", "127.0.0.1", port, "c", "0", "5000", "COPY", "REPLACE"}, "+OK\r\n", nil, nil, 0)
	x.check([]string{"MIGRATE", "127.0.0.1", port, "c", "0", "5000", "REPLACE"}, "+OK\r\n",
		[]string{"del c"}, []string{"DEL c"}, 1)
	x.check([]string{"MIGRATE", "127.0.0.1", port, "c", "0", "5000"}, "+NOKEY\r\n", nil, nil, 0)
}

// The connection to a target is kept and reused (the target sees one client for several
// MIGRATEs) and closed once idle for migrateCacheTTL.
func TestMigrateCachedSocket(t *testing.T) {
	closeMigrateSockets(t)
	rs, port := redisAt(t)
	tc := newTestConn(t, newTestEngine())
	clients := func() string {
		info := rs.do("INFO", "clients")
		_, v, _ := strings.Cut(info, "connected_clients:")
		return strings.SplitN(v, "\r\n", 2)[0]
	}
	for i := range 3 {
		tc.do("SET", "k", strconv.Itoa(i))
		if r := tc.do("MIGRATE", "127.0.0.1", port, "k", "1", "5000", "REPLACE"); r != "+OK\r\n" {
			t.Fatalf("MIGRATE %d: %q", i, r)
		}
		if n := clients(); n != "2" {
			t.Fatalf("after MIGRATE %d the target has %s clients, want 2 (this session and one cached)", i, n)
		}
	}
	if info := tc.do("INFO", "stats"); !strings.Contains(info, "\r\nmigrate_cached_sockets:1\r\n") {
		t.Fatalf("INFO stats after MIGRATE: %q", info)
	}
	// The cached socket survives the target closing it: MIGRATE retries on a new one.
	rs.do("CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes")
	tc.do("SET", "k", "again")
	if r := tc.do("MIGRATE", "127.0.0.1", port, "k", "1", "5000", "REPLACE"); r != "+OK\r\n" {
		t.Fatalf("MIGRATE after the target closed the cached socket: %q", r)
	}
	rs.do("SELECT", "1")
	if r := rs.do("GET", "k"); r != "$5\r\nagain\r\n" {
		t.Fatalf("target has %q", r)
	}
	sc := migrateSockets
	sc.mu.Lock()
	cs := sc.m["127.0.0.1:"+port]
	sc.mu.Unlock()
	if cs == nil || !cs.idle.Reset(time.Millisecond) { // what the 10 s timer does, at once
		t.Fatal("no idle timer on the cached socket")
	}
	deadline := time.Now().Add(5 * time.Second)
	for clients() != "1" && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := clients(); n != "1" || migrateSockets.len() != 0 {
		t.Errorf("after the idle timer: target has %s clients, cache %d sockets", n, migrateSockets.len())
	}
}

// The key positions COMMAND GETKEYS would report: Redis's migrateGetKeys.
func TestMigrateKeys(t *testing.T) {
	f := func(args string, want ...int) {
		t.Helper()
		a := [][]byte{}
		for _, s := range strings.Fields(args) {
			if s == `""` {
				s = ""
			}
			a = append(a, []byte(s))
		}
		if got := migrateKeys(a, nil); !slices.Equal(got, want) {
			t.Errorf("%s: keys at %v, want %v", args, got, want)
		}
	}
	f("MIGRATE h p k 0 5", 3)
	f(`MIGRATE h p "" 0 5 KEYS a b`, 7, 8)
	f(`MIGRATE h p "" 0 5 COPY AUTH keys KEYS a`, 10)
	f(`MIGRATE h p "" 0 5 AUTH2 keys keys KEYS a b`, 10, 11)
	f(`MIGRATE h p k 0 5 KEYS a`)
}

// Any arguments: parseMigrate does not panic, and when it accepts them the keys it migrates
// are the arguments at migrateKeys' positions (what routing and COMMAND GETKEYS see).
func FuzzMigrateArgs(f *testing.F) {
	f.Add("h p k 0 5")
	f.Add(`h p "" 0 5 COPY REPLACE AUTH keys AUTH2 u keys KEYS a b`)
	f.Add(`h p "" 0 5 KEYS`)
	f.Add("h p k x 5 auth2 a")
	f.Fuzz(func(t *testing.T, s string) {
		args := [][]byte{[]byte("MIGRATE")}
		for _, w := range strings.Fields(s) {
			if w == `""` {
				w = ""
			}
			args = append(args, []byte(w))
		}
		if len(args) < 6 {
			return
		}
		o, msg := parseMigrate(args)
		if msg != "" {
			return
		}
		pos := migrateKeys(args, nil)
		if len(pos) != len(o.keys) {
			t.Fatalf("%q: parse migrates %d keys, migrateKeys finds %d", s, len(o.keys), len(pos))
		}
		for i, p := range pos {
			if string(args[p]) != string(o.keys[i]) {
				t.Fatalf("%q: key %d is %q, migrateKeys says %q", s, i, o.keys[i], args[p])
			}
		}
		if o.timeout <= 0 {
			t.Fatalf("%q: timeout %v", s, o.timeout)
		}
	})
}

// MIGRATE waits on the network, so netpoll must not serve it (or an EXEC holding it) on a
// poller: mayBlock says so, as for DEBUG.
func TestMigrateMayBlock(t *testing.T) {
	e := newTestEngine()
	tc := newTestConn(t, e)
	args := func(s ...string) [][]byte {
		var out [][]byte
		for _, a := range s {
			out = append(out, []byte(a))
		}
		return out
	}
	if !e.mayBlock(tc.client, args("MIGRATE", "h", "1", "k", "0", "1")) {
		t.Error("MIGRATE: mayBlock false")
	}
	tc.do("MULTI")
	if e.mayBlock(tc.client, args("EXEC")) {
		t.Error("EXEC of nothing: mayBlock true")
	}
	if r := tc.do("MIGRATE", "h", "1", "k", "0", "1"); r != "+QUEUED\r\n" {
		t.Fatalf("MIGRATE in MULTI: %q", r)
	}
	if !e.mayBlock(tc.client, args("EXEC")) {
		t.Error("EXEC holding MIGRATE: mayBlock false")
	}
}

// A key rewritten by another client while MIGRATE waits for the target keeps its new value:
// the target got the old one, and deleting the key would lose a write MIGRATE never sent. The
// target here answers RESTORE only once the test has rewritten the key; a key left alone in the
// same call is deleted as usual.
func TestMigrateKeepsKeyRewrittenMeanwhile(t *testing.T) {
	closeMigrateSockets(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	got, answer := make(chan struct{}), make(chan struct{})
	go func() {
		nc, err := l.Accept()
		if err != nil {
			return
		}
		defer nc.Close()
		var seen []byte
		buf := make([]byte, 4096)
		for bytes.Count(seen, []byte("RESTORE")) < 2 {
			n, err := nc.Read(buf)
			if err != nil {
				return
			}
			seen = append(seen, buf[:n]...)
		}
		close(got)
		<-answer
		n := bytes.Count(seen, []byte("RESTORE")) + bytes.Count(seen, []byte("SELECT"))
		nc.Write(bytes.Repeat([]byte("+OK\r\n"), n))
		nc.Read(buf) // until MIGRATE is done with the connection
	}()
	e := newTestEngine()
	mover, writer := newTestConn(t, e), newTestConn(t, e)
	mover.do("SET", "moved", "old")
	mover.do("SET", "left", "alone")
	_, port, _ := net.SplitHostPort(l.Addr().String())
	reply := make(chan string)
	go func() { reply <- mover.do("MIGRATE", "127.0.0.1", port, "", "0", "5000", "KEYS", "moved", "left") }()
	select {
	case <-got:
	case <-time.After(10 * time.Second):
		t.Fatal("the target never got both RESTOREs")
	}
	writer.do("SET", "moved", "new")
	close(answer)
	if r := <-reply; r != "+OK\r\n" {
		t.Fatalf("MIGRATE: %q", r)
	}
	if r := writer.do("GET", "moved"); r != "$3\r\nnew\r\n" {
		t.Errorf("the rewritten key: %q, want its new value kept", r)
	}
	if r := writer.do("EXISTS", "left"); r != ":0\r\n" {
		t.Errorf("the key nobody touched: EXISTS %q, want it deleted", r)
	}
}
