package testfuzz

import (
	"flag"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

var (
	diffOps     = flag.Int("diff.ops", 50000, "differential test: commands per protocol run")
	diffSeed    = flag.Uint64("diff.seed", 0, "differential test: random seed (0 picks one from the clock)")
	diffConns   = flag.Int("diff.conns", 4, "differential test: concurrent connections")
	diffMaxFail = flag.Int("diff.maxfail", 1, "differential test: mismatches to report before stopping")
)

// TestDifferential sends the same random key/string command stream to HotKV and redis-server and
// compares every reply byte for byte, once per transport engine and protocol version.
//
// Each round, every connection pipelines a batch of 1..50 commands over its own keys, all
// connections at once (HotKV sees real concurrency, and cross-shard commands race each other);
// then, with all connections quiet, connection 0 checks the shared state: DBSIZE, EXISTS and MGET
// over every connection's keys. Reruns with -diff.seed reproduce a failure.
func TestDifferential(t *testing.T) {
	seed := *diffSeed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	forEachEngine(t, func(t *testing.T) {
		for _, proto := range []int{2, 3} {
			t.Run("resp"+strconv.Itoa(proto), func(t *testing.T) {
				redis := startRedis(t)
				hotkv, _ := startHotKV(t)
				d := newDiffRun(t, seed, proto, hotkv, redis)
				d.run(*diffOps)
			})
		}
	})
}

// diffPair is one logical client: the same connection number on both servers.
type diffPair struct {
	hotkv, redis *rawConn
	gen          *gen
}

type diffRun struct {
	t        *testing.T
	seed     uint64
	pairs    []diffPair
	allKeys  []string
	last     [][]genCmd // the previous round's batches, to explain a state mismatch
	failures int
}

func newDiffRun(t *testing.T, seed uint64, proto int, hotkvAddr, redisAddr string) *diffRun {
	d := &diffRun{t: t, seed: seed}
	now := time.Now().Unix()
	for i := range max(1, *diffConns) {
		p := diffPair{hotkv: dial(t, hotkvAddr), redis: dial(t, redisAddr), gen: newGen(seed, i, now)}
		if proto == 3 {
			// HELLO's reply names each server (version, id, mode); only its shape must agree.
			for _, c := range []*rawConn{p.hotkv, p.redis} {
				if r := c.do("HELLO", "3"); !strings.HasPrefix(r, "%") {
					t.Fatalf("HELLO 3 to %s: %s", c.addr, quote(r))
				}
			}
		}
		d.pairs = append(d.pairs, p)
		for _, k := range keyNames {
			d.allKeys = append(d.allKeys, p.gen.prefix+k)
		}
	}
	return d
}

func (d *diffRun) run(ops int) {
	for round, done := 0, 0; done < ops; round++ {
		batches := make([][]genCmd, len(d.pairs))
		for i, p := range d.pairs {
			batches[i] = make([]genCmd, 1+p.gen.r.IntN(50))
			for j := range batches[i] {
				batches[i][j] = p.gen.next()
			}
			done += len(batches[i])
		}
		if !d.concurrentRound(round, batches) || !d.checkShared(round) {
			return
		}
		d.last = batches
	}
}

// concurrentRound sends every connection's batch to both servers at once and compares the replies.
func (d *diffRun) concurrentRound(round int, batches [][]genCmd) bool {
	hk := make([][][]byte, len(d.pairs))
	rd := make([][][]byte, len(d.pairs))
	errs := make([]error, 2*len(d.pairs))
	var wg sync.WaitGroup
	for i, p := range d.pairs {
		wg.Add(2)
		go func() { defer wg.Done(); hk[i], errs[2*i] = exchange(p.hotkv, batches[i]) }()
		go func() { defer wg.Done(); rd[i], errs[2*i+1] = exchange(p.redis, batches[i]) }()
	}
	wg.Wait()
	for i := range d.pairs {
		for j, c := range batches[i] {
			if !d.compare(round, i, batches[i], j, c, hk[i], rd[i], errs[2*i], errs[2*i+1]) {
				return false
			}
		}
	}
	return true
}

// exchange pipelines a batch and reads one reply per command. The write runs apart from the reads
// so a server that answers before it has read everything never deadlocks the test.
func exchange(c *rawConn, batch []genCmd) ([][]byte, error) {
	var req []byte
	for _, cmd := range batch {
		req = appendCommand(req, cmd.args...)
	}
	werr := make(chan error, 1)
	go func() { werr <- c.tryWrite(req) }()
	replies := make([][]byte, 0, len(batch))
	for range batch {
		r, err := c.tryReply()
		if err != nil {
			return replies, err
		}
		replies = append(replies, r)
	}
	return replies, <-werr
}

// compare checks reply j of connection i. It returns false when the run must stop.
func (d *diffRun) compare(round, conn int, batch []genCmd, j int, c genCmd, hk, rd [][]byte, hkErr, rdErr error) bool {
	if j >= len(rd) {
		d.t.Fatalf("seed %d round %d conn %d: redis-server failed on command %d %s: %v",
			d.seed, round, conn, j, quoteArgs(c.args), rdErr)
	}
	var got []byte
	if j < len(hk) {
		got = hk[j]
	}
	if j < len(hk) && string(normalize(got, c.norm)) == string(normalize(rd[j], c.norm)) {
		return true
	}
	var ctx strings.Builder
	for k := max(0, j-5); k < j; k++ {
		fmt.Fprintf(&ctx, "\n    before: %s", quoteArgs(batch[k].args))
	}
	reason := ""
	if j >= len(hk) {
		reason = fmt.Sprintf(" (HotKV gave no reply: %v)", hkErr)
	}
	d.t.Errorf("differential mismatch (rerun with -diff.seed=%d) round %d conn %d command %d:%s\n"+
		"    command: %s\n    HotKV:   %s%s\n    Redis:   %s",
		d.seed, round, conn, j, ctx.String(), quoteArgs(c.args), quote(got), reason, quote(rd[j]))
	d.failures++
	return j < len(hk) && d.failures < *diffMaxFail
}

// checkShared compares global state through connection 0 while no other connection runs.
func (d *diffRun) checkShared(round int) bool {
	p := d.pairs[0]
	// EXISTS first: it deletes keys whose expiry has passed (SET ... EXAT <past> leaves one), which
	// DBSIZE would count until each server's active expiry happens to reclaim them.
	checks := []genCmd{
		exact(append([]string{"exists"}, d.allKeys...)...),
		exact("dbsize"),
		exact(append([]string{"mget"}, d.allKeys...)...),
	}
	if p.gen.chance(0.01) {
		checks = append(checks, exact(p.gen.pick([]string{"flushdb", "flushall"})))
	}
	hk, hkErr := exchange(p.hotkv, checks)
	rd, rdErr := exchange(p.redis, checks)
	for j, c := range checks {
		if !d.compare(round, 0, checks, j, c, hk, rd, hkErr, rdErr) {
			d.explainState()
			return false
		}
	}
	return true
}

// explainState logs, for every key whose existence, value or TTL differs between the servers in
// connection 0's database, the commands of the previous round that named it.
func (d *diffRun) explainState() {
	p := d.pairs[0]
	for _, k := range d.allKeys {
		probe := []genCmd{exact("exists", k), exact("get", k), {args: []string{"pttl", k}, norm: normTTL}}
		hk, err1 := exchange(p.hotkv, probe)
		rd, err2 := exchange(p.redis, probe)
		if err1 != nil || err2 != nil {
			d.t.Logf("cannot probe %s: %v %v", quote(k), err1, err2)
			return
		}
		same := true
		for i := range probe {
			same = same && string(normalize(hk[i], probe[i].norm)) == string(normalize(rd[i], probe[i].norm))
		}
		if !same {
			d.t.Logf("key %s differs: HotKV exists/get/pttl %s %s %s; Redis %s %s %s%s", quote(k),
				quote(hk[0]), quote(hk[1]), quote(hk[2]), quote(rd[0]), quote(rd[1]), quote(rd[2]), d.history(k))
		}
	}
}

func (d *diffRun) history(key string) string {
	var b strings.Builder
	for i, batch := range d.last {
		for j, c := range batch {
			for _, a := range c.args[1:] {
				if a == key {
					fmt.Fprintf(&b, "\n    previous round, conn %d command %d: %s", i, j, quoteArgs(c.args))
					break
				}
			}
		}
	}
	return b.String()
}

// normalize applies a command's comparison rule to its reply.
func normalize(reply []byte, norm replyNorm) []byte {
	if norm != normTTL || len(reply) < 4 || reply[0] != ':' {
		return reply
	}
	n, err := strconv.ParseInt(string(reply[1:len(reply)-2]), 10, 64)
	if err != nil || n <= 0 {
		return reply
	}
	return []byte(":<positive>\r\n")
}

func quoteArgs(args []string) string {
	q := make([]string, len(args))
	for i, a := range args {
		q[i] = quote(a)
	}
	return strings.Join(q, " ")
}
