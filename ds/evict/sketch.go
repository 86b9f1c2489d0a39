// Package evict holds HotKV's own eviction policy's state: a TinyLFU frequency sketch that
// estimates how often a key was touched recently, shared by every shard and updated without
// locks, and the admission rule that decides whether a new key may replace a victim.
//
// The sketch (Einziger, Friedman and Manes, "TinyLFU: A Highly Efficient Cache Admission Policy",
// 2017) is a count-min sketch of 4-bit counters behind a doorkeeper bloom filter, aged by halving:
//
//  1. Touch(h) first asks the doorkeeper: a hash not seen in this window only sets its doorkeeper
//     bits, so one-shot keys (a scan) never reach the counters. A hash already there increments its
//     four counters, each saturating at 15.
//  2. Estimate(h) is the least of the four counters, plus one if the doorkeeper holds h: at most 16.
//     Within one aging window it is never below the true number of touches (capped at 16);
//     collisions only ever add.
//  3. Every W = 10 × capacity increments (touches that set a doorkeeper bit or raised a counter;
//     a saturated key's touches do not count) the touch that crosses W halves every counter and clears the
//     doorkeeper (Reset), so old popularity fades and the counters do not all saturate. The reset
//     walks the arrays once: 8 bytes per capacity unit plus the doorkeeper's 2.
//
// The four counters of a hash lie in one 64-byte block (one cache miss per Touch), each row in its
// own pair of words of the block, as in Caffeine's FrequencySketch: a row then spans
// 4 × nextPow2(capacity) counters, so within a window of W touches a row's expected overcount is
// at most W / (4 × nextPow2(capacity)) ≤ 2.5, and the minimum of four rows is usually exact.
//
// Every word is an atomic.Uint64 updated by compare-and-swap, so any number of goroutines may
// Touch and Estimate at once without a lock; a concurrent Reset may lose or keep a touch that
// races with it, which only shifts an approximate count by one.
package evict

import (
	"math/bits"
	"sync/atomic"
	"unsafe"
)

const (
	maxCounter = 15
	// resetMask keeps the low three bits of every nibble after a right shift by one: each 4-bit
	// counter halved on its own, none borrowing its neighbour's low bit.
	resetMask = 0x7777777777777777
	// blockWords is one cache line of counters: 8 words × 16 counters.
	blockWords = 8
	// MaxEstimate is the largest Estimate: a saturated counter and the doorkeeper's one.
	MaxEstimate = maxCounter + 1
	// SampleFactor is W / capacity: the number of touches per aging window per capacity unit.
	SampleFactor = 10
)

// Sketch is a TinyLFU frequency sketch. The zero value is not usable; build one with NewSketch.
// All methods are safe for concurrent use.
type Sketch struct {
	table     []atomic.Uint64 // counters, aligned to 64 bytes, len a power of two ≥ blockWords
	blockBits uint            // log2(len(table) / blockWords)
	door      []atomic.Uint64 // doorkeeper bits, len a power of two
	doorMask  uint64
	window    int64        // W: increments between two resets
	touches   atomic.Int64 // increments since the last reset
	resetting atomic.Bool
	resets    atomic.Int64
}

// NewSketch sizes a sketch for about capacity distinct keys held at once (at least 1): 16
// counters and 16 doorkeeper bits per key, rounded up to powers of two.
func NewSketch(capacity int) *Sketch {
	if capacity < 1 {
		capacity = 1
	}
	words := nextPow2(uint64(capacity))
	if words < blockWords {
		words = blockWords
	}
	dwords := nextPow2(uint64(capacity) / 4)
	s := &Sketch{
		table:     aligned(int(words)),
		blockBits: uint(bits.TrailingZeros64(words / blockWords)),
		door:      make([]atomic.Uint64, dwords),
		doorMask:  dwords - 1,
		window:    int64(capacity) * SampleFactor,
	}
	return s
}

// aligned returns n words starting on a 64-byte boundary, so a block is one cache line.
func aligned(n int) []atomic.Uint64 {
	buf := make([]atomic.Uint64, n+blockWords-1)
	off := 0
	for uintptr(unsafe.Pointer(&buf[off]))%64 != 0 {
		off++
	}
	return buf[off : off+n : off+n]
}

func nextPow2(n uint64) uint64 {
	if n <= 1 {
		return 1
	}
	return 1 << (64 - bits.LeadingZeros64(n-1))
}

