package stream

import (
	"slices"
	"sort"
)

// InvalidEntriesRead is a group's entries-read when it is unknown (Redis's
// SCG_INVALID_ENTRIES_READ).
const InvalidEntriesRead = -1

// NACK is a pending entry: delivered to Consumer, not yet acknowledged.
type NACK struct {
	ID            ID
	DeliveryTime  int64 // unix ms of the last delivery
	DeliveryCount uint64
	Consumer      *Consumer
}

// Consumer is one consumer of a group, with the entries pending for it (its PEL, by ID).
type Consumer struct {
	Name     string
	SeenTime int64 // unix ms of its last command
	pel      []*NACK
}

// Pending is the number of entries pending for c.
func (c *Consumer) Pending() int { return len(c.pel) }

// PEL returns c's pending entries in ID order; the caller must not change the slice.
func (c *Consumer) PEL() []*NACK { return c.pel }

// Group is a consumer group: its last delivered ID, its entries-read counter, its PEL (by ID)
// and its consumers (by name).
type Group struct {
	Name        string
	LastID      ID
	EntriesRead int64 // InvalidEntriesRead when unknown
	pel         []*NACK
	consumers   []*Consumer
	slab        []NACK // NACKs allocated ahead for the next deliveries (newNACK)
}

// nackSlab bounds how many NACKs a group allocates at once.
const nackSlab = 16

// newNACK returns a fresh NACK from the group's slab, refilled with as many as the group has
// pending (1 to nackSlab): a busy queue allocates once per 16 deliveries, and a group with
// few pending entries holds no more spare than it has.
func (g *Group) newNACK() *NACK {
	if len(g.slab) == 0 {
		g.slab = make([]NACK, min(nackSlab, max(1, len(g.pel))))
	}
	n := &g.slab[0]
	g.slab = g.slab[1:]
	return n
}

// groupSet holds a stream's consumer groups by name; nil while there is none.
type groupSet struct{ list []*Group }

func (g *groupSet) clone() *groupSet {
	if g == nil {
		return nil
	}
	ng := &groupSet{list: make([]*Group, len(g.list))}
	for i, gr := range g.list {
		ng.list[i] = gr.clone()
	}
	return ng
}

func (gr *Group) clone() *Group {
	ng := &Group{Name: gr.Name, LastID: gr.LastID, EntriesRead: gr.EntriesRead}
	byOld := map[*Consumer]*Consumer{}
	for _, c := range gr.consumers {
		nc := &Consumer{Name: c.Name, SeenTime: c.SeenTime}
		byOld[c] = nc
		ng.consumers = append(ng.consumers, nc)
	}
	for _, n := range gr.pel {
		nn := &NACK{ID: n.ID, DeliveryTime: n.DeliveryTime, DeliveryCount: n.DeliveryCount, Consumer: byOld[n.Consumer]}
		ng.pel = append(ng.pel, nn)
		nn.Consumer.pel = append(nn.Consumer.pel, nn)
	}
	return ng
}

func (g *groupSet) memoryBytes() int {
	if g == nil {
		return 0
	}
	n := 24 + 8*cap(g.list)
	for _, gr := range g.list {
		n += 96 + 56*(len(gr.pel)+len(gr.slab)) + 8*cap(gr.pel)
		for _, c := range gr.consumers {
			n += 64 + len(c.Name) + 8*cap(c.pel)
		}
	}
	return n
}

// Groups returns the groups in name order; the caller must not change the slice.
func (s *Stream) Groups() []*Group {
	if s.groups == nil {
		return nil
	}
	return s.groups.list
}

// Group returns the group named name, or nil.
func (s *Stream) Group(name []byte) *Group {
	if s.groups == nil {
		return nil
	}
	i, ok := s.groupIndex(name)
	if !ok {
		return nil
	}
	return s.groups.list[i]
}

func (s *Stream) groupIndex(name []byte) (int, bool) {
	return sort.Find(len(s.groups.list), func(i int) int { return cmpName(name, s.groups.list[i].Name) })
}

