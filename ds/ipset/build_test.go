package ipset

import "testing"

// TestBackgroundMergesYield: merges on a goroutine give up their P every paceEvery steps (a
// merge of a 200k-host base, alone on a one-P server, otherwise kept the connection poller off
// it until preempted), and merges run inline under the token never do.
func TestBackgroundMergesYield(t *testing.T) {
	s := New()
	for i := range uint32(200_000) {
		s.Add(Range{U128{0, uint64(0x0a000000 + 3*i)}, U128{0, uint64(0x0a000000 + 3*i)}, false}, Meta{}, false, false)
		if i%20 == 0 {
			lo := uint64(0xac100000 + i<<8)
			s.Add(Range{U128{0, lo}, U128{0, lo + 255}, false}, Meta{Label: []byte("x")}, false, false)
		}
	}
	s.Compact()                   // joins the load's background merges
	for i := range uint32(1000) { // below the threshold: no background merge
		s.Add(Range{U128{0, uint64(0x0c000000 + i)}, U128{0, uint64(0x0c000000 + i)}, false}, Meta{}, false, false)
	}
	y0 := paceYields.Load()
	s.Compact() // inline, over 200k hosts: no yields
	if y := paceYields.Load() - y0; y != 0 {
		t.Fatalf("an inline merge yielded %d times", y)
	}
	y0 = paceYields.Load()
	for i := range uint32(30_000) { // past base/8: a background merge of over 200k hosts
		s.Add(Range{U128{0, uint64(0x0b000000 + i)}, U128{0, uint64(0x0b000000 + i)}, false}, Meta{}, false, false)
	}
	if s.hosts.job == nil {
		t.Fatal("no host merge started: the test could not fail")
	}
	n := s.hosts.nold // the hosts the merge writes
	s.hosts.job.join()
	if y, want := paceYields.Load()-y0, int64(n/paceEvery); y < want {
		t.Fatalf("a background merge of %d hosts yielded %d times, want at least %d", n, y, want)
	}
	if !s.Contains(U128{0, 0x0b000000 + 29_999}, false, 0) || s.Contains(U128{0, 0x0a000001}, false, 0) {
		t.Fatal("wrong answers after the merge")
	}
}
