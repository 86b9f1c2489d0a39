package rdb

import (
	"bytes"
	"encoding/binary"
	"strconv"
)

// Stream is a stream value: its live entries in ID order and its metadata.
type Stream struct {
	Entries      []StreamEntry
	Length       uint64 // number of live entries, as XLEN
	LastID       StreamID
	FirstID      StreamID // RDB v10+ (STREAM_LISTPACKS_2); older files: the first entry's ID
	MaxDeletedID StreamID // RDB v10+; zero in older files
	EntriesAdded uint64   // RDB v10+; older files: Length
	Groups       []StreamGroup
}

// StreamID is a stream entry ID.
type StreamID struct{ Ms, Seq uint64 }

// StreamEntry is one live entry.
type StreamEntry struct {
	ID     StreamID
	Fields [][]byte // field, value, field, value...
}

// StreamGroup is a consumer group.
type StreamGroup struct {
	Name        []byte
	LastID      StreamID
	EntriesRead int64 // -1 when unknown (Redis's SCG_INVALID_ENTRIES_READ, and every group of a file before v10)
	PEL         []StreamPending
	Consumers   []StreamConsumer
}

// StreamPending is an entry of a group's pending entries list.
type StreamPending struct {
	ID             StreamID
	DeliveryTimeMs int64
	DeliveryCount  uint64
	Consumer       []byte // decoding: the consumer whose PEL holds the ID (nil if none does)
}

// StreamConsumer is a consumer of a group.
type StreamConsumer struct {
	Name         []byte
	SeenTimeMs   int64
	ActiveTimeMs int64 // STREAM_LISTPACKS_3 (Redis 7.2) only; -1 otherwise. Not written by StreamValue
	PEL          []StreamID
}

// Stream entry flags in the listpack (t_stream.c).
const (
	streamFlagDeleted    = 1
	streamFlagSameFields = 2
)

// StreamValue appends a stream as Redis 7.0 writes it, STREAM_LISTPACKS_2
// (19): the listpack nodes keyed by their master entry's ID, then length, last
// ID, first ID, max deleted ID, entries added, and the consumer groups with
// their pending entries and consumers. Nodes hold up to stream-node-max-entries
// entries and about stream-node-max-bytes bytes.
func (e *Encoder) StreamValue(key []byte, s *Stream) {
	e.typeKey(TypeStreamListpacks2, key)
	out := e.Buf
	e.Buf = e.nodes[:0]
	count := 0
	lim := e.limits()
	for i := 0; i < len(s.Entries); {
		i = e.streamNode(s.Entries, i, lim)
		count++
	}
	nodes := e.Buf
	e.Buf = out
	e.Len(uint64(count))
	e.Buf = append(e.Buf, nodes...)
	e.nodes = nodes[:0]

	e.Len(s.Length)
	e.streamID(s.LastID)
	e.streamID(s.FirstID)
	e.streamID(s.MaxDeletedID)
	e.Len(s.EntriesAdded)
	e.Len(uint64(len(s.Groups)))
	for i := range s.Groups {
		g := &s.Groups[i]
		e.String(g.Name)
		e.streamID(g.LastID)
		e.Len(uint64(g.EntriesRead))
		e.Len(uint64(len(g.PEL)))
		for _, p := range g.PEL {
			e.rawID(p.ID)
			e.Buf = binary.LittleEndian.AppendUint64(e.Buf, uint64(p.DeliveryTimeMs))
			e.Len(p.DeliveryCount)
		}
		e.Len(uint64(len(g.Consumers)))
		for _, c := range g.Consumers {
			e.String(c.Name)
			e.Buf = binary.LittleEndian.AppendUint64(e.Buf, uint64(c.SeenTimeMs))
			e.Len(uint64(len(c.PEL)))
			for _, id := range c.PEL {
				e.rawID(id)
			}
		}
	}
}

