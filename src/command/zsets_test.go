package command

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// Sorted set behaviour the transcripts cannot show: Redis 7.2's ZRANK WITHSCORE, encoding
// changes under other thresholds, large sets, ZSCAN cursors and ZRANDMEMBER's randomness.

func TestZRankWithScore(t *testing.T) {
	for _, proto := range []int{2, 3} {
		tc := newTestConn(t, newTestEngine())
		if proto == 3 {
			tc.do("HELLO", "3")
		}
		score := map[int]string{2: "$3\r\n2.5\r\n", 3: ",2.5\r\n"}[proto]
		null, nullArr := map[int]string{2: "$-1\r\n", 3: "_\r\n"}[proto], map[int]string{2: "*-1\r\n", 3: "_\r\n"}[proto]
		f := func(want string, args ...string) {
			t.Helper()
			if got := tc.do(args...); got != want {
				t.Errorf("RESP%d %q = %q, want %q", proto, args, got, want)
			}
		}
		tc.do("ZADD", "z", "1", "a", "2.5", "b", "3", "c")
		f("*2\r\n:1\r\n"+score, "ZRANK", "z", "b", "WITHSCORE")
		f("*2\r\n:1\r\n"+score, "ZREVRANK", "z", "b", "withscore")
		f(":2\r\n", "ZRANK", "z", "c")
		f(nullArr, "ZRANK", "z", "x", "WITHSCORE")
		f(nullArr, "ZREVRANK", "nosuch", "x", "WITHSCORE")
		f(null, "ZRANK", "nosuch", "x")
		f("-ERR syntax error\r\n", "ZRANK", "z", "b", "WITHSCORES")
		f("-ERR wrong number of arguments for 'zrank' command\r\n", "ZRANK", "z", "b", "WITHSCORE", "x")
		f("-ERR wrong number of arguments for 'zrevrank' command\r\n", "ZREVRANK", "z")
		tc.do("SET", "s", "v")
		f("-WRONGTYPE Operation against a key holding the wrong kind of value\r\n", "ZRANK", "s", "b", "WITHSCORE")
	}
}

// With other thresholds, every way of creating a set picks the encoding Redis would.
func TestZSetEncodingSettings(t *testing.T) {
	e := newTestEngine()
	s := *e.Settings()
	s.ZSetMaxListpackEntries, s.ZSetMaxListpackValue = 2, 3
	e.SetSettings(s)
	tc := newTestConn(t, e)
	enc := func(key, want string) {
		t.Helper()
		if got := tc.do("OBJECT", "ENCODING", key); got != fmt.Sprintf("$%d\r\n%s\r\n", len(want), want) {
			t.Errorf("%s: %q, want %s", key, got, want)
		}
	}
	tc.do("ZADD", "a", "1", "x", "2", "y")
	enc("a", "listpack")
	tc.do("ZADD", "a", "3", "z")
	enc("a", "skiplist")
	tc.do("ZREM", "a", "z", "y")
	enc("a", "skiplist") // never converts back
	tc.do("ZADD", "b", "1", "long")
	enc("b", "skiplist")
	tc.do("ZADD", "c", "1", "x", "2", "y", "3", "z")
	tc.do("ZRANGESTORE", "d", "c", "0", "1")
	enc("d", "listpack")
	tc.do("ZRANGESTORE", "d", "c", "0", "-1")
	enc("d", "skiplist")
	tc.do("ZUNIONSTORE", "u", "1", "a")
	enc("u", "listpack") // one member left in a: a stored result is re-encoded by its size
	tc.do("ZUNIONSTORE", "u", "2", "a", "c")
	enc("u", "skiplist")
	tc.do("COPY", "c", "c2")
	enc("c2", "skiplist")
	if got := tc.do("ZRANGE", "c2", "0", "-1", "WITHSCORES"); got != tc.do("ZRANGE", "c", "0", "-1", "WITHSCORES") {
		t.Errorf("COPY differs: %q", got)
	}
}

