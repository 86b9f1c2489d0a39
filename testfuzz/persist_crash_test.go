package testfuzz

// Crash tests with real processes: kill -9 of redis-server 7.0.15 (which proves the harness) and
// of the built hotkv binary under a pipelined write load, and during a BGSAVE.

import (
	"bufio"
	"crypto/sha256"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hotkv/hotkv/net/resp/resptest"
)

// crashWriter is one pipelining connection writing INCR of its counter, SET of unique keys and
// RPUSH to its list, and remembering every acknowledged reply with the time it arrived.
type crashWriter struct {
	id      int
	incrAt  []time.Time // incrAt[v-1]: when INCR answered v
	setKeys []string    // acknowledged SETs, in order
	setAt   []time.Time
	pushAt  []time.Time // pushAt[n-1]: when RPUSH answered length n
	err     error
}

const crashDepth = 16 // commands in flight per writer

func (w *crashWriter) counter() string { return "c:" + strconv.Itoa(w.id) }
func (w *crashWriter) list() string    { return "l:" + strconv.Itoa(w.id) }

// run writes until the connection fails (the server was killed) or stop is closed.
func (w *crashWriter) run(addr string, stop <-chan struct{}) {
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		w.err = err
		return
	}
	defer c.Close()
	r := bufio.NewReaderSize(c, 64<<10)
	var buf []byte
	kinds := make([]byte, crashDepth)
	keys := make([]string, crashDepth)
	sets := 0
	for {
		select {
		case <-stop:
			return
		default:
		}
		buf = buf[:0]
		for i := range crashDepth {
			kinds[i] = "isp"[i%3]
			switch kinds[i] {
			case 'i':
				buf = appendCommand(buf, "INCR", w.counter())
			case 's':
				keys[i] = fmt.Sprintf("u:%d:%d", w.id, sets)
				sets++
				buf = appendCommand(buf, "SET", keys[i], keys[i])
			case 'p':
				buf = appendCommand(buf, "RPUSH", w.list(), strconv.Itoa(len(w.pushAt)+i/3))
			}
		}
		c.SetDeadline(time.Now().Add(ioTimeout))
		if _, err := c.Write(buf); err != nil {
			return
		}
		for i := range crashDepth {
			v, err := resptest.Read(r)
			if err != nil {
				return // killed: what was read is what was acknowledged
			}
			now := time.Now()
			switch {
			case v.Kind == '-':
				w.err = fmt.Errorf("writer %d: %s", w.id, v.Str)
				return
			case kinds[i] == 'i':
				n, _ := v.Int()
				if n != int64(len(w.incrAt))+1 {
					w.err = fmt.Errorf("writer %d: INCR answered %d after %d", w.id, n, len(w.incrAt))
					return
				}
				w.incrAt = append(w.incrAt, now)
			case kinds[i] == 's':
				w.setKeys = append(w.setKeys, keys[i])
				w.setAt = append(w.setAt, now)
			case kinds[i] == 'p':
				n, _ := v.Int()
				if n != int64(len(w.pushAt))+1 {
					w.err = fmt.Errorf("writer %d: RPUSH answered %d after %d", w.id, n, len(w.pushAt))
					return
				}
				w.pushAt = append(w.pushAt, now)
			}
		}
	}
}

// crashLoss is what a restart lost of one writer's acknowledged writes.
type crashLoss struct {
	acked, lost int
	firstLost   time.Time // when the earliest lost write was acknowledged (zero: none lost)
}

func (l *crashLoss) add(acked, lost int, first time.Time) {
	l.acked += acked
	l.lost += lost
	if lost > 0 && (l.firstLost.IsZero() || first.Before(l.firstLost)) {
		l.firstLost = first
	}
}

// check reads back what the writer had acknowledged from the restarted server.
func (w *crashWriter) check(t *testing.T, c *rawConn) crashLoss {
	var l crashLoss
	got := int64(0)
	if v := parseReply(t, c.do("GET", w.counter())); !v.Null {
		got, _ = strconv.ParseInt(v.Str, 10, 64)
	}
	if got > int64(len(w.incrAt))+crashDepth { // at most one batch was in flight at the kill
		t.Errorf("writer %d: counter %d, more than the %d sent", w.id, got, len(w.incrAt)+crashDepth)
	}
	lost := max(0, len(w.incrAt)-int(got))
	if lost > 0 {
		l.add(len(w.incrAt), lost, w.incrAt[got])
	} else {
		l.add(len(w.incrAt), 0, time.Time{})
	}
	for i := 0; i < len(w.setKeys); i += 500 {
		chunk := w.setKeys[i:min(i+500, len(w.setKeys))]
		v := parseReply(t, c.do(append([]string{"MGET"}, chunk...)...))
		lost, first := 0, time.Time{}
		for j, e := range v.Elems {
			if e.Null || e.Str != chunk[j] {
				if lost == 0 {
					first = w.setAt[i+j]
				}
				lost++
			}
		}
		l.add(len(chunk), lost, first)
	}
	n, _ := parseReply(t, c.do("LLEN", w.list())).Int()
	lost = max(0, len(w.pushAt)-int(n))
	first := time.Time{}
	if lost > 0 {
		first = w.pushAt[n]
	}
	l.add(len(w.pushAt), lost, first)
	if n > 0 {
		elems, _ := parseReply(t, c.do("LRANGE", w.list(), "0", strconv.FormatInt(min(n, int64(len(w.pushAt)))-1, 10))).Strings()
		for i, e := range elems {
			if e != strconv.Itoa(i) {
				t.Errorf("writer %d: list element %d is %q, want %d", w.id, i, e, i)
				break
			}
		}
	}
	return l
}

