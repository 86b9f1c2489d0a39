package command

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"testing"
)

// The geo family's hot commands on a pipelined batch of 30, over a set of 10,000 points spread
// on a 2x2 degree patch (the "skiplist" encoding) and a small listpack set of 20. GEOADD
// overwriting a member, GEOPOS, GEODIST and GEOSEARCH BYRADIUS (finding about 25 points, and 250
// with COUNT 10) allocate nothing once warm: a search's points go into pooled scratch.

func geoSetup() [][]string {
	r := rand.New(rand.NewPCG(1, 1))
	big, small := []string{"GEOADD", "geobig"}, []string{"GEOADD", "geosmall"}
	for i := range 10000 {
		big = append(big, strconv.FormatFloat(13+2*r.Float64(), 'f', 6, 64),
			strconv.FormatFloat(37+2*r.Float64(), 'f', 6, 64), fmt.Sprint("place:", i))
	}
	for i := range 20 {
		small = append(small, strconv.FormatFloat(13+r.Float64(), 'f', 6, 64), "37.5", fmt.Sprint("s", i))
	}
	return [][]string{big, small}
}

var geoHotCases = []struct {
	name string
	cmds [][]string
}{
	{"GEOADD-update", [][]string{{"GEOADD", "geobig", "13.5", "37.5", "place:7"}, {"GEOADD", "geobig", "13.6", "37.6", "place:7"}}},
	{"GEOADD-small", [][]string{{"GEOADD", "geosmall", "13.5", "37.5", "s7"}, {"GEOADD", "geosmall", "13.6", "37.6", "s7"}}},
	{"GEOPOS", [][]string{{"GEOPOS", "geobig", "place:1", "place:2"}}},
	{"GEODIST", [][]string{{"GEODIST", "geobig", "place:1", "place:2", "km"}}},
	{"GEOHASH", [][]string{{"GEOHASH", "geobig", "place:3"}}},
	{"GEOSEARCH-BYRADIUS", [][]string{{"GEOSEARCH", "geobig", "FROMLONLAT", "14", "38", "BYRADIUS", "5", "km"}}},
	{"GEOSEARCH-BYRADIUS-WITHDIST", [][]string{{"GEOSEARCH", "geobig", "FROMLONLAT", "14", "38", "BYRADIUS", "5", "km", "ASC", "WITHDIST"}}},
	{"GEOSEARCH-BYRADIUS-COUNT", [][]string{{"GEOSEARCH", "geobig", "FROMMEMBER", "place:9", "BYRADIUS", "16", "km", "COUNT", "10"}}},
	{"GEOSEARCH-BYBOX", [][]string{{"GEOSEARCH", "geobig", "FROMLONLAT", "14", "38", "BYBOX", "10", "10", "km"}}},
	{"GEORADIUS_RO", [][]string{{"GEORADIUS_RO", "geobig", "14", "38", "5", "km"}}},
	{"small-GEOSEARCH", [][]string{{"GEOSEARCH", "geosmall", "FROMLONLAT", "13.5", "37.5", "BYRADIUS", "50", "km", "ASC"}}},
}

func TestGeoHotPathAllocatesNothing(t *testing.T) {
	for _, hc := range geoHotCases {
		h := newBatchConn(t, geoSetup(), hc.cmds...)
		hotReplies(t, hc.name, h)
		if !zsetRace { // -race makes sync.Pool drop entries at random, so the scratch is remade
			checkNoAllocs(t, hc.name, h)
		}
	}
}

func BenchmarkGeoHotPath(b *testing.B) {
	b.ReportAllocs()
	for _, hc := range geoHotCases {
		b.Run(hc.name, func(b *testing.B) { benchHot(b, newBatchConn(b, geoSetup(), hc.cmds...)) })
	}
}
