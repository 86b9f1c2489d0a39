package command

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// packedBenchValue is a 2 KB JSON-like value, the shape TestPackedMemory and the benchmarks in
// benchmarks/results/2026-12-01-amd-epyc-2cpu-compression.md measure.
var packedBenchValue = jsonValue(rand.New(rand.NewPCG(71, 72)), 2048)

// newPackedConn is a hot connection whose engine packs with algo ("no" for none).
func newPackedConn(tb testing.TB, algo string, cmd ...string) *hotConn {
	setup := [][]string{{"CONFIG", "SET", "value-compression", algo}, {"SET", "key:1", packedBenchValue}}
	return newHotConn(tb, setup, cmd...)
}

// GET and SET of a packed 2 KB value allocate nothing once warm: GET unpacks into the client's
// scratch, SET packs into it and rewrites the entry's buffer in place.
func TestPackedHotPathAllocatesNothing(t *testing.T) {
	if zsetRace {
		t.Skip("-race makes sync.Pool drop the compressors at random")
	}
	for _, algo := range []string{"lz4", "zstd"} {
		for _, cmd := range [][]string{{"GET", "key:1"}, {"SET", "key:1", packedBenchValue}} {
			h := newPackedConn(t, algo, cmd...)
			out := string(hotReplies(t, cmd[0], h))
			if cmd[0] == "GET" && out != strings.Repeat(fmt.Sprintf("$2048\r\n%s\r\n", packedBenchValue), hotBatch) {
				t.Fatalf("%s GET: wrong replies", algo)
			}
			if keys := checkPackedCounts(t, h.tc.client.e, h.tc, algo); keys != 1 {
				t.Fatalf("%s: %d packed keys", algo, keys)
			}
			checkNoAllocs(t, algo+" "+cmd[0], h)
		}
	}
}

// BenchmarkPackedStrings: GET and SET of a 2 KB JSON value under value-compression no, lz4 and
// zstd (pipelined batches of 30, in process).
func BenchmarkPackedStrings(b *testing.B) {
	for _, algo := range []string{"no", "lz4", "zstd"} {
		for _, cmd := range [][]string{{"GET", "key:1"}, {"SET", "key:1", packedBenchValue}} {
			b.Run(algo+"/"+cmd[0], func(b *testing.B) { benchHot(b, newPackedConn(b, algo, cmd...)) })
		}
	}
}
