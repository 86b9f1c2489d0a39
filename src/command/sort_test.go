package command

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"sort"
	"strconv"
	"sync"
	"testing"
)

// sortCase is one random SORT: a list of elements, the values of its BY and GET keys, and
// options. ref computes what it must reply with a plain stable sort.
type sortCase struct {
	elems   []string
	weights map[string]string // w_<elem>; absent: no key
	objs    map[string]string // o_<elem>
	alpha   bool
	desc    bool
	by      bool
	limit   bool
	offset  int64
	count   int64
	gets    []string // "#" or "o_*"
}

func randomSortCase(r *rand.Rand) *sortCase {
	sc := &sortCase{weights: map[string]string{}, objs: map[string]string{},
		alpha: r.IntN(2) == 0, desc: r.IntN(2) == 0, by: r.IntN(3) == 0, limit: r.IntN(2) == 0}
	n := r.IntN(40)
	for range n {
		sc.elems = append(sc.elems, randomSortValue(r, sc.alpha && !sc.by))
	}
	for _, el := range sc.elems {
		if r.IntN(4) > 0 {
			sc.weights[el] = randomSortValue(r, sc.alpha)
		}
		if r.IntN(4) > 0 {
			sc.objs[el] = fmt.Sprint("obj-", r.IntN(100))
		}
	}
	sc.offset, sc.count = int64(r.IntN(50)-5), int64(r.IntN(50)-5)
	for range r.IntN(3) {
		sc.gets = append(sc.gets, []string{"#", "o_*"}[r.IntN(2)])
	}
	return sc
}

// randomSortValue is a number in one of several spellings, or for ALPHA any short string, with
// repeats likely so that ties are exercised.
func randomSortValue(r *rand.Rand, alpha bool) string {
	if alpha && r.IntN(2) == 0 {
		b := make([]byte, r.IntN(4))
		for i := range b {
			b[i] = "aAb-Z0\xc3\xff"[r.IntN(8)]
		}
		return string(b)
	}
	switch r.IntN(4) {
	case 0:
		return strconv.Itoa(r.IntN(20) - 10)
	case 1:
		return strconv.FormatFloat(r.Float64()*20-10, 'g', 3, 64)
	case 2:
		return fmt.Sprintf("%de%d", r.IntN(10), r.IntN(5)-2)
	}
	return fmt.Sprintf("0%d", r.IntN(10)) // ties with the plain spelling
}

func (sc *sortCase) args(key string) []string {
	a := []string{"SORT", key}
	if sc.by {
		a = append(a, "BY", "w_*")
	}
	if sc.limit {
		a = append(a, "LIMIT", fmt.Sprint(sc.offset), fmt.Sprint(sc.count))
	}
	for _, g := range sc.gets {
		a = append(a, "GET", g)
	}
	if sc.desc {
		a = append(a, "DESC")
	}
	if sc.alpha {
		a = append(a, "ALPHA")
	}
	return a
}

// ref is the reference: a stable sort by (weight, element) with missing BY values at 0 or
// first, then LIMIT as a slice, then GET as map lookups.
func (sc *sortCase) ref() []byte {
	els := append([]string(nil), sc.elems...)
	weight := func(el string) (string, bool) {
		if !sc.by {
			return el, true
		}
		w, ok := sc.weights[el]
		return w, ok
	}
	less := func(a, b string) int {
		wa, oka := weight(a)
		wb, okb := weight(b)
		if sc.alpha {
			if !oka || !okb {
				return btoi(oka) - btoi(okb) // a missing value sorts first
			}
			return bytes.Compare([]byte(wa), []byte(wb))
		}
		fa, fb := num(wa, oka), num(wb, okb)
		switch {
		case fa < fb:
			return -1
		case fa > fb:
			return 1
		}
		return bytes.Compare([]byte(a), []byte(b))
	}
	sort.SliceStable(els, func(i, j int) bool {
		c := less(els[i], els[j])
		if sc.desc {
			c = -c
		}
		return c < 0
	})
	if sc.limit {
		start := min(max(sc.offset, 0), int64(len(els)))
		end := int64(len(els))
		if sc.count >= 0 {
			end = min(start+sc.count, end)
		}
		els = els[start:end]
	}
	var out []byte
	out = respArrayHead(out, len(els)*max(len(sc.gets), 1))
	for _, el := range els {
		if len(sc.gets) == 0 {
			out = respBulk(out, el)
		}
		for _, g := range sc.gets {
			v, ok := el, true
			if g != "#" {
				v, ok = sc.objs[el]
			}
			if ok {
				out = respBulk(out, v)
			} else {
				out = append(out, "$-1\r\n"...)
			}
		}
	}
	return out
}

