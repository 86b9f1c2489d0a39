package command

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hotkv/hotkv/pipeline"
	"github.com/hotkv/hotkv/src/script"
)

// shardWorks is how many work items shard id's actor has run: a script run on its shard counts
// one, a barrier none.
func shardWorks(e *Engine, id int32) uint32 { return e.data(id).stats.works }

// A script's first run is a barrier; once it held its one declared shard alone, its runs are
// that shard's work. A run there that meets a key of another shard is undone and handed back:
// it runs again as a barrier, each write happens once (values, feed, events as after one run),
// and the script is a barrier from then on.
func TestScriptOnShardPlacement(t *testing.T) {
	x := newHashFx(t)
	e := x.e
	defer e.Close()
	ks := keysOnShardOf(e, "p:", "p:0", 2)
	sh := e.shardOf([]byte(ks[0]))
	var other string
	for _, k := range keysOnShards(e, "o:", 8) {
		if e.shardOf([]byte(k)) != sh {
			other = k
			break
		}
	}
	body := `redis.call('INCR', KEYS[1]); redis.call('INCR', KEYS[2])
if ARGV[1] == 'roam' then redis.call('INCR', ARGV[2]) end
return redis.call('GET', KEYS[1])`
	sha := replyText(t, x.tc.do("SCRIPT", "LOAD", body))
	sc, _ := e.Scripts().Lookup([]byte(sha))
	target := func() pipeline.Target {
		s := &pipeline.Slot{Args: [][]byte{[]byte("EVALSHA"), []byte(sha), []byte("2"), []byte(ks[0]), []byte(ks[1])}}
		spec, _ := lookupArgs(s.Args)
		return e.selfTarget(x.tc.client, spec, s)
	}
	if got := target(); got != pipeline.TargetBarrier {
		t.Fatalf("a script never run is routed to %d, want a barrier", got)
	}
	run := func(args ...string) string {
		return x.tc.do(append([]string{"EVALSHA", sha, "2", ks[0], ks[1]}, args...)...)
	}
	w0 := shardWorks(e, sh)
	if got := run("stay"); got != "$1\r\n1\r\n" {
		t.Fatalf("first run: %q", got)
	}
	if shardWorks(e, sh) != w0 || sc.Hint.Load() != hintLocal {
		t.Fatalf("first run: works %d -> %d, hint %d; want a barrier that marks it local", w0, shardWorks(e, sh), sc.Hint.Load())
	}
	if got := target(); got != pipeline.Target(sh) {
		t.Fatalf("a local script is routed to %d, want shard %d", got, sh)
	}
	x.feed()
	x.events()
	if got := run("stay"); got != "$1\r\n2\r\n" {
		t.Fatalf("second run: %q", got)
	}
	if shardWorks(e, sh) != w0+1 {
		t.Fatalf("second run did not run as shard %d's work", sh)
	}
	wantFeed := []string{"0:MULTI", "0:INCR " + ks[0], "0:INCR " + ks[1], "0:EXEC"}
	if got := x.feed(); !slices.Equal(got, wantFeed) {
		t.Errorf("on-shard run's feed %q, want %q", got, wantFeed)
	}
	if got := x.events(); len(got) != 4 { // keyspace and keyevent of two INCRs
		t.Errorf("on-shard run's events %q", got)
	}
	if got := run("roam", other); got != "$1\r\n3\r\n" {
		t.Fatalf("roaming run: %q", got)
	}
	if sc.Hint.Load() != hintRoams || target() != pipeline.TargetBarrier {
		t.Errorf("after a roaming run: hint %d, target %d; want a barrier", sc.Hint.Load(), target())
	}
	wantFeed = []string{"0:MULTI", "0:INCR " + ks[0], "0:INCR " + ks[1], "0:INCR " + other, "0:EXEC"}
	if got := x.feed(); !slices.Equal(got, wantFeed) {
		t.Errorf("roaming run's feed %q, want %q (the rerun's only)", got, wantFeed)
	}
	if got := x.events(); len(got) != 6 {
		t.Errorf("roaming run's events %q, want 6 (the rerun's only)", got)
	}
	for k, want := range map[string]string{ks[0]: "3", ks[1]: "3", other: "1"} {
		if got := x.tc.do("GET", k); got != fmt.Sprintf("$1\r\n%s\r\n", want) {
			t.Errorf("GET %s = %q, want %s", k, got, want)
		}
	}
}

