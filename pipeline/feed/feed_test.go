package feed

import (
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Writers on every ring (each ring's "token" a mutex, and some appends holding several rings'
// tokens at once, appending to the first) against one reader: the reader gets every number once,
// in increasing order, and each entry's bytes as written.
func TestMergeOrder(t *testing.T) {
	const rings, writers, per = 8, 4, 3000
	testHook = runtime.Gosched // widen the windows a wrong protocol would fall into
	defer func() { testHook = nil }()
	f := New(rings, 1<<20)
	rd := f.Attach()
	defer rd.Close()
	var locks [rings]sync.Mutex
	var wg sync.WaitGroup
	var done atomic.Bool
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(w), 1))
			for range per {
				a := rng.IntN(rings)
				b := rng.IntN(rings)
				lo, hi := min(a, b), max(a, b)
				both := hi != lo && rng.IntN(4) == 0
				locks[lo].Lock()
				if both {
					locks[hi].Lock()
				}
				cmd := make([]byte, 8+rng.IntN(40))
				binary.LittleEndian.PutUint64(cmd, uint64(lo))
				f.Append(lo, lo, cmd)
				if both {
					locks[hi].Unlock()
				}
				locks[lo].Unlock()
			}
		}()
	}
	go func() { wg.Wait(); done.Store(true) }()
	last, seen := uint64(0), 0
	for deadline := time.Now().Add(20 * time.Second); ; {
		finished := done.Load()
		es, err := rd.Next()
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range es {
			if e.Seq != last+1 {
				t.Fatalf("entry %d after %d: a number was skipped or repeated", e.Seq, last)
			}
			last = e.Seq
			if ring := binary.LittleEndian.Uint64(e.Cmd); int(ring) != e.DB {
				t.Fatalf("entry %d: bytes of ring %d under database %d", e.Seq, ring, e.DB)
			}
			seen++
		}
		if finished && len(es) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("reader did not catch up")
		}
	}
	if seen != writers*per {
		t.Fatalf("read %d entries, want %d", seen, writers*per)
	}
}

// A reader that falls a ring's size behind is told, and an entry larger than a ring is lost to
// every reader.
func TestLost(t *testing.T) {
	f := New(2, 4096)
	rd := f.Attach()
	defer rd.Close()
	cmd := make([]byte, 1000)
	for range 3 {
		f.Append(0, 0, cmd)
	}
	if es, err := rd.Next(); err != nil || len(es) != 3 {
		t.Fatalf("3 entries within the ring: %d, %v", len(es), err)
	}
	for range 5 {
		f.Append(0, 0, cmd)
	}
	if _, err := rd.Next(); !errors.Is(err, ErrLost) {
		t.Fatalf("lapped reader: %v, want ErrLost", err)
	}
	rd2 := f.Attach()
	defer rd2.Close()
	f.Append(1, 0, make([]byte, 5000))
	if _, err := rd2.Next(); !errors.Is(err, ErrLost) {
		t.Fatalf("entry larger than the ring: %v, want ErrLost", err)
	}
}

// A claim in progress holds back every later number, so no entry is returned before one below it.
func TestClaimHoldsBack(t *testing.T) {
	f := New(2, 4096)
	rd := f.Attach()
	defer rd.Close()
	f.Append(0, 0, []byte("a"))
	f.rings[1].claim.Store(f.seq.Add(1)) // ring 1 took number 2 and has not appended it yet
	f.Append(0, 0, []byte("c"))          // number 3
	es, err := rd.Next()
	if err != nil || len(es) != 1 || string(es[0].Cmd) != "a" {
		t.Fatalf("with 2 claimed: %v %v, want only entry 1", es, err)
	}
	f.rings[1].claim.Store(claimPending)
	if es, _ := rd.Next(); len(es) != 0 {
		t.Fatalf("while a number is being taken: %d entries, want none", len(es))
	}
	f.rings[1].claim.Store(0)
	if es, _ := rd.Next(); len(es) != 1 || es[0].Seq != 3 {
		t.Fatalf("after the claim: %v", es)
	}
	if f.Active(); !f.Active() {
		t.Fatal("not active with a reader")
	}
	rd.Close()
	if f.Active() {
		t.Fatal("active with no reader")
	}
}