// streamNode writes one node (its 16-byte master ID as a string, then its
// listpack) starting at entries[i], and returns the index after its last entry.
func (e *Encoder) streamNode(entries []StreamEntry, i int, lim *Limits) int {
	master := &entries[i]
	nf := len(master.Fields) / 2
	lp := &e.lp
	lp.Reset()
	lp.AppendInt(0) // count, patched below by rebuilding the header entry
	lp.AppendInt(0) // deleted
	lp.AppendInt(int64(nf))
	for f := 0; f < 2*nf; f += 2 {
		lp.Append(master.Fields[f])
	}
	lp.AppendInt(0) // master entry terminator
	j := i
	for ; j < len(entries); j++ {
		if j > i && (lim.StreamNodeMaxEntries > 0 && j-i >= lim.StreamNodeMaxEntries ||
			lim.StreamNodeMaxBytes > 0 && lp.Size() >= lim.StreamNodeMaxBytes) {
			break
		}
		en := &entries[j]
		n := len(en.Fields) / 2
		same := n == nf
		for f := 0; same && f < 2*n; f += 2 {
			same = bytes.Equal(en.Fields[f], master.Fields[f])
		}
		flags := int64(0)
		if same {
			flags = streamFlagSameFields
		}
		lp.AppendInt(flags)
		lp.AppendInt(int64(en.ID.Ms - master.ID.Ms))
		lp.AppendInt(int64(en.ID.Seq - master.ID.Seq))
		if same {
			for f := 1; f < 2*n; f += 2 {
				lp.Append(en.Fields[f])
			}
			lp.AppendInt(int64(n + 3))
		} else {
			lp.AppendInt(int64(n))
			for f := range 2 * n {
				lp.Append(en.Fields[f])
			}
			lp.AppendInt(int64(2*n + 4))
		}
	}
	b := lp.Bytes()
	b = patchFirstInt(b, int64(j-i))
	var id [16]byte
	binary.BigEndian.PutUint64(id[:], master.ID.Ms)
	binary.BigEndian.PutUint64(id[8:], master.ID.Seq)
	e.String(id[:])
	e.String(b)
	lp.Reset()
	return j
}

// patchFirstInt replaces a listpack's first entry, the integer 0 (one byte and
// its one-byte backlen), with v, moving the rest as needed.
func patchFirstInt(b []byte, v int64) []byte {
	if v >= 0 && v <= 127 { // same size as the 0 it replaces
		b[lpHeaderSize] = byte(v)
		return b
	}
	var t Listpack
	t.AppendInt(v)
	ent := t.b[lpHeaderSize:]
	old := 2
	grow := len(ent) - old
	if grow > 0 {
		b = append(b, make([]byte, grow)...)
		copy(b[lpHeaderSize+len(ent):], b[lpHeaderSize+old:len(b)-grow])
	}
	copy(b[lpHeaderSize:], ent)
	binary.LittleEndian.PutUint32(b, uint32(len(b)))
	return b
}

func (e *Encoder) streamID(id StreamID) {
	e.Len(id.Ms)
	e.Len(id.Seq)
}

func (e *Encoder) rawID(id StreamID) {
	e.Buf = binary.BigEndian.AppendUint64(e.Buf, id.Ms)
	e.Buf = binary.BigEndian.AppendUint64(e.Buf, id.Seq)
}