// Pipelined scripts of several shards in one batch, one of them handed back, reply in order and
// each runs once. (The roaming run's extra key is used by no other command of the batch: the
// order of the batch's commands on other shards around the first run that roams is not kept,
// scripting_place.go item 4.)
func TestScriptOnShardPipelined(t *testing.T) {
	e := newTestEngine()
	defer e.Close()
	tc := newTestConn(t, e)
	ks := keysOnShards(e, "q:", 6)
	sha := replyText(t, tc.do("SCRIPT", "LOAD", `if ARGV[1] ~= '' then redis.call('INCR', ARGV[1]) end
return redis.call('INCR', KEYS[1])`))
	for _, k := range ks {
		tc.do("EVALSHA", sha, "1", k, "") // barrier runs: the script is local
	}
	far := "far"
	for i := 0; e.shardOf([]byte(far)) == e.shardOf([]byte(ks[2])); i++ {
		far = "far" + strconv.Itoa(i)
	}
	var req []byte
	var want []string
	for round := 2; round <= 4; round++ {
		for i, k := range ks {
			roam := ""
			if round == 3 && i == 2 {
				roam = far // a key of another shard: handed back
			}
			req = append(req, encodeCommand([]string{"EVALSHA", sha, "1", k, roam})...)
			req = append(req, encodeCommand([]string{"GET", k})...)
			req = append(req, encodeCommand([]string{"ECHO", k})...) // a connection command after them
			n := round
			want = append(want, ":"+strconv.Itoa(n)+"\r\n", fmt.Sprintf("$1\r\n%d\r\n", n), fmt.Sprintf("$%d\r\n%s\r\n", len(k), k))
		}
	}
	out, err := tc.send(req)
	if err != nil {
		t.Fatal(err)
	}
	if got := splitReplies(t, out); !slices.Equal(got, want) {
		t.Errorf("pipelined replies\n got %q\nwant %q", got, want)
	}
	if got := tc.do("GET", far); got != "$1\r\n1\r\n" {
		t.Errorf("the roaming run's key: %q, want 1", got)
	}
}

