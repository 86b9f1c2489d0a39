package command

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
)

// TestStreamsMatchRedisRandomized runs random XADD (explicit and ms-* IDs, MAXLEN/MINID trims
// with = and ~ and LIMIT), XDEL, XTRIM, XRANGE, XREVRANGE and XINFO STREAM on HotKV and on a
// real redis-server, comparing every reply byte for byte. XINFO's radix-tree-keys and the
// replies of `~` trims show that blocks split where Redis's listpacks do: values of every
// listpack size class (small and large integers, short and long strings) are added.
func TestStreamsMatchRedisRandomized(t *testing.T) {
	rs := newRedisSession(t)
	tc := newTestConn(t, newTestEngine())
	r := rand.New(rand.NewPCG(21, 22))
	keys := []string{"s1", "s2"}
	lastMs := map[string]int{}
	value := func(k string) string {
		n := r.IntN(40)
		if k == "s1" && n == 3 { // s1 fills nodes to stream-node-max-entries, s2 to the bytes
			n = 4
		}
		switch n {
		case 0:
			return strconv.Itoa(r.IntN(200) - 100)
		case 1:
			return strconv.Itoa(r.IntN(1 << 30))
		case 2:
			return strings.Repeat("v", r.IntN(200))
		case 3:
			return strings.Repeat("w", 4000+r.IntN(200))
		default:
			return fmt.Sprint("val", r.IntN(1000))
		}
	}
	id := func(k string) string {
		ms := lastMs[k] + r.IntN(3)
		if r.IntN(20) == 0 {
			ms = r.IntN(lastMs[k] + 1)
		}
		if r.IntN(3) == 0 {
			return strconv.Itoa(ms) + "-*"
		}
		return strconv.Itoa(ms) + "-" + strconv.Itoa(r.IntN(3))
	}
	trim := func(k string) []string {
		op := []string{"=", "~", ""}[r.IntN(3)]
		var out []string
		if r.IntN(2) == 0 {
			out = []string{"MAXLEN"}
			if op != "" {
				out = append(out, op)
			}
			out = append(out, strconv.Itoa(r.IntN(400)))
		} else {
			out = []string{"MINID"}
			if op != "" {
				out = append(out, op)
			}
			out = append(out, strconv.Itoa(r.IntN(lastMs[k]+2)))
		}
		if op == "~" && r.IntN(2) == 0 {
			out = append(out, "LIMIT", strconv.Itoa(r.IntN(300)))
		}
		return out
	}
	for step := range 4000 {
		k := keys[r.IntN(len(keys))]
		var cmd []string
		switch op := r.IntN(20); {
		case op < 12:
			cmd = []string{"XADD", k}
			if r.IntN(30) == 0 {
				cmd = append(cmd, trim(k)...)
			}
			cmd = append(cmd, id(k))
			fields := []string{"a", "b", "c"}
			if r.IntN(6) == 0 {
				fields = []string{"x", strconv.Itoa(r.IntN(5))}
			}
			for _, f := range fields {
				cmd = append(cmd, f, value(k))
			}
		case op < 14:
			cmd = []string{"XDEL", k}
			for range 1 + r.IntN(3) {
				cmd = append(cmd, strconv.Itoa(r.IntN(lastMs[k]+1))+"-"+strconv.Itoa(r.IntN(3)))
			}
		case op < 15 && r.IntN(4) == 0:
			cmd = append([]string{"XTRIM", k}, trim(k)...)
		case op < 17:
			a, b := strconv.Itoa(r.IntN(lastMs[k]+1)), "+"
			if r.IntN(2) == 0 {
				b = "(" + strconv.Itoa(r.IntN(lastMs[k]+1))
			}
			cmd = []string{"XRANGE", k, a, b, "COUNT", strconv.Itoa(r.IntN(20))}
			if r.IntN(2) == 0 {
				cmd = []string{"XREVRANGE", k, b, a, "COUNT", strconv.Itoa(r.IntN(20))}
			}
		case op < 19:
			cmd = []string{"XINFO", "STREAM", k}
		default:
			cmd = []string{"XLEN", k}
		}
		want, got := rs.do(cmd...), tc.do(cmd...)
		if got != want {
			t.Fatalf("step %d: %q\n got: %q\nwant: %q", step, cmd, got, want)
		}
		if cmd[0] == "XADD" && strings.HasPrefix(want, "$") {
			ms, _, _ := strings.Cut(strings.Split(want, "\r\n")[1], "-")
			lastMs[k], _ = strconv.Atoi(ms)
		}
	}
}