// bigZSet fills key with n members "m<i>" scored i/2 through the protocol and returns them in
// order.
func bigZSet(tc *testConn, key string, n int) []string {
	var members []string
	args := []string{"ZADD", key}
	for i := range n {
		m := fmt.Sprint("m", i)
		args = append(args, strconv.FormatFloat(float64(i)/2, 'g', -1, 64), m)
		members = append(members, m)
	}
	tc.do(args...)
	return members
}

func TestZSetLargeRanges(t *testing.T) {
	tc := newTestConn(t, newTestEngine())
	members := bigZSet(tc, "z", 5000)
	if got := tc.do("OBJECT", "ENCODING", "z"); got != "$8\r\nskiplist\r\n" {
		t.Fatalf("encoding %q", got)
	}
	bulks := func(ms []string) string {
		var b strings.Builder
		fmt.Fprintf(&b, "*%d\r\n", len(ms))
		for _, m := range ms {
			fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(m), m)
		}
		return b.String()
	}
	rev := func(ms []string) []string { ms = slices.Clone(ms); slices.Reverse(ms); return ms }
	f := func(want string, args ...string) {
		t.Helper()
		if got := tc.do(args...); got != want {
			t.Errorf("%q = %.200q, want %.200q", args, got, want)
		}
	}
	f(bulks(members[1000:1010]), "ZRANGE", "z", "1000", "1009")
	f(bulks(rev(members)[10:20]), "ZREVRANGE", "z", "10", "19")
	f(bulks(members[200:401]), "ZRANGEBYSCORE", "z", "100", "200")
	f(bulks(members[221:226]), "ZRANGE", "z", "(105", "+inf", "BYSCORE", "LIMIT", "10", "5")
	f(bulks(rev(members[:400])[3:6]), "ZRANGE", "z", "(200", "-inf", "BYSCORE", "REV", "LIMIT", "3", "3")
	f(":201\r\n", "ZCOUNT", "z", "100", "200")
	f(":4321\r\n", "ZRANK", "z", "m4321")
	f(":678\r\n", "ZREVRANK", "z", "m4321")
	f(":100\r\n", "ZREMRANGEBYRANK", "z", "0", "99")
	f(":10\r\n", "ZREMRANGEBYSCORE", "z", "(1000", "1005")
	members = append(members[100:2001], members[2011:]...)
	f(bulks(members[1895:1905]), "ZRANGE", "z", "1895", "1904")
	f(fmt.Sprintf(":%d\r\n", len(members)), "ZCARD", "z")
}

// ZSCAN over a large set returns every member with its score, however the cursor is driven.
func TestZScanLarge(t *testing.T) {
	tc := newTestConn(t, newTestEngine())
	members := bigZSet(tc, "z", 3000)
	seen := map[string]string{}
	cursor := "0"
	for calls := 0; ; calls++ {
		replies := splitReplies(t, []byte(tc.do("ZSCAN", "z", cursor, "COUNT", "37")))
		r := replyElems(t, replies[0])
		cursor = r[0]
		items := replyElems(t, r[1])
		for i := 0; i < len(items); i += 2 {
			seen[replyText(t, items[i])] = replyText(t, items[i+1])
		}
		if cursor == "$1\r\n0\r\n" {
			break
		}
		cursor = replyText(t, cursor)
		if calls > 10000 {
			t.Fatal("ZSCAN never ends")
		}
	}
	if len(seen) != len(members) {
		t.Fatalf("ZSCAN saw %d members, want %d", len(seen), len(members))
	}
	if seen["m7"] != "3.5" || seen["m8"] != "4" {
		t.Errorf("scores %q %q", seen["m7"], seen["m8"])
	}
	r := replyElems(t, tc.do("ZSCAN", "z", "0", "MATCH", "m12*", "COUNT", "100000"))
	if n := len(replyElems(t, r[1])) / 2; r[0] != "$1\r\n0\r\n" || n != 1+10+100 {
		t.Errorf("MATCH m12* found %d members, cursor %q", n, r[0])
	}
}

