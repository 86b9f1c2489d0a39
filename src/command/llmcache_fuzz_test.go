package command

import (
	"strings"
	"testing"
)

// FuzzLLMCacheArgs drives LLMCACHE.* with argument lists built from the fuzzer's bytes (each byte
// picks a word: options, modes, guards, numbers, vectors of the right and wrong size, ids, keys),
// on a cache with vectors, one with the lexical embedder, a string and a missing key. Every reply
// must be one well-formed RESP reply (a panic fails the run too), and a hit in namespace a never
// answers with namespace b's response.
func FuzzLLMCacheArgs(f *testing.F) {
	f.Add([]byte{2, 0, 20, 1, 21, 3, 12, 13})
	f.Add([]byte{1, 0, 20, 1, 22, 2, 23, 3, 12, 13, 4, 8, 5})
	f.Add([]byte{0, 30, 6, 14, 7, 15, 8, 16, 9, 17})
	f.Add([]byte{4, 0, 20, 10, 18, 11, 19})
	e := newTestEngine()
	good, odd := fp32([]float32{1, 0, 0}), fp32([]float32{1, 0})
	words := []string{"NS", "PROMPT", "VECTOR", "FP32", "RESPONSE", "TOKENS", "MODE", "THRESHOLD", "EF",
		"TAGS", "TTL", "COST", "c", "l", good, odd, "exact", "semantic", "both", "0", "a", "b", "hi there",
		"1", "-1", "2", "0.5", "nan", "inf", "4097", "x", "BAD", "FILTER", ".x > 1", "OLDER", "ID", "PXAT",
		"DIM", "GUARD", "NUMBERS", "NEGATION", "NONE", "QUANT", "Q8", "BIN", "EMBEDDER", "lexical",
		"MAXENTRIES", "ATTR", `{"x":2}`, "9223372036854775807", "s", "nosuch", ""}
	cmds := []string{"LLMCACHE.CREATE", "LLMCACHE.SET", "LLMCACHE.GET", "LLMCACHE.DEL", "LLMCACHE.INVALIDATE",
		"LLMCACHE.FEEDBACK", "LLMCACHE.STATS"}
	f.Fuzz(func(t *testing.T, prog []byte) {
		if len(prog) == 0 || len(prog) > 24 {
			return
		}
		tc := newTestConn(t, e)
		tc.do("DEL", "c", "l", "s", "nosuch", "x", "a", "b")
		tc.do("LLMCACHE.CREATE", "c", "DIM", "3", "THRESHOLD", "0.5")
		tc.do("LLMCACHE.SET", "c", "NS", "a", "PROMPT", "hi there", "RESPONSE", "resp-a", "VECTOR", "FP32", good)
		tc.do("LLMCACHE.SET", "c", "NS", "b", "PROMPT", "hi there", "RESPONSE", "resp-b", "VECTOR", "FP32", good)
		tc.do("LLMCACHE.CREATE", "l", "EMBEDDER", "lexical")
		tc.do("LLMCACHE.SET", "l", "NS", "a", "PROMPT", "hi there", "RESPONSE", "resp-a")
		tc.do("SET", "s", "v")
		args, _ := runProgram(t, tc, cmds, words, prog)
		for _, k := range []string{"c", "l"} {
			for _, ns := range []string{"a", "b"} {
				got := tc.do("LLMCACHE.GET", k, "NS", ns, "PROMPT", "hi there", "VECTOR", "FP32", good, "THRESHOLD", "-1")
				if other := map[string]string{"a": "resp-b", "b": "resp-a"}[ns]; strings.Contains(got, other) {
					t.Fatalf("%q: namespace %s of %s answered %q", args, ns, k, got)
				}
			}
		}
	})
}
