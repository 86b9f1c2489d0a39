package tags

import (
	"fmt"
	"runtime"
	"testing"
)

// TestBytesAgainstHeap builds indexes of three shapes and checks Bytes against the live heap
// they add: within 0.8-1.25x (the cost constants are averages over Go's map and slice growth,
// so a shape between two growths is off by some).
func TestBytesAgainstHeap(t *testing.T) {
	if testing.Short() || raceBuild {
		t.Skip("builds 1.2 million memberships: not with -short or -race")
	}
	shapes := []struct {
		name       string
		keys, tags int // tags per key, from a pool of pool tags
		pool       int
	}{
		{"200k keys x 1 tag of 10", 200_000, 1, 10},
		{"100k keys x 4 tags of 1,000", 100_000, 4, 1000},
		{"50k keys x 1 tag of 50k", 50_000, 1, 50_000},
		{"100k keys x 10 tags of 100", 100_000, 10, 100},
	}
	for _, sh := range shapes {
		keys := make([]string, sh.keys)
		tagNames := make([][]byte, sh.pool)
		for i := range keys {
			keys[i] = fmt.Sprintf("user:session:%08d", i)
		}
		for i := range tagNames {
			tagNames[i] = fmt.Appendf(nil, "tag:%d", i)
		}
		before := liveHeap()
		x := New()
		var tg [][]byte
		for i, k := range keys {
			tg = tg[:0]
			for j := range sh.tags {
				tg = append(tg, tagNames[(i*sh.tags+j)%sh.pool])
			}
			x.Add(k, tg)
		}
		heap := float64(liveHeap() - before)
		// The keys' bytes were allocated before: the index's own copies are Add's string(key).
		r := float64(x.Bytes()) / heap
		t.Logf("%-30s heap %10.0f  Bytes %10d  ratio %.2f", sh.name, heap, x.Bytes(), r)
		if r < 0.8 || r > 1.25 {
			t.Errorf("%s: Bytes %d, the heap holds %.0f (%.2f)", sh.name, x.Bytes(), heap, r)
		}
		runtime.KeepAlive(x)
		runtime.KeepAlive(keys)
	}
}

func liveHeap() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}