// crashAcknowledged: under appendfsync always and everysec, 4 pipelining writers record every
// acknowledged reply; the server is killed (SIGKILL) at a random moment and restarted on the
// same directory, and every acknowledged write is there: counters at least the last value
// acknowledged, every acknowledged SET key present, every list at least as long as the last
// RPUSH answered, in order. Under everysec too: Redis writes its AOF buffer before it replies,
// so a killed process (not a power loss) loses no acknowledged write under any policy.
func crashAcknowledged(t *testing.T, kind, bin string) {
	runs := map[string]int{"always": 3, "always+rewrite": 2, "everysec": 2}
	if kind == "redis" {
		runs = map[string]int{"always": 1, "always+rewrite": 1, "everysec": 1} // the harness's check
	}
	for _, mode := range []string{"always", "always+rewrite", "everysec"} {
		t.Run(mode, func(t *testing.T) {
			r := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 5))
			policy, rewrite := strings.CutSuffix(mode, "+rewrite")
			for run := range runs[mode] {
				crashRun(t, bin, policy, rewrite, run, r)
			}
		})
	}
}

// crashRun is one run: writers, a kill at a random moment (with rewrite, over 40 MB of other
// keys and up to 100 ms after a BGREWRITEAOF sent at that moment, so that the kill mostly falls
// inside the rewrite), a restart and the check.
func crashRun(t *testing.T, bin, policy string, rewrite bool, run int, r *rand.Rand) {
	dir := t.TempDir()
	args := []string{"--appendonly", "yes", "--appendfsync", policy, "--rdbcompression", "no"}
	p := startProc(t, bin, dir, args...)
	p.ready(30 * time.Second)
	if rewrite { // 40 MB for the rewrite to write, so that the kill can fall inside it
		fillKeys(t, dial(t, p.addr), 40_000, 1000, "r")
	}
	writers := make([]*crashWriter, 4)
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for i := range writers {
		writers[i] = &crashWriter{id: i}
		wg.Add(1)
		go func() { defer wg.Done(); writers[i].run(p.addr, stop) }()
	}
	load := 500*time.Millisecond + time.Duration(r.Int64N(int64(2*time.Second)))
	var ctl *rawConn
	if rewrite {
		time.Sleep(load)
		load = time.Duration(r.Int64N(int64(100 * time.Millisecond)))
		ctl = dial(t, p.addr)
		if got := ctl.do("BGREWRITEAOF"); !strings.HasPrefix(got, "+Background append only file rewriting") {
			t.Errorf("%s BGREWRITEAOF: %s", p.name, quote(got))
		}
	}
	time.Sleep(load)
	rewriting := ""
	if ctl != nil {
		rewriting = ", rewrite in progress at the kill: " + infoField(t, ctl, "persistence", "aof_rewrite_in_progress")
	}
	p.kill()
	killed := time.Now()
	close(stop)
	wg.Wait()
	for _, w := range writers {
		if w.err != nil {
			t.Fatalf("%s %s run %d: %v", p.name, policy, run, w.err)
		}
	}
	p2 := startProc(t, bin, dir, args...)
	p2.ready(60 * time.Second)
	c := dial(t, p2.addr)
	var total crashLoss
	if rewrite {
		for i := 0; i < 40_000; i += 400 {
			if got := c.do("GET", "k:"+strconv.Itoa(i)); got != bulk(crashValue(i, 1000, "r")) {
				t.Errorf("%s after a kill during BGREWRITEAOF: k:%d is %s", p.name, i, quote(got))
				break
			}
		}
	}
	for _, w := range writers {
		l := w.check(t, c)
		total.add(l.acked, l.lost, l.firstLost)
	}
	window := time.Duration(0)
	if total.lost > 0 {
		window = killed.Sub(total.firstLost)
	}
	what := "appendfsync " + policy
	if rewrite {
		what += " with BGREWRITEAOF"
	}
	t.Logf("%s %s run %d: %d writes acknowledged, %d recovered, %d lost (loss window %v%s)",
		p.name, what, run, total.acked, total.acked-total.lost, total.lost, window.Round(time.Millisecond), rewriting)
	switch {
	case total.acked == 0:
		t.Errorf("run %d: no write was acknowledged before the kill", run)
	case total.lost > 0 && p.name == "redis" && policy == "everysec" && !rewrite && window <= 3*time.Second:
		// redis-server's own everysec: while a background fsync is still running,
		// flushAppendOnlyFile postpones the write(2) for up to 2 s and the replies go out
		// meanwhile, so a kill then loses writes it acknowledged (once here: 352 in 11 ms, disk
		// busy). The reference, not what HotKV is held to.
		t.Logf("%s %s run %d lost %d acknowledged writes within its postponed-write window (%v)",
			p.name, what, run, total.lost, window)
	case total.lost > 0:
		// A killed process loses nothing acknowledged under any policy: what everysec leaves
		// unsynced is in the page cache, which survives the process (a power loss would not).
		t.Errorf("%s %s run %d lost %d acknowledged writes (first acknowledged %v before the kill)",
			p.name, what, run, total.lost, window)
	}
	p2.kill()
}

