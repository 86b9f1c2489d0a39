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
	diffOnly    = flag.String("diff.only", "", "differential test: comma-separated command families to generate "+
		"(strings, lists, hashes, sets, zsets); empty means all")
)

// familyOn reports whether -diff.only lets the generator use the named family.
func familyOn(name string) bool {
	if *diffOnly == "" {
		return true
	}
	for _, f := range strings.Split(*diffOnly, ",") {
		if strings.TrimSpace(f) == name {
			return true
		}
	}
	return false
}

// TestDifferential sends the same random command stream (keys, strings, lists, hashes, sets and
// sorted sets, on keys the families share) to HotKV and redis-server and compares every reply
// byte for byte, once per transport engine and protocol version. A few replies are compared
// under a looser rule (see replyNorm): remaining TTLs within two seconds, members in hash-table
// order, random picks.
//
// Each round, every connection pipelines a batch of 1..50 commands over its own keys (one round in
// eight 51..300, past the 64 lookups the batch warming runs at a time), all
// connections at once (HotKV sees real concurrency, and cross-shard commands race each other);
// then, with all connections quiet, connection 0 checks the shared state: DBSIZE, EXISTS, MGET and
// TYPE over every connection's keys, and every collection's whole content and OBJECT ENCODING.
// Reruns with -diff.seed reproduce a failure; -diff.only narrows the stream to some families.
func TestDifferential(t *testing.T) {
	forEachDiffServers(t, func(t *testing.T, seed uint64, proto int, redis, hotkv string) {
		newDiffRun(t, seed, proto, hotkv, redis).run(*diffOps)
	})
}

// forEachDiffServers runs f for each transport and protocol with a fresh redis-server and HotKV
// (their addresses), and the seed of -diff.seed or a new one.
func forEachDiffServers(t *testing.T, f func(t *testing.T, seed uint64, proto int, redis, hotkv string)) {
	seed := *diffSeed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	forEachEngine(t, func(t *testing.T) {
		for _, proto := range []int{2, 3} {
			t.Run("resp"+strconv.Itoa(proto), func(t *testing.T) {
				// hz 100: Redis checks blocked clients' timeouts once per event-loop tick, so at
				// the default 10 a BLPOP with a 10 ms timeout would stall its connection 100 ms.
				redis := startRedis(t, "--hz", "100")
				hotkv, _ := startHotKV(t)
				f(t, seed, proto, redis, hotkv)
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
	t         *testing.T
	seed      uint64
	pairs     []diffPair
	allKeys   []string
	last      [][]genCmd        // the previous round's batches, to explain a state mismatch
	lastTypes map[string]string // each key's TYPE reply at the latest state check
	failures  int
}

func newDiffRun(t *testing.T, seed uint64, proto int, hotkvAddr, redisAddr string) *diffRun {
	d := &diffRun{t: t, seed: seed, lastTypes: map[string]string{}}
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
			n := 1 + p.gen.r.IntN(50)
			if p.gen.r.IntN(8) == 0 {
				n = 51 + p.gen.r.IntN(250)
			}
			batches[i] = make([]genCmd, n)
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
	if j < len(hk) && sameReply(c, got, rd[j]) {
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
	if !d.checkBatch(round, checks) {
		return false
	}
	types := make([]genCmd, len(d.allKeys))
	for i, k := range d.allKeys {
		types[i] = exact("type", k)
	}
	if !d.checkBatch(round, types) {
		return false
	}
	// The content of every collection, by the type both servers agree on.
	var contents []genCmd
	for _, k := range d.allKeys {
		contents = append(contents, contentProbes(k, d.lastTypes[k])...)
	}
	return d.checkBatch(round, contents)
}

// checkBatch sends checks through connection 0 to both servers and compares the replies; on a
// mismatch it explains the state of the keys that differ. It records TYPE replies in lastTypes.
func (d *diffRun) checkBatch(round int, checks []genCmd) bool {
	p := d.pairs[0]
	hk, hkErr := exchange(p.hotkv, checks)
	rd, rdErr := exchange(p.redis, checks)
	for j, c := range checks {
		if !d.compare(round, 0, checks, j, c, hk, rd, hkErr, rdErr) {
			d.explainState()
			return false
		}
		if c.args[0] == "type" {
			d.lastTypes[c.args[1]] = string(rd[j])
		}
	}
	return true
}

// contentProbes returns the commands that read a collection's whole content in a comparable
// form, and its encoding (which HotKV reports as Redis 7.0 would), given its TYPE reply.
func contentProbes(key, typ string) []genCmd {
	enc := exact("object", "encoding", key)
	switch typ {
	case "+list\r\n":
		return []genCmd{exact("lrange", key, "0", "-1"), enc}
	case "+hash\r\n":
		return []genCmd{exact("hgetall", key), enc} // insertion order: see gen_hashes_test.go
	case "+set\r\n":
		return []genCmd{sorted("smembers", key), enc}
	case "+zset\r\n":
		return []genCmd{exact("zrange", key, "0", "-1", "withscores"), enc}
	}
	return nil
}

// explainState logs, for every key whose existence, value, TTL, type or content differs between
// the servers in connection 0's database, the commands of the previous round that named it.
func (d *diffRun) explainState() {
	p := d.pairs[0]
	for _, k := range d.allKeys {
		typ, err := p.redis.doErr("type", k)
		if err != nil {
			d.t.Logf("cannot probe %s: %v", quote(k), err)
			return
		}
		probe := append([]genCmd{exact("exists", k), exact("get", k), {args: []string{"pttl", k}, norm: normTTL},
			exact("type", k)}, contentProbes(k, typ)...)
		hk, err1 := exchange(p.hotkv, probe)
		rd, err2 := exchange(p.redis, probe)
		if err1 != nil || err2 != nil {
			d.t.Logf("cannot probe %s: %v %v", quote(k), err1, err2)
			return
		}
		var hkSide, rdSide []string
		same := true
		for i := range probe {
			same = same && sameReply(probe[i], hk[i], rd[i])
			hkSide, rdSide = append(hkSide, quote(hk[i])), append(rdSide, quote(rd[i]))
		}
		if !same {
			d.t.Logf("key %s differs: %s\n    HotKV: %s\n    Redis: %s%s", quote(k), probeNames(probe),
				strings.Join(hkSide, " "), strings.Join(rdSide, " "), d.history(k))
		}
	}
}

// probeNames names explainState's probes for its log line.
func probeNames(probe []genCmd) string {
	names := make([]string, len(probe))
	for i, c := range probe {
		names[i] = c.args[0]
		if c.args[0] == "object" {
			names[i] = "object encoding"
		}
	}
	return strings.Join(names, "/")
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

func quoteArgs(args []string) string {
	q := make([]string, len(args))
	for i, a := range args {
		q[i] = quote(a)
	}
	return strings.Join(q, " ")
}
