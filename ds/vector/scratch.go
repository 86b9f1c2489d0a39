package vector

import (
	"math"
	"sync"
)

type item struct {
	d  float32
	id uint32
}

// scratch is one goroutine's search state: visited marks as epochs (a node is visited when its mark
// equals the current epoch, so starting a search costs one increment, not a clear), the two heaps and
// the prepared query. It comes from pool and is never shared while in use.
type scratch struct {
	marks []uint32
	epoch uint32
	cand  minHeap
	res   maxHeap
	q     query
	a, b  []item
	c, d  []item
	ids   []uint32
	nbs   []uint32 // searchLayer's unvisited neighbours of the node it expands
	// narrowTo (0: never) is the beam searchLayer narrows to once an accepted result is within
	// narrowAt (SearchNarrow); putScratch resets it.
	narrowTo int
	narrowAt float32
}

var pool = sync.Pool{New: func() any { return new(scratch) }}

// getScratch returns a scratch whose marks cover ids below n.
func getScratch(n int) *scratch {
	sc := pool.Get().(*scratch)
	if len(sc.marks) < n {
		sc.marks = make([]uint32, max(n, 2*len(sc.marks)))
		sc.epoch = 0
	}
	return sc
}

func putScratch(sc *scratch) {
	sc.narrowTo = 0
	pool.Put(sc)
}

func (sc *scratch) newEpoch() {
	sc.epoch++
	if sc.epoch == 0 {
		clear(sc.marks)
		sc.epoch = 1
	}
}

// visit marks id and reports whether it was unvisited in this epoch.
func (sc *scratch) visit(id uint32) bool {
	if sc.marks[id] == sc.epoch {
		return false
	}
	sc.marks[id] = sc.epoch
	return true
}

// narrowed is the beam after an accepted result at distance d: narrowTo once d is within
// narrowAt (SearchNarrow), else ef.
func (sc *scratch) narrowed(d float32, ef int) int {
	if sc.narrowTo > 0 && d <= sc.narrowAt {
		return min(ef, sc.narrowTo)
	}
	return ef
}

// minHeap pops the nearest item first.
type minHeap []item

func (h *minHeap) push(x item) {
	a := append(*h, x)
	i := len(a) - 1
	for i > 0 {
		p := (i - 1) / 2
		if a[p].d <= x.d {
			break
		}
		a[i] = a[p]
		i = p
	}
	a[i] = x
	*h = a
}

func (h *minHeap) pop() item {
	a := *h
	top := a[0]
	n := len(a) - 1
	x := a[n]
	a = a[:n]
	i := 0
	for {
		c := 2*i + 1
		if c >= n {
			break
		}
		if c+1 < n && a[c+1].d < a[c].d {
			c++
		}
		if x.d <= a[c].d {
			break
		}
		a[i] = a[c]
		i = c
	}
	if n > 0 {
		a[i] = x
	}
	*h = a
	return top
}

// maxHeap keeps the farthest item on top, so a bounded result set drops its worst first.
type maxHeap []item

func (h maxHeap) worst() float32 {
	if len(h) == 0 {
		return float32(math.Inf(1))
	}
	return h[0].d
}

func (h *maxHeap) push(x item) {
	a := append(*h, x)
	i := len(a) - 1
	for i > 0 {
		p := (i - 1) / 2
		if a[p].d >= x.d {
			break
		}
		a[i] = a[p]
		i = p
	}
	a[i] = x
	*h = a
}

func (h *maxHeap) pop() item {
	a := *h
	top := a[0]
	n := len(a) - 1
	x := a[n]
	a = a[:n]
	i := 0
	for {
		c := 2*i + 1
		if c >= n {
			break
		}
		if c+1 < n && a[c+1].d > a[c].d {
			c++
		}
		if x.d >= a[c].d {
			break
		}
		a[i] = a[c]
		i = c
	}
	if n > 0 {
		a[i] = x
	}
	*h = a
	return top
}

// drainAscending empties h into dst, nearest first.
func (h *maxHeap) drainAscending(dst []item) []item {
	n := len(*h)
	dst = grow(dst, n)
	for i := n - 1; i >= 0; i-- {
		dst[i] = h.pop()
	}
	return dst
}
