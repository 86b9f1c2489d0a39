package rdb

import (
	"bytes"
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"testing"
)

// keyModel is a key's contents in a form both a live server (through its
// replies) and a decoded Value reduce to, compared type-aware: sets and hashes
// sorted, sorted sets in score order, streams with their groups.
type keyModel struct {
	Type     string
	Enc      string // OBJECT ENCODING, collections only
	ExpireMs int64  // PEXPIRETIME; -1 none
	Str      string
	List     []string
	Set      []string
	Hash     [][2]string
	ZSet     []zm
	Stream   *streamModel
}

type zm struct {
	M string
	S float64
}

type streamModel struct {
	Length       int64
	LastID       string
	MaxDeleted   string
	FirstID      string
	EntriesAdded int64
	Entries      [][]string // id, field, value, ...
	Groups       []groupModel
}

type groupModel struct {
	Name        string
	LastID      string
	EntriesRead int64 // -1: nil
	PEL         [][4]string
	Consumers   []consumerModel
}

type consumerModel struct {
	Name string
	Seen int64
	PEL  []string
}

// snapshot reads every key of databases 0..dbs-1 from a live server; the key
// of the map is "db:key".
func snapshot(t testing.TB, c *respConn, dbs int) map[string]keyModel {
	t.Helper()
	out := map[string]keyModel{}
	for db := range dbs {
		c.must(t, "SELECT", db)
		for _, k := range c.must(t, "KEYS", "*").([]any) {
			out[fmt.Sprintf("%d:%s", db, k)] = liveKey(t, c, k.([]byte))
		}
	}
	c.must(t, "SELECT", 0)
	return out
}

func liveKey(t testing.TB, c *respConn, k []byte) keyModel {
	m := keyModel{Type: c.must(t, "TYPE", k).(string), ExpireMs: c.must(t, "PEXPIRETIME", k).(int64)}
	if m.ExpireMs < 0 {
		m.ExpireMs = -1
	}
	if m.Type != "string" {
		m.Enc = string(c.must(t, "OBJECT", "ENCODING", k).([]byte))
	}
	switch m.Type {
	case "string":
		m.Str = string(c.must(t, "GET", k).([]byte))
	case "list":
		m.List = strs(c.must(t, "LRANGE", k, 0, -1))
	case "set":
		m.Set = strs(c.must(t, "SMEMBERS", k))
		slices.Sort(m.Set)
	case "hash":
		a := strs(c.must(t, "HGETALL", k))
		for i := 0; i < len(a); i += 2 {
			m.Hash = append(m.Hash, [2]string{a[i], a[i+1]})
		}
		slices.SortFunc(m.Hash, func(x, y [2]string) int { return cmp.Compare(x[0], y[0]) })
	case "zset":
		a := strs(c.must(t, "ZRANGE", k, 0, -1, "WITHSCORES"))
		for i := 0; i < len(a); i += 2 {
			f, err := strconv.ParseFloat(a[i+1], 64)
			if err != nil {
				t.Fatal(err)
			}
			m.ZSet = append(m.ZSet, zm{a[i], f})
		}
	case "stream":
		m.Stream = liveStream(t, c, k)
	default:
		t.Fatalf("type %s", m.Type)
	}
	return m
}

func strs(r any) []string {
	var out []string
	for _, x := range r.([]any) {
		out = append(out, string(x.([]byte)))
	}
	return out
}

// kv turns a flat key, value, ... reply into a map.
func kv(r any) map[string]any {
	a := r.([]any)
	m := map[string]any{}
	for i := 0; i+1 < len(a); i += 2 {
		m[string(a[i].([]byte))] = a[i+1]
	}
	return m
}

func liveStream(t testing.TB, c *respConn, k []byte) *streamModel {
	info := kv(c.must(t, "XINFO", "STREAM", k, "FULL", "COUNT", 0))
	s := &streamModel{
		Length:       info["length"].(int64),
		LastID:       string(info["last-generated-id"].([]byte)),
		MaxDeleted:   string(info["max-deleted-entry-id"].([]byte)),
		FirstID:      string(info["recorded-first-entry-id"].([]byte)),
		EntriesAdded: info["entries-added"].(int64),
	}
	for _, e := range c.must(t, "XRANGE", k, "-", "+").([]any) {
		e := e.([]any)
		s.Entries = append(s.Entries, append([]string{string(e[0].([]byte))}, strs(e[1])...))
	}
	for _, g := range info["groups"].([]any) {
		gi := kv(g)
		gm := groupModel{Name: string(gi["name"].([]byte)), LastID: string(gi["last-delivered-id"].([]byte)), EntriesRead: -1}
		if n, ok := gi["entries-read"].(int64); ok {
			gm.EntriesRead = n
		}
		for _, p := range gi["pending"].([]any) {
			p := p.([]any)
			gm.PEL = append(gm.PEL, [4]string{string(p[0].([]byte)), string(p[1].([]byte)),
				strconv.FormatInt(p[2].(int64), 10), strconv.FormatInt(p[3].(int64), 10)})
		}
		for _, cn := range gi["consumers"].([]any) {
			ci := kv(cn)
			cm := consumerModel{Name: string(ci["name"].([]byte)), Seen: ci["seen-time"].(int64)}
			for _, p := range ci["pending"].([]any) {
				cm.PEL = append(cm.PEL, string(p.([]any)[0].([]byte)))
			}
			gm.Consumers = append(gm.Consumers, cm)
		}
		s.Groups = append(s.Groups, gm)
	}
	return s
}

