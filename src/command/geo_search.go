package command

import (
	"sync"

	"github.com/hotkv/hotkv/ds/geo"
	"github.com/hotkv/hotkv/ds/strs"
	"github.com/hotkv/hotkv/ds/zset"
)

// The geo searches: one parser and one search serve GEOSEARCH, GEOSEARCHSTORE and the four
// GEORADIUS forms, as Redis's georadiusGeneric does, errors in its order (the source's type
// first, then each option as it is read, a FROMMEMBER's lookup among them).

type geoForm uint8

const (
	geoByCoords    geoForm = 1 << iota // GEORADIUS: key lon lat radius unit
	geoByMember                        // GEORADIUSBYMEMBER: key member radius unit
	geoNoStore                         // the _RO forms
	geoSearch                          // GEOSEARCH: FROM… and BY… options
	geoSearchStore                     // GEOSEARCHSTORE: dst first, STOREDIST without argument
)

// geoQuery is a parsed search.
type geoQuery struct {
	shape                         geo.Shape
	withDist, withHash, withCoord bool
	fromMember, fromLonLat        bool
	byRadius, byBox               bool
	desc, sorted, any             bool
	count                         int64 // 0: no limit
	store                         []byte
	storeDist                     bool
}

// geoState is a search's scratch, pooled so that a steady stream of searches allocates nothing.
type geoState struct {
	pts   []geo.Point
	boxes [9]geo.ScoreRange
	es    []zset.Entry
}

var geoStates = sync.Pool{New: func() any { return &geoState{} }}

// GEOSEARCH key FROMMEMBER member|FROMLONLAT lon lat BYRADIUS r unit|BYBOX w h unit [ASC|DESC]
// [COUNT n [ANY]] [WITHCOORD] [WITHDIST] [WITHHASH]
func geosearch(c *Ctx) { geoGeneric(c, 1, geoSearch) }

// GEOSEARCHSTORE dst src FROMMEMBER member|FROMLONLAT lon lat BYRADIUS r unit|BYBOX w h unit
// [ASC|DESC] [COUNT n [ANY]] [STOREDIST]
func geosearchstore(c *Ctx) { geoGeneric(c, 2, geoSearch|geoSearchStore) }

// GEORADIUS key lon lat radius unit [WITHCOORD] [WITHDIST] [WITHHASH] [COUNT n [ANY]] [ASC|DESC]
// [STORE key] [STOREDIST key]
func georadius(c *Ctx) { geoGeneric(c, 1, geoByCoords) }

// GEORADIUS_RO key lon lat radius unit [WITHCOORD] [WITHDIST] [WITHHASH] [COUNT n [ANY]] [ASC|DESC]
func georadiusRO(c *Ctx) { geoGeneric(c, 1, geoByCoords|geoNoStore) }

// GEORADIUSBYMEMBER key member radius unit [WITHCOORD] [WITHDIST] [WITHHASH] [COUNT n [ANY]]
// [ASC|DESC] [STORE key] [STOREDIST key]
func georadiusbymember(c *Ctx) { geoGeneric(c, 1, geoByMember) }

// GEORADIUSBYMEMBER_RO key member radius unit [WITHCOORD] [WITHDIST] [WITHHASH] [COUNT n [ANY]]
// [ASC|DESC]
func georadiusbymemberRO(c *Ctx) { geoGeneric(c, 1, geoByMember|geoNoStore) }

func geoGeneric(c *Ctx, src int, form geoForm) {
	z, ok := readZSet(c, c.Args[src])
	if !ok {
		return
	}
	var q geoQuery
	if msg := q.parse(c.Args, z, form); msg != "" {
		c.Err(msg)
		return
	}
	if z == nil {
		if q.store != nil {
			deleteStored(c, q.store)
			c.Int(0)
			return
		}
		c.ArrayLen(0)
		return
	}
	st := geoStates.Get().(*geoState)
	defer geoStates.Put(st)
	pts := q.search(z, st)
	n := len(pts)
	if q.count > 0 && int64(n) > q.count {
		n = int(q.count)
	}
	if q.sorted {
		geo.Sort(pts, q.desc, n)
	}
	if q.store != nil {
		geoStore(c, &q, st, pts[:n], form)
		return
	}
	q.reply(c, pts[:n])
}

