package command

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"

	"github.com/hotkv/hotkv/ds/vector"
	"github.com/hotkv/hotkv/ds/vector/filter"
)

// A vector set's RDB payload (persist/rdb/module.go writes it as a module value of HotKV's own
// module type; DUMP the same): the index as ds/vector encodes it, so loading does not rebuild the
// graph, then what HotKV's layer keeps beside it. Tags and expiries are stored by element name:
// ds/vector renumbers ids when it decodes.
//
//	byte    format version (1)
//	byte    flags: 1 = made by VSIM.CREATEINDEX
//	uvarint EFSEARCH (0: default)
//	uvarint REDUCE input dimension (0: none; the matrix is recomputed from the two dimensions)
//	uvarint index length, then ds/vector's encoding
//	uvarint tagged elements, each: name, uvarint tag count, tags (each uvarint length + bytes)
//	uvarint expiring elements, each: name, uvarint unix ms
const vsetFormat = 1

func appendBytes(dst, b []byte) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(b)))
	return append(dst, b...)
}

// appendVset encodes v.
func appendVset(dst []byte, v *vsetValue) []byte {
	flags := byte(0)
	if v.hotkv {
		flags |= 1
	}
	dst = append(dst, vsetFormat, flags)
	dst = binary.AppendUvarint(dst, uint64(v.efSearch))
	dst = binary.AppendUvarint(dst, uint64(v.projIn))
	idx := v.set.AppendBinary(nil)
	dst = appendBytes(dst, idx)
	if v.tags == nil {
		dst = binary.AppendUvarint(dst, 0)
	} else {
		dst = binary.AppendUvarint(dst, uint64(v.tags.Len()))
		v.set.ForEach(func(id uint32, name []byte) bool {
			if tags := v.tags.Of(id); len(tags) > 0 {
				dst = appendBytes(dst, name)
				dst = binary.AppendUvarint(dst, uint64(len(tags)))
				for _, t := range tags {
					dst = appendBytes(dst, []byte(t))
				}
			}
			return true
		})
	}
	dst = binary.AppendUvarint(dst, uint64(len(v.ttl)))
	ids := make([]uint32, 0, len(v.ttl))
	for id := range v.ttl {
		ids = append(ids, id)
	}
	slices.Sort(ids) // one encoding for one set: DEBUG DIGEST hashes it
	for _, id := range ids {
		dst = appendBytes(dst, v.set.Name(id))
		dst = binary.AppendUvarint(dst, uint64(v.ttl[id]))
	}
	return dst
}

var errVsetCorrupt = errors.New("corrupt vector set payload")

// vsetReader reads the payload; the first error sticks.
type vsetReader struct {
	b   []byte
	err error
}

func (r *vsetReader) uvarint() uint64 {
	if r.err != nil {
		return 0
	}
	n, k := binary.Uvarint(r.b)
	if k <= 0 {
		r.err = errVsetCorrupt
		return 0
	}
	r.b = r.b[k:]
	return n
}

func (r *vsetReader) bytes() []byte {
	n := r.uvarint()
	if r.err != nil || n > uint64(len(r.b)) {
		r.err = errVsetCorrupt
		return nil
	}
	out := r.b[:n:n]
	r.b = r.b[n:]
	return out
}

// decodeVset rebuilds a set from its payload, numbered by e. Bad input is an error.
func decodeVset(e *Engine, b []byte) (*vsetValue, error) {
	if len(b) < 2 || b[0] != vsetFormat {
		return nil, errVsetCorrupt
	}
	r := &vsetReader{b: b[2:]}
	v := &vsetValue{hotkv: b[1]&1 != 0}
	v.efSearch = int(min(r.uvarint(), 1<<20))
	projIn := r.uvarint()
	idx := r.bytes()
	if r.err != nil {
		return nil, r.err
	}
	s, err := vector.Decode(idx)
	if err != nil {
		return nil, fmt.Errorf("cannot decode a vector set: %w", err)
	}
	v.set = s
	s.ForEach(func(id uint32, _ []byte) bool { v.attrBytes += int64(len(s.AttrID(id))); return true })
	if projIn > 0 {
		if projIn > vector.MaxDim || int(projIn)*s.Config().Dim > maxProjection || int(projIn) <= s.Config().Dim {
			return nil, errVsetCorrupt
		}
		v.projIn = int(projIn)
		v.proj = projection(v.projIn, s.Config().Dim)
	}
	for n := r.uvarint(); n > 0 && r.err == nil; n-- {
		id, ok := s.ID(r.bytes())
		k := r.uvarint()
		if k > uint64(len(r.b)) {
			return nil, errVsetCorrupt
		}
		tags := make([][]byte, 0, k)
		for ; k > 0 && r.err == nil; k-- {
			tags = append(tags, r.bytes())
		}
		if !ok {
			r.err = errVsetCorrupt
			break
		}
		if v.tags == nil {
			v.tags = filter.NewTags()
		}
		v.tags.Set(id, tags)
	}
	for n := r.uvarint(); n > 0 && r.err == nil; n-- {
		id, ok := s.ID(r.bytes())
		at := r.uvarint()
		if !ok {
			r.err = errVsetCorrupt
			break
		}
		if v.ttl == nil {
			v.ttl = map[uint32]int64{}
		}
		v.ttl[id] = int64(at)
	}
	if r.err != nil || len(r.b) != 0 {
		return nil, errVsetCorrupt
	}
	v.uid = e.vsetUID.Add(1) - 1
	return v, nil
}
