package pipeline

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func newTestGroup(n int) *Group {
	return NewGroup(n, func(*Shard, *Work) {}, func(int) any { return nil })
}

// While LockAll waits for a busy shard it holds none of the others: their clients go on.
func TestLockAllWaitsHoldingNothing(t *testing.T) {
	g := newTestGroup(8)
	release, held := make(chan struct{}), make(chan struct{})
	go g.Do(5, func(*Shard) { close(held); <-release })
	<-held
	locked := make(chan struct{})
	go func() { g.LockAll(); close(locked) }()
	deadline := time.Now().Add(5 * time.Second)
	for g.Shards[5].waiting.Load() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("LockAll never waited for shard 5")
		}
		time.Sleep(time.Millisecond)
	}
	for _, id := range []int32{0, 2, 4, 7} {
		ok := false
		for !ok && time.Now().Before(deadline) {
			if ok = g.TryLock(id); !ok {
				time.Sleep(time.Millisecond)
			}
		}
		if !ok {
			t.Fatalf("shard %d stayed taken while LockAll waited for shard 5", id)
		}
		g.Unlock([]int32{id})
	}
	select {
	case <-locked:
		t.Fatal("LockAll returned while shard 5 was held")
	default:
	}
	close(release)
	select {
	case <-locked:
	case <-time.After(5 * time.Second):
		t.Fatal("LockAll did not return once shard 5 was free")
	}
	for i, sh := range g.Shards {
		if !sh.token.Load() {
			t.Fatalf("shard %d not held after LockAll", i)
		}
	}
	g.UnlockAll()
	if w := g.Shards[5].waiting.Load(); w != 0 {
		t.Fatalf("shard 5 still counts %d waiters", w)
	}
}

// Under goroutines that keep taking shards, LockAll still gets through (its last resort holds
// what it has), and while it holds everything nobody else runs.
func TestLockAllUnderLoad(t *testing.T) {
	g := newTestGroup(16)
	var stop atomic.Bool
	var inside atomic.Int32
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; !stop.Load(); i++ {
				g.Do((w*7+i)%16, func(*Shard) {
					inside.Add(1)
					for range 200 {
						_ = stop.Load()
					}
					inside.Add(-1)
				})
			}
		}()
	}
	for range 200 {
		g.LockAll()
		if n := inside.Load(); n != 0 {
			t.Fatalf("%d goroutines ran inside a shard while LockAll held them all", n)
		}
		g.UnlockAll()
	}
	stop.Store(true)
	wg.Wait()
	for i, sh := range g.Shards {
		if sh.waiting.Load() != 0 || sh.token.Load() {
			t.Fatalf("shard %d left waiting=%d token=%v", i, sh.waiting.Load(), sh.token.Load())
		}
	}
}
