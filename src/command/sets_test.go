package command

import (
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// setFixtures fills one set of each encoding and returns their members by key.
func setFixtures(tc *testConn) map[string][]string {
	out := map[string][]string{}
	add := func(key string, ms []string) {
		tc.do(append([]string{"SADD", key}, ms...)...)
		out[key] = ms
	}
	var ints, strs, mixed []string
	for i := range 50 {
		ints = append(ints, strconv.Itoa(i*3-20))
		strs = append(strs, fmt.Sprint("str", i))
	}
	for i := range 3000 {
		mixed = append(mixed, strconv.Itoa(i), fmt.Sprint("m", i), strconv.Itoa(-i-1))
	}
	add("intset", ints)
	add("small", strs)
	add("large", mixed)
	return out
}

func memberSet(ms []string) map[string]bool {
	out := map[string]bool{}
	for _, m := range ms {
		out[m] = true
	}
	return out
}

// SRANDMEMBER's replies, which no transcript can fix, checked by their properties: members
// only, distinct for a positive count, the asked length, and every member reachable.
func TestSrandmemberProperties(t *testing.T) {
	tc := newTestConn(t, newTestEngine())
	for key, ms := range setFixtures(tc) {
		in := memberSet(ms)
		for _, n := range []int{1, 2, len(ms) / 3, len(ms)/3 + 1, len(ms) - 1, len(ms), len(ms) + 5, -1, -7, -2 * len(ms)} {
			got := replyStrings(t, tc.do("SRANDMEMBER", key, strconv.Itoa(n)))
			want := min(n, len(ms))
			if n < 0 {
				want = -n
			}
			if len(got) != want {
				t.Fatalf("%s: SRANDMEMBER %d returned %d members", key, n, len(got))
			}
			seen := map[string]bool{}
			for _, m := range got {
				if !in[m] || (n > 0 && seen[m]) {
					t.Fatalf("%s: SRANDMEMBER %d returned %q (member %v, repeated %v)", key, n, m, in[m], seen[m])
				}
				seen[m] = true
			}
		}
		hits := map[string]bool{}
		for range 30 * len(ms) {
			m := replyText(t, tc.do("SRANDMEMBER", key))
			if !in[m] {
				t.Fatalf("%s: SRANDMEMBER returned %q", key, m)
			}
			hits[m] = true
		}
		if len(hits) != len(ms) {
			t.Fatalf("%s: SRANDMEMBER reached %d of %d members", key, len(hits), len(ms))
		}
	}
}

// SPOP removes exactly what it returns, by every strategy, and deletes the emptied key.
func TestSpopProperties(t *testing.T) {
	for _, frac := range []int{0, 5, 50, 90, 99, 100} {
		tc := newTestConn(t, newTestEngine())
		for key, ms := range setFixtures(tc) {
			in := memberSet(ms)
			popped := map[string]bool{}
			take := func(got []string) {
				for _, m := range got {
					if !in[m] || popped[m] {
						t.Fatalf("%s: SPOP returned %q (member %v, again %v)", key, m, in[m], popped[m])
					}
					popped[m] = true
				}
			}
			n := len(ms) * frac / 100
			if n > 0 {
				take(replyStrings(t, tc.do("SPOP", key, strconv.Itoa(n))))
			}
			if len(popped) != n {
				t.Fatalf("%s: SPOP %d returned %d members", key, n, len(popped))
			}
			rest := replyStrings(t, tc.do("SMEMBERS", key))
			if len(rest) != len(ms)-n {
				t.Fatalf("%s: %d members left after SPOP %d of %d", key, len(rest), n, len(ms))
			}
			for _, m := range rest {
				if popped[m] {
					t.Fatalf("%s: %q popped and still a member", key, m)
				}
			}
			for len(popped) < len(ms) {
				take([]string{replyText(t, tc.do("SPOP", key))})
			}
			if got := tc.do("EXISTS", key); got != ":0\r\n" {
				t.Fatalf("%s: emptied by SPOP, EXISTS = %q", key, got)
			}
		}
	}
}

// SSCAN over a large set returns every member present for the whole scan, however the set
// grows and shrinks between calls, and MATCH filters what it returns.
func TestSscanGuarantee(t *testing.T) {
	tc := newTestConn(t, newTestEngine())
	stable := setFixtures(tc)["large"]
	extra, calls := 0, 0
	seen := map[string]bool{}
	cursor := "0"
	for {
		v := replyAny(t, tc.do("SSCAN", "large", cursor, "COUNT", "25")).([]any)
		cursor = v[0].(string)
		for _, m := range v[1].([]any) {
			seen[m.(string)] = true
		}
		if cursor == "0" {
			break
		}
		if calls++; calls%40 < 20 {
			for range 100 {
				tc.do("SADD", "large", fmt.Sprint("extra", extra))
				extra++
			}
		} else {
			for range 100 {
				extra--
				tc.do("SREM", "large", fmt.Sprint("extra", extra))
			}
		}
	}
	for _, m := range stable {
		if !seen[m] {
			t.Fatalf("member %q present for the whole scan was not returned", m)
		}
	}
	matched := 0
	cursor = "0"
	for {
		v := replyAny(t, tc.do("SSCAN", "large", cursor, "MATCH", "m1*")).([]any)
		cursor = v[0].(string)
		for _, m := range v[1].([]any) {
			if !strings.HasPrefix(m.(string), "m1") {
				t.Fatalf("MATCH m1* returned %q", m)
			}
			matched++
		}
		if cursor == "0" {
			break
		}
	}
	if matched < 1111 {
		t.Fatalf("MATCH m1* returned %d members, want at least 1111", matched)
	}
}

// The encoding thresholds come from the configuration when a command runs.
func TestSetsConfiguredLimits(t *testing.T) {
	e := newTestEngine()
	st := DefaultSettings()
	st.SetMaxIntsetEntries = 3
	e.SetSettings(st)
	tc := newTestConn(t, e)
	f := func(want string, args ...string) {
		t.Helper()
		if got := tc.do(args...); got != want {
			t.Fatalf("%v = %q, want %q", args, got, want)
		}
	}
	f(":3\r\n", "SADD", "s", "1", "2", "3")
	f("$6\r\nintset\r\n", "OBJECT", "ENCODING", "s")
	f(":1\r\n", "SADD", "s", "4")
	f("$9\r\nhashtable\r\n", "OBJECT", "ENCODING", "s")
	f(":4\r\n", "SUNIONSTORE", "u", "s")
	f("$9\r\nhashtable\r\n", "OBJECT", "ENCODING", "u")
	f(":4\r\n", "SDIFFSTORE", "d", "s", "nokey", "x")
	f(":1\r\n", "SREM", "d", "4")
	f("$9\r\nhashtable\r\n", "OBJECT", "ENCODING", "d") // a set never converts back
}

// A million members cost less than in Redis by INFO's used_memory (Redis 7.0.15 measured on
// this machine: see ds/set's redisBytesPer constants).
func TestSetsUsedMemoryBelowRedis(t *testing.T) {
	if testing.Short() {
		t.Skip("stores a million members")
	}
	for _, c := range []struct {
		name  string
		gen   func(i int) string
		redis float64
	}{
		{"integers", func(i int) string { return strconv.Itoa(i) }, 48.4},
		{"16-byte strings", func(i int) string { return fmt.Sprintf("%016x", uint64(i)*0x9e3779b97f4a7c15) }, 72.4},
	} {
		tc := newTestConn(t, newTestEngine())
		before := usedMemory(t, tc)
		args := make([]string, 0, 1002)
		for i := 0; i < 1_000_000; i += 1000 {
			args = append(args[:0], "SADD", "key")
			for j := i; j < i+1000; j++ {
				args = append(args, c.gen(j))
			}
			tc.do(args...)
		}
		if got := tc.do("SCARD", "key"); got != ":1000000\r\n" {
			t.Fatalf("%s: SCARD %q", c.name, got)
		}
		per := float64(usedMemory(t, tc)-before) / 1e6
		t.Logf("%s: %.1f bytes per member (Redis %.1f)", c.name, per, c.redis)
		if per > c.redis {
			t.Errorf("%s: %.1f bytes per member, Redis uses %.1f", c.name, per, c.redis)
		}
	}
}

// usedMemory reads INFO's used_memory after a collection, so garbage is not counted.
func usedMemory(t *testing.T, tc *testConn) int64 {
	runtime.GC()
	runtime.GC()
	text := replyText(t, tc.do("INFO", "memory"))
	for _, line := range strings.Split(text, "\r\n") {
		if v, ok := strings.CutPrefix(line, "used_memory:"); ok {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Fatalf("no used_memory in %q", text)
	return 0
}
