package command

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/hotkv/hotkv/ds/keyspace"
)

// memUsageCase builds one key the same way on both servers.
type memUsageCase struct {
	name string
	cmds func(key string) [][]string
}

// batches splits n members into commands of at most 500.
func batches(cmd, key string, n, per int, member func(i int) []string) [][]string {
	var out [][]string
	for i := 0; i < n; {
		c := []string{cmd, key}
		for j := 0; j < 500 && i < n; j, i = j+1, i+1 {
			c = append(c, member(i)...)
		}
		out = append(out, c)
	}
	return out
}

func memUsageCases() []memUsageCase {
	str := func(n int) string { return strings.Repeat("v", n) }
	var cs []memUsageCase
	for _, n := range []int{1, 20, 44, 100, 1000, 100_000} {
		cs = append(cs, memUsageCase{fmt.Sprint("string ", n, " B"), func(k string) [][]string {
			return [][]string{{"SET", k, str(n)}}
		}})
	}
	for _, n := range []int{1, 10, 100, 1000, 100_000} {
		for _, vl := range []int{8, 100} {
			cs = append(cs, memUsageCase{fmt.Sprint("list ", n, " x ", vl, " B"), func(k string) [][]string {
				return batches("RPUSH", k, n, 1, func(i int) []string { return []string{fmt.Sprintf("%0*d", vl, i)} })
			}})
		}
	}
	for _, n := range []int{1, 10, 100, 1000, 100_000} { // listpack up to 128 fields, then hashtable
		cs = append(cs, memUsageCase{fmt.Sprint("hash ", n, " fields"), func(k string) [][]string {
			return batches("HSET", k, n, 2, func(i int) []string { return []string{"field:" + strconv.Itoa(i), "value:" + strconv.Itoa(i)} })
		}})
	}
	cs = append(cs, memUsageCase{"hash 10 fields x 100 B values (hashtable)", func(k string) [][]string {
		return batches("HSET", k, 10, 2, func(i int) []string { return []string{"f" + strconv.Itoa(i), str(100)} })
	}})
	for _, n := range []int{1, 100, 500, 1000, 100_000} { // intset up to 512, then hashtable
		cs = append(cs, memUsageCase{fmt.Sprint("set ", n, " integers"), func(k string) [][]string {
			return batches("SADD", k, n, 1, func(i int) []string { return []string{strconv.Itoa(i * 7)} })
		}})
	}
	for _, n := range []int{1, 100, 1000, 100_000} { // listpack up to 128, then hashtable
		cs = append(cs, memUsageCase{fmt.Sprint("set ", n, " strings"), func(k string) [][]string {
			return batches("SADD", k, n, 1, func(i int) []string { return []string{"member:" + strconv.Itoa(i)} })
		}})
	}
	for _, n := range []int{1, 100, 1000, 100_000} { // listpack up to 128, then skiplist
		cs = append(cs, memUsageCase{fmt.Sprint("zset ", n, " members"), func(k string) [][]string {
			return batches("ZADD", k, n, 2, func(i int) []string { return []string{strconv.Itoa(i), "member:" + strconv.Itoa(i)} })
		}})
	}
	for _, n := range []int{1, 100, 10_000} {
		cs = append(cs, memUsageCase{fmt.Sprint("stream ", n, " entries"), func(k string) [][]string {
			var out [][]string
			for i := range n {
				out = append(out, []string{"XADD", k, fmt.Sprintf("%d-1", i+1), "field", "value:" + strconv.Itoa(i)})
			}
			return out
		}})
	}
	return cs
}

// TestMemoryUsageAgainstRedis builds each type in its small and large encodings and several
// sizes on HotKV and on redis-server 7.0.15, and checks that MEMORY USAGE (SAMPLES 0: every
// element, so the figures do not depend on sampling) agrees within a factor of 1.5. It logs
// the table (go test -v -run TestMemoryUsageAgainstRedis).
func TestMemoryUsageAgainstRedis(t *testing.T) {
	rs := newRedisSession(t)
	tc := newTestConn(t, newTestEngine())
	t.Logf("%-44s %12s %12s %6s", "key", "Redis", "HotKV", "ratio")
	for i, mc := range memUsageCases() {
		key := "m" + strconv.Itoa(i)
		for _, cmd := range mc.cmds(key) {
			want, got := rs.do(cmd...), tc.do(cmd...)
			if (want[0] == '-') != (got[0] == '-') {
				t.Fatalf("%s: %q: Redis %q, HotKV %q", mc.name, cmd[:2], want, got)
			}
		}
		if got, want := tc.do("OBJECT", "ENCODING", key), rs.do("OBJECT", "ENCODING", key); got != want {
			t.Fatalf("%s: encoding %q, Redis %q", mc.name, got, want)
		}
		r := replyInt(t, rs.do("MEMORY", "USAGE", key, "SAMPLES", "0"))
		h := replyInt(t, tc.do("MEMORY", "USAGE", key, "SAMPLES", "0"))
		ratio := float64(h) / float64(r)
		t.Logf("%-44s %12d %12d %6.2f", mc.name, r, h, ratio)
		if strings.HasPrefix(mc.name, "stream") {
			// Redis allocates a stream's listpack node at stream-node-max-bytes (4 KB) and its
			// entries repeat the master fields; ds/stream's blocks hold what was written, so
			// HotKV's figure is smaller and true (docs/decisions.md, "Stream MEMORY USAGE is the truth";
			// TestStreamMemoryUsageAgainstHeap checks it against the heap). It
			// must stay below Redis's and above the entries' own bytes.
			n := int64(len(mc.cmds(key)))
			if h > r || h < n*int64(len("fieldvalue:")) {
				t.Errorf("%s: MEMORY USAGE %d, Redis %d, for %d entries", mc.name, h, r, n)
			}
			continue
		}
		if enc := tc.do("OBJECT", "ENCODING", key); strings.Contains(enc, "listpack") && (strings.HasPrefix(mc.name, "hash") || strings.HasPrefix(mc.name, "zset")) {
			// A small hash or sorted set is its entry and one buffer (keyspace.Inline), and
			// MEMORY USAGE counts that buffer's capacity, exactly; front coding makes fields
			// like field:1..field:99 a few bytes each, so it may be far below Redis's. It must
			// not be above the band, nor below the entry and a byte per element.
			card := "HLEN"
			if strings.HasPrefix(mc.name, "zset") {
				card = "ZCARD"
			}
			n := replyInt(t, tc.do(card, key))
			if ratio > 1.5 || h < keyspace.EntrySize+n {
				t.Errorf("%s: MEMORY USAGE %d, Redis %d, for %d elements", mc.name, h, r, n)
			}
			continue
		}
		if ratio > 1.5 || ratio < 1/1.5 {
			t.Errorf("%s: MEMORY USAGE %d, Redis %d: ratio %.2f outside 1/1.5..1.5", mc.name, h, r, ratio)
		}
	}
}

func replyInt(t *testing.T, raw string) int64 {
	t.Helper()
	if !strings.HasPrefix(raw, ":") {
		t.Fatalf("not an integer reply: %q", raw)
	}
	n, err := strconv.ParseInt(strings.TrimSpace(raw[1:]), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return n
}