// Transfers between accounts by EVALSHA, most of them on one shard (run as its work), some to an
// undeclared account of another shard (handed back, then barriers), beside readers that sum
// every account in one script: the total never changes.
func TestScriptOnShardTransfersAtomic(t *testing.T) {
	e := newTestEngine()
	defer e.Close()
	setup := newTestConn(t, e)
	local := keysOnShardOf(e, "acct:", "acct:0", 6)
	var remote []string
	for _, k := range keysOnShards(e, "far:", 8) {
		if e.shardOf([]byte(k)) != e.shardOf([]byte(local[0])) {
			remote = append(remote, k)
		}
	}
	all := append(slices.Clone(local), remote...)
	for _, k := range all {
		setup.do("SET", k, "100")
	}
	total := 100 * len(all)
	move := `local n = tonumber(ARGV[1])
if tonumber(redis.call('GET', KEYS[1])) < n then return 0 end
redis.call('DECRBY', KEYS[1], n)
redis.call('INCRBY', ARGV[2] ~= '' and ARGV[2] or KEYS[2], n)
return 1`
	sum := `local s = 0 for _, k in ipairs(KEYS) do s = s + tonumber(redis.call('GET', k)) end return s`
	transfers, readers := 20000, 2
	if txRace {
		transfers = 4000
	}
	var shas []string
	for i := range 8 { // several SHAs: first runs, and local ones that roam later
		shas = append(shas, replyText(t, setup.do("SCRIPT", "LOAD", move+" -- "+strconv.Itoa(i))))
	}
	sumSHA := replyText(t, setup.do("SCRIPT", "LOAD", sum))
	stop := make(chan struct{})
	var wg, rg sync.WaitGroup
	errs := make(chan string, 16)
	for r := range readers {
		rg.Add(1)
		go func() {
			defer rg.Done()
			tc := newTestConn(t, e)
			args := append([]string{"EVALSHA", sumSHA, strconv.Itoa(len(all))}, all...)
			if r == 1 { // the local accounts alone: a script on their shard
				args = append([]string{"EVALSHA", sumSHA, strconv.Itoa(len(local))}, local...)
			}
			want := fmt.Sprintf(":%d\r\n", total)
			for {
				select {
				case <-stop:
					return
				default:
				}
				if got := tc.do(args...); r == 0 && got != want {
					errs <- fmt.Sprintf("sum of every account %q, want %q", got, want)
					return
				} else if r == 1 && got[0] != ':' {
					errs <- fmt.Sprintf("sum of the local accounts %q", got)
					return
				}
			}
		}()
	}
	const workers = 4
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tc := newTestConn(t, e)
			rng := rand.New(rand.NewPCG(uint64(w), 7))
			for i := range transfers / workers {
				a, b := local[rng.IntN(len(local))], local[rng.IntN(len(local))]
				far := ""
				if i%50 == 49 {
					far = remote[rng.IntN(len(remote))]
				}
				got := tc.do("EVALSHA", shas[rng.IntN(len(shas))], "2", a, b, strconv.Itoa(1+rng.IntN(5)), far)
				if got != ":1\r\n" && got != ":0\r\n" {
					errs <- fmt.Sprintf("transfer: %q", got)
					return
				}
			}
		}()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		t.Fatal("transfers did not finish in 60 s")
	}
	close(stop)
	rg.Wait()
	close(errs)
	for msg := range errs {
		t.Error(msg)
	}
	got := 0
	for _, k := range all {
		n, _ := strconv.Atoi(replyText(t, setup.do("GET", k)))
		got += n
	}
	if got != total {
		t.Errorf("total after the transfers %d, want %d", got, total)
	}
	roamed := 0
	for _, s := range shas {
		if sc, _ := e.Scripts().Lookup([]byte(s)); sc.Hint.Load() == hintRoams {
			roamed++
		}
	}
	if roamed == 0 {
		t.Errorf("no transfer script roamed: the handback was not exercised")
	}
}

