package command

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// BenchmarkLLMCacheGet: LLMCACHE.GET through the command layer (parse, route as a barrier, the
// shard's token, reply), exact hits and semantic lookups with a sent vector, on 10,000 entries
// of 128 dims. In-process (testConn, replaying the request bytes: serveRaw), no socket. The
// exact hit allocates nothing (a shared read of the key's shard, the prompt normalized on the
// stack).
func BenchmarkLLMCacheGet(b *testing.B) {
	e := newTestEngine()
	tc := newTestConn(b, e)
	tc.do("LLMCACHE.CREATE", "c", "DIM", "128")
	r := rand.New(rand.NewPCG(1, 1))
	vec := func() string {
		v := make([]float32, 128)
		for i := range v {
			v[i] = float32(r.NormFloat64())
		}
		return fp32(v)
	}
	vecs := make([]string, 10000)
	for i := range vecs {
		vecs[i] = vec()
		tc.do("LLMCACHE.SET", "c", "NS", "n", "PROMPT", fmt.Sprint("question ", i), "RESPONSE", "answer", "VECTOR", "FP32", vecs[i], "TOKENS", "5", "50")
	}
	b.Run("exact", func(b *testing.B) {
		req := encodeCommand([]string{"LLMCACHE.GET", "c", "NS", "n", "PROMPT", "question 42"})
		b.ReportAllocs()
		for b.Loop() {
			if err := tc.serveRaw(req); err != nil || tc.stream.out.Len() < 10 {
				b.Fatal(err, tc.stream.out.String())
			}
			tc.stream.out.Reset()
		}
	})
	b.Run("semantic", func(b *testing.B) {
		req := encodeCommand([]string{"LLMCACHE.GET", "c", "NS", "n", "PROMPT", "question 42?", "VECTOR", "FP32", vecs[42]})
		b.ReportAllocs()
		for b.Loop() {
			if err := tc.serveRaw(req); err != nil || tc.stream.out.Len() < 10 {
				b.Fatal(err, tc.stream.out.String())
			}
			tc.stream.out.Reset()
		}
	})
}

// TestLLMCacheExactHitAllocatesNothing: a batch of LLMCACHE.GETs answered by exact hits (the
// prompt in another case and spacing) allocates nothing once warm, in RESP2.
func TestLLMCacheExactHitAllocatesNothing(t *testing.T) {
	setup := [][]string{{"LLMCACHE.CREATE", "c", "DIM", "4"}}
	var cmds [][]string
	for i := range 8 {
		setup = append(setup, []string{"LLMCACHE.SET", "c", "NS", "gpt", "PROMPT", fmt.Sprint("What is ", i, "+1?"),
			"RESPONSE", fmt.Sprint(i + 1), "VECTOR", "FP32", fp32([]float32{1, float32(i), 0, 0}), "TOKENS", "5", "1"})
		cmds = append(cmds, []string{"LLMCACHE.GET", "c", "NS", "gpt", "PROMPT", fmt.Sprint("  what IS ", i, "+1? ")})
	}
	h := newBatchConn(t, setup, cmds...)
	out := hotReplies(t, "LLMCACHE.GET exact", h)
	if n := strings.Count(string(out), "$5\r\nexact\r\n"); n != hotBatch {
		t.Fatalf("%d exact hits in a batch of %d: %.300q", n, hotBatch, out)
	}
	if !zsetRace {
		checkNoAllocs(t, "LLMCACHE.GET exact", h)
	}
}
