package keyspace

import (
	"strconv"
	"testing"
)

// BenchmarkHookedOps is the keyspace's hot path with no snapshot active (each operation pays one
// nil test for the snapshot hooks): Find, Upsert over an existing key, and a Delete plus Add, on
// 1,000 keys (in cache: the instructions show) and 100,000. Compare with the same benchmark at
// the commit before the hooks.
func BenchmarkHookedOps(b *testing.B) {
	for _, n := range []int{1000, 100_000} {
		b.Run(strconv.Itoa(n), func(b *testing.B) { benchHookedOps(b, n) })
	}
}

func benchHookedOps(b *testing.B, n int) {
	ks := New()
	var epoch uint64
	ks.SetEpoch(&epoch)
	keys := make([][]byte, n)
	for i := range keys {
		keys[i] = []byte("key:" + strconv.Itoa(i))
		e, _ := ks.Upsert(keys[i], 1)
		e.SetBytes([]byte("v"))
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		k := keys[(i*7919)%n]
		ks.Find(k, 1)
		ks.Upsert(keys[(i*104729)%n], 1)
		if i%8 == 0 {
			ks.Delete(k, 1)
			ks.Add(k).SetBytes([]byte("w"))
			epoch++
		}
	}
}
