package rdb

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"
	"slices"
)

// LZF as Redis's lzf_c.c/lzf_d.c read it: a control byte below 32 starts a run of
// ctrl+1 literal bytes; otherwise its top 3 bits are a match length minus 2 (7:
// one more byte follows to add), its low 5 bits and the next byte an offset, and
// the match copies length bytes starting offset+1 bytes back in the output.
const (
	lzfHashLog = 13
	lzfMaxOff  = 1 << 13
	lzfMaxRef  = 7 + 255 + 2 // longest match: 7+255 in the length fields, plus 2
	lzfMaxLit  = 1 << 5

	// lzfMaxRatio bounds how much output a byte of LZF input can justify: a
	// 3-byte back reference yields at most 264 bytes.
	lzfMaxRatio = 88
)

// lzfTable is the compressor's hash table of recent 3-byte sequences. A slot
// holds base+position: each call starts its base past every value earlier
// calls stored, so stale slots are recognised without clearing the table and
// each call's output depends on its input alone.
type lzfTable struct {
	base  uint32
	slots [1 << lzfHashLog]uint32
}

// LZFCompress appends the LZF compression of src to dst. The output is valid
// LZF for Redis's lzf_decompress; it is not byte-equal to Redis's lzf_compress
// output and may be longer than src for incompressible input.
func LZFCompress(dst, src []byte) []byte {
	t := new(lzfTable)
	out, _ := t.compress(dst, src, -1)
	return out
}

// compress appends src compressed to dst. With limit >= 0 it gives up, returning
// dst unchanged and false, once the compressed form would exceed limit bytes.
//
// A match is extended 8 bytes at a time (long runs compress 2.5-3x faster than
// byte by byte; short values cost the same: hashing every position dominates).
func (t *lzfTable) compress(dst, src []byte, limit int) ([]byte, bool) {
	if uint64(t.base)+uint64(len(src))+1 > 1<<32-1 {
		clear(t.slots[:])
		t.base = 0
	}
	base := t.base + 1 // every slot below base is stale, 0 included
	t.base += uint32(len(src)) + 1
	start := len(dst)
	lit := 0 // start of the pending literal run
	n := len(src)
	for ip := 0; ip+2 < n; {
		h := (uint32(src[ip])<<16 | uint32(src[ip+1])<<8 | uint32(src[ip+2])) * 2654435761 >> (32 - lzfHashLog)
		e := t.slots[h]
		t.slots[h] = base + uint32(ip)
		ref := int(e - base)
		if e < base || ref >= ip || ip-ref-1 >= lzfMaxOff ||
			src[ref] != src[ip] || src[ref+1] != src[ip+1] || src[ref+2] != src[ip+2] {
			ip++
			continue
		}
		l, maxl := 3, min(n-ip, lzfMaxRef)
		for l+8 <= maxl {
			x := binary.LittleEndian.Uint64(src[ref+l:]) ^ binary.LittleEndian.Uint64(src[ip+l:])
			if x != 0 {
				l += bits.TrailingZeros64(x) >> 3
				goto matched
			}
			l += 8
		}
		for l < maxl && src[ref+l] == src[ip+l] {
			l++
		}
	matched:
		dst = lzfLiterals(dst, src[lit:ip])
		off, enc := ip-ref-1, l-2
		if enc < 7 {
			dst = append(dst, byte(enc<<5|off>>8), byte(off))
		} else {
			dst = append(dst, byte(7<<5|off>>8), byte(enc-7), byte(off))
		}
		if limit >= 0 && len(dst)-start > limit {
			return dst[:start], false
		}
		ip += l
		lit = ip
	}
	dst = lzfLiterals(dst, src[lit:])
	if limit >= 0 && len(dst)-start > limit {
		return dst[:start], false
	}
	return dst, true
}

func lzfLiterals(dst, lit []byte) []byte {
	for len(lit) > 0 {
		k := min(len(lit), lzfMaxLit)
		dst = append(dst, byte(k-1))
		dst = append(dst, lit[:k]...)
		lit = lit[k:]
	}
	return dst
}

var errLZF = errors.New("invalid LZF compressed string")

// LZFDecompress appends the decompression of src to dst, which must be exactly
// outLen bytes long (Redis's rule). Corrupt input, a back reference before the
// output's start, or output longer or shorter than outLen is an error. Memory
// grows with the output actually produced, never ahead to an outLen the input
// cannot justify.
func LZFDecompress(dst, src []byte, outLen int) ([]byte, error) {
	start := len(dst)
	if outLen < 0 || outLen/lzfMaxRatio > len(src) {
		return dst, fmt.Errorf("%w: %d bytes cannot expand to %d", errLZF, len(src), outLen)
	}
	dst = slices.Grow(dst, outLen)
	for i := 0; i < len(src); {
		ctrl := int(src[i])
		i++
		if ctrl < 32 {
			k := ctrl + 1
			if i+k > len(src) || len(dst)-start+k > outLen {
				return dst[:start], fmt.Errorf("%w: literal run at byte %d overruns", errLZF, i-1)
			}
			dst = append(dst, src[i:i+k]...)
			i += k
			continue
		}
		l := ctrl >> 5
		if l == 7 {
			if i >= len(src) {
				return dst[:start], fmt.Errorf("%w: truncated at byte %d", errLZF, i)
			}
			l += int(src[i])
			i++
		}
		if i >= len(src) {
			return dst[:start], fmt.Errorf("%w: truncated at byte %d", errLZF, i)
		}
		ref := len(dst) - (ctrl&0x1f)<<8 - int(src[i]) - 1
		i++
		l += 2
		if ref < start || len(dst)-start+l > outLen {
			return dst[:start], fmt.Errorf("%w: back reference at byte %d out of range", errLZF, i-2)
		}
		n := len(dst)
		dst = dst[:n+l] // within the capacity Grow gave: the check above bounds it by outLen
		if ref+l <= n {
			copy(dst[n:], dst[ref:ref+l])
			continue
		}
		// An overlapping reference repeats the dist bytes before n: each copy takes everything
		// written since ref, so the copies double (a run of one byte was a loop of appends of
		// one byte, 13% of loading a Redis file of short collections).
		for o := n; o < n+l; {
			o += copy(dst[o:n+l], dst[ref:o])
		}
	}
	if len(dst)-start != outLen {
		return dst[:start], fmt.Errorf("%w: %d bytes where %d were declared", errLZF, len(dst)-start, outLen)
	}
	return dst, nil
}