// respArrayHead and respBulk spell out RESP2 for the expected replies, apart from net/resp's
// encoders, which make the server's replies.
func respArrayHead(b []byte, n int) []byte { return fmt.Appendf(b, "*%d\r\n", n) }

func respBulk(b []byte, s string) []byte { return fmt.Appendf(b, "$%d\r\n%s\r\n", len(s), s) }

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

func num(s string, ok bool) float64 {
	if !ok {
		return 0
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		panic("BUG: generated weight " + s)
	}
	return f
}

// SORT of random lists, with every option, replies what a stable sort over a Go slice gives.
func TestSortMatchesReference(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	e := newTestEngine()
	tc := newTestConn(t, e)
	for i := range 500 {
		sc := randomSortCase(r)
		tc.do("FLUSHALL")
		if len(sc.elems) > 0 {
			tc.do(append([]string{"RPUSH", "src"}, sc.elems...)...)
		}
		for el, w := range sc.weights {
			tc.do("SET", "w_"+el, w)
		}
		for el, o := range sc.objs {
			tc.do("SET", "o_"+el, o)
		}
		args := sc.args("src")
		want := string(sc.ref())
		if got := tc.do(args...); got != want {
			t.Fatalf("case %d: %q\n got %q\nwant %q", i, args, got, want)
		}
		// STORE stores the same elements as a list (a missing GET value as "").
		stored := tc.do(append(args, "STORE", "dst")...)
		elems := splitArray(t, want)
		if stored != fmt.Sprintf(":%d\r\n", len(elems)) {
			t.Fatalf("case %d: STORE replied %q for %d elements", i, stored, len(elems))
		}
		if got := tc.do("LRANGE", "dst", "0", "-1"); got != string(asStored(elems)) {
			t.Fatalf("case %d: stored %q, want %q", i, got, asStored(elems))
		}
	}
}

// splitArray returns the elements of an array reply.
func splitArray(t *testing.T, raw string) []string {
	t.Helper()
	i := bytes.IndexByte([]byte(raw), '\n')
	return splitReplies(t, []byte(raw[i+1:]))
}

// asStored is the LRANGE reply of a list holding elems, nulls stored as empty strings.
func asStored(elems []string) []byte {
	if len(elems) == 0 {
		return []byte("*0\r\n")
	}
	out := respArrayHead(nil, len(elems))
	for _, el := range elems {
		if el == "$-1\r\n" {
			el = "$0\r\n\r\n"
		}
		out = append(out, el...)
	}
	return out
}

// Sets and sorted sets sort the same as a list of their members (members are unique, so the
// order they load in cannot show).
func TestSortSetsMatchReference(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	tc := newTestConn(t, newTestEngine())
	for i := range 300 {
		sc := randomSortCase(r)
		sc.by = false
		seen := map[string]bool{}
		var uniq []string
		for _, el := range sc.elems {
			if !seen[el] {
				seen[el] = true
				uniq = append(uniq, el)
			}
		}
		sc.elems = uniq
		tc.do("FLUSHALL")
		for j, el := range sc.elems {
			tc.do("SADD", "s", el)
			tc.do("ZADD", "z", strconv.Itoa(len(sc.elems)-j), el)
		}
		for el, o := range sc.objs {
			tc.do("SET", "o_"+el, o)
		}
		want := string(sc.ref())
		for _, key := range []string{"s", "z"} {
			if got := tc.do(sc.args(key)...); got != want {
				t.Fatalf("case %d: %q\n got %q\nwant %q", i, sc.args(key), got, want)
			}
		}
	}
}

// BY nosort on a large sorted set walks its ranks, from either end, for LIMIT.
func TestSortZSetNosortRanks(t *testing.T) {
	tc := newTestConn(t, newTestEngine())
	const n = 300 // past zset-max-listpack-entries: the large encoding
	for i := range n {
		tc.do("ZADD", "z", strconv.Itoa(i), fmt.Sprintf("m%03d", i))
	}
	f := func(offset, count int, desc bool) {
		t.Helper()
		args := []string{"SORT", "z", "BY", "nosort", "LIMIT", strconv.Itoa(offset), strconv.Itoa(count)}
		var want []string
		for k := range count {
			rank := offset + k
			if rank >= n {
				break
			}
			if desc {
				rank = n - 1 - rank
			}
			want = append(want, fmt.Sprintf("m%03d", rank))
		}
		if desc {
			args = append(args, "DESC")
		}
		out := respArrayHead(nil, len(want))
		for _, w := range want {
			out = respBulk(out, w)
		}
		if got := tc.do(args...); got != string(out) {
			t.Errorf("%q: %q, want %q", args, got, out)
		}
	}
	f(0, 5, false)
	f(150, 3, false)
	f(150, 3, true)
	f(297, 10, false)
	f(297, 10, true)
	f(300, 1, true)
}