// parse reads the search's arguments in Redis's order and returns the first error to reply.
func (q *geoQuery) parse(args [][]byte, z *zset.ZSet, form geoForm) string {
	base := 2
	switch {
	case form&geoByCoords != 0:
		base = 6
		lon, lat, msg := parseLonLat(args[2], args[3])
		if msg != "" {
			return msg
		}
		q.shape.Lon, q.shape.Lat = lon, lat
		if msg := q.parseRadius(args[4], args[5]); msg != "" {
			return msg
		}
	case form&geoByMember != 0:
		base = 5
		if z != nil { // a missing key skips straight to the options, as Redis does
			if msg := q.centreAt(z, args[2]); msg != "" {
				return msg
			}
			if msg := q.parseRadius(args[3], args[4]); msg != "" {
				return msg
			}
		}
	case form&geoSearchStore != 0:
		base = 3
		q.store = args[1]
	}
	if msg := q.parseOptions(args, base, z, form); msg != "" {
		return msg
	}
	return q.check(args, form)
}

func (q *geoQuery) parseOptions(args [][]byte, base int, z *zset.ZSet, form geoForm) string {
	search, canStore := form&geoSearch != 0, form&(geoNoStore|geoSearch) == 0
	for i := base; i < len(args); i++ {
		a, left := args[i], len(args)-i-1
		var msg string
		switch {
		case strs.EqualFold(a, "WITHDIST"):
			q.withDist = true
		case strs.EqualFold(a, "WITHHASH"):
			q.withHash = true
		case strs.EqualFold(a, "WITHCOORD"):
			q.withCoord = true
		case strs.EqualFold(a, "ANY"):
			q.any = true
		case strs.EqualFold(a, "ASC"):
			q.sorted, q.desc = true, false
		case strs.EqualFold(a, "DESC"):
			q.sorted, q.desc = true, true
		case strs.EqualFold(a, "COUNT") && left >= 1:
			i++
			msg = q.parseCount(args[i])
		case canStore && left >= 1 && (strs.EqualFold(a, "STORE") || strs.EqualFold(a, "STOREDIST")):
			q.store, q.storeDist = args[i+1], len(a) == len("STOREDIST")
			i++
		case form&geoSearchStore != 0 && strs.EqualFold(a, "STOREDIST"):
			q.storeDist = true
		case search && left >= 1 && !q.fromLonLat && strs.EqualFold(a, "FROMMEMBER"):
			i++
			q.fromMember = true
			if z != nil { // without a source only the syntax is checked
				msg = q.centreAt(z, args[i])
			}
		case search && left >= 2 && !q.fromMember && strs.EqualFold(a, "FROMLONLAT"):
			q.fromLonLat = true
			q.shape.Lon, q.shape.Lat, msg = parseLonLat(args[i+1], args[i+2])
			i += 2
		case search && left >= 2 && !q.byBox && strs.EqualFold(a, "BYRADIUS"):
			q.byRadius = true
			msg = q.parseRadius(args[i+1], args[i+2])
			i += 2
		case search && left >= 3 && !q.byRadius && strs.EqualFold(a, "BYBOX"):
			q.byBox = true
			msg = q.parseBox(args[i+1], args[i+2], args[i+3])
			i += 3
		default:
			msg = ErrSyntax
		}
		if msg != "" {
			return msg
		}
	}
	return ""
}

func (q *geoQuery) parseCount(arg []byte) string {
	n, ok := ParseInt(arg)
	switch {
	case !ok:
		return ErrNotInt
	case n <= 0:
		return ErrGeoCount
	}
	q.count = n
	return ""
}

// centreAt centres the search on member's position.
func (q *geoQuery) centreAt(z *zset.ZSet, member []byte) string {
	s, ok := z.Score(member)
	if !ok {
		return ErrGeoMember
	}
	q.shape.Lon, q.shape.Lat = geo.Decode(s)
	return ""
}

// parseUnit reads a unit name into the shape's conversion.
func (q *geoQuery) parseUnit(arg []byte) string {
	u, ok := geo.Unit(arg)
	if !ok {
		return ErrGeoUnit
	}
	q.shape.Conv = u
	return ""
}

// parseRadius reads "radius unit" as Redis's extractDistanceOrReply.
func (q *geoQuery) parseRadius(r, unit []byte) string {
	v, ok := ParseFloat(r)
	switch {
	case !ok:
		return ErrGeoRadius
	case v < 0:
		return ErrGeoRadiusNeg
	}
	q.shape.Box, q.shape.Radius = false, v
	return q.parseUnit(unit)
}

// parseBox reads "width height unit" as Redis's extractBoxOrReply.
func (q *geoQuery) parseBox(w, h, unit []byte) string {
	wv, ok := ParseFloat(w)
	if !ok {
		return ErrGeoWidth
	}
	hv, ok := ParseFloat(h)
	switch {
	case !ok:
		return ErrGeoHeight
	case hv < 0 || wv < 0:
		return ErrGeoBoxNeg
	}
	q.shape.Box, q.shape.Width, q.shape.Height = true, wv, hv
	return q.parseUnit(unit)
}

