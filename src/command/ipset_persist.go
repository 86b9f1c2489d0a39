package command

import (
	"bytes"
	"fmt"
	"slices"
	"time"

	"github.com/hotkv/hotkv/ds/ipset"
	"github.com/hotkv/hotkv/ds/keyspace"
	"github.com/hotkv/hotkv/persist/rdb"
)

// IP sets in RDB files and DUMP payloads (docs/ipsets.md, "Persistence"): the zset form, a
// sorted set Redis 7.0 loads, one member per entry:
//
//	entry ["!"] ["=" label]
//
// entry in its canonical text (ds/ipset.AppendRange: it holds no '!' or '='), "!" for NOMATCH,
// "=" and the label's bytes when it has one (a label may hold anything, '=' included: the first
// '=' ends the entry). The score is the entry's absolute expiry in unix ms, 0 for none. The
// member ipsetMarker (score 0) marks the sorted set as an IP set: HotKV loads a sorted set
// holding it as one. Entries expired when the value is written are left out; entries expired
// by the time it is loaded are dropped.

var ipsetMarker = []byte("\x00hotkv-ipset:v1")

// ipsetZSetMembers returns v's members and scores in the zset form, sorted as a sorted set
// orders them (score, then member), at now (unix ns).
func ipsetZSetMembers(v *ipsetValue, now int64) ([][]byte, []float64) {
	ents := v.set.Entries(now / 1e6)
	type ms struct {
		m []byte
		s float64
	}
	out := make([]ms, 0, len(ents)+1)
	out = append(out, ms{ipsetMarker, 0})
	for _, en := range ents {
		m := ipset.AppendRange(nil, en.Range)
		if en.NoMatch {
			m = append(m, '!')
		}
		if en.HasLbl {
			m = append(m, '=')
			m = append(m, en.Label...)
		}
		out = append(out, ms{m, float64(en.Expire)})
	}
	slices.SortFunc(out, func(a, b ms) int {
		if a.s != b.s {
			if a.s < b.s {
				return -1
			}
			return 1
		}
		return bytes.Compare(a.m, b.m)
	})
	members := make([][]byte, len(out))
	scores := make([]float64, len(out))
	for i := range out {
		members[i], scores[i] = out[i].m, out[i].s
	}
	return members, scores
}

// ipsetValueRDB writes v in the zset form.
func (s *RDBSerializer) ipsetValueRDB(key []byte, v *ipsetValue) {
	members, scores := ipsetZSetMembers(v, s.now)
	i := 0
	s.enc.ZSetValue(key, len(members), func() ([]byte, float64) {
		i++
		return members[i-1], scores[i-1]
	})
}

// isIPSetZSet reports whether a loaded sorted set holds the IP set marker.
func isIPSetZSet(members [][]byte) bool {
	for _, m := range members {
		if len(m) > 0 && m[0] == 0 && bytes.Equal(m, ipsetMarker) {
			return true
		}
	}
	return false
}

// ipsetFromZSet builds an IP set from the zset form at now (unix ns); nil when every entry had
// expired.
func ipsetFromZSet(members [][]byte, scores []float64, now int64) (*ipsetValue, int, error) {
	set := ipset.New()
	n := 0
	nowMs := now / 1e6
	for i, m := range members {
		if bytes.Equal(m, ipsetMarker) {
			continue
		}
		entry, label, hasLabel := bytes.Cut(m, []byte("="))
		nomatch := false
		if l := len(entry); l > 0 && entry[l-1] == '!' {
			entry, nomatch = entry[:l-1], true
		}
		r, ok := ipset.ParseEntry(entry)
		sc := scores[i]
		if !ok || sc < 0 || sc != float64(int64(sc)) {
			return nil, 0, fmt.Errorf("%w: ip set member %q", rdb.ErrCorrupt, m)
		}
		at := int64(sc)
		if at != 0 && at <= nowMs {
			continue
		}
		meta := ipset.Meta{Expire: at, NoMatch: nomatch}
		if hasLabel {
			meta.Label = label
		}
		set.Add(r, meta, false, false)
		n += len(m) + 8
	}
	if set.Len() == 0 {
		return nil, 0, nil
	}
	set.Compact()
	return &ipsetValue{set: set}, n, nil
}

// ipsetLoad is the loader's conversion of a sorted set holding the marker.
func (ld *loader) ipsetLoad(v *rdb.Value, it *loadItem) (int, error) {
	is, n, err := ipsetFromZSet(v.Members, v.Scores, time.Now().UnixNano())
	if err != nil || is == nil {
		return 0, err
	}
	it.kind, it.obj = keyspace.KindIPSet, is
	return n, nil
}
