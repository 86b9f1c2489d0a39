package command

import (
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

func randVec(r *rand.Rand, dim int) []float32 {
	v := make([]float32, dim)
	for i := range v {
		v[i] = float32(r.Float64()*2 - 1)
	}
	return v
}

// TestVsetConcurrent runs VADD, VSIM (graph and TRUTH, with FILTER), VSIM.SEARCH (TAGS),
// VSIM.SET with element TTLs, VREM, VSETATTR, DEL and PEXPIRE from several clients on two keys at
// once, and the active expiry cycle beside them (bounded: 400 operations a client).
// Under -race it checks that shared searches never overlap a write; in any build that every
// reply has the shape its command gives and that VCARD and VRANGE agree at the end.
func TestVsetConcurrent(t *testing.T) {
	e := newTestEngine()
	const workers, ops, dim = 4, 400, 8
	var wg sync.WaitGroup
	errs := make(chan string, workers)
	for w := range workers {
		tc := newTestConn(t, e)
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(w), 11))
			vec := func() []string {
				out := make([]string, dim)
				for i := range out {
					out[i] = strconv.FormatFloat(r.Float64()*2-1, 'f', 3, 64)
				}
				return out
			}
			key := func() string { return "vk" + strconv.Itoa(r.IntN(2)) }
			elem := func() string { return "e" + strconv.Itoa(r.IntN(50)) }
			for range ops {
				var reply string
				var want byte
				switch op := r.IntN(20); {
				case op < 7:
					args := append([]string{"VADD", key(), "VALUES", strconv.Itoa(dim)}, vec()...)
					args = append(args, elem(), "SETATTR", `{"n": `+strconv.Itoa(r.IntN(10))+`}`)
					reply, want = tc.do(args...), ':'
				case op < 12:
					args := append([]string{"VSIM", key(), "VALUES", strconv.Itoa(dim)}, vec()...)
					args = append(args, "COUNT", "5", "WITHSCORES")
					if r.IntN(2) == 0 {
						args = append(args, "FILTER", ".n > 3")
					}
					if r.IntN(3) == 0 {
						args = append(args, "TRUTH")
					}
					reply, want = tc.do(args...), '*'
				case op < 13:
					args := append([]string{"VSIM.SEARCH", key(), "VALUES", strconv.Itoa(dim)}, vec()...)
					reply, want = tc.do(append(args, "K", "3", "TAGS", "ANY", "1", "t")...), '*'
					if strings.HasPrefix(reply, "-ERR no such index") {
						reply = "*"
					}
				case op < 14:
					k := key()
					tc.do("VSIM.CREATEINDEX", k, "DIM", strconv.Itoa(dim)) // refused when k exists
					args := []string{"VSIM.SET", k, "TTL", strconv.Itoa(1 + r.IntN(3)), "TAGS", "1", "t", "ITEMS", "1", elem(), fp32(randVec(r, dim))}
					reply, want = tc.do(args...), ':'
					if strings.HasPrefix(reply, "-ERR no such index") || strings.HasPrefix(reply, "-WRONGTYPE") {
						reply = ":"
					}
				case op < 16:
					reply, want = tc.do("VREM", key(), elem()), ':'
				case op < 17:
					reply, want = tc.do("VSETATTR", key(), elem(), `{"n": 5}`), ':'
				case op < 18:
					reply, want = tc.do("DEL", key()), ':'
				default:
					reply, want = tc.do("PEXPIRE", key(), strconv.Itoa(1+r.IntN(5))), ':'
				}
				if reply == "" || reply[0] != want {
					errs <- reply
					return
				}
			}
		}()
	}
	wg.Add(1)
	go func() { // the active cycle beside the clients
		defer wg.Done()
		for range 100 {
			e.ActiveExpire(time.Millisecond)
			time.Sleep(time.Millisecond)
		}
	}()
	wg.Wait()
	close(errs)
	for bad := range errs {
		t.Fatalf("unexpected reply %q", bad)
	}
	tc := newTestConn(t, e)
	for _, k := range []string{"vk0", "vk1"} {
		card := tc.do("VCARD", k)
		n, _ := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(card, ":")))
		rng := tc.do("VRANGE", k, "-", "+")
		if !strings.HasPrefix(rng, "*"+strconv.Itoa(n)+"\r\n") {
			t.Fatalf("%s: VCARD %q but VRANGE %q", k, card, rng)
		}
	}
}
