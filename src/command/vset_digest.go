package command

import (
	"encoding/binary"
	"math"
	"slices"
)

// vsetDigest mixes a vector set's content into d for DEBUG DIGEST and DIGEST-VALUE: what a
// client can read back, not how the graph is laid out. A replica builds its own HNSW graph
// from the VADDs it is sent (as Redis's does), and a loaded set renumbers its ids, so the
// serialized form (graph, ids, level generator) differs between sets that hold the same
// elements; this digest does not.
//
//   - The set: dimension, metric, quantization, M, REDUCE's input dimension (the projection is
//     derived from the two dimensions), EFSEARCH and whether VSIM.CREATEINDEX made it.
//   - Each live element, xored in so order does not count: mix(name), mix(stored vector: its
//     bytes, norm and Q8 range as VEMB RAW reads them), mix(attribute JSON or nothing), mix(its
//     tags, sorted), and "!!expire!!" when it has an expiry (the time is not mixed in, as
//     Redis's key digest does with a key's TTL). Elements past their expiry are left out.
func vsetDigest(d *digest, v *vsetValue, now int64) {
	cfg := v.set.Config()
	var hdr []byte
	hdr = binary.AppendUvarint(hdr, uint64(cfg.Dim))
	hdr = append(hdr, byte(cfg.Metric), byte(cfg.Quant))
	hdr = binary.AppendUvarint(hdr, uint64(cfg.M))
	hdr = binary.AppendUvarint(hdr, uint64(v.projIn))
	hdr = binary.AppendUvarint(hdr, uint64(v.efSearch))
	if v.hotkv {
		hdr = append(hdr, 1)
	} else {
		hdr = append(hdr, 0)
	}
	d.mix(hdr)
	nowMs := now / 1e6
	var buf []byte
	var tags []string
	v.set.ForEach(func(id uint32, name []byte) bool {
		at, expiring := v.ttl[id]
		if expiring && at <= nowMs {
			return true
		}
		var el digest
		el.mix(name)
		r, _ := v.set.Raw(name)
		buf = append(buf[:0], byte(r.Quant))
		buf = binary.LittleEndian.AppendUint32(buf, math.Float32bits(r.Norm))
		buf = binary.LittleEndian.AppendUint32(buf, math.Float32bits(r.Range))
		if r.Offset {
			buf = append(buf, 1)
		} else {
			buf = append(buf, 0)
		}
		buf = binary.LittleEndian.AppendUint32(buf, math.Float32bits(r.Min))
		buf = binary.LittleEndian.AppendUint32(buf, math.Float32bits(r.Max))
		el.mix(append(buf, r.Data...))
		if a := v.set.AttrID(id); a != nil {
			el.mix(append(append(buf[:0], 1), a...))
		} else {
			el.mix([]byte{0})
		}
		tags = tags[:0]
		if v.tags != nil {
			tags = append(tags, v.tags.Of(id)...)
		}
		slices.Sort(tags)
		buf = buf[:0]
		for _, t := range tags {
			buf = binary.AppendUvarint(buf, uint64(len(t)))
			buf = append(buf, t...)
		}
		el.mix(buf)
		if expiring {
			el.mix([]byte("!!expire!!"))
		}
		d.xorIn(el[:])
		return true
	})
}
