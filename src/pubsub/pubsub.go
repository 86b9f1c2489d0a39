// Package pubsub is the registry of pub/sub subscriptions: channels, patterns and shard channels,
// each with the subscribers that receive what is published to it. It knows nothing of RESP or
// connections: a Subscriber's Deliver encodes and queues a message for its connection.
//
// The registry is shared by every connection and every core, so it is a concurrent map
// (xsync) of small sets: PUBLISH takes no shard token and no global lock, only the read lock of
// the one channel's set (and of each pattern's set that matches).
package pubsub

import (
	"sort"
	"sync"
	"sync/atomic"

	"github.com/hotkv/hotkv/ds/strs"
	"github.com/puzpuzpuz/xsync/v3"
)

// Kind says what a subscription names.
type Kind uint8

// The subscription kinds.
const (
	Channel      Kind = iota // SUBSCRIBE
	Pattern                  // PSUBSCRIBE: a glob over channel names
	ShardChannel             // SSUBSCRIBE
	kinds
)

// Subscriber is one connection's side of its subscriptions.
type Subscriber struct {
	ID uint64
	// Deliver queues a message for the connection: pattern is nil unless a pattern matched.
	// It is called by publishers on any goroutine, concurrently, and must not block. It reports
	// whether the connection must be woken to write it (its queue was empty).
	Deliver func(kind Kind, pattern, channel, msg []byte) (wake bool)
	// Wake asks the connection to write what was queued.
	Wake func()
}

// set is the subscribers of one name.
type set struct {
	mu     sync.RWMutex
	subs   map[uint64]*Subscriber
	dead   bool // removed from the registry: a subscribe that finds it retries
	listed bool // a pattern's set is in Registry.pats
}

// Registry holds every subscription of a server.
type Registry struct {
	names [kinds]*xsync.MapOf[string, *set]
	// pats is the pattern list publishers scan, replaced whole on every change (copy on
	// write): PUBLISH reads it without a lock.
	pats   atomic.Pointer[[]patternSet]
	patsMu sync.Mutex
}

type patternSet struct {
	pattern []byte
	set     *set
}

// New returns an empty registry.
func New() *Registry {
	r := &Registry{}
	for k := range r.names {
		r.names[k] = xsync.NewMapOf[string, *set]()
	}
	r.pats.Store(&[]patternSet{})
	return r
}

// Subscribe adds sub to name's subscribers; it reports false if sub was subscribed already.
func (r *Registry) Subscribe(kind Kind, name string, sub *Subscriber) bool {
	for {
		st, _ := r.names[kind].LoadOrCompute(name, func() *set {
			return &set{subs: map[uint64]*Subscriber{}}
		})
		st.mu.Lock()
		if st.dead {
			st.mu.Unlock()
			continue // emptied and removed meanwhile: make a new one
		}
		_, had := st.subs[sub.ID]
		st.subs[sub.ID] = sub
		if kind == Pattern && !st.listed {
			// Under st.mu: whoever first subscribes lists it, before its subscription counts,
			// and an Unsubscribe that empties st follows.
			r.addPattern(name, st)
			st.listed = true
		}
		st.mu.Unlock()
		return !had
	}
}

// Unsubscribe removes sub from name's subscribers; it reports false if it was not subscribed.
func (r *Registry) Unsubscribe(kind Kind, name string, sub *Subscriber) bool {
	st, ok := r.names[kind].Load(name)
	if !ok {
		return false
	}
	st.mu.Lock()
	_, had := st.subs[sub.ID]
	delete(st.subs, sub.ID)
	empty := len(st.subs) == 0 && !st.dead
	if empty {
		st.dead = true
	}
	st.mu.Unlock()
	if empty {
		r.names[kind].Delete(name)
		if kind == Pattern {
			r.removePattern(st)
		}
	}
	return had
}

func (r *Registry) addPattern(name string, st *set) {
	r.patsMu.Lock()
	defer r.patsMu.Unlock()
	old := *r.pats.Load()
	next := make([]patternSet, len(old), len(old)+1)
	copy(next, old)
	next = append(next, patternSet{pattern: []byte(name), set: st})
	r.pats.Store(&next)
}

func (r *Registry) removePattern(st *set) {
	r.patsMu.Lock()
	defer r.patsMu.Unlock()
	old := *r.pats.Load()
	next := make([]patternSet, 0, len(old))
	for _, p := range old {
		if p.set != st {
			next = append(next, p)
		}
	}
	r.pats.Store(&next)
}

// Publish delivers msg to channel's subscribers and, for Channel, to every subscriber of a
// matching pattern (once per matching pattern, as Redis does). It returns how many deliveries
// it made. Subscribers to wake are appended to *woken, for the publisher to wake once its batch
// has run (so that a pipeline of publishes wakes each subscriber once); with woken nil they are
// woken at once.
func (r *Registry) Publish(kind Kind, channel, msg []byte, woken *[]*Subscriber) int {
	n := 0
	if st, ok := r.names[kind].Load(string(channel)); ok {
		n += st.deliver(kind, nil, channel, msg, woken)
	}
	if kind != Channel {
		return n
	}
	for _, p := range *r.pats.Load() {
		if strs.Glob(p.pattern, channel, false) {
			n += p.set.deliver(Pattern, p.pattern, channel, msg, woken)
		}
	}
	return n
}

func (st *set) deliver(kind Kind, pattern, channel, msg []byte, woken *[]*Subscriber) int {
	st.mu.RLock()
	defer st.mu.RUnlock()
	for _, s := range st.subs {
		switch wake := s.Deliver(kind, pattern, channel, msg); {
		case wake && woken != nil:
			*woken = append(*woken, s)
		case wake && s.Wake != nil:
			s.Wake()
		}
	}
	return len(st.subs)
}

// Interested reports whether a publish to channel would reach anyone: a quick test before a
// publisher builds a message (keyspace notifications).
func (r *Registry) Interested(channel []byte) bool {
	if _, ok := r.names[Channel].Load(string(channel)); ok {
		return true
	}
	for _, p := range *r.pats.Load() {
		if strs.Glob(p.pattern, channel, false) {
			return true
		}
	}
	return false
}

// Any reports whether there is any subscription to channels or patterns at all.
func (r *Registry) Any() bool {
	return r.names[Channel].Size() > 0 || len(*r.pats.Load()) > 0
}

// Names returns the names of kind with subscribers, matching pattern when it is not nil, sorted.
func (r *Registry) Names(kind Kind, pattern []byte) []string {
	var out []string
	r.names[kind].Range(func(name string, _ *set) bool {
		if pattern == nil || strs.Glob(pattern, []byte(name), false) {
			out = append(out, name)
		}
		return true
	})
	sort.Strings(out)
	return out
}

// Count returns how many subscribers name of kind has.
func (r *Registry) Count(kind Kind, name string) int {
	st, ok := r.names[kind].Load(name)
	if !ok {
		return 0
	}
	st.mu.RLock()
	defer st.mu.RUnlock()
	return len(st.subs)
}

// Len returns how many names of kind have subscribers.
func (r *Registry) Len(kind Kind) int { return r.names[kind].Size() }
