package list

import (
	"strconv"
	"strings"
	"testing"
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
// empties: no allocation in steady state.
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
		if n := testing.AllocsPerRun(5000, step); n != 0 {
			t.Errorf("push front %v: %v allocations per push and pop", front, n)
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
