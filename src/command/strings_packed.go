package command

// Value compression (value-compression, value-compression-threshold): string values longer
// than the threshold are held packed (ds/compress) when that saves an eighth of their bytes.
// Every command sees the raw bytes through the helpers below; only their storage differs.
//
//  1. Reads (strBytes) unpack into the calling Ctx's scratch buffer. Each Ctx runs one command at
//     a time and shared readers run in their own clients' Ctx, so two readers of one shard never
//     share a buffer; the bytes are valid until the Ctx's next strBytes. A command holding two
//     values at once (LCS, BITOP, SORT) takes copies (strCopy).
//  2. Writes that replace the value (SET family, RESTORE, loading) pack in storeString/packValue.
//  3. Writes that edit the value in place (APPEND, SETRANGE, SETBIT, BITFIELD, the HLL commands)
//     first call unpackForEdit, which leaves the entry raw in a buffer of its own; APPEND,
//     SETRANGE and the bit writes pack a value that was packed again afterwards (repack) if it
//     is still over the threshold. A raw value they edit stays raw (so a bitmap built by SETBIT
//     or a string grown by APPEND costs what it costs in Redis, not a compression per edit);
//     the next write that replaces it packs it.
//  4. Numbers (EncInt) and HyperLogLogs (values starting with "HYLL") are never packed.
//  5. The keyspace counts packed values and the bytes they save (ds/keyspace/packed.go); any
//     code that replaces a possibly packed value another way calls ks.Unpacked first.

import (
	"bytes"

	"github.com/hotkv/hotkv/ds/compress"
	"github.com/hotkv/hotkv/ds/keyspace"
	"github.com/hotkv/hotkv/ds/sparsebits"
)

// scratchKeep is the largest scratch buffer a Ctx keeps between commands; a longer value is
// unpacked into a buffer of its own each time.
const scratchKeep = 1 << 20

// strBytes returns e's string bytes as a client sees them; a packed value is unpacked into c's
// scratch buffer, valid until c's next strBytes. e must hold a string (or nothing).
func (c *Ctx) strBytes(e *keyspace.Entry) []byte {
	if !e.Packed() {
		return e.Bytes()
	}
	raw := unpackOrPanic(c.unpacked, e)
	if cap(raw) <= scratchKeep {
		c.unpacked = raw
	}
	return raw
}

// strCopy returns e's string bytes: the entry's own when raw (valid while e is), a new buffer
// when packed.
func strCopy(e *keyspace.Entry) []byte {
	if !e.Packed() {
		return e.Bytes()
	}
	return unpackOrPanic(nil, e)
}

// strLen is STRLEN's answer for the string entry e: O(1), packed or not.
func strLen(e *keyspace.Entry) int { return e.RawLen() }

// unpackOrPanic returns the raw bytes of the packed e, in dst's storage when it fits: every
// reader of a packed value goes through it, a sparse bitmap's too (bitmaps_sparse.go).
func unpackOrPanic(dst []byte, e *keyspace.Entry) []byte {
	if p := e.Bytes(); sparsebits.Is(p) {
		return sparsebits.Dense(dst, p)
	}
	raw, err := compress.Unpack(dst, e.Bytes())
	if err != nil {
		panic("BUG: a packed value does not unpack: " + err.Error())
	}
	return raw
}

// unpackForEdit makes e's string raw, in a buffer e owns, before a command edits it in place;
// it reports whether e was packed (for repack).
func unpackForEdit(ks *keyspace.Keyspace, e *keyspace.Entry) (was bool) {
	if !e.Packed() {
		return false
	}
	raw := unpackOrPanic(nil, e)
	ks.Unpacked(e)
	e.SetBytes(raw)
	return true
}

// packing returns the configured algorithm and threshold.
func (e *Engine) packing() (compress.Algo, int) {
	s := e.Settings()
	return compress.Algo(s.ValueCompression), int(min(s.ValueCompressionThreshold, keyspace.MaxString))
}

