package command

import (
	"bytes"
	"slices"

	"github.com/hotkv/hotkv/ds/vector"
)

// The V* commands other than VADD and VSIM, as Redis 8's vset.c answers them.

// VREM key element: 1 (true) when removed; the key goes when its last element does.
func vrem(c *Ctx) {
	key := c.Args[1]
	e, v, ok := writeVset(c, key)
	if !ok {
		return
	}
	if v == nil || !v.remove(c.Args[2]) {
		c.Bool(false)
		return
	}
	c.Changed(NotifyModule, "vrem", key)
	c.Dirty(1)
	dropVsetIfEmpty(c, key, e, v)
	c.Bool(true)
}

// VCARD key
func vcard(c *Ctx) {
	v, ok := readVset(c, c.Args[1])
	switch {
	case !ok:
	case v == nil:
		c.Int(0)
	default:
		c.Int(int64(v.liveLen(c.Now / 1e6)))
	}
}

// liveLen is the number of elements not expired at ms.
func (v *vsetValue) liveLen(ms int64) int {
	n := v.Len()
	for _, at := range v.ttl {
		if at <= ms {
			n--
		}
	}
	return n
}

// VDIM key
func vdim(c *Ctx) {
	v, ok := readVset(c, c.Args[1])
	switch {
	case !ok:
	case v == nil:
		c.Err(ErrVsetNoKey)
	default:
		c.Int(int64(v.set.Config().Dim))
	}
}

// readElement is the common head of the commands of one element: the set, or a reply of null
// when the key or a live element is missing.
func readElement(c *Ctx, elem []byte) (*vsetValue, bool) {
	v, ok := readVset(c, c.Args[1])
	if !ok {
		return nil, false
	}
	if v == nil || !v.liveName(elem, c.Now/1e6) {
		c.Null()
		return nil, false
	}
	return v, true
}

// VEMB key element [RAW]: the vector as stored (dequantized, the norm put back), or with RAW
// [quant, bytes, norm, (Q8) range] as Redis 8. A Q8 vector stored with an offset range
// (docs/decisions.md) answers ["uint8", levels, norm, min, max] instead: component min +
// u*(max-min)/255 for each level byte u.
func vemb(c *Ctx) {
	raw := false
	for _, a := range c.Args[3:] {
		if !eqFold(a, "raw") {
			c.Err(ErrVsetInvalidOption)
			return
		}
		raw = true
	}
	v, ok := readElement(c, c.Args[2])
	if !ok {
		return
	}
	if raw {
		r, _ := v.set.Raw(c.Args[2])
		switch {
		case r.Offset:
			c.ArrayLen(5)
			c.Simple("uint8")
		case r.Quant == vector.Q8:
			c.ArrayLen(4)
			c.Simple(r.Quant.String())
		default:
			c.ArrayLen(3)
			c.Simple(r.Quant.String())
		}
		c.Bulk(r.Data)
		c.Double(float64(r.Norm))
		if r.Offset {
			c.Double(float64(r.Min))
			c.Double(float64(r.Max))
		} else if r.Quant == vector.Q8 {
			c.Double(float64(r.Range))
		}
		return
	}
	vec, _ := v.set.Vector(c.Args[2])
	c.ArrayLen(len(vec))
	for _, f := range vec {
		c.Double(float64(f))
	}
}

// VSETATTR key element json: 1 (true) when set; an empty json removes the attribute.
func vsetattr(c *Ctx) {
	key := c.Args[1]
	_, v, ok := writeVset(c, key)
	if !ok {
		return
	}
	if v == nil || !v.set.Has(c.Args[2]) {
		c.Bool(false)
		return
	}
	attr := c.Args[3]
	if len(attr) == 0 {
		attr = nil
	}
	v.setAttr(c.Args[2], attr)
	c.Changed(NotifyModule, "vsetattr", key)
	c.Dirty(1)
	c.Bool(true)
}

// VGETATTR key element
func vgetattr(c *Ctx) {
	v, ok := readElement(c, c.Args[2])
	if !ok {
		return
	}
	if a, ok := v.set.Attr(c.Args[2]); ok && a != nil {
		c.Bulk(a)
		return
	}
	c.Null()
}

// VISMEMBER key element
func vismember(c *Ctx) {
	v, ok := readVset(c, c.Args[1])
	if ok {
		c.Bool(v != nil && v.liveName(c.Args[2], c.Now/1e6))
	}
}

// VLINKS key element [WITHSCORES]: the element's neighbours at each level, highest first; with
// WITHSCORES a map of neighbour to similarity per level.
func vlinks(c *Ctx) {
	if len(c.Args) > 4 || len(c.Args) == 4 && !eqFold(c.Args[3], "withscores") {
		c.ArityErr()
		return
	}
	withScores := len(c.Args) == 4
	v, ok := readElement(c, c.Args[2])
	if !ok {
		return
	}
	levels := v.set.Links(c.Args[2])
	c.ArrayLen(len(levels))
	for l := len(levels) - 1; l >= 0; l-- {
		if withScores {
			c.MapLen(len(levels[l]))
		} else {
			c.ArrayLen(len(levels[l]))
		}
		for _, r := range levels[l] {
			c.Bulk(v.set.Name(r.ID))
			if withScores {
				c.Double(float64(r.Score))
			}
		}
	}
}

