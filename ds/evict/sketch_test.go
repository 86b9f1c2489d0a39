package evict

import (
	"math"
	"math/rand/v2"
	"sync"
	"testing"
)

// ref is the dumb reference: exact touch counts since the sketch's last reset.
type ref struct {
	s      *Sketch
	counts map[uint64]int
	resets int64
	n      int // touches since the last reset
}

func newRef(s *Sketch) *ref { return &ref{s: s, counts: map[uint64]int{}, resets: s.Resets()} }

func (r *ref) touch(h uint64) {
	r.s.Touch(h)
	if got := r.s.Resets(); got != r.resets {
		// The touch that crossed W was counted, then halved with the rest: nothing is owed.
		r.resets, r.counts, r.n = got, map[uint64]int{}, 0
		return
	}
	r.counts[h]++
	r.n++
}

func capped(c int) int { return min(c, maxCounter+1) }

// checkNeverUnder fails if any key's estimate is below its true count since the last reset.
func (r *ref) checkNeverUnder(t testing.TB) {
	t.Helper()
	for h, c := range r.counts {
		if e := r.s.Estimate(h); e < capped(c) {
			t.Fatalf("Estimate(%#x) = %d, touched %d times since the last reset", h, e, c)
		}
	}
}

func TestEstimateNeverUnder(t *testing.T) {
	f := func(capacity, keys int, zipf bool, steps int) {
		t.Helper()
		rng := rand.New(rand.NewPCG(uint64(capacity), uint64(keys)))
		s := NewSketch(capacity)
		r := newRef(s)
		var z *rand.Zipf
		if zipf {
			z = rand.NewZipf(rng, 1.1, 1, uint64(keys-1))
		}
		for i := 0; i < steps; i++ {
			k := uint64(rng.IntN(keys))
			if z != nil {
				k = z.Uint64()
			}
			r.touch(k * 0x9e3779b97f4a7c15)
			if i%997 == 0 {
				r.checkNeverUnder(t)
			}
		}
		r.checkNeverUnder(t)
		// Saturated touches do not count towards W; every touch of a key while it has fewer than
		// 16 (its first, in the doorkeeper, and at least the next 15 in each window) does.
		if most := int64(steps) / s.Window(); s.Resets() > most || (most >= 2 && s.Resets() == 0) {
			t.Fatalf("capacity %d: %d resets after %d touches at W = %d", capacity, s.Resets(), steps, s.Window())
		}
	}
	f(1, 3, false, 1000)
	f(16, 100, false, 5000)
	f(100, 10_000, false, 50_000)
	f(1000, 5000, true, 100_000)
	f(4096, 1_000_000, false, 100_000)
}

// TestOverestimateBound checks count-min's bound on one window (no reset): a row's counter of a
// key exceeds the key's own increments by N/w on average, N the increments that passed the
// doorkeeper and w the row's width, so the least of four rows is on average at most that, and
// by Markov at most a fraction 1/e of keys are over by more than e·N/w in any one row. Rows in a
// block are independent given the block, so over uniform keys the fraction over e·N/w in all four
// is near e^-4; the test allows 2·e^-4. The doorkeeper adds at most one, on a false positive.
func TestOverestimateBound(t *testing.T) {
	f := func(capacity, keys, steps int, zipf bool) {
		t.Helper()
		rng := rand.New(rand.NewPCG(7, uint64(keys)))
		s := NewSketch(capacity)
		if int64(steps) >= s.Window() {
			t.Fatalf("steps %d must stay inside one window (%d)", steps, s.Window())
		}
		counts := map[uint64]int{}
		var z *rand.Zipf
		if zipf {
			z = rand.NewZipf(rng, 1.01, 1, uint64(keys-1))
		}
		for i := 0; i < steps; i++ {
			k := uint64(rng.IntN(keys))
			if z != nil {
				k = z.Uint64()
			}
			h := mix(k + 1)
			s.Touch(h)
			counts[h]++
		}
		n := float64(steps - len(counts)) // each key's first touch stays in the doorkeeper
		w := float64(s.Width())
		bound := math.E * n / w
		var sum float64
		over, tail := 0, 0
		for h, c := range counts {
			e := s.Estimate(h)
			if e < capped(c) {
				t.Fatalf("Estimate = %d below %d", e, c)
			}
			d := float64(e - capped(c))
			sum += d
			if d > bound+1 {
				tail++
			}
			if d > 0 {
				over++
			}
		}
		mean := sum / float64(len(counts))
		// Door false positives: at most (1-e^{-2k/m})^2 of keys, k keys in m bits, two bits each.
		fp := math.Pow(1-math.Exp(-2*float64(len(counts))/float64(len(s.door)*64)), 2)
		t.Logf("capacity %d keys %d steps %d: N/w %.3f, mean over %.4f, %d of %d over, %d over e·N/w+1, door fp bound %.4f",
			capacity, len(counts), steps, n/w, mean, over, len(counts), tail, fp)
		if mean > n/w+fp+0.01 {
			t.Fatalf("mean overestimate %.4f above N/w %.4f + door fp %.4f", mean, n/w, fp)
		}
		if frac := float64(tail) / float64(len(counts)); frac > 2*math.Exp(-4) {
			t.Fatalf("%.4f of keys over by more than e·N/w+1 = %.2f; the bound is about e^-4 = %.4f", frac, bound+1, math.Exp(-4))
		}
	}
	f(1000, 2000, 9000, false) // N/w about 1.7: every row crowded
	f(1000, 500, 9000, false)  // few keys, many touches each
	f(10_000, 50_000, 99_000, true)
	f(65_536, 65_536, 600_000, false)
}

