package list

import (
	"math/rand/v2"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/hotkv/hotkv/ds/internal/smallbench"
)

var value256 = []byte(strings.Repeat("v", 256))

// queueList returns a list of n 256-byte elements.
func queueList(n int) *List {
	l := New(-2)
	for range n {
		l.PushBack(value256)
	}
	return l
}

// A list used as a queue (push at one end, pop at the other) reuses the buffers of the nodes it
// empties: no allocation in steady state. The allocations are counted over whole windows of
// 20,000 steps (many trips of every element through the list), since AllocsPerRun's average per
// step rounds an allocation every few hundred steps down to zero.
func TestQueueAllocatesNothing(t *testing.T) {
	for _, front := range []bool{true, false} {
		l := queueList(1000)
		var sc [maxIntLen]byte
		step := func() {
			if front {
				l.PushFront(value256)
				l.PopBack(sc[:0])
			} else {
				l.PushBack(value256)
				l.PopFront(sc[:0])
			}
		}
		for range 5000 {
			step()
		}
		window := func() {
			for range 20000 {
				step()
			}
		}
		if n := testing.AllocsPerRun(3, window); n != 0 {
			t.Errorf("push front %v: %v allocations per 20,000 pushes and pops", front, n)
		}
		l.check(t)
	}
}

func BenchmarkList(b *testing.B) {
	var sc [maxIntLen]byte
	b.Run("PushFront-PopBack", func(b *testing.B) {
		l := queueList(1000)
		b.ReportAllocs()
		b.SetBytes(256)
		for b.Loop() {
			l.PushFront(value256)
			l.PopBack(sc[:0])
		}
	})
	b.Run("PushBack-PopFront-ints", func(b *testing.B) {
		l := New(-2)
		v := []byte("123456")
		for range 1000 {
			l.PushBack(v)
		}
		b.ReportAllocs()
		for b.Loop() {
			l.PushBack(v)
			l.PopFront(sc[:0])
		}
	})
	for _, n := range []int{1000, 1000000} {
		l := New(-2)
		for i := range n {
			l.PushBack([]byte("member:" + strconv.Itoa(i)))
		}
		b.Run("Index-middle-"+strconv.Itoa(n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				l.Index(n/2, sc[:0])
			}
		})
		// One position measures mostly how far into its node it falls (the entries walked
		// there); positions spread over the middle half measure the walk to a node as well.
		b.Run("Index-spread-"+strconv.Itoa(n), func(b *testing.B) {
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				l.Index(n/4+i*7919%(n/2), sc[:0])
				i++
			}
		})
		b.Run("Set-middle-"+strconv.Itoa(n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				l.Set(n/2, []byte("member:xxxxxx"))
			}
		})
		b.Run("Insert-Delete-middle-"+strconv.Itoa(n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				l.Insert(n/3, []byte("inserted"))
				l.DeleteRange(n/3, 1)
			}
		})
	}
}

// BenchmarkSmallCollections builds many small lists the way applications do (and the issue's
// small-collections table measures): one RPUSH per element, round-robin over the lists, element
// 1 of every list, then element 2, ... of random non-numeric bytes. It reports the bytes each
// list keeps live (after a collection), the bytes its pushes allocated in all (the garbage
// collector's work: what exceeds live-B/list was outgrown buffers), and allocations per list.
// The time per op is the building of one list.
func BenchmarkSmallCollections(b *testing.B) {
	smallbench.Run(b, func(b *testing.B, count, size int) { benchSmallLists(b, 1<<15, count, size) })
}

func benchSmallLists(b *testing.B, lists, count, size int) {
	rng := rand.New(rand.NewPCG(1, 2))
	elems := make([][]byte, count*lists)
	for i := range elems {
		elems[i] = make([]byte, size)
		for k := range elems[i] {
			elems[i][k] = 'a' + byte(rng.IntN(26))
		}
	}
	ls := make([]*List, lists)
	var before, after runtime.MemStats
	var live, alloc, mallocs uint64
	rounds := 0
	for b.Loop() {
		b.StopTimer()
		clear(ls)
		runtime.GC()
		runtime.ReadMemStats(&before)
		b.StartTimer()
		for i := range ls {
			ls[i] = New(-2)
		}
		for j := range count {
			for i, l := range ls {
				l.PushBack(elems[j*lists+i])
			}
		}
		b.StopTimer()
		runtime.GC()
		runtime.ReadMemStats(&after)
		live += after.HeapAlloc - before.HeapAlloc
		alloc += after.TotalAlloc - before.TotalAlloc
		mallocs += after.Mallocs - before.Mallocs
		rounds++
		b.StartTimer()
	}
	runtime.KeepAlive(ls)
	per := float64(rounds * lists)
	b.ReportMetric(float64(live)/per, "live-B/list")
	b.ReportMetric(float64(alloc)/per, "alloc-B/list")
	b.ReportMetric(float64(mallocs)/per, "allocs/list")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/per, "ns/list")
	b.ReportMetric(0, "ns/op")
}
