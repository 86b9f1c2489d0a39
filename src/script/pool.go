package script

import (
	"runtime"
	"sync"
	"sync/atomic"
	_ "unsafe" // go:linkname
)

// procPin and procUnpin give the P the goroutine runs on, which picks the slot tried first, so
// that the runs of two cores use states of their own. The same pull linkname as pipeline's
// readerSlot (docs/decisions.md, "Go runtime and system calls"): the runtime keeps these two for
// the modules that use them.
//
//go:linkname procPin runtime.procPin
func procPin() int

//go:linkname procUnpin runtime.procUnpin
func procUnpin()

// slot holds one interpreter state. Ownership: whoever wins the CAS of used from false to true
// owns st until it stores false; the watchdog only reads the run fields (seq, wrote, killSeq,
// busy), which are atomic.
type slot struct {
	used atomic.Bool
	st   *state
	run  runMark
	_    [64]byte // keep slots of two cores off one cache line
}

// pool is the set of slots: one per P at start, more when more runs overlap (a run preempted
// mid-script while another starts on the same P). It never shrinks; its size is the most runs
// that ever overlapped.
type pool struct {
	e     *Engine
	slots atomic.Pointer[[]*slot]
	mu    sync.Mutex // serializes growth
}

func (p *pool) init(e *Engine) {
	p.e = e
	n := runtime.GOMAXPROCS(0)
	s := make([]*slot, n)
	for i := range s {
		s[i] = &slot{}
	}
	p.slots.Store(&s)
}

// acquire returns a slot owned by the caller, its state built.
func (p *pool) acquire() *slot {
	slots := *p.slots.Load()
	home := procPin()
	procUnpin()
	if home < len(slots) && slots[home].used.CompareAndSwap(false, true) {
		return p.ready(slots[home])
	}
	for _, s := range slots {
		if s.used.CompareAndSwap(false, true) {
			return p.ready(s)
		}
	}
	return p.ready(p.grow())
}

func (p *pool) grow() *slot {
	p.mu.Lock()
	defer p.mu.Unlock()
	old := *p.slots.Load()
	s := &slot{}
	s.used.Store(true)
	next := append(old[:len(old):len(old)], s)
	p.slots.Store(&next)
	return s
}

// ready builds the slot's state on first use.
func (p *pool) ready(s *slot) *slot {
	if s.st == nil {
		s.st = newState(p.e, s)
	}
	return s
}

func (p *pool) release(s *slot) {
	if s.st.broken {
		s.st.L.Close()
		s.st = nil
	}
	s.used.Store(false)
}

// each calls fn for every slot (the watchdog, Kill).
func (p *pool) each(fn func(*slot)) {
	for _, s := range *p.slots.Load() {
		fn(s)
	}
}
