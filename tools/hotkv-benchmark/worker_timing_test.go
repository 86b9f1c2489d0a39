package main

import (
	"io"
	"testing"
)

// One pipelined batch of 30 requests against the in-memory fake server: the generator's own cost
// per batch (the fake server's parsing included) and its allocations, with every reply checked
// against its expectation (a GET's value compared with __data__ byte for byte).
func BenchmarkWorkerBatch(b *testing.B) {
	f := func(b *testing.B, args ...string) {
		cfg, err := parseFlags(append([]string{"--data-size", "256"}, args...), io.Discard)
		if err != nil {
			b.Fatal(err)
		}
		tpls, order, err := cfg.compile()
		if err != nil {
			b.Fatal(err)
		}
		srv := newFakeServer()
		srv.value = makeData(256, 1)
		w := newWorker(srv, nil, tpls, order, 30, expander{keys: &uniformKeys{n: 1 << 20}, data: makeData(256, 1)})
		b.ReportAllocs()
		for b.Loop() {
			w.fill()
			if err := w.roundTrip(); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.Run("GET-any", func(b *testing.B) { f(b, "--command", "GET key:__key__", "--expect", "any") })
	b.Run("GET-bulk", func(b *testing.B) { f(b, "--command", "GET key:__key__") })
	b.Run("GET-data", func(b *testing.B) { f(b, "--command", "GET key:__key__", "--expect", "data") })
	b.Run("SET-rand", func(b *testing.B) { f(b, "--command", "SET list:__key__ __rand__", "--expect", "ok") })
	b.Run("MGET-data", func(b *testing.B) {
		f(b, "--command", "MGET key:__key__ key:__key__ key:__key__ key:__key__ key:__key__ key:__key__ key:__key__ key:__key__",
			"--expect", "array:8:data")
	})
}