// packable reports whether v, of string encoding enc, is a value to try packing.
func packable(v []byte, enc uint8, threshold int) bool {
	return len(v) > threshold && enc != EncInt && !bytes.HasPrefix(v, []byte("HYLL"))
}

// packValue stores v packed in e (a string entry of ks, whose Enc the caller has set) when
// compression is on, v is packable and packing saves an eighth; it reports whether it did. old is
// e's previous buffer, reused when the packed form fits it snugly.
func packValue(c *Ctx, ks *keyspace.Keyspace, e *keyspace.Entry, v, old []byte) bool {
	return c.E.packInto(ks, e, v, old, &c.packed)
}

// packInto is packValue with the scratch buffer *scratch, which only the caller uses meanwhile.
func (eng *Engine) packInto(ks *keyspace.Keyspace, e *keyspace.Entry, v, old []byte, scratch *[]byte) bool {
	algo, threshold := eng.packing()
	if algo == compress.None || !packable(v, e.Enc, threshold) {
		return false
	}
	p, ok := compress.Pack(*scratch, algo, v)
	if cap(p) <= scratchKeep {
		*scratch = p
	}
	if !ok {
		return false
	}
	var stored []byte
	if cap(old) >= len(p) && cap(old) <= 2*len(p)+64 {
		stored = append(old[:0], p...)
	} else {
		stored = append([]byte(nil), p...)
	}
	ks.SetPacked(e, stored)
	return true
}

// repack packs e's string again after an in-place edit if it was packed before (was, from
// unpackForEdit) and packing is still on and worth it.
func repack(c *Ctx, ks *keyspace.Keyspace, e *keyspace.Entry, was bool) {
	if !was || e.Packed() || e.Kind != keyspace.KindString {
		return
	}
	v := e.Bytes()
	packValue(c, ks, e, v, nil)
}

// storeOwnedString stores v, which e now owns, as the string value of e (an entry of ks being
// created by RESTORE or a load), packed when value-compression says so. A raw value keeps the
// encoding hint unset, as such values always had.
func storeOwnedString(eng *Engine, ks *keyspace.Keyspace, e *keyspace.Entry, v []byte, scratch *[]byte) {
	ks.Unpacked(e)
	e.Kind = keyspace.KindString
	if algo, threshold := eng.packing(); algo != compress.None && len(v) > threshold {
		e.Enc = strEncodingOf(v)
		if eng.packInto(ks, e, v, nil, scratch) {
			return
		}
		e.Enc = 0
	}
	e.SetBytes(v)
}

// stringBytes is the raw value of the string entry en, for the files: packed values are
// written as the plain strings Redis reads (with rdbcompression's LZF as for any string).
func (s *RDBSerializer) stringBytes(en *keyspace.Entry) []byte {
	if !en.Packed() {
		return en.Bytes()
	}
	raw := unpackOrPanic(s.raw, en)
	if cap(raw) <= scratchKeep {
		s.raw = raw
	}
	return raw
}

// infoCompression appends INFO stats' value_compressed_keys (packed strings held now) and
// value_compression_saved_bytes (their raw bytes less their packed bytes), HotKV's own. The
// keyspaces keep both counts as values change; INFO holds every shard and adds them up.
func infoCompression(w *infoWriter, c *Ctx) {
	keys, saved := c.E.packedTotals()
	w.int("value_compressed_keys", int64(keys))
	w.int("value_compression_saved_bytes", saved)
}

// packedTotals sums the keyspaces' packed counts; the caller holds every shard.
func (e *Engine) packedTotals() (keys int, saved int64) {
	for _, sh := range e.Group.Shards {
		for _, ks := range sh.Data.(*shardData).dbs {
			k, s := ks.PackedStats()
			keys, saved = keys+k, saved+s
		}
	}
	return keys, saved
}