// ZRANDMEMBER's random answers: members of the set, distinct when the count is positive,
// repeated draws when negative, and every member drawn in time.
func TestZRandMember(t *testing.T) {
	tc := newTestConn(t, newTestEngine())
	for _, n := range []int{10, 1000} { // listpack and skiplist
		key := fmt.Sprint("z", n)
		members := bigZSet(tc, key, n)
		valid := map[string]bool{}
		for _, m := range members {
			valid[m] = true
		}
		check := func(count int, distinct bool) {
			t.Helper()
			items := replyElems(t, tc.do("ZRANDMEMBER", key, strconv.Itoa(count), "WITHSCORES"))
			want := count
			if count < 0 {
				want = -count
			}
			if len(items) != 2*want {
				t.Fatalf("ZRANDMEMBER %s %d: %d items", key, count, len(items))
			}
			seen := map[string]bool{}
			for i := 0; i < len(items); i += 2 {
				m := replyText(t, items[i])
				idx, _ := strconv.Atoi(m[1:])
				if !valid[m] || replyText(t, items[i+1]) != strconv.FormatFloat(float64(idx)/2, 'g', -1, 64) {
					t.Fatalf("ZRANDMEMBER returned %q %q", m, items[i+1])
				}
				if distinct && seen[m] {
					t.Fatalf("ZRANDMEMBER %s %d repeated %q", key, count, m)
				}
				seen[m] = true
			}
		}
		check(n/2, true)   // selection sampling (listpack) or the 3x case
		check(n/10, true)  // drawing distinct members
		check(n-1, true)   //
		check(-3*n, false) // with repetition
		drawn := map[string]bool{}
		for range 50 * n {
			drawn[replyText(t, tc.do("ZRANDMEMBER", key))] = true
		}
		if len(drawn) != n {
			t.Errorf("%s: %d of %d members ever drawn", key, len(drawn), n)
		}
	}
}

// Set algebra over many inputs, sets among them, checked against a model.
func TestZSetAlgebraModel(t *testing.T) {
	tc := newTestConn(t, newTestEngine())
	type kv = map[string]float64
	inputs := []kv{{}, {}, {}}
	for i := range 300 {
		inputs[0][fmt.Sprint("m", i)] = float64(i)
		if i%2 == 0 {
			inputs[1][fmt.Sprint("m", i)] = float64(-i) / 4
		}
		if i%3 == 0 {
			inputs[2][fmt.Sprint("m", i)] = 1 // a plain set
		}
	}
	for i, in := range inputs[:2] {
		args := []string{"ZADD", fmt.Sprint("k", i)}
		for m, s := range in {
			args = append(args, strconv.FormatFloat(s, 'g', -1, 64), m)
		}
		tc.do(args...)
	}
	args := []string{"SADD", "k2"}
	for m := range inputs[2] {
		args = append(args, m)
	}
	tc.do(args...)
	model := func(op string) []string {
		res := kv{}
		for m, s := range inputs[0] {
			_, in1 := inputs[1][m]
			_, in2 := inputs[2][m]
			switch {
			case op == "ZINTER" && in1 && in2:
				res[m] = s*2 + inputs[1][m] + 1
			case op == "ZDIFF" && !in1 && !in2:
				res[m] = s
			case op == "ZUNION":
				res[m] = s*2 + inputs[1][m] + inputs[2][m]
			}
		}
		var ms []string
		for m := range res {
			ms = append(ms, m)
		}
		sort.Slice(ms, func(i, j int) bool {
			if res[ms[i]] != res[ms[j]] {
				return res[ms[i]] < res[ms[j]]
			}
			return ms[i] < ms[j]
		})
		var out []string
		for _, m := range ms {
			out = append(out, m, strconv.FormatFloat(res[m], 'g', 17, 64))
		}
		return out
	}
	for _, op := range []string{"ZINTER", "ZUNION", "ZDIFF"} {
		cmd := []string{op, "3", "k0", "k1", "k2"}
		if op != "ZDIFF" {
			cmd = append(cmd, "WEIGHTS", "2", "1", "1")
		}
		items := replyElems(t, tc.do(append(cmd, "WITHSCORES")...))
		var got []string
		for _, it := range items {
			got = append(got, replyText(t, it))
		}
		if want := model(op); !slices.Equal(got, want) {
			t.Errorf("%s: got %d items, want %d\n got %.300v\nwant %.300v", op, len(got), len(want), got, want)
		}
	}
}