// A weight is read as glibc's strtod reads it in SORT (cases checked against redis-server).
func TestSortWeight(t *testing.T) {
	f := func(in string, want float64, ok bool) {
		t.Helper()
		got, gotOK := sortWeight([]byte(in))
		if gotOK != ok || (ok && got != want) {
			t.Errorf("sortWeight(%q) = %v, %v; want %v, %v", in, got, gotOK, want, ok)
		}
	}
	f("", 0, true)
	f("\x00x", 0, true)
	f("3\x00junk", 3, true)
	f(" \t5", 5, true)
	f("0x10", 16, true)
	f("-inf", -1/zero(), true)
	f("infinity", 1/zero(), true)
	f("0x1p-1070", 0x1p-1070, true)
	f("0x1.8p-1070", 0x1.8p-1070, true)
	f("2.2250738585072014e-308", 2.2250738585072014e-308, true)
	f("   ", 0, false)
	f("1 ", 0, false)
	f("nan", 0, false)
	f("1e400", 0, false)
	f("1e-400", 0, false)
	f("1e-310", 0, false)
	f("4.9406564584124654e-324", 0, false)
	f("0x1.00000000000001p-1070", 0, false)
	f("0x", 0, false)
	f("1_000", 0, false)
}

func zero() float64 { return 0 }

// SORT ... STORE creating a list wakes a client blocked on it, whether the destination shares
// the source's shard, is on another, or the SORT holds every shard for its patterns.
func TestSortStoreWakesBlockedPop(t *testing.T) {
	e := newTestEngine()
	src, same := keyPair(e, "sort", true)
	_, other := keyPair(e, "sort", false)
	cs := conns(t, e, 2)
	cs[1].do("RPUSH", src, "3", "1", "2")
	cs[1].do("MSET", "w_1", "9", "w_2", "8", "w_3", "7")
	for _, tcase := range []struct {
		dst  string
		opts []string
		want string
	}{
		{same, nil, "1"},
		{other, []string{"DESC"}, "3"},
		{other, []string{"BY", "w_*"}, "3"},
	} {
		ch := blockedDo(t, cs[0], "BLPOP", tcase.dst, "0")
		args := append(append([]string{"SORT", src}, tcase.opts...), "STORE", tcase.dst)
		if got := cs[1].do(args...); got != ":3\r\n" {
			t.Fatalf("%q: %q", args, got)
		}
		want := fmt.Sprintf("*2\r\n$%d\r\n%s\r\n$1\r\n%s\r\n", len(tcase.dst), tcase.dst, tcase.want)
		if got := recv(t, ch); got != want {
			t.Errorf("%q: the waiter got %q, want %q", args, got, want)
		}
		if got := cs[1].do("LLEN", tcase.dst); got != ":2\r\n" {
			t.Errorf("%q: %q left after the pop", args, got)
		}
		cs[1].do("DEL", tcase.dst)
	}
}

// A SORT whose patterns read keys on other shards holds them: under -race, writers to those
// keys on other connections never overlap its reads, and it sees each MSET whole. The source is
// on a shard none of the pattern keys is on, so its own token orders nothing.
func TestSortPatternsSeeWholeWrites(t *testing.T) {
	e := newTestEngine()
	keys := []string{"w_1", "w_2", "w_3", "o_1", "o_3"}
	src := sortKeyAwayFrom(e, keys)
	cs := conns(t, e, 3)
	cs[0].do("RPUSH", src, "1", "2", "3")
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for w := 1; w <= 2; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				mset := []string{"MSET"}
				for _, k := range keys {
					mset = append(mset, k, strconv.Itoa(i*10+w))
				}
				cs[w].send(encodeCommand(mset))
			}
		}()
	}
	for range 300 {
		got := splitArray(t, cs[0].do("SORT", src, "BY", "w_*", "GET", "o_*", "GET", "w_*"))
		if len(got) != 6 {
			t.Fatalf("SORT replied %q", got)
		}
		for _, g := range got {
			if g != got[0] && g != "$-1\r\n" {
				t.Fatalf("SORT saw a partial MSET: %q", got)
			}
		}
	}
	close(stop)
	wg.Wait()
}

// sortKeyAwayFrom returns a key on a shard that none of keys is on.
func sortKeyAwayFrom(e *Engine, keys []string) string {
	used := map[int32]bool{}
	for _, k := range keys {
		used[e.shardOf([]byte(k))] = true
	}
	for i := 0; ; i++ {
		if k := fmt.Sprint("src", i); !used[e.shardOf([]byte(k))] {
			return k
		}
	}
}
