package command

import (
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestLLMCacheConcurrent runs LLMCACHE.GET (shared reads: exact, semantic, with TAGS, on entries
// with TTLs) beside SET, DEL, INVALIDATE, FEEDBACK, STATS and DEL/CREATE of the keys from several
// clients at once (300 operations a client). Under -race it checks that shared lookups never
// overlap a write; in any build that every reply has its command's shape, and that a GET's hit is
// an entry of its namespace (every response holds its namespace's name).
func TestLLMCacheConcurrent(t *testing.T) {
	e := newTestEngine()
	const workers, ops, dim = 4, 300, 8
	for k := range 2 {
		tc := newTestConn(t, e)
		tc.do("LLMCACHE.CREATE", "lc"+strconv.Itoa(k), "DIM", strconv.Itoa(dim), "THRESHOLD", "0.5", "MAXENTRIES", "40")
	}
	var wg sync.WaitGroup
	errs := make(chan string, workers)
	for w := range workers {
		tc := newTestConn(t, e)
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(w), 22))
			for range ops {
				k := "lc" + strconv.Itoa(r.IntN(2))
				ns := "ns" + strconv.Itoa(r.IntN(3))
				prompt := "q" + strconv.Itoa(r.IntN(30))
				vec := fp32(randVec(r, dim))
				var args []string
				ok := func(s string) bool {
					return strings.HasPrefix(s, "-ERR no such LLMCACHE key") || strings.HasPrefix(s, ":")
				}
				switch op := r.IntN(20); {
				case op < 5:
					args = []string{"LLMCACHE.SET", k, "NS", ns, "PROMPT", prompt, "RESPONSE", "answer of " + ns, "VECTOR", "FP32", vec, "TOKENS", "1", "2"}
					if r.IntN(3) == 0 {
						args = append(args, "PXAT", strconv.FormatInt(time.Now().UnixMilli()+int64(r.IntN(30)), 10))
					}
					if r.IntN(2) == 0 {
						args = append(args, "TAGS", "1", "t")
					}
				case op < 14:
					args = []string{"LLMCACHE.GET", k, "NS", ns, "PROMPT", prompt}
					if r.IntN(2) == 0 {
						args = append(args, "VECTOR", "FP32", vec)
					}
					if r.IntN(4) == 0 {
						args = append(args, "TAGS", "1", "t")
					}
					ok = func(s string) bool {
						return strings.HasPrefix(s, "-ERR no such LLMCACHE key") || s == "$-1\r\n" ||
							strings.HasPrefix(s, "*5\r\n") && strings.Contains(s, "answer of "+ns+"\r\n")
					}
				case op == 14:
					args = []string{"LLMCACHE.DEL", k, strconv.Itoa(1 + r.IntN(100))}
				case op == 15:
					args = []string{"LLMCACHE.INVALIDATE", k, "NS", ns}
				case op == 16:
					args = []string{"LLMCACHE.FEEDBACK", k, strconv.Itoa(1 + r.IntN(100)), "BAD"}
				case op == 17:
					args = []string{"LLMCACHE.STATS", k}
					ok = func(s string) bool {
						return strings.HasPrefix(s, "-ERR no such LLMCACHE key") || strings.HasPrefix(s, "*48\r\n")
					}
				case op == 18:
					args = []string{"DEL", k}
				default:
					args = []string{"LLMCACHE.CREATE", k, "DIM", strconv.Itoa(dim), "THRESHOLD", "0.5", "MAXENTRIES", "40"}
					ok = func(s string) bool { return s == "+OK\r\n" || strings.HasPrefix(s, "-ERR LLMCACHE key already exists") }
				}
				if got := tc.do(args...); !ok(got) {
					errs <- strings.Join(args[:2], " ") + ": " + got
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

// TestLLMCacheGetBesideReader: LLMCACHE.GET is a shared read. It answers, exact hit and semantic
// lookup alike, while another reader holds its key's shard shared; a command taking the shard's
// token would wait for that reader to leave (docs/decisions.md, "Shared reads"), so lookups of
// one cache from several connections run at once instead of one after another.
func TestLLMCacheGetBesideReader(t *testing.T) {
	e := newTestEngine()
	tc := newTestConn(t, e)
	tc.do("LLMCACHE.CREATE", "c", "DIM", "4")
	vec := fp32([]float32{0, 1, 0, 0})
	tc.do("LLMCACHE.SET", "c", "NS", "n", "PROMPT", "How do I enable 2FA?", "RESPONSE", "r", "VECTOR", "FP32", vec)
	shard := []int32{e.shardOf([]byte("c"))}
	p, ok := e.Group.Share(shard)
	if !ok {
		t.Fatal("the shard's token is taken")
	}
	defer e.Group.Unshare(p, shard)
	done := make(chan string, 2)
	go func() {
		done <- tc.do("LLMCACHE.GET", "c", "NS", "n", "PROMPT", "how do i enable 2fa?")
		done <- tc.do("LLMCACHE.GET", "c", "NS", "n", "PROMPT", "how can I enable 2FA", "VECTOR", "FP32", vec)
	}()
	for _, want := range []string{"exact", "semantic"} {
		select {
		case got := <-done:
			if !strings.HasPrefix(got, "*5\r\n") || !strings.Contains(got, want) {
				t.Fatalf("LLMCACHE.GET (%s hit): %q", want, got)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("the %s LLMCACHE.GET waited for the shard's other reader: it took the token", want)
		}
	}
}
