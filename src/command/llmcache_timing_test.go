package command

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// BenchmarkLLMCacheGet: LLMCACHE.GET through the command layer (parse, route as a barrier, the
// shard's token, reply), exact hits and semantic lookups with a sent vector, on 10,000 entries
// of 128 dims. In-process (testConn), no socket.
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
			if out, _ := tc.send(req); len(out) < 10 {
				b.Fatal(string(out))
			}
		}
	})
	b.Run("semantic", func(b *testing.B) {
		req := encodeCommand([]string{"LLMCACHE.GET", "c", "NS", "n", "PROMPT", "question 42?", "VECTOR", "FP32", vecs[42]})
		b.ReportAllocs()
		for b.Loop() {
			if out, _ := tc.send(req); len(out) < 10 {
				b.Fatal(string(out))
			}
		}
	})
}
