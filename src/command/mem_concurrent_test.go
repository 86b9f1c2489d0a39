package command

import (
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// TestMemConcurrent runs MEM.* writes (ADD with TTLs and DEDUP, UPDATE, SUPERSEDE, FORGET, DEL,
// windows), shared reads (SEARCH, GET, INFO, WINDOW.GET) and DEL/MEM.CREATE of the keys from
// several clients at once (bounded: 300 operations a client). Under -race it checks that shared
// searches never overlap a write; in any build that every reply has its command's shape.
func TestMemConcurrent(t *testing.T) {
	e := newTestEngine()
	const workers, ops, dim = 4, 300, 8
	var wg sync.WaitGroup
	errs := make(chan string, workers)
	for w := range workers {
		tc := newTestConn(t, e)
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(w), 12))
			key := func() string { return "mk" + strconv.Itoa(r.IntN(2)) }
			vec := func() string { return fp32(randVec(r, dim)) }
			id := func() string { return strconv.Itoa(1 + r.IntN(60)) }
			user := func() string { return "u" + strconv.Itoa(r.IntN(3)) }
			for range ops {
				k := key()
				var args []string
				ok := func(s string) bool { return true }
				isErrOr := func(prefixes ...string) func(string) bool {
					return func(s string) bool {
						if strings.HasPrefix(s, "-ERR no such agent memory") || strings.HasPrefix(s, "-ERR no such memory") ||
							strings.HasPrefix(s, "-ERR memory is already superseded") || strings.HasPrefix(s, "-ERR a memory cannot") {
							return true
						}
						for _, p := range prefixes {
							if strings.HasPrefix(s, p) {
								return true
							}
						}
						return false
					}
				}
				switch op := r.IntN(20); {
				case op < 6:
					args = []string{"MEM.ADD", k, "TEXT", "x", "VECTOR", "FP32", vec(), "USER", user()}
					if r.IntN(3) == 0 {
						args = append(args, "TTL", strconv.Itoa(1+r.IntN(20)))
					}
					if r.IntN(3) == 0 {
						args = append(args, "DEDUP", "0.9")
					}
					ok = isErrOr("*2\r\n")
				case op < 10:
					args = []string{"MEM.SEARCH", k, "VECTOR", "FP32", vec(), "K", "5"}
					if r.IntN(2) == 0 {
						args = append(args, "USER", user(), "WEIGHTS", "1", "0.5", "0.1", "HALFLIFE", "1000")
					}
					ok = isErrOr("*")
				case op == 10:
					args, ok = []string{"MEM.GET", k, id()}, isErrOr("*", "$-1")
				case op == 11:
					args, ok = []string{"MEM.UPDATE", k, id(), "IMPORTANCE", "0.5"}, isErrOr(":")
				case op == 12:
					args, ok = []string{"MEM.SUPERSEDE", k, id(), id()}, isErrOr("+OK")
				case op == 13:
					args, ok = []string{"MEM.FORGET", k, "USER", user(), "MAXIMPORTANCE", "0.1"}, isErrOr(":")
				case op == 14:
					args, ok = []string{"MEM.WINDOW.APPEND", k, "s", "user", "hello", "TOKENS", "3"}, isErrOr("*2\r\n")
				case op == 15:
					args, ok = []string{"MEM.WINDOW.GET", k, "s"}, isErrOr("*")
				case op == 16:
					args, ok = []string{"MEM.INFO", k}, isErrOr("*20\r\n")
				case op == 17:
					args, ok = []string{"MEM.DEL", k, id()}, isErrOr(":")
				case op == 18:
					args, ok = []string{"DEL", k}, isErrOr(":")
				default:
					args, ok = []string{"MEM.CREATE", k, "DIM", strconv.Itoa(dim)}, isErrOr("+OK", "-ERR agent memory already exists")
				}
				if got := tc.do(args...); !ok(got) {
					errs <- args[0] + ": " + got
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for msg := range errs {
		t.Error(msg)
	}
}
