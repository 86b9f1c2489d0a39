package main

import (
	"math"
	"testing"
)

// TestZipfFrequencies: the first ranks' shares of 1,000,000 draws are within 5 standard
// deviations of 1/(r+1)^s / H(n, s), computed here independently of the cumulative table.
func TestZipfFrequencies(t *testing.T) {
	for _, s := range []float64{0.8, 0.99, 1.2} {
		const n, draws = 10_000, 1_000_000
		z := newZipf(n, s, 3)
		counts := make([]int, n)
		for range draws {
			id, scan := z.next()
			if scan || id >= n {
				t.Fatalf("s=%g: id %d scan %v", s, id, scan)
			}
			counts[id]++
		}
		h := 0.0
		for i := n; i >= 1; i-- {
			h += math.Pow(float64(i), -s)
		}
		for r := range 20 {
			p := math.Pow(float64(r+1), -s) / h
			want, sd := p*draws, math.Sqrt(p*(1-p)*draws)
			if d := math.Abs(float64(counts[r]) - want); d > 5*sd {
				t.Fatalf("s=%g rank %d: %d draws, want %.0f ± %.0f", s, r, counts[r], want, sd)
			}
		}
	}
}

// TestScanTrace: scans are runs of scan-len fresh ids, never repeated, making scan-frac of the
// requests.
func TestScanTrace(t *testing.T) {
	const keys = 1000
	tr := newScanned(newZipf(keys, 0.99, 1), keys, 0.4, 200)
	seen := map[uint64]bool{}
	scans, run := 0, 0
	for i := range 100_000 {
		id, scan := tr.next()
		if !scan {
			if id >= keys {
				t.Fatalf("request %d: Zipf id %d", i, id)
			}
			if run != 0 && run != 200 {
				t.Fatalf("request %d: a scan of %d keys", i, run)
			}
			run = 0
			continue
		}
		if id < keys || seen[id] {
			t.Fatalf("request %d: scan id %d not fresh", i, id)
		}
		seen[id] = true
		scans++
		run++
	}
	if f := float64(scans) / 100_000; math.Abs(f-0.4) > 0.01 {
		t.Fatalf("scan fraction %.3f, want 0.4", f)
	}
}

// TestModelsAgainstExactLRU: with many samples per eviction sampled LRU is nearly exact LRU
// (a key may still be missed by the random samples, and a pool entry keeps the idle time it was
// sampled with, as in Redis), so its hit ratio is within half a point of an exact LRU's,
// computed here with a plain list; with Redis's 5 samples it is lower but not by much.
func TestModelsAgainstExactLRU(t *testing.T) {
	const capacity, requests = 50, 50_000
	exact := func() int {
		z := newZipf(500, 0.9, 2)
		var lru []uint64 // most recent last
		hits := 0
		for range requests {
			id, _ := z.next()
			hit := false
			for j, k := range lru {
				if k == id {
					hit = true
					lru = append(lru[:j], lru[j+1:]...)
					break
				}
			}
			if !hit && len(lru) == capacity {
				lru = lru[1:]
			}
			lru = append(lru, id)
			if hit {
				hits++
			}
		}
		return hits
	}()
	sampled := func(samples int) int {
		m := newModel(polLRU, simConfig{capacity: capacity, samples: samples, rate: 1, logFactor: 10, decayMins: 1, seed: 9})
		z := newZipf(500, 0.9, 2)
		hits := 0
		for range requests {
			id, _ := z.next()
			if m.access(id) {
				hits++
			}
		}
		return hits
	}
	many, five := sampled(8*capacity), sampled(5)
	t.Logf("hits of %d: exact LRU %d, sampled with %d samples %d, with 5 %d", requests, exact, 8*capacity, many, five)
	if d := math.Abs(float64(many-exact)) / requests; d > 0.005 {
		t.Fatalf("sampled LRU %d hits, exact %d", many, exact)
	}
	if d := float64(exact-five) / requests; d < -0.005 || d > 0.05 {
		t.Fatalf("5-sample LRU %d hits, exact %d", five, exact)
	}
}

// TestTinyLFUResistsScans: on a scan-polluted trace the sampled TinyLFU model keeps more of the
// Zipf hits than sampled LRU (the scans' one-shot keys lose admission).
func TestTinyLFUResistsScans(t *testing.T) {
	c, err := parseFlags([]string{"-trace", "scan", "-keys", "20000", "-capacity", "2000", "-requests", "300000",
		"-warmup", "100000", "-scan-len", "1000"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	lru, tiny := simulate(c, polLRU, nil), simulate(c, polTinyLFU, nil)
	t.Logf("zipf part: lru %.4f tinylfu %.4f; rejected %d", lru.zipfRatio(), tiny.zipfRatio(), tiny.rejected)
	if tiny.zipfRatio() < lru.zipfRatio()+0.03 || tiny.rejected == 0 {
		t.Fatalf("tinylfu %.4f not above lru %.4f by 3 points", tiny.zipfRatio(), lru.zipfRatio())
	}
}

// TestWindowHoldsCapacity: the W-TinyLFU model keeps at most its capacity, split between its
// window and its sampled part, no key in both, and a key just requested is held (in the window).
func TestWindowHoldsCapacity(t *testing.T) {
	const capacity = 500
	m := newModel(polTinyLFU, simConfig{capacity: capacity, samples: 5, rate: 1, logFactor: 10, decayMins: 1,
		sketchMul: 4, tieAdmit: true, pool: "stale", window: 0.1, seed: 3})
	if m.win == nil || m.win.cap != 50 || m.main != 450 {
		t.Fatalf("window %v, sampled part %d; want 50 and 450", m.win, m.main)
	}
	z := newZipf(5000, 0.9, 4)
	for i := range 100_000 {
		id, _ := z.next()
		m.access(id)
		_, inWin := m.win.pos[id]
		_, inMain := m.pos[id]
		if !inWin && !inMain {
			t.Fatalf("request %d: key %d just requested is held nowhere", i, id)
		}
		if len(m.ids) > m.main || m.win.l.Len() > m.win.cap || len(m.win.pos) != m.win.l.Len() {
			t.Fatalf("request %d: %d keys sampled (max %d), window %d/%d (max %d)", i, len(m.ids), m.main,
				m.win.l.Len(), len(m.win.pos), m.win.cap)
		}
	}
	for id := range m.win.pos {
		if _, ok := m.pos[id]; ok {
			t.Fatalf("key %d is in the window and the sampled part", id)
		}
	}
}