// crashDuringBgsave: after a SAVE, half the keys change and a BGSAVE starts; the
// server is killed (SIGKILL, its whole process group: Redis's forked child too) once the
// temporary file holds a megabyte. The previous dump.rdb is unchanged byte for byte,
// redis-check-rdb accepts it, and a restart loads the keys as they were at the SAVE.
func crashDuringBgsave(t *testing.T, kind, bin string) {
	dir := t.TempDir()
	args := []string{"--rdbcompression", "no"}
	p := startProc(t, bin, dir, args...)
	p.ready(30 * time.Second)
	c := dial(t, p.addr)
	const keys, size = 30_000, 1000
	fillKeys(t, c, keys, size, "a")
	if got := c.do("SAVE"); got != "+OK\r\n" {
		t.Fatalf("SAVE: %s", quote(got))
	}
	path := filepath.Join(dir, "dump.rdb")
	before := fileSum(t, path)
	fillKeys(t, c, keys/2, size, "b")
	c.do("SET", "marker", "after the save")
	if got := c.do("BGSAVE"); got != "+Background saving started\r\n" {
		t.Fatalf("BGSAVE: %s", quote(got))
	}
	caught := waitTempFile(dir, 1<<20, 30*time.Second)
	p.kill()
	if !caught {
		t.Fatalf("%s: the BGSAVE ended (or wrote no temp-*.rdb) before it could be killed", p.name)
	}
	if after := fileSum(t, path); after != before {
		t.Fatalf("%s: dump.rdb changed by a BGSAVE killed in the middle", p.name)
	}
	if out, err := exec.Command("redis-check-rdb", path).CombinedOutput(); err != nil && haveRedis() {
		t.Errorf("redis-check-rdb on the surviving dump.rdb: %v\n%s", err, tail(string(out), 1000))
	}
	p2 := startProc(t, bin, dir, args...)
	p2.ready(60 * time.Second)
	c2 := dial(t, p2.addr)
	if n := c2.do("DBSIZE"); n != ":"+strconv.Itoa(keys)+"\r\n" {
		t.Errorf("%s after restart: DBSIZE %s, want %d", p.name, quote(n), keys)
	}
	for i := 0; i < keys; i += keys / 50 {
		if got, want := c2.do("GET", "k:"+strconv.Itoa(i)), bulk(crashValue(i, size, "a")); got != want {
			t.Errorf("%s after restart: key k:%d is not the saved value (got %s)", p.name, i, quote(got))
			break
		}
	}
	t.Logf("%s: BGSAVE killed mid-file; dump.rdb of %d keys unchanged and loaded", p.name, keys)
}

func bulk(s string) string { return "$" + strconv.Itoa(len(s)) + "\r\n" + s + "\r\n" }

// crashValue is key i's value of a version, size bytes. The servers under test run with
// rdbcompression no where the file's size matters, so padding is as good as random bytes and
// costs the test (under -race especially) nothing.
func crashValue(i, size int, version string) string {
	head := version + ":" + strconv.Itoa(i) + ":"
	return head + strings.Repeat("x", max(0, size-len(head)))
}

// fillKeys writes keys k:0 … k:n-1 with values of one version, pipelined.
func fillKeys(t *testing.T, c *rawConn, n, size int, version string) {
	var buf []byte
	pending := 0
	flush := func() {
		c.write(buf)
		for range pending {
			if got := c.reply(); string(got) != "+OK\r\n" {
				t.Fatalf("SET: %s", quote(got))
			}
		}
		buf, pending = buf[:0], 0
	}
	for i := range n {
		buf = appendCommand(buf, "SET", "k:"+strconv.Itoa(i), crashValue(i, size, version))
		if pending++; pending == 500 {
			flush()
		}
	}
	flush()
}

func fileSum(t *testing.T, path string) [32]byte {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return sha256.Sum256(b)
}

// waitTempFile reports whether a temp-*.rdb in dir reached size bytes within d.
func waitTempFile(dir string, size int64, d time.Duration) bool {
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(time.Millisecond) {
		files, _ := filepath.Glob(filepath.Join(dir, "temp-*.rdb"))
		for _, f := range files {
			if st, err := os.Stat(f); err == nil && st.Size() >= size {
				return true
			}
		}
	}
	return false
}
