package ipset

import (
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"testing"
)

// TestMemoryPerEntry measures the heap a set of n entries holds (live heap after GC, before and
// after), per entry, for the three shapes with random data of the same shape: 1M IPv4
// hosts, labelled IPv4 prefixes (/16../24, two-letter labels as libloc's countries) and IPv6
// prefixes (/29../48, labelled). The goals: 12, 40 and 64 bytes. The default run uses 100k
// entries and checks only that MemoryUsage is within 2x of the heap; HOTKV_IPSET_LONG=1 runs
// 1M each and logs the numbers (reported in docs/ipsets.md).
func TestMemoryPerEntry(t *testing.T) {
	n := 100_000
	if os.Getenv("HOTKV_IPSET_LONG") != "" {
		n = 1_000_000
	}
	if raceEnabled {
		t.Skip("heap sizes under -race are not the release's")
	}
	cc := []string{"US", "DE", "CN", "FR", "GB", "JP", "BR", "RU", "IN", "NL"}
	for _, c := range []struct {
		name string
		fill func(s *Set, rng *rand.Rand)
	}{
		{"v4-hosts", func(s *Set, rng *rand.Rand) {
			for s.Len() < n {
				a := rng.Uint32()
				s.Add(Range{U128{0, uint64(a)}, U128{0, uint64(a)}, false}, Meta{}, false, false)
			}
		}},
		{"v4-labelled-prefixes", func(s *Set, rng *rand.Rand) {
			for s.Len() < n {
				l := 16 + rng.IntN(9)
				lo, hm := mask(U128{0, uint64(rng.Uint32())}, l, 32)
				s.Add(Range{lo, U128{lo.Hi | hm.Hi, lo.Lo | hm.Lo}, false}, Meta{Label: []byte(cc[rng.IntN(len(cc))])}, false, false)
			}
		}},
		{"v6-labelled-prefixes", func(s *Set, rng *rand.Rand) {
			for s.Len() < n {
				l := 29 + rng.IntN(20)
				lo, hm := mask(U128{0x2000<<48 | rng.Uint64N(1<<60), 0}, l, 128)
				s.Add(Range{lo, U128{lo.Hi | hm.Hi, lo.Lo | hm.Lo}, true}, Meta{Label: []byte(cc[rng.IntN(len(cc))])}, false, false)
			}
		}},
	} {
		rng := rand.New(rand.NewPCG(1, 2))
		before := heap()
		s := New()
		c.fill(s, rng)
		s.Compact()
		after := heap()
		per := float64(after-before) / float64(s.Len())
		mu := float64(s.MemoryUsage()) / float64(s.Len())
		t.Logf("%s: %d entries: heap %.1f B/entry, MemoryUsage %.1f B/entry", c.name, s.Len(), per, mu)
		if mu > 2*per+8 || per > 2*mu+8 {
			t.Errorf("%s: MemoryUsage %.1f B/entry is far from the heap's %.1f", c.name, mu, per)
		}
		runtime.KeepAlive(s)
	}
}

func heap() int64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}

var _ = fmt.Sprint
