package resp

import (
	"math/rand/v2"
	"reflect"
	"testing"
)

// FuzzParse feeds random bytes, split at random points, to Parse. parseAll checks on every call that
// Parse consumes no more than it was given and that need is truthful; the fuzz target adds that the
// stream parsed whole and in pieces gives the same commands and the same ending. Panics fail by
// themselves. seed picks the split points and the limits.
func FuzzParse(f *testing.F) {
	f.Add([]byte(pipelineStream), uint64(1))
	f.Add([]byte("*2\r\n$3\r\nGET\r\n$1\r\nk\r\n*1\r\n$-1\r\n"), uint64(2))
	f.Add([]byte(`ECHO "a\x41\n" 'b\'c'`+"\r\nECHO \"x\"y\r\n"), uint64(3))
	f.Add([]byte("*11\r\n*1\r\n$16385\r\n"), uint64(5))
	f.Fuzz(func(t *testing.T, data []byte, seed uint64) {
		rng := rand.New(rand.NewPCG(seed, seed>>32))
		lim := DefaultLimits()
		lim.Unauthenticated = seed&1 == 1
		if seed&2 == 2 {
			lim.MaxBulkLen = int64(seed>>2) % 64
		}
		whole := parseAll(t, data, nil, &lim)
		cuts := randomCuts(rng, len(data), rng.IntN(min(len(data), 64)+1))
		if got := parseAll(t, data, cuts, &lim); !reflect.DeepEqual(got, whole) {
			t.Fatalf("split at %v:\n got %+v\nwant %+v", cuts, got, whole)
		}
	})
}