// stream reads a stream of type t (15, 19 or 21). Its entries and groups are
// freshly allocated, each element copied once from the node being parsed.
func (d *Decoder) stream(t byte) (*Stream, error) {
	s := new(Stream)
	nodes, err := d.rd.count()
	if err != nil {
		return nil, err
	}
	for range nodes {
		at := d.rd.offset()
		if d.blob, _, err = d.rd.str(d.blob[:0], &d.lzf); err != nil {
			return nil, err
		}
		if len(d.blob) != 16 {
			return nil, d.rd.corrupt(at, "stream node key entry is not the size of a stream ID")
		}
		master := StreamID{binary.BigEndian.Uint64(d.blob), binary.BigEndian.Uint64(d.blob[8:])}
		at = d.rd.offset()
		if d.blob, _, err = d.rd.str(d.blob[:0], &d.lzf); err != nil {
			return nil, err
		}
		if s.Entries, err = streamNodeEntries(s.Entries, d.blob, master); err != nil {
			return nil, d.rd.corrupt(at, "%v", err)
		}
	}
	if s.Length, err = d.rd.len(); err != nil {
		return nil, err
	}
	if s.LastID, err = d.streamID(); err != nil {
		return nil, err
	}
	if t >= TypeStreamListpacks2 {
		if s.FirstID, err = d.streamID(); err != nil {
			return nil, err
		}
		if s.MaxDeletedID, err = d.streamID(); err != nil {
			return nil, err
		}
		if s.EntriesAdded, err = d.rd.len(); err != nil {
			return nil, err
		}
	} else {
		s.EntriesAdded = s.Length
		if len(s.Entries) > 0 {
			s.FirstID = s.Entries[0].ID
		}
	}
	groups, err := d.rd.count()
	if err != nil {
		return nil, err
	}
	for range groups {
		g, err := d.streamGroup(t)
		if err != nil {
			return nil, err
		}
		s.Groups = append(s.Groups, g)
	}
	return s, nil
}

func (d *Decoder) streamID() (StreamID, error) {
	ms, err := d.rd.len()
	if err != nil {
		return StreamID{}, err
	}
	seq, err := d.rd.len()
	return StreamID{ms, seq}, err
}

func (d *Decoder) rawID() (StreamID, error) {
	b, err := d.rd.next(16)
	if err != nil {
		return StreamID{}, err
	}
	return StreamID{binary.BigEndian.Uint64(b), binary.BigEndian.Uint64(b[8:])}, nil
}

func (d *Decoder) streamGroup(t byte) (StreamGroup, error) {
	var g StreamGroup
	name, _, err := d.rd.str(nil, &d.lzf)
	if err != nil {
		return g, err
	}
	g.Name = name
	if g.LastID, err = d.streamID(); err != nil {
		return g, err
	}
	g.EntriesRead = -1
	if t >= TypeStreamListpacks2 {
		n, err := d.rd.len()
		if err != nil {
			return g, err
		}
		g.EntriesRead = int64(n)
	}
	npel, err := d.rd.count()
	if err != nil {
		return g, err
	}
	index := make(map[StreamID]int)
	for range npel {
		var p StreamPending
		at := d.rd.offset()
		if p.ID, err = d.rawID(); err != nil {
			return g, err
		}
		if p.DeliveryTimeMs, err = d.rd.ms(); err != nil {
			return g, err
		}
		if p.DeliveryCount, err = d.rd.len(); err != nil {
			return g, err
		}
		if _, dup := index[p.ID]; dup {
			return g, d.rd.corrupt(at, "duplicated global PEL entry loading stream consumer group")
		}
		index[p.ID] = len(g.PEL)
		g.PEL = append(g.PEL, p)
	}
	ncons, err := d.rd.count()
	if err != nil {
		return g, err
	}
	for range ncons {
		var c StreamConsumer
		if c.Name, _, err = d.rd.str(nil, &d.lzf); err != nil {
			return g, err
		}
		if c.SeenTimeMs, err = d.rd.ms(); err != nil {
			return g, err
		}
		c.ActiveTimeMs = -1
		if t >= TypeStreamListpacks3 {
			if c.ActiveTimeMs, err = d.rd.ms(); err != nil {
				return g, err
			}
		}
		n, err := d.rd.count()
		if err != nil {
			return g, err
		}
		for range n {
			at := d.rd.offset()
			id, err := d.rawID()
			if err != nil {
				return g, err
			}
			i, ok := index[id]
			if !ok {
				return g, d.rd.corrupt(at, "consumer PEL entry not found in group global PEL")
			}
			if g.PEL[i].Consumer != nil {
				return g, d.rd.corrupt(at, "PEL entry owned by two consumers")
			}
			g.PEL[i].Consumer = c.Name
			c.PEL = append(c.PEL, id)
		}
		g.Consumers = append(g.Consumers, c)
	}
	return g, nil
}