// TestResetHalves: keys far fewer than the width never collide (checked before the reset), so a
// key touched t times holds t-1 in its rows (its first touch went to the doorkeeper) and after
// Reset estimates ⌊(t-1)/2⌋, the doorkeeper cleared.
func TestResetHalves(t *testing.T) {
	s := NewSketch(1 << 14)
	want := map[uint64]int{}
	for k := uint64(0); k < 64; k++ {
		h := mix(k)
		times := int(k%20) + 1
		for range times {
			s.Touch(h)
		}
		want[h] = times
	}
	for h, c := range want {
		if e := s.Estimate(h); e != capped(c) {
			t.Fatalf("before Reset: Estimate = %d, touched %d times (no collision expected among 64 keys)", e, c)
		}
	}
	s.Reset()
	for h, c := range want {
		rows := min(c-1, maxCounter)
		if e := s.Estimate(h); e != rows/2 {
			t.Fatalf("after Reset: Estimate = %d, want ⌊%d/2⌋ (touched %d times)", e, rows, c)
		}
	}
	s.Reset()
	s.Reset()
	s.Reset()
	for h := range want {
		if e := s.Estimate(h); e != 0 {
			t.Fatalf("after four resets Estimate = %d, want 0", e)
		}
	}
}

func TestSaturates(t *testing.T) {
	s := NewSketch(64)
	for range 1000 {
		s.Touch(42)
	}
	if e := s.Estimate(42); e != maxCounter+1 {
		t.Fatalf("Estimate of a key touched 1000 times = %d, want %d", e, maxCounter+1)
	}
	// One doorkeeper bit and 15 increments per row count towards W = 640; the other 984 touches
	// changed nothing.
	if s.Resets() != 0 || s.touches.Load() != 16 {
		t.Fatalf("%d resets, %d increments counted after 1000 touches of one key", s.Resets(), s.touches.Load())
	}
}

func TestAdmit(t *testing.T) {
	s := NewSketch(1024)
	hot, warm, cold := mix(1), mix(2), mix(3)
	for range 5 {
		s.Touch(hot)
	}
	s.Touch(warm)
	if !s.Admit(hot, warm) || s.Admit(warm, hot) {
		t.Fatalf("Admit(hot %d, warm %d) = %v, Admit(warm, hot) = %v", s.Estimate(hot), s.Estimate(warm), s.Admit(hot, warm), s.Admit(warm, hot))
	}
	if s.Admit(cold, cold) || s.Admit(warm, warm) {
		t.Fatal("a tie admitted the candidate")
	}
	if !s.Admit(warm, cold) || s.Admit(cold, warm) {
		t.Fatal("a key seen once is not preferred over one never seen")
	}
}

