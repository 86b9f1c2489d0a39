package ipset

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"testing"
)

// TestMemoryPerEntry measures the heap a set of n entries holds (live heap after GC, before and
// after), per entry, for the shapes with random data of the same shape: IPv4 hosts,
// labelled IPv4 prefixes (/16../24, two-letter labels as libloc's countries), labelled disjoint
// IPv4 ranges (Tor's geoip shape) and IPv6 prefixes (/29../48, labelled). The goals: 12, 40, 40
// and 64 bytes, each asserted on the heap and on MemoryUsage (what INFO's used_memory adds up),
// and that MemoryUsage is within 2x of the heap. The default run uses 100k
// entries (the 256 KiB bucket tables weigh 2.6 B an entry there); HOTKV_IPSET_LONG=1 runs 1M
// each (the numbers in docs/ipsets.md).
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
		goal float64 // bytes an entry, 0: none asserted
		fill func(s *Set, rng *rand.Rand)
	}{
		{"v4-hosts", 12, func(s *Set, rng *rand.Rand) {
			for s.Len() < n {
				a := rng.Uint32()
				s.Add(Range{U128{0, uint64(a)}, U128{0, uint64(a)}, false}, Meta{}, false, false)
			}
		}},
		{"v4-labelled-prefixes", 40, func(s *Set, rng *rand.Rand) {
			for s.Len() < n {
				l := 16 + rng.IntN(9)
				lo, hm := mask(U128{0, uint64(rng.Uint32())}, l, 32)
				s.Add(Range{lo, U128{lo.Hi | hm.Hi, lo.Lo | hm.Lo}, false}, Meta{Label: []byte(cc[rng.IntN(len(cc))])}, false, false)
			}
		}},
		{"v4-labelled-ranges", 40, func(s *Set, rng *rand.Rand) {
			at := uint64(1 << 24)
			for s.Len() < n {
				size := uint64(1) << (4 + rng.IntN(10))
				if rng.IntN(4) == 0 {
					at += size // a gap
				}
				s.Add(Range{U128{0, at}, U128{0, at + size - 1}, false}, Meta{Label: []byte(cc[rng.IntN(len(cc))])}, false, false)
				at += size
			}
		}},
		{"v6-labelled-prefixes", 64, func(s *Set, rng *rand.Rand) {
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
		if c.goal > 0 && (per > c.goal || mu > c.goal) {
			t.Errorf("%s: heap %.1f B/entry, MemoryUsage %.1f B/entry: the goal is <= %.0f", c.name, per, mu, c.goal)
		}
		runtime.KeepAlive(s)
	}
}

// TestMemoryLibloc is TestMemoryPerEntry on libloc's networks ("prefix CC" lines, written by
// benchmarks/ipsets/data.sh; DATA names its folder): the labelled v4 list, goal 40 B an
// entry, and its v6 list, goal 64 B, each on the heap and in MemoryUsage, and each family's
// index start-ordered (the lists are laminar). A file not there is skipped.
func TestMemoryLibloc(t *testing.T) {
	if raceEnabled {
		t.Skip("heap sizes under -race are not the release's")
	}
	dir := os.Getenv("DATA")
	if dir == "" {
		dir = "../../benchmarks/ipsets/data"
	}
	for _, c := range []struct {
		name string
		goal float64
	}{{"libloc4", 40}, {"libloc6", 64}} {
		b, err := os.ReadFile(dir + "/" + c.name + ".txt")
		if err != nil {
			t.Logf("no %s data (bash benchmarks/ipsets/data.sh): %v", c.name, err)
			continue
		}
		lines := bytes.Split(bytes.TrimSpace(b), []byte("\n"))
		before := heap()
		s := New()
		for _, l := range lines {
			f := bytes.Fields(l)
			r, ok := ParseEntry(f[0])
			if !ok || len(f) != 2 {
				t.Fatalf("bad line %q", l)
			}
			s.Add(r, Meta{Label: f[1]}, false, false)
		}
		s.Compact()
		after := heap()
		per := float64(after-before) / float64(s.Len())
		mu := float64(s.MemoryUsage()) / float64(s.Len())
		t.Logf("%s: %d entries: heap %.1f B/entry, MemoryUsage %.1f B/entry", c.name, s.Len(), per, mu)
		if per > c.goal || mu > c.goal {
			t.Errorf("%s: heap %.1f B/entry, MemoryUsage %.1f B/entry: the goal is <= %.0f", c.name, per, mu, c.goal)
		}
		if ix := s.idx[0]; ix != nil && ix.n4 == nil {
			t.Errorf("%s: the IPv4 index is a segment table", c.name)
		}
		if ix := s.idx[1]; ix != nil && ix.n6 == nil {
			t.Errorf("%s: the IPv6 index is a segment table", c.name)
		}
		runtime.KeepAlive(s)
		runtime.KeepAlive(lines)
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