func cmpName(a []byte, b string) int {
	switch {
	case string(a) < b:
		return -1
	case string(a) > b:
		return 1
	}
	return 0
}

// CreateGroup adds a group reading after last; nil when the name is taken.
func (s *Stream) CreateGroup(name []byte, last ID, entriesRead int64) *Group {
	if s.groups == nil {
		s.groups = &groupSet{}
	}
	i, ok := s.groupIndex(name)
	if ok {
		return nil
	}
	g := &Group{Name: string(name), LastID: last, EntriesRead: entriesRead}
	s.groups.list = slices.Insert(s.groups.list, i, g)
	return g
}

// DestroyGroup removes the group; false when there is none.
func (s *Stream) DestroyGroup(name []byte) bool {
	if s.groups == nil {
		return false
	}
	i, ok := s.groupIndex(name)
	if ok {
		s.groups.list = slices.Delete(s.groups.list, i, i+1)
	}
	return ok
}

// Consumers returns the group's consumers in name order; the caller must not change the slice.
func (g *Group) Consumers() []*Consumer { return g.consumers }

// PEL returns the group's pending entries in ID order; the caller must not change the slice.
func (g *Group) PEL() []*NACK { return g.pel }

func (g *Group) consumerIndex(name []byte) (int, bool) {
	return sort.Find(len(g.consumers), func(i int) int { return cmpName(name, g.consumers[i].Name) })
}

// Consumer returns the consumer named name, or nil.
func (g *Group) Consumer(name []byte) *Consumer {
	if i, ok := g.consumerIndex(name); ok {
		return g.consumers[i]
	}
	return nil
}

// CreateConsumer adds a consumer seen at nowMs; nil when the name is taken.
func (g *Group) CreateConsumer(name []byte, nowMs int64) *Consumer {
	i, ok := g.consumerIndex(name)
	if ok {
		return nil
	}
	c := &Consumer{Name: string(name), SeenTime: nowMs}
	g.consumers = slices.Insert(g.consumers, i, c)
	return c
}

// DeleteConsumer removes the consumer and its pending entries from the group, returning how many
// it had.
func (g *Group) DeleteConsumer(c *Consumer) int {
	n := len(c.pel)
	for _, nack := range c.pel {
		g.pel = removeNACK(g.pel, nack.ID)
	}
	if i, ok := g.consumerIndex([]byte(c.Name)); ok {
		g.consumers = slices.Delete(g.consumers, i, i+1)
	}
	return n
}

func findNACK(pel []*NACK, id ID) (int, bool) {
	return sort.Find(len(pel), func(i int) int { return id.Cmp(pel[i].ID) })
}

func removeNACK(pel []*NACK, id ID) []*NACK {
	if i, ok := findNACK(pel, id); ok {
		pel = slices.Delete(pel, i, i+1)
	}
	return pel
}

func insertNACK(pel []*NACK, n *NACK) []*NACK {
	if k := len(pel); k == 0 || pel[k-1].ID.Less(n.ID) {
		return append(pel, n) // a delivery of a new entry: past every pending one
	}
	i, _ := findNACK(pel, n.ID)
	return slices.Insert(pel, i, n)
}

// Pending returns the group's NACK of id, or nil.
func (g *Group) Pending(id ID) *NACK {
	if i, ok := findNACK(g.pel, id); ok {
		return g.pel[i]
	}
	return nil
}

// Ack removes id from the group's PEL and its consumer's; false when it was not pending.
func (g *Group) Ack(id ID) bool {
	n := g.Pending(id)
	if n == nil {
		return false
	}
	g.pel = removeNACK(g.pel, id)
	n.Consumer.pel = removeNACK(n.Consumer.pel, id)
	return true
}