func TestSizes(t *testing.T) {
	for _, c := range []int{0, 1, 7, 8, 100, 1000, 1 << 20} {
		s := NewSketch(c)
		if w := s.Width(); w&(w-1) != 0 || w < 4*max(c, 1) || w < 4*blockWords {
			t.Fatalf("NewSketch(%d): row width %d", c, w)
		}
		if uintptr(len(s.door))&uintptr(len(s.door)-1) != 0 {
			t.Fatalf("NewSketch(%d): doorkeeper of %d words", c, len(s.door))
		}
		if c > 8 && s.Bytes() > 10*nextPowInt(c)+64 {
			t.Fatalf("NewSketch(%d) holds %d bytes", c, s.Bytes())
		}
	}
}

func nextPowInt(c int) int { return int(nextPow2(uint64(c))) }

// TestConcurrentNeverUnder: goroutines touch their own keys at once (sharing words, so their
// compare-and-swaps race); no increment may be lost, so every estimate reaches its count.
func TestConcurrentNeverUnder(t *testing.T) {
	const goroutines, keys, times = 4, 200, 12
	s := NewSketch(1 << 12) // W = 40960 > 4·200·12: no reset
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range times {
				for k := range keys {
					s.Touch(mix(uint64(g*keys + k)))
				}
			}
		}()
	}
	// A reader beside them: estimates stay in range.
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range 20_000 {
			if e := s.Estimate(mix(uint64(i % (goroutines * keys)))); e < 0 || e > maxCounter+1 {
				t.Errorf("Estimate = %d", e)
				return
			}
		}
	}()
	wg.Wait()
	<-done
	for k := range goroutines * keys {
		if e := s.Estimate(mix(uint64(k))); e < times {
			t.Fatalf("key %d: Estimate %d after %d concurrent touches", k, e, times)
		}
	}
}

// TestConcurrentResets: touches crossing W from several goroutines reset once per W, and a
// Reset racing with them leaves every counter in range.
func TestConcurrentResets(t *testing.T) {
	s := NewSketch(64) // W = 640
	const goroutines, each = 4, 6400
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				s.Touch(uint64(g*each + i%50))
				if i%1000 == 0 {
					s.Reset()
				}
			}
		}()
	}
	wg.Wait()
	total := int64(goroutines * each)
	explicit := int64(goroutines * ((each + 999) / 1000))
	auto := s.Resets() - explicit
	// Touches of saturated keys do not count, so at most total/W resets; the explicit resets
	// keep the 200 keys from saturating for long, so some automatic ones happen.
	if auto < 1 || auto > total/s.Window() {
		t.Fatalf("%d automatic resets after %d touches at W = %d", auto, total, s.Window())
	}
	for i := range 200 {
		if e := s.Estimate(uint64(i)); e < 0 || e > maxCounter+1 {
			t.Fatalf("Estimate = %d", e)
		}
	}
}

func TestTouchAllocatesNothing(t *testing.T) {
	s := NewSketch(1000)
	var h uint64
	if a := testing.AllocsPerRun(10_000, func() { h++; s.Touch(h) }); a != 0 {
		t.Fatalf("Touch allocates %.1f", a)
	}
	if a := testing.AllocsPerRun(10_000, func() { h++; _ = s.Estimate(h) }); a != 0 {
		t.Fatalf("Estimate allocates %.1f", a)
	}
}

// FuzzSketch runs touches, estimates and resets from the input against the exact reference.
func FuzzSketch(f *testing.F) {
	f.Add([]byte{3, 1, 1, 1, 2, 2, 0xff, 1, 1})
	f.Add([]byte{0, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9})
	f.Add([]byte{200, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 0xfe, 1, 2, 3})
	f.Fuzz(func(t *testing.T, in []byte) {
		if len(in) == 0 {
			return
		}
		s := NewSketch(int(in[0]))
		r := newRef(s)
		for _, b := range in[1:] {
			switch b {
			case 0xff:
				s.Reset()
				r.resets, r.counts = s.Resets(), map[uint64]int{}
			case 0xfe:
				r.checkNeverUnder(t)
			default:
				h := uint64(b%32) << 58 // only the high bits differ, as within one shard
				r.touch(h)
				if e := s.Estimate(h); e < capped(r.counts[h]) || e > maxCounter+1 {
					t.Fatalf("Estimate = %d after %d touches", e, r.counts[h])
				}
			}
		}
		r.checkNeverUnder(t)
	})
}