// mix is splitmix64's finalizer. Callers pass a key's maphash, whose high bits pick its shard:
// within one shard they are all alike, so the sketch must not use them raw.
func mix(h uint64) uint64 {
	h ^= h >> 30
	h *= 0xbf58476d1ce4e5b9
	h ^= h >> 27
	h *= 0x94d049bb133111eb
	h ^= h >> 31
	return h
}

// slot is row i's counter of mixed hash x: the word's index and the nibble's shift. The block
// comes from x's high bits, the word pair and nibble of each row from its own byte of the low 32.
func (s *Sketch) slot(x uint64, i uint) (int, uint) {
	block := 0
	if s.blockBits > 0 {
		block = int(x >> (64 - s.blockBits))
	}
	b := x >> (i * 8)
	return block*blockWords + int(i)*2 + int(b&1), uint((b>>1)&15) * 4
}

// doorBits is the doorkeeper word and its two bits for mixed hash x (bits 32..63 of a second mix,
// independent of the counters' choice).
func (s *Sketch) doorBits(x uint64) (int, uint64) {
	y := mix(x ^ 0x9e3779b97f4a7c15)
	return int(y & s.doorMask), 1<<((y>>32)&63) | 1<<((y>>40)&63)
}

// Touch records one access of the key whose hash is h.
func (s *Sketch) Touch(h uint64) {
	x := mix(h)
	w, m := s.doorBits(x)
	// Load first: a hot key's bits are set and its counters saturated, so its Touch writes nothing
	// and its lines stay shared between cores. Or's old value settles a race of two first touches.
	changed := true
	if d := &s.door[w]; d.Load()&m == m || d.Or(m)&m == m {
		changed = false
		for i := uint(0); i < 4; i++ {
			idx, sh := s.slot(x, i)
			changed = increment(&s.table[idx], sh) || changed
		}
	}
	// Only touches that changed something count towards W, as in Caffeine: a hot key's
	// saturated touches then write no shared line at all.
	if changed && s.touches.Add(1) >= s.window && s.resetting.CompareAndSwap(false, true) {
		s.Reset()
		s.touches.Add(-s.window)
		s.resetting.Store(false)
	}
}

// increment adds one to the nibble at shift sh of *w unless it is already at maxCounter, and
// says whether it did.
func increment(w *atomic.Uint64, sh uint) bool {
	for {
		old := w.Load()
		if (old>>sh)&maxCounter == maxCounter {
			return false
		}
		if w.CompareAndSwap(old, old+1<<sh) {
			return true
		}
	}
}

// Estimate is how often the key whose hash is h was touched recently: 0 to 16, never below the
// touches since the last Reset (capped at 16), halved (rounded down) by every Reset.
func (s *Sketch) Estimate(h uint64) int {
	x := mix(h)
	least := uint64(maxCounter)
	for i := uint(0); i < 4; i++ {
		idx, sh := s.slot(x, i)
		if c := (s.table[idx].Load() >> sh) & maxCounter; c < least {
			least = c
		}
	}
	w, m := s.doorBits(x)
	if s.door[w].Load()&m == m {
		least++
	}
	return int(least)
}

// Admit is TinyLFU's admission rule: a new key (candidate) may take the place of the key that
// would be evicted for it (victim) only if it is estimated to be more frequent. On a tie the
// victim stays: a key seen once does not displace one seen once.
func (s *Sketch) Admit(candidate, victim uint64) bool {
	return s.Estimate(candidate) > s.Estimate(victim)
}

// Reset ages the sketch: every counter is halved (rounded down) and the doorkeeper cleared. Touch
// calls it every W increments; it walks both arrays once and takes no lock.
func (s *Sketch) Reset() {
	for i := range s.table {
		w := &s.table[i]
		for {
			old := w.Load()
			if old == 0 || w.CompareAndSwap(old, (old>>1)&resetMask) {
				break
			}
		}
	}
	for i := range s.door {
		s.door[i].Store(0)
	}
	s.resets.Add(1)
}

// Window is W, the number of increments between two automatic resets.
func (s *Sketch) Window() int64 { return s.window }

// Resets counts the resets so far, automatic and explicit.
func (s *Sketch) Resets() int64 { return s.resets.Load() }

// Width is the number of counters in each of the four rows.
func (s *Sketch) Width() int { return len(s.table) * 4 }

// Bytes is the memory the sketch's arrays hold.
func (s *Sketch) Bytes() int { return (len(s.table) + len(s.door)) * 8 }
