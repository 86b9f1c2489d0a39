package command

import (
	"strconv"

	"github.com/hotkv/hotkv/ds/geo"
	"github.com/hotkv/hotkv/ds/strs"
	"github.com/hotkv/hotkv/ds/zset"
)

// Geo commands. A geo key is a sorted set (TYPE zset) whose scores are ds/geo's 52-bit
// geohashes; handlers parse, use ds/zset for the data and ds/geo for the arithmetic, encode.
// The searches (GEOSEARCH, GEOSEARCHSTORE, GEORADIUS*) are in geo_search.go.
var geoCommands = []*Spec{
	{Name: "geoadd", Arity: -5, Flags: Write | DenyOOM, FirstKey: 1, LastKey: 1, Step: 1, Run: geoadd},
	{Name: "geodist", Arity: -4, Flags: ReadOnly, FirstKey: 1, LastKey: 1, Step: 1, Member: 2, Run: geodist},
	{Name: "geohash", Arity: -2, Flags: ReadOnly, FirstKey: 1, LastKey: 1, Step: 1, Member: 2, Run: geohash},
	{Name: "geopos", Arity: -2, Flags: ReadOnly, FirstKey: 1, LastKey: 1, Step: 1, Member: 2, Run: geopos},
	{Name: "geosearch", Arity: -7, Flags: ReadOnly, FirstKey: 1, LastKey: 1, Step: 1, Run: geosearch},
	{Name: "geosearchstore", Arity: -8, Flags: Write | DenyOOM, FirstKey: 1, LastKey: 2, Step: 1, Run: geosearchstore},
	{Name: "georadius", Arity: -6, Flags: Write | DenyOOM | MovableKeys, FirstKey: 1, LastKey: 1, Step: 1,
		Keys: georadiusKeys, Run: georadius},
	{Name: "georadius_ro", Arity: -6, Flags: ReadOnly, FirstKey: 1, LastKey: 1, Step: 1, Run: georadiusRO},
	{Name: "georadiusbymember", Arity: -5, Flags: Write | DenyOOM | MovableKeys, FirstKey: 1, LastKey: 1, Step: 1,
		Keys: georadiusKeys, Run: georadiusbymember},
	{Name: "georadiusbymember_ro", Arity: -5, Flags: ReadOnly, FirstKey: 1, LastKey: 1, Step: 1, Run: georadiusbymemberRO},
}

// georadiusKeys finds GEORADIUS's and GEORADIUSBYMEMBER's keys as Redis's georadiusGetKeys
// does: the source, and the argument after the last STORE or STOREDIST from position 5 on.
func georadiusKeys(args [][]byte, dst []int) []int {
	dst = append(dst, 1)
	store := -1
	for i := 5; i+1 < len(args); i++ {
		if strs.EqualFold(args[i], "STORE") || strs.EqualFold(args[i], "STOREDIST") {
			store = i + 1
			i++
		}
	}
	if store > 0 {
		dst = append(dst, store)
	}
	return dst
}

// parseLonLat reads a longitude and a latitude as Redis's extractLongLatOrReply: floats, within
// the limits geohashes can encode. It returns the error to reply, or "".
func parseLonLat(lonArg, latArg []byte) (lon, lat float64, msg string) {
	lon, ok1 := ParseFloat(lonArg)
	if !ok1 {
		return 0, 0, ErrNotFloat
	}
	lat, ok2 := ParseFloat(latArg)
	if !ok2 {
		return 0, 0, ErrNotFloat
	}
	if lon < geo.LongMin || lon > geo.LongMax || lat < geo.LatMin || lat > geo.LatMax {
		b := append([]byte(ErrGeoLonLat), ' ')
		b = geo.AppendFixed(b, lon, 6)
		b = append(b, ',')
		return 0, 0, string(geo.AppendFixed(b, lat, 6))
	}
	return lon, lat, ""
}

// GEOADD key [NX|XX] [CH] longitude latitude member [longitude latitude member ...]
func geoadd(c *Ctx) {
	var flags zset.Flags
	ch, at := false, 2
	for ; at < len(c.Args); at++ {
		switch a := c.Args[at]; {
		case strs.EqualFold(a, "NX"):
			flags |= zset.NX
		case strs.EqualFold(a, "XX"):
			flags |= zset.XX
		case strs.EqualFold(a, "CH"):
			ch = true
		default:
			goto parsed
		}
	}
parsed:
	if (len(c.Args)-at)%3 != 0 || flags == zset.NX|zset.XX || at == len(c.Args) {
		c.Err(ErrSyntax)
		return
	}
	for i := at; i < len(c.Args); i += 3 {
		if _, _, msg := parseLonLat(c.Args[i], c.Args[i+1]); msg != "" {
			c.Err(msg)
			return
		}
	}
	geoaddRun(c, flags, ch, at)
}

