package main

import "testing"

// One pipelined batch of 30 GETs against the in-memory fake server: the generator's own cost per
// batch (the fake server's parsing included) and its allocations.
func BenchmarkWorkerBatch(b *testing.B) {
	tpls, order, _ := compileCommands([]string{"GET key:__key__"}, "", 256)
	w := newWorker(newFakeServer(), nil, tpls, order, 30, expander{keys: &uniformKeys{n: 1 << 20}, data: makeData(256, 1)})
	b.ReportAllocs()
	for b.Loop() {
		w.fill()
		if err := w.roundTrip(); err != nil {
			b.Fatal(err)
		}
	}
}