// check applies the rules between options, after they are all read.
func (q *geoQuery) check(args [][]byte, form geoForm) string {
	search := form&geoSearch != 0
	switch {
	case q.store != nil && (q.withDist || q.withHash || q.withCoord):
		what := "STORE option in GEORADIUS"
		if form&geoSearchStore != 0 {
			what = "GEOSEARCHSTORE"
		}
		return "ERR " + what + ErrGeoStoreWith
	case search && !q.fromMember && !q.fromLonLat:
		return ErrGeoFrom + string(args[0])
	case search && !q.byRadius && !q.byBox:
		return ErrGeoBy + string(args[0])
	case q.any && q.count == 0:
		return ErrGeoAny
	}
	// COUNT without an order asks for the nearest: ascending, unless ANY takes the first found.
	if q.count > 0 && !q.sorted && !q.any {
		q.sorted = true
	}
	// Without a distance to reply, sort by or store, membership is all the search needs.
	q.shape.NoDist = !q.withDist && !q.sorted && !q.storeDist
	return ""
}

// search collects the members inside the shape, box by box in Redis's order; with ANY it stops
// once COUNT are found. The points' members are views into z.
func (q *geoQuery) search(z *zset.ZSet, st *geoState) []geo.Point {
	limit := 0
	if q.any {
		limit = int(min(q.count, int64(z.Len())))
	}
	pts := st.pts[:0]
	full := func() bool { return limit > 0 && len(pts) >= limit }
	for _, b := range q.shape.Boxes(&st.boxes) {
		if full() {
			break
		}
		r := zset.ScoreRange{Min: float64(b.Min), Max: float64(b.Max), MaxEx: true}
		start := z.FirstInScore(&r)
		if start < 0 {
			continue
		}
		z.Walk(start, false, func(m []byte, s float64) bool {
			if !r.LteMax(s) {
				return false
			}
			if lon, lat, d, in := q.shape.Within(s); in {
				pts = append(pts, geo.Point{Lon: lon, Lat: lat, Dist: d, Score: s, Member: m})
			}
			return !full()
		})
	}
	st.pts = pts
	return pts
}

// reply sends the points: members alone, or each with the WITH… fields asked for.
func (q *geoQuery) reply(c *Ctx, pts []geo.Point) {
	extra := 0
	for _, w := range []bool{q.withDist, q.withHash, q.withCoord} {
		if w {
			extra++
		}
	}
	c.ArrayLen(len(pts))
	for i := range pts {
		p := &pts[i]
		if extra > 0 {
			c.ArrayLen(extra + 1)
		}
		c.Bulk(p.Member)
		if q.withDist {
			replyDistance(c, p.Dist/q.shape.Conv)
		}
		if q.withHash {
			c.Int(int64(p.Score))
		}
		if q.withCoord {
			c.ArrayLen(2)
			replyCoord(c, p.Lon)
			replyCoord(c, p.Lat)
		}
	}
}

// geoStore replaces the destination with the points, scored by geohash or, with STOREDIST, by
// distance in the search's unit (or deletes it when there are none), raising georadiusstore or
// geosearchstore, and replies their number. Redis counts one change per point stored.
func geoStore(c *Ctx, q *geoQuery, st *geoState, pts []geo.Point, form geoForm) {
	es := st.es[:0]
	for i := range pts {
		s := pts[i].Score
		if q.storeDist {
			s = pts[i].Dist / q.shape.Conv
		}
		es = append(es, zset.Entry{Member: pts[i].Member, Score: s})
	}
	zset.SortEntries(es)
	es = uniqueEntries(es)
	event := "georadiusstore"
	if form&geoSearch != 0 {
		event = "geosearchstore"
	}
	if n := storeResult(c, q.store, es, event); n > 0 {
		c.Dirty(len(pts) - 1) // storeResult counted one
	}
	clear(es) // drop the views into the source
	st.es = es[:0]
	c.Int(int64(len(pts)))
}

// uniqueEntries drops repeated members from sorted entries: a member found in two boxes that
// are not consecutive (Redis would fail an assertion storing it twice). A member's repeats have
// its one score, so they are adjacent.
func uniqueEntries(es []zset.Entry) []zset.Entry {
	out := es[:min(len(es), 1)]
	for _, e := range es[len(out):] {
		if last := &out[len(out)-1]; last.Score != e.Score || string(last.Member) != string(e.Member) {
			out = append(out, e)
		}
	}
	return out
}