// Deliver records id delivered to c at nowMs: a new NACK (count 1), or, when id is already
// pending (a group set back by XGROUP SETID), the NACK moved to c with its count back to 1.
func (g *Group) Deliver(id ID, c *Consumer, nowMs int64) *NACK {
	// A new entry past every pending one (the common case) needs no search.
	if k := len(g.pel); k > 0 && !g.pel[k-1].ID.Less(id) {
		if n := g.Pending(id); n != nil {
			n.Consumer.pel = removeNACK(n.Consumer.pel, id)
			n.Consumer, n.DeliveryTime, n.DeliveryCount = c, nowMs, 1
			c.pel = insertNACK(c.pel, n)
			return n
		}
	}
	n := g.newNACK()
	*n = NACK{ID: id, DeliveryTime: nowMs, DeliveryCount: 1, Consumer: c}
	g.pel = insertNACK(g.pel, n)
	c.pel = insertNACK(c.pel, n)
	return n
}

// Claim gives the pending n to c (XCLAIM, XAUTOCLAIM).
func (g *Group) Claim(n *NACK, c *Consumer) {
	if n.Consumer == c {
		return
	}
	n.Consumer.pel = removeNACK(n.Consumer.pel, n.ID)
	n.Consumer = c
	c.pel = insertNACK(c.pel, n)
}

// AddPending adds id pending for c without a delivery (XCLAIM … FORCE of an ID not pending, and
// the RDB loader).
func (g *Group) AddPending(id ID, c *Consumer, deliveryTime int64, count uint64) *NACK {
	n := &NACK{ID: id, DeliveryTime: deliveryTime, DeliveryCount: count, Consumer: c}
	g.pel = insertNACK(g.pel, n)
	c.pel = insertNACK(c.pel, n)
	return n
}

// Has reports whether the live entry id is in the stream.
func (s *Stream) Has(id ID) bool {
	it := s.Range(id, id, false)
	_, _, ok := it.Next()
	return ok
}

// HasTombstones reports whether a deleted entry may lie in start..Max, as Redis's
// streamRangeHasTombstones.
func (s *Stream) HasTombstones(start ID) bool {
	if s.length == 0 || s.maxDeleted.IsZero() || s.maxDeleted.Less(s.firstID) {
		return false
	}
	return !s.maxDeleted.Less(start)
}

// EstimateEntriesRead is Redis's streamEstimateDistanceFromFirstEverEntry: the entries-read
// counter of id, InvalidEntriesRead when it cannot be known.
func (s *Stream) EstimateEntriesRead(id ID) int64 {
	if s.entriesAdded == 0 {
		return 0
	}
	if s.length == 0 && id.Cmp(s.lastID) < 1 {
		return int64(s.entriesAdded)
	}
	switch c := id.Cmp(s.lastID); {
	case c == 0:
		return int64(s.entriesAdded)
	case c > 0:
		return InvalidEntriesRead
	}
	cmpFirst := id.Cmp(s.firstID)
	if s.maxDeleted.IsZero() || s.maxDeleted.Less(s.firstID) {
		switch {
		case cmpFirst < 0:
			return int64(s.entriesAdded - s.length)
		case cmpFirst == 0:
			return int64(s.entriesAdded - s.length + 1)
		}
	}
	return InvalidEntriesRead
}

// Lag is XINFO GROUPS' lag of g; ok false when it cannot be known (a null reply).
func (s *Stream) Lag(g *Group) (int64, bool) {
	if s.entriesAdded == 0 {
		return 0, true
	}
	if g.EntriesRead != InvalidEntriesRead && !s.HasTombstones(g.LastID) {
		return int64(s.entriesAdded) - g.EntriesRead, true
	}
	if n := s.EstimateEntriesRead(g.LastID); n != InvalidEntriesRead {
		return int64(s.entriesAdded) - n, true
	}
	return 0, false
}

// Advance moves g's last delivered ID to id (a read of new entries), keeping its entries-read
// counter as Redis does.
func (s *Stream) Advance(g *Group, id ID) {
	if !g.LastID.Less(id) {
		return
	}
	if g.EntriesRead != InvalidEntriesRead && !s.HasTombstones(id) {
		g.EntriesRead++
	} else if s.entriesAdded != 0 {
		g.EntriesRead = s.EstimateEntriesRead(id)
	}
	g.LastID = id
}
