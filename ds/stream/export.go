package stream

import (
	"errors"
	"fmt"
)

// What the RDB layer (or any copier) reads and rebuilds a stream from.
//
// Reading: the live entries are Range(ID{}, Max, false) (ID and field/value pairs, in order); the
// metadata is Meta(); the groups are Groups(), each with Name, LastID, EntriesRead, its PEL()
// (NACKs in ID order: ID, DeliveryTime in unix ms, DeliveryCount, owning Consumer) and its
// Consumers() (Name, SeenTime in unix ms, and their own PEL(), the same NACKs).
//
// Rebuilding, in this order: s := New(); s.Load(id, fv, lim) for every entry in ID order;
// s.SetMeta(meta); for each group g := s.CreateGroup(name, lastID, entriesRead), then
// g.LoadNACK(id, deliveryTime, count) for each PEL entry in ID order, then per consumer
// c := g.CreateConsumer(name, seenTime) and g.LoadConsumerNACK(c, id) for each of its pending
// IDs; last g.CheckLoaded(). Each returns an error for input a well-formed stream cannot hold
// (out of order, duplicate, a length that disagrees), so a corrupt file is refused, not trusted.
// Deleted entries are not carried: a rebuilt stream holds its live entries in fresh blocks.

// Meta is a stream's metadata.
type Meta struct {
	Length       uint64
	LastID       ID
	FirstID      ID
	MaxDeletedID ID
	EntriesAdded uint64
}

// Meta returns s's metadata.
func (s *Stream) Meta() Meta {
	return Meta{Length: s.length, LastID: s.lastID, FirstID: s.firstID, MaxDeletedID: s.maxDeleted, EntriesAdded: s.entriesAdded}
}

// Load appends an entry while rebuilding: as Add, IDs strictly growing.
func (s *Stream) Load(id ID, fv [][]byte, lim Limits) error {
	if len(fv) == 0 || len(fv)%2 != 0 {
		return errors.New("stream: an entry needs field/value pairs")
	}
	return s.Add(id, fv, lim)
}

// SetMeta sets the metadata of a rebuilt stream after its entries are loaded.
func (s *Stream) SetMeta(m Meta) error {
	switch {
	case m.Length != s.length:
		return fmt.Errorf("stream: length %d, %d entries loaded", m.Length, s.length)
	case m.LastID.Less(s.lastID):
		return fmt.Errorf("stream: last ID %v below the last entry %v", m.LastID, s.lastID)
	case m.EntriesAdded < s.length:
		return fmt.Errorf("stream: entries added %d below the length %d", m.EntriesAdded, s.length)
	}
	s.lastID, s.maxDeleted, s.entriesAdded = m.LastID, m.MaxDeletedID, m.EntriesAdded
	if s.length == 0 {
		s.firstID = ID{}
	}
	return nil
}

// LoadNACK adds a pending entry not yet owned by a consumer (LoadConsumerNACK gives it one);
// IDs must grow.
func (g *Group) LoadNACK(id ID, deliveryTime int64, count uint64) error {
	if n := len(g.pel); n > 0 && !g.pel[n-1].ID.Less(id) {
		return fmt.Errorf("stream: group %q: pending ID %v out of order", g.Name, id)
	}
	g.pel = append(g.pel, &NACK{ID: id, DeliveryTime: deliveryTime, DeliveryCount: count})
	return nil
}

// LoadConsumerNACK gives the loaded pending entry id to c.
func (g *Group) LoadConsumerNACK(c *Consumer, id ID) error {
	n := g.Pending(id)
	switch {
	case n == nil:
		return fmt.Errorf("stream: consumer %q: %v is not pending in group %q", c.Name, id, g.Name)
	case n.Consumer != nil:
		return fmt.Errorf("stream: %v pending for two consumers of group %q", id, g.Name)
	}
	n.Consumer = c
	c.pel = insertNACK(c.pel, n)
	return nil
}

// CheckLoaded reports a pending entry no consumer owns.
func (g *Group) CheckLoaded() error {
	for _, n := range g.pel {
		if n.Consumer == nil {
			return fmt.Errorf("stream: group %q: %v pending for no consumer", g.Name, n.ID)
		}
	}
	return nil
}