// modelOf reduces a decoded value the same way.
func modelOf(v *Value, expire int64) keyModel {
	m := keyModel{ExpireMs: expire}
	ss := func(b [][]byte) []string {
		var out []string
		for _, x := range b {
			out = append(out, string(x))
		}
		return out
	}
	switch v.Type {
	case ValString:
		m.Type, m.Str = "string", string(v.Str)
	case ValList:
		m.Type, m.Enc, m.List = "list", "quicklist", ss(v.Elems)
	case ValSet:
		m.Type, m.Enc, m.Set = "set", v.Encoding, ss(v.Elems)
		slices.Sort(m.Set)
	case ValHash:
		m.Type, m.Enc = "hash", v.Encoding
		for i := range v.Fields {
			m.Hash = append(m.Hash, [2]string{string(v.Fields[i]), string(v.Vals[i])})
		}
		slices.SortFunc(m.Hash, func(x, y [2]string) int { return cmp.Compare(x[0], y[0]) })
	case ValZSet:
		m.Type, m.Enc = "zset", v.Encoding
		for i := range v.Members {
			m.ZSet = append(m.ZSet, zm{string(v.Members[i]), v.Scores[i]})
		}
		slices.SortFunc(m.ZSet, func(x, y zm) int {
			if c := cmp.Compare(x.S, y.S); c != 0 {
				return c
			}
			return bytes.Compare([]byte(x.M), []byte(y.M))
		})
	case ValStream:
		m.Type, m.Enc, m.Stream = "stream", "stream", streamModelOf(v.Stream)
	}
	return m
}

func idString(id StreamID) string { return fmt.Sprintf("%d-%d", id.Ms, id.Seq) }

func streamModelOf(s *Stream) *streamModel {
	m := &streamModel{Length: int64(s.Length), LastID: idString(s.LastID), MaxDeleted: idString(s.MaxDeletedID),
		FirstID: idString(s.FirstID), EntriesAdded: int64(s.EntriesAdded)}
	for _, e := range s.Entries {
		row := []string{idString(e.ID)}
		for _, f := range e.Fields {
			row = append(row, string(f))
		}
		m.Entries = append(m.Entries, row)
	}
	for _, g := range s.Groups {
		gm := groupModel{Name: string(g.Name), LastID: idString(g.LastID), EntriesRead: g.EntriesRead}
		for _, p := range g.PEL {
			gm.PEL = append(gm.PEL, [4]string{idString(p.ID), string(p.Consumer),
				strconv.FormatInt(p.DeliveryTimeMs, 10), strconv.FormatUint(p.DeliveryCount, 10)})
		}
		for _, c := range g.Consumers {
			cm := consumerModel{Name: string(c.Name), Seen: c.SeenTimeMs}
			for _, id := range c.PEL {
				cm.PEL = append(cm.PEL, idString(id))
			}
			gm.Consumers = append(gm.Consumers, cm)
		}
		m.Groups = append(m.Groups, gm)
	}
	return m
}

// cloneValue copies a Value out of the Decoder's reused Record.
func cloneValue(v *Value) Value {
	c := Value{Type: v.Type, Str: bytes.Clone(v.Str), Stream: v.Stream, Encoding: v.Encoding, RDBType: v.RDBType}
	cl := func(b [][]byte) [][]byte {
		out := make([][]byte, len(b))
		for i := range b {
			out[i] = bytes.Clone(b[i])
		}
		return out
	}
	c.Elems, c.Fields, c.Vals, c.Members = cl(v.Elems), cl(v.Fields), cl(v.Vals), cl(v.Members)
	c.Scores = slices.Clone(v.Scores)
	return c
}

// encodeValue writes v under key with e's value methods.
func encodeValue(e *Encoder, key []byte, v *Value) {
	i := 0
	switch v.Type {
	case ValString:
		e.StringValue(key, v.Str)
	case ValList:
		e.ListValue(key, len(v.Elems), func() []byte { i++; return v.Elems[i-1] })
	case ValSet:
		e.SetValue(key, len(v.Elems), func() []byte { i++; return v.Elems[i-1] })
	case ValHash:
		e.HashValue(key, len(v.Fields), func() ([]byte, []byte) { i++; return v.Fields[i-1], v.Vals[i-1] })
	case ValZSet:
		e.ZSetValue(key, len(v.Members), func() ([]byte, float64) { i++; return v.Members[i-1], v.Scores[i-1] })
	case ValStream:
		e.StreamValue(key, v.Stream)
	}
}

// diffModels reports every key that differs.
func diffModels(t *testing.T, what string, want, got map[string]keyModel) {
	t.Helper()
	for k, w := range want {
		g, ok := got[k]
		if !ok {
			t.Errorf("%s: key %s missing", what, k)
			continue
		}
		if !modelEqual(w, g) {
			ws, gs := fmt.Sprintf("%+v", w), fmt.Sprintf("%+v", g)
			if w.Stream != nil && g.Stream != nil {
				ws, gs = fmt.Sprintf("%+v %+v", w, *w.Stream), fmt.Sprintf("%+v %+v", g, *g.Stream)
			}
			t.Errorf("%s: key %s differs\nwant %.2000s\ngot  %.2000s", what, k, ws, gs)
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			t.Errorf("%s: extra key %s", what, k)
		}
	}
}

func modelEqual(a, b keyModel) bool {
	as, bs := a.Stream, b.Stream
	a.Stream, b.Stream = nil, nil
	if fmt.Sprintf("%#v", a) != fmt.Sprintf("%#v", b) {
		return false
	}
	if (as == nil) != (bs == nil) {
		return false
	}
	return as == nil || fmt.Sprintf("%#v", *as) == fmt.Sprintf("%#v", *bs)
}