// A transaction whose keys and watched keys share one shard runs as that shard's work: its
// replies, its watch check and its feed entry are a barrier EXEC's. Beside it, transfers by
// MULTI/EXEC and WATCH-based increments on that shard keep the total and lose no increment.
func TestExecOnShard(t *testing.T) {
	x := newHashFx(t)
	e := x.e
	defer e.Close()
	ks := keysOnShardOf(e, "t:", "t:0", 4)
	sh := e.shardOf([]byte(ks[0]))
	tc := x.tc
	w0 := shardWorks(e, sh)
	tc.do("WATCH", ks[2])
	tc.do("MULTI")
	tc.do("SET", ks[0], "10")
	tc.do("INCRBY", ks[1], "5")
	if got := tc.do("EXEC"); got != "*2\r\n+OK\r\n:5\r\n" {
		t.Fatalf("EXEC: %q", got)
	}
	if shardWorks(e, sh) != w0+1 {
		t.Fatalf("a one-shard EXEC did not run as shard %d's work", sh)
	}
	if got, want := x.feed(), []string{"0:MULTI", "0:SET " + ks[0] + " 10", "0:INCRBY " + ks[1] + " 5", "0:EXEC"}; !slices.Equal(got, want) {
		t.Errorf("feed %q, want %q", got, want)
	}
	tc.do("WATCH", ks[2])
	newTestConn(t, e).do("SET", ks[2], "x")
	tc.do("MULTI")
	tc.do("INCR", ks[0])
	if got := tc.do("EXEC"); got != "*-1\r\n" {
		t.Errorf("EXEC after a watched key changed: %q", got)
	}
	if got := tc.do("GET", ks[0]); got != "$2\r\n10\r\n" {
		t.Errorf("the aborted transaction wrote: %q", got)
	}

	for _, k := range ks {
		tc.do("SET", k, "100")
	}
	rounds := 4000
	if txRace {
		rounds = 800
	}
	var wg sync.WaitGroup
	errs := make(chan string, 8)
	for w := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := newTestConn(t, e)
			rng := rand.New(rand.NewPCG(uint64(w), 9))
			for range rounds {
				a, b := ks[rng.IntN(3)], ks[rng.IntN(3)]
				req := encodeCommand([]string{"MULTI"})
				req = append(req, encodeCommand([]string{"DECRBY", a, "3"})...)
				req = append(req, encodeCommand([]string{"INCRBY", b, "3"})...)
				req = append(req, encodeCommand([]string{"EXEC"})...)
				req = append(req, encodeCommand([]string{"MGET", ks[0], ks[1], ks[2]})...)
				out, err := c.send(req)
				if err != nil {
					errs <- err.Error()
					return
				}
				r := splitReplies(t, out)
				if len(r) != 5 {
					errs <- fmt.Sprintf("replies %q", r)
					return
				}
				sum := 0
				for _, v := range replyStrings(t, r[4]) {
					n, _ := strconv.Atoi(v)
					sum += n
				}
				if sum != 300 {
					errs <- fmt.Sprintf("MGET after EXEC: total %d, want 300", sum)
					return
				}
			}
		}()
	}
	for range 2 { // optimistic increments of ks[3]
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := newTestConn(t, e)
			for range rounds / 4 {
				for {
					c.do("WATCH", ks[3])
					n, _ := strconv.Atoi(replyText(t, c.do("GET", ks[3])))
					req := encodeCommand([]string{"MULTI"})
					req = append(req, encodeCommand([]string{"SET", ks[3], strconv.Itoa(n + 1)})...)
					req = append(req, encodeCommand([]string{"EXEC"})...)
					out, _ := c.send(req)
					if r := splitReplies(t, out); r[2] != "*-1\r\n" {
						break
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for msg := range errs {
		t.Error(msg)
	}
	if got, want := replyText(t, tc.do("GET", ks[3])), strconv.Itoa(100+2*(rounds/4)); got != want {
		t.Errorf("WATCH increments: %s, want %s", got, want)
	}
}

// A command of another client that reached the script's shard before the run was busy, and
// waited for it, is answered BUSY once the run ends busy (redis-server reads it only once the
// script is busy, and answers BUSY); a command sent after the run ended, and the script's own
// connection's next command, run.
func TestScriptBusyQueuedBefore(t *testing.T) {
	e := newTestEngine()
	defer e.Close()
	s := *e.Settings()
	s.BusyReplyThreshold = 300
	e.SetSettings(s)
	k := "bq:0"
	tc := newTestConn(t, e)
	tc.do("SET", k, "v")
	started := make(chan struct{})
	done := make(chan string)
	go func() {
		close(started)
		req := encodeCommand([]string{"EVAL", "while true do end", "1", k})
		req = append(req, encodeCommand([]string{"GET", k})...)
		out, _ := tc.send(req)
		done <- string(out)
	}()
	<-started
	deadline := time.Now().Add(10 * time.Second)
	for e.scripting.held[e.shardOf([]byte(k))].Load() == 0 { // the run holds the shard
		if time.Now().After(deadline) {
			t.Fatal("the script never started")
		}
		time.Sleep(time.Millisecond)
	}
	waiting := make(chan string)
	go func() { waiting <- newTestConn(t, e).do("GET", k) }() // routed before the run is busy
	time.Sleep(20 * time.Millisecond)
	for !e.Scripts().Busy() {
		if time.Now().After(deadline) {
			t.Fatal("the script never became busy")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if got := newTestConn(t, e).do("SCRIPT", "KILL"); got != "+OK\r\n" {
		t.Fatalf("SCRIPT KILL: %q", got)
	}
	got := <-waiting
	if got != "-"+script.ErrBusyScript+"\r\n" {
		t.Errorf("GET queued before the run was busy: %q, want BUSY", got)
	}
	own := <-done
	if !strings.HasSuffix(own, "$1\r\nv\r\n") {
		t.Errorf("the script's connection: %q, want its GET served", own)
	}
	if got := newTestConn(t, e).do("GET", k); got != "$1\r\nv\r\n" {
		t.Errorf("GET after the run: %q", got)
	}
}
