package command

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
)

// TestSetsMatchRedisRandomized runs random sequences of the deterministic set commands on
// HotKV and on a real redis-server and compares every reply (arrays as multisets, since a
// hashtable's order is Redis's own) and every key's OBJECT ENCODING, so the encoding
// conversions (intset limit, non-integers, STORE results) track Redis's.
func TestSetsMatchRedisRandomized(t *testing.T) {
	rs := newRedisSession(t)
	tc := newTestConn(t, newTestEngine())
	r := rand.New(rand.NewPCG(11, 12))
	keys := []string{"a", "b", "c", "d", "str"}
	rs.do("SET", "str", "x")
	tc.do("SET", "str", "x")
	member := func() string {
		switch r.IntN(10) {
		case 0:
			return []string{"x", "y", "-1", "01", "", "4294967296", "-9223372036854775808"}[r.IntN(7)]
		case 1:
			if r.IntN(3) == 0 { // past set-max-listpack-value: kept out of line in a small set
				return fmt.Sprint("long", r.IntN(40), strings.Repeat("L", 60+r.IntN(200)))
			}
			return fmt.Sprint("s", r.IntN(40))
		default:
			return strconv.Itoa(r.IntN(700))
		}
	}
	key := func() string { return keys[r.IntN(len(keys))] }
	for step := range 3000 {
		var cmd []string
		switch op := r.IntN(16); op {
		case 0, 1, 2:
			cmd = []string{"SADD", key()}
			for range 1 + r.IntN(1+r.IntN(300)) {
				cmd = append(cmd, member())
			}
		case 3:
			cmd = []string{"SREM", key(), member(), member()}
		case 4:
			cmd = []string{"SMOVE", key(), key(), member()}
		case 5:
			cmd = []string{"SISMEMBER", key(), member()}
		case 6:
			cmd = []string{"SMISMEMBER", key(), member(), member()}
		case 7:
			cmd = []string{"SCARD", key()}
		case 8:
			cmd = []string{"SMEMBERS", key()}
		case 9:
			cmd = []string{[]string{"SINTER", "SUNION", "SDIFF"}[r.IntN(3)], key(), key(), key()}
		case 10:
			cmd = []string{[]string{"SINTERSTORE", "SUNIONSTORE", "SDIFFSTORE"}[r.IntN(3)], key(), key(), key()}
		case 11:
			cmd = []string{"SINTERCARD", "2", key(), key(), "LIMIT", strconv.Itoa(r.IntN(5))}
		case 12:
			cmd = []string{"SPOP", key(), "100000"}
		case 13:
			cmd = []string{"SRANDMEMBER", key(), "100000"}
		case 14:
			cmd = []string{"SSCAN", key(), "0", "MATCH", "*1*", "COUNT", "100000"}
		default:
			cmd = []string{"OBJECT", "ENCODING", key()}
		}
		want, got := rs.do(cmd...), tc.do(cmd...)
		if sortedElems(t, got, 1) != sortedElems(t, want, 1) && !sameScan(t, got, want) {
			t.Fatalf("step %d: %q\n got: %q\nwant: %q", step, cmd, got, want)
		}
		if step%100 == 0 {
			for _, k := range keys {
				if got, want := tc.do("OBJECT", "ENCODING", k), rs.do("OBJECT", "ENCODING", k); got != want {
					t.Fatalf("step %d: encoding of %s is %q, Redis %q", step, k, got, want)
				}
			}
		}
	}
}

// sameScan compares two complete SSCAN replies (cursor 0) by their members.
func sameScan(t *testing.T, got, want string) bool {
	g, ok1 := replyAny(t, got).([]any)
	w, ok2 := replyAny(t, want).([]any)
	if !ok1 || !ok2 || len(g) != 2 || len(w) != 2 || g[0] != "0" || w[0] != "0" {
		return false
	}
	gm, wm := map[any]int{}, map[any]int{}
	for _, m := range g[1].([]any) {
		gm[m]++
	}
	for _, m := range w[1].([]any) {
		wm[m]++
	}
	return fmt.Sprint(gm) == fmt.Sprint(wm)
}