// lpInt reads an integer element of a stream listpack.
func lpInt(it *lpIter) (int64, error) {
	s, v, isInt, done, err := it.next()
	if err != nil {
		return 0, err
	}
	if done {
		return 0, it.fail(it.pos, "stream node ends early")
	}
	if !isInt {
		var ok bool
		if v, ok = parseInt(s); !ok {
			return 0, it.fail(it.pos, "integer expected")
		}
	}
	return v, nil
}

func lpStr(it *lpIter) ([]byte, error) {
	s, v, isInt, done, err := it.next()
	if err != nil {
		return nil, err
	}
	if done {
		return nil, it.fail(it.pos, "stream node ends early")
	}
	if isInt {
		return strconv.AppendInt(nil, v, 10), nil
	}
	return bytes.Clone(s), nil
}

// streamNodeEntries appends the live entries of one stream listpack node
// (t_stream.c): a master entry (count, deleted, field count, fields, 0), then
// entries of flags, ID deltas from the master ID, fields or (SAMEFIELDS) just
// values, and their element count.
func streamNodeEntries(dst []StreamEntry, b []byte, master StreamID) ([]StreamEntry, error) {
	it, err := newListpack(b)
	if err != nil {
		return dst, err
	}
	var hdr [3]int64
	for i := range hdr {
		if hdr[i], err = lpInt(&it); err != nil {
			return dst, err
		}
	}
	if hdr[0] < 0 || hdr[1] < 0 || hdr[2] < 0 || hdr[2] > int64(len(b)/2) {
		return dst, it.fail(lpHeaderSize, "bad stream master entry")
	}
	if hdr[0]+hdr[1] == 0 {
		return dst, it.fail(lpHeaderSize, "empty stream node")
	}
	fields := make([][]byte, hdr[2])
	for i := range fields {
		if fields[i], err = lpStr(&it); err != nil {
			return dst, err
		}
	}
	if z, err := lpInt(&it); err != nil || z != 0 {
		return dst, it.fail(it.pos, "bad master entry terminator")
	}
	live := int64(0)
	for range hdr[0] + hdr[1] {
		var e [3]int64
		for i := range e {
			if e[i], err = lpInt(&it); err != nil {
				return dst, err
			}
		}
		id := StreamID{master.Ms + uint64(e[1]), master.Seq + uint64(e[2])}
		var fv [][]byte
		if e[0]&streamFlagSameFields != 0 {
			fv = make([][]byte, 0, 2*len(fields))
			for _, f := range fields {
				val, err := lpStr(&it)
				if err != nil {
					return dst, err
				}
				fv = append(fv, f, val)
			}
		} else {
			n, err := lpInt(&it)
			if err != nil || n < 0 || n > int64(len(b)) {
				return dst, it.fail(it.pos, "bad field count")
			}
			for range 2 * n {
				s, err := lpStr(&it)
				if err != nil {
					return dst, err
				}
				fv = append(fv, s)
			}
		}
		if _, err := lpInt(&it); err != nil {
			return dst, err
		}
		if e[0]&streamFlagDeleted == 0 {
			dst = append(dst, StreamEntry{ID: id, Fields: fv})
			live++
		}
	}
	if _, _, _, done, err := it.next(); err != nil || !done {
		return dst, it.fail(it.pos, "stream node has more than its entries")
	}
	if live != hdr[0] {
		return dst, it.fail(lpHeaderSize, "stream node count does not match its live entries")
	}
	return dst, nil
}