// geoaddRun adds the checked triples from at on, as ZADD does with their geohashes.
func geoaddRun(c *Ctx, flags zset.Flags, ch bool, at int) {
	key := c.Args[1]
	ks, _, z, ok := writeZSet(c, key)
	if !ok {
		return
	}
	if z == nil {
		if flags&zset.XX != 0 {
			c.Int(0)
			return
		}
		_, z = storeZSet(c, ks, key)
	}
	lim := zsetLimits(c)
	added, updated := 0, 0
	for i := at; i < len(c.Args); i += 3 {
		lon, lat, _ := parseLonLat(c.Args[i], c.Args[i+1])
		bits, _ := geo.Encode(lon, lat)
		switch out, _, _ := z.Add(c.Args[i+2], float64(bits), flags, lim); out {
		case zset.Added:
			added++
		case zset.Updated:
			updated++
		}
	}
	if added+updated > 0 {
		c.Dirty(added + updated)
		c.Changed(NotifyZSet, "zadd", key)
		geoaddPropagate(c, at)
	}
	if ch {
		added += updated
	}
	c.Int(int64(added))
}

// geoaddPropagate replicates GEOADD as the ZADD Redis rewrites it to: "zadd", the key and the
// options as given, then each geohash score (an integer) and member.
func geoaddPropagate(c *Ctx, at int) {
	if !c.E.Feed.Active() {
		c.PropagateNothing()
		return
	}
	args := make([][]byte, 0, at+(len(c.Args)-at)/3*2)
	args = append(args, []byte("zadd"))
	args = append(args, c.Args[1:at]...)
	for i := at; i < len(c.Args); i += 3 {
		lon, lat, _ := parseLonLat(c.Args[i], c.Args[i+1])
		bits, _ := geo.Encode(lon, lat)
		args = append(args, strconv.AppendUint(nil, bits, 10), c.Args[i+2])
	}
	c.Propagate(args...)
}

// GEODIST key member1 member2 [M|KM|FT|MI]
func geodist(c *Ctx) {
	toMetres := 1.0
	switch {
	case len(c.Args) == 5:
		u, ok := geo.Unit(c.Args[4])
		if !ok {
			c.Err(ErrGeoUnit)
			return
		}
		toMetres = u
	case len(c.Args) > 5:
		c.Err(ErrSyntax)
		return
	}
	z, ok := readZSet(c, c.Args[1])
	if !ok {
		return
	}
	if z == nil {
		c.Null()
		return
	}
	s1, ok1 := z.Score(c.Args[2])
	s2, ok2 := z.Score(c.Args[3])
	if !ok1 || !ok2 {
		c.Null()
		return
	}
	lon1, lat1 := geo.Decode(s1)
	lon2, lat2 := geo.Decode(s2)
	replyDistance(c, geo.Distance(lon1, lat1, lon2, lat2)/toMetres)
}

// replyDistance replies a distance as a bulk string of four decimals, in RESP3 too.
func replyDistance(c *Ctx, d float64) {
	var buf [40]byte
	c.Bulk(geo.AppendDistance(buf[:0], d))
}

// replyCoord replies a coordinate in Redis's human long double form: a bulk in RESP2, a double
// in RESP3.
func replyCoord(c *Ctx, v float64) {
	var buf [64]byte
	b := geo.AppendCoord(buf[:0], v)
	if c.Proto >= 3 {
		c.Out = append(append(append(c.Out, ','), b...), '\r', '\n')
		return
	}
	c.Bulk(b)
}

// GEOHASH key [member ...]
func geohash(c *Ctx) {
	z, ok := readZSet(c, c.Args[1])
	if !ok {
		return
	}
	c.ArrayLen(len(c.Args) - 2)
	for _, m := range c.Args[2:] {
		s, found := 0.0, false
		if z != nil {
			s, found = z.Score(m)
		}
		if !found {
			c.Null()
			continue
		}
		var buf [11]byte
		c.Bulk(geo.AppendHash(buf[:0], s))
	}
}

// GEOPOS key [member ...]
func geopos(c *Ctx) {
	z, ok := readZSet(c, c.Args[1])
	if !ok {
		return
	}
	c.ArrayLen(len(c.Args) - 2)
	for _, m := range c.Args[2:] {
		s, found := 0.0, false
		if z != nil {
			s, found = z.Score(m)
		}
		if !found {
			c.NullArray()
			continue
		}
		lon, lat := geo.Decode(s)
		c.ArrayLen(2)
		replyCoord(c, lon)
		replyCoord(c, lat)
	}
}
