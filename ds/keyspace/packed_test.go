package keyspace

import (
	"encoding/binary"
	"math/rand/v2"
	"testing"
)

// packedOf is a fake packed value of raw length raw and n bytes.
func packedOf(raw, n int) []byte {
	p := make([]byte, n)
	binary.LittleEndian.PutUint32(p, uint32(raw))
	return p
}

// TestPackedCountsAgainstModel runs random packs, unpacks, deletes, moves and clears over two
// keyspaces and checks the counters against a map of what each key holds.
func TestPackedCountsAgainstModel(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	var epoch uint64
	kss := [2]*Keyspace{New(), New()}
	model := [2]map[string]int64{{}, {}} // key -> saved bytes (0: raw)
	for _, ks := range kss {
		ks.SetEpoch(&epoch)
	}
	for step := 0; step < 20000; step++ {
		epoch++
		i := r.IntN(2)
		ks, m := kss[i], model[i]
		key := []byte{byte('a' + r.IntN(20))}
		switch op := r.IntN(10); {
		case op < 4: // pack
			e, _ := ks.Upsert(key, 0)
			raw, n := 100+r.IntN(1000), 5+r.IntN(90)
			ks.SetPacked(e, packedOf(raw, n))
			m[string(key)] = int64(raw - n)
			if e.RawLen() != raw || !e.Packed() {
				t.Fatalf("step %d: RawLen %d Packed %v", step, e.RawLen(), e.Packed())
			}
		case op < 6: // unpack to a raw value
			if e := ks.Find(key, 0); e != nil {
				ks.Unpacked(e)
				e.SetBytes(make([]byte, 3))
				m[string(key)] = 0
			}
		case op < 8:
			if ks.Delete(key, 0) {
				delete(m, string(key))
			}
		case op < 9: // MOVE to the other keyspace
			to, tm := kss[1-i], model[1-i]
			e := ks.Find(key, 0)
			if e == nil || to.Find(key, 0) != nil {
				continue
			}
			n := to.Add(key)
			n.TakeValue(e)
			to.AdoptPacked(ks, n)
			ks.Remove(e)
			tm[string(key)] = m[string(key)]
			delete(m, string(key))
		default:
			if r.IntN(50) == 0 {
				ks.Clear()
				clear(m)
			}
		}
		for j := range kss {
			var keys int
			var saved int64
			for _, s := range model[j] {
				if s > 0 {
					keys++
					saved += s
				}
			}
			if k, s := kss[j].PackedStats(); k != keys || s != saved {
				t.Fatalf("step %d keyspace %d: counts %d/%d, model %d/%d", step, j, k, s, keys, saved)
			}
		}
	}
}
