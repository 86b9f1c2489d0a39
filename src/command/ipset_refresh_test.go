package command

import (
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hotkv/hotkv/ds/keyspace"
)

// TestIPSetRefresh is the refresh test: 4 readers loop IPSET.MCONTAINS of 100 addresses
// on key "live" while a writer makes 5 staging loads, alternately of lists A and B (200k entries
// each: hosts and /24s; 20k under -race or -short), each RENAMEd over "live". Every reply must be
// wholly A's answer or wholly B's. RENAME's time and the readers' p99.9 are logged (goals 1 ms
// and 5 ms, measured under flock on the shared machine; not asserted, wall-clock limits fail on a
// loaded machine); HOTKV_IPSET_LONG=1 asserts them.
func TestIPSetRefresh(t *testing.T) {
	size := 200_000
	if testing.Short() || raceEnabledCmd {
		size = 20_000
	}
	e := newTestEngine()
	lists := [2][][]string{ipsetRefreshList(1, size), ipsetRefreshList(2, size)}
	rng := rand.New(rand.NewPCG(9, 9))
	var queries []string
	for len(queries) < 100 { // addresses of A's and B's entries, and misses
		l := lists[len(queries)%2]
		cmd := l[rng.IntN(len(l))]
		queries = append(queries, cmd[2+rng.IntN(len(cmd)-2)])
		queries = append(queries, fmt.Sprintf("11.%d.%d.%d", rng.IntN(256), rng.IntN(256), rng.IntN(256)))
	}
	queries = queries[:100]
	for i, q := range queries {
		if n := len(q); q[n-3:] == "/24" {
			queries[i] = q[:n-4] + "7" // an address inside the /24
		}
	}
	mc := append([]string{"IPSET.MCONTAINS", "live"}, queries...)
	w := newTestConn(t, e)
	load := func(l [][]string) {
		for _, cmd := range l {
			cmd[1] = "staging"
			if r := w.do(cmd...); r[0] != ':' {
				t.Fatalf("load: %q", r)
			}
		}
	}
	var answers [2]string
	for i := range lists {
		load(lists[i])
		w.do("RENAME", "staging", "live")
		answers[i] = w.do(mc...)
	}
	if answers[0] == answers[1] {
		t.Fatal("A and B answer alike: the test could not fail")
	}
	var stop atomic.Bool
	var wg sync.WaitGroup
	lat := make([][]time.Duration, 4)
	var bad atomic.Int64
	for r := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := newTestConn(t, e)
			req := encodeCommand(mc)
			for n := 0; !stop.Load() && n < 1_000_000; n++ {
				t0 := time.Now()
				out, err := c.send(req)
				lat[r] = append(lat[r], time.Since(t0))
				if err != nil || string(out) != answers[0] && string(out) != answers[1] {
					if bad.Add(1) <= 3 {
						t.Errorf("reader %d: a reply neither A's nor B's: %.120q", r, out)
					}
				}
			}
		}()
	}
	var renames []time.Duration
	for i := range 5 {
		load(lists[i%2])
		t0 := time.Now()
		if r := w.do("RENAME", "staging", "live"); r != "+OK\r\n" {
			t.Fatal(r)
		}
		renames = append(renames, time.Since(t0))
	}
	stop.Store(true)
	wg.Wait()
	var all []time.Duration
	for _, l := range lat {
		all = append(all, l...)
	}
	slices.Sort(all)
	p999 := all[len(all)*999/1000]
	t.Logf("%d entries per list: %d reader replies, all A's or B's: %v; RENAME %v; reader p50 %v p99 %v p99.9 %v max %v",
		size, len(all), bad.Load() == 0, renames, all[len(all)/2], all[len(all)*99/100], p999, all[len(all)-1])
	if os.Getenv("HOTKV_IPSET_LONG") != "" {
		if slices.Max(renames) > time.Millisecond || p999 > 5*time.Millisecond {
			t.Errorf("RENAME max %v (goal 1 ms), reader p99.9 %v (goal 5 ms)", slices.Max(renames), p999)
		}
	}
}

// ipsetRefreshList is a list of size entries (95% hosts in 10/8, 5% labelled /24s in 172.16/12)
// as IPSET.ADD commands of 2,000 entries.
func ipsetRefreshList(seed uint64, size int) [][]string {
	rng := rand.New(rand.NewPCG(seed, 5))
	var out [][]string
	cmd := []string{"IPSET.ADD", "staging"}
	for i := range size {
		if i%20 == 0 {
			a := rng.Uint32N(1<<12)<<8 | 172<<24 | 16<<16
			cmd = append(cmd, fmt.Sprintf("%d.%d.%d.0/24", a>>24, a>>16&255, a>>8&255))
		} else {
			a := rng.Uint32N(1<<24) | 10<<24
			cmd = append(cmd, fmt.Sprintf("%d.%d.%d.%d", a>>24, a>>16&255, a>>8&255, a&255))
		}
		if len(cmd) == 2002 {
			out = append(out, cmd)
			cmd = []string{"IPSET.ADD", "staging"}
		}
	}
	if len(cmd) > 2 {
		out = append(out, cmd)
	}
	return out
}

// TestIPSetRenamedSetSettles: a staging set RENAMEd over the live key with its pending part not
// yet merged (as a loader's RENAME right after its last IPSET.ADD leaves it) ends fully merged,
// queued again by a read of the live key: it was queued for the active cycle under the staging
// name only, so before readIPSet looked after it the live set kept its pending part until its
// next write, and every lookup probed the delta's maps.
func TestIPSetRenamedSetSettles(t *testing.T) {
	e := newTestEngine()
	w := newTestConn(t, e)
	for _, cmd := range ipsetRefreshList(3, 30_000) {
		if r := w.do(cmd...); r[0] != ':' {
			t.Fatalf("load: %q", r)
		}
	}
	live := func() *ipsetValue {
		return keyspace.Obj[ipsetValue](e.keyspace(0, []byte("live")).FindQuiet([]byte("live"), time.Now().UnixNano()))
	}
	w.do("RENAME", "staging", "live")
	if !live().set.Unsettled() {
		t.Fatal("the staging set was settled before the RENAME: the test could not fail")
	}
	r := newTestConn(t, e)
	deadline := time.Now().Add(3 * time.Second)
	for live().set.Unsettled() && time.Now().Before(deadline) {
		if out := r.do("IPSET.CONTAINS", "live", "10.0.0.1"); out[0] != ':' {
			t.Fatalf("CONTAINS: %q", out)
		}
		time.Sleep(ipsetSettleMs * time.Millisecond / 2)
		e.ActiveExpire(50 * time.Millisecond)
	}
	if v := live(); v.set.Unsettled() {
		t.Fatalf("the live set still has a pending part or a merge after 3 s of reads and active cycles (%d entries)", v.Len())
	}
}