// VINFO key: a map (a flat array in RESP2) of Redis 8's nine fields.
func vinfo(c *Ctx) {
	v, ok := readVset(c, c.Args[1])
	switch {
	case !ok:
		return
	case v == nil:
		c.NullArray()
		return
	}
	in := v.set.Info()
	c.MapLen(9)
	c.Simple("quant-type")
	c.Simple(in.Quant.String())
	c.Simple("hnsw-m")
	c.Int(int64(in.M))
	c.Simple("vector-dim")
	c.Int(int64(in.Dim))
	c.Simple("projection-input-dim")
	c.Int(int64(v.projIn))
	c.Simple("size")
	c.Int(int64(in.Len))
	c.Simple("max-level")
	c.Int(int64(in.MaxLevel))
	c.Simple("attributes-count")
	c.Int(int64(in.Attrs))
	c.Simple("vset-uid")
	c.Int(int64(v.uid))
	c.Simple("hnsw-max-node-uid")
	c.Int(int64(in.Slots))
}

// VRANDMEMBER key [count]: one random element (null when none); count > 0 distinct ones (at most
// the set's size), count < 0 -count with repeats. Expired elements not yet removed are left out,
// so a set holding some may answer fewer than asked.
func vrandmember(c *Ctx) {
	count, withCount := int64(1), len(c.Args) == 3
	if len(c.Args) > 3 {
		c.ArityErr()
		return
	}
	if withCount {
		n, ok := ParseInt(c.Args[2])
		if !ok {
			c.Err(ErrVsetCountNotInt)
			return
		}
		if n == 0 {
			c.ArrayLen(0)
			return
		}
		count = n
	}
	v, ok := readVset(c, c.Args[1])
	if !ok {
		return
	}
	if v == nil || v.Len() == 0 {
		if withCount {
			c.ArrayLen(0)
		} else {
			c.Null()
		}
		return
	}
	n := count
	if n > 0 {
		n = min(n, int64(v.Len()))
	} else {
		n = max(n, -vrandMaxRepeats)
	}
	ms := c.Now / 1e6
	ids := v.set.RandomIDs(int(n), c.E.rand)
	if v.ttl != nil {
		ids = slices.DeleteFunc(ids, func(id uint32) bool { return !v.live(id, ms) })
	}
	if !withCount {
		if len(ids) == 0 {
			c.Null()
			return
		}
		c.Bulk(v.set.Name(ids[0]))
		return
	}
	c.ArrayLen(len(ids))
	for _, id := range ids {
		c.Bulk(v.set.Name(id))
	}
}

// vrandMaxRepeats bounds VRANDMEMBER's negative count: Redis 8 builds a reply of any size asked
// for; HotKV answers at most this many (memory follows the bytes a client sent, not a number).
const vrandMaxRepeats = 1 << 20

// lexBound is one end of VRANGE's range: "-" or "+", or "[x" / "(x".
type lexBound struct {
	inf, excl bool
	s         []byte
}

func parseLexBound(b []byte, min bool) (lexBound, bool) {
	switch {
	case len(b) == 1 && b[0] == '-' && min, len(b) == 1 && b[0] == '+' && !min:
		return lexBound{inf: true}, true
	case len(b) >= 1 && b[0] == '[':
		return lexBound{s: b[1:]}, true
	case len(b) >= 1 && b[0] == '(':
		return lexBound{s: b[1:], excl: true}, true
	}
	return lexBound{}, false
}

// VRANGE key start end [count]: elements in byte order between start and end ("[x" inclusive,
// "(x" exclusive, "-" and "+" the ends), at most count (all when count is negative or absent).
// HotKV sorts the names per call (O(N log N)); Redis 8 walks an ordered index.
func vrange(c *Ctx) {
	if len(c.Args) > 5 {
		c.ArityErr()
		return
	}
	lo, ok1 := parseLexBound(c.Args[2], true)
	hi, ok2 := parseLexBound(c.Args[3], false)
	if !ok1 || !ok2 {
		c.Err(ErrVsetRangeBound)
		return
	}
	count := int64(-1)
	if len(c.Args) == 5 {
		n, ok := ParseInt(c.Args[4])
		if !ok {
			c.Err(ErrVsetRangeCount)
			return
		}
		count = n
	}
	v, ok := readVset(c, c.Args[1])
	if !ok {
		return
	}
	if v == nil || count == 0 {
		c.ArrayLen(0)
		return
	}
	ms := c.Now / 1e6
	var names [][]byte
	v.set.ForEach(func(id uint32, name []byte) bool {
		if v.live(id, ms) && lexAbove(name, lo) && lexBelow(name, hi) {
			names = append(names, name)
		}
		return true
	})
	slices.SortFunc(names, bytes.Compare)
	if count > 0 && int64(len(names)) > count {
		names = names[:count]
	}
	c.ArrayLen(len(names))
	for _, n := range names {
		c.Bulk(n)
	}
}

func lexAbove(name []byte, b lexBound) bool {
	if b.inf {
		return true
	}
	d := bytes.Compare(name, b.s)
	return d > 0 || d == 0 && !b.excl
}

func lexBelow(name []byte, b lexBound) bool {
	if b.inf {
		return true
	}
	d := bytes.Compare(name, b.s)
	return d < 0 || d == 0 && !b.excl
}
