package keyspace

import (
	"math/rand/v2"
	"sync/atomic"
)

// LFU is the logarithmic access counter of Redis's LFU policies (evict.c's LFULogIncr and
// LFUDecrAndReturn), kept in Entry.Freq with Entry.Access as its decay clock: on each access
// the counter first loses one per DecayTime minutes since the last access, then grows by one
// with probability 1/((counter-LFUInitVal)*LogFactor+1). The command layer turns it on with a
// maxmemory-policy *-lfu and sets the factors from lfu-log-factor and lfu-decay-time; one LFU
// is shared by every keyspace of an engine.
type LFU struct {
	On        atomic.Bool
	LogFactor atomic.Int64
	DecayTime atomic.Int64 // minutes; 0: no decay
}

// Decayed is e's counter as of now (unix ns), less the periods it has been idle: what OBJECT
// FREQ reports and the LFU policies rank by.
func (l *LFU) Decayed(e *Entry, now int64) uint8 {
	return decayed(e.Freq, e.Access, now, l.DecayTime.Load())
}

// DecayedFreq is e's counter as of now less one per decay minutes idle (decay 0: none), for a
// caller that reads lfu-decay-time itself.
func DecayedFreq(e *Entry, now int64, decay int64) uint8 {
	return decayed(e.Freq, e.Access, now, decay)
}

func decayed(freq uint8, access uint32, now int64, decay int64) uint8 {
	if decay <= 0 {
		return freq
	}
	s := uint32(now / 1e9)
	idle := int64(s - min(access, s))
	periods := idle / 60 / decay
	if periods >= int64(freq) {
		return 0
	}
	return freq - uint8(periods)
}

// logIncr is LFULogIncr.
func logIncr(freq uint8, factor int64) uint8 {
	if freq == 255 {
		return 255
	}
	base := max(float64(freq)-LFUInitVal, 0)
	if rand.Float64() < 1/(base*float64(factor)+1) {
		return freq + 1
	}
	return freq
}

// access records an access to e at now: its time, and with LFU on its counter. Only the
// token holder calls it (FindShared hands an LFU access back to the token).
func (ks *Keyspace) access(e *Entry, now int64) {
	if l := ks.LFU; l != nil && l.On.Load() {
		e.Freq = logIncr(decayed(e.Freq, e.Access, now, l.DecayTime.Load()), l.LogFactor.Load())
	}
	e.touch(now)
}

// PeekAny returns key's entry, expired or not, without reclaiming or touching it: for the
// command layer's accounting and eviction, which look at an entry they must not change.
func (ks *Keyspace) PeekAny(key []byte, h uint64) *Entry {
	e, _ := ks.find(key, h)
	return e
}

// Sample returns a random entry, expired or not, or nil when the keyspace is empty, without
// reclaiming anything: the eviction pool's sampling. r supplies random numbers.
func (ks *Keyspace) Sample(r func() uint64) *Entry {
	if ks.count == 0 {
		return nil
	}
	var b *Entry
	for tries := 0; b == nil; tries++ {
		if tries > 4*(len(ks.buckets)+len(ks.old)) {
			return nil
		}
		b = ks.randomBucket(r)
	}
	return pickInChain(b, r)
}

// pickInChain returns a random entry of the bucket chain that starts at b (not nil).
func pickInChain(b *Entry, r func() uint64) *Entry {
	n := 0
	for e := b; e != nil; e = e.next {
		n++
	}
	e := b
	for i := int(r() % uint64(n)); i > 0; i-- {
		e = e.next
	}
	return e
}
