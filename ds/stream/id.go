// Package stream holds a Redis stream: entries in ID order, packed into blocks as Redis packs
// them into listpacks, and (groups.go) its consumer groups. It knows nothing of RESP and holds
// no locks: its owner (the shard holding the key) serializes every call.
//
// Ordering rules the callers rely on:
//  1. IDs only grow: Add refuses an ID at or below LastID, even after the entries above it were
//     deleted or trimmed.
//  2. Blocks split where Redis 7.0.15 splits its listpacks (stream-node-max-bytes measured in
//     Redis's own listpack bytes, stream-node-max-entries counting deleted entries too), so an
//     approximate trim (`~`) removes exactly the entries Redis removes.
//  3. Bytes handed to callbacks are valid only during the callback.
package stream

import (
	"math"
	"strconv"
)

// ID is a stream entry ID, ms-seq.
type ID struct{ Ms, Seq uint64 }

// Max is the greatest ID ("+").
var Max = ID{math.MaxUint64, math.MaxUint64}

// Cmp compares a and b.
func (a ID) Cmp(b ID) int {
	switch {
	case a.Ms < b.Ms:
		return -1
	case a.Ms > b.Ms:
		return 1
	case a.Seq < b.Seq:
		return -1
	case a.Seq > b.Seq:
		return 1
	}
	return 0
}

// Less reports a < b.
func (a ID) Less(b ID) bool { return a.Cmp(b) < 0 }

// IsZero reports whether a is 0-0.
func (a ID) IsZero() bool { return a.Ms == 0 && a.Seq == 0 }

// Incr returns the ID right after a; false when a is Max.
func (a ID) Incr() (ID, bool) {
	switch {
	case a.Seq < math.MaxUint64:
		return ID{a.Ms, a.Seq + 1}, true
	case a.Ms < math.MaxUint64:
		return ID{a.Ms + 1, 0}, true
	}
	return a, false
}

// Decr returns the ID right before a; false when a is 0-0.
func (a ID) Decr() (ID, bool) {
	switch {
	case a.Seq > 0:
		return ID{a.Ms, a.Seq - 1}, true
	case a.Ms > 0:
		return ID{a.Ms - 1, math.MaxUint64}, true
	}
	return a, false
}

// Append appends a as "ms-seq".
func (a ID) Append(dst []byte) []byte {
	dst = strconv.AppendUint(dst, a.Ms, 10)
	dst = append(dst, '-')
	return strconv.AppendUint(dst, a.Seq, 10)
}

func (a ID) String() string { return string(a.Append(nil)) }

// ParseID parses an ID argument as Redis 7.0's streamGenericParseIDOrReply: "-" and "+" (unless
// strict), "ms" (seq = missingSeq) or "ms-seq", each part by string2ull; "ms-*" when allowSeqStar,
// which reports seqGiven false. Arguments over 127 bytes are invalid; a NUL byte ends the
// argument, as the C string it is copied into.
func ParseID(b []byte, missingSeq uint64, strict, allowSeqStar bool) (id ID, seqGiven, ok bool) {
	if len(b) > 127 {
		return ID{}, false, false
	}
	for i, c := range b {
		if c == 0 {
			b = b[:i]
			break
		}
	}
	if len(b) == 1 && (b[0] == '-' || b[0] == '+') {
		if strict {
			return ID{}, false, false
		}
		if b[0] == '-' {
			return ID{}, true, true
		}
		return Max, true, true
	}
	msPart, seqPart, dot := b, []byte(nil), false
	for i, c := range b {
		if c == '-' {
			msPart, seqPart, dot = b[:i], b[i+1:], true
			break
		}
	}
	ms, ok := parseUll(msPart)
	if !ok {
		return ID{}, false, false
	}
	seq := missingSeq
	seqGiven = true
	if dot {
		if allowSeqStar && len(seqPart) == 1 && seqPart[0] == '*' {
			seq, seqGiven = 0, false
		} else if seq, ok = parseUll(seqPart); !ok {
			return ID{}, false, false
		}
	}
	return ID{ms, seq}, seqGiven, true
}

// parseUll is Redis's string2ull: string2ll's strict form refusing negatives, else C's strtoull
// (leading spaces, a sign, overflow refused, the whole string consumed).
func parseUll(b []byte) (uint64, bool) {
	if n, ok := strictInt(b); ok {
		return uint64(n), n >= 0
	}
	i := 0
	for i < len(b) && isSpace(b[i]) {
		i++
	}
	neg := false
	if i < len(b) && (b[i] == '+' || b[i] == '-') {
		neg = b[i] == '-'
		i++
	}
	start := i
	var v uint64
	over := false
	for ; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
		d := uint64(b[i] - '0')
		if v > (math.MaxUint64-d)/10 {
			over = true
		}
		v = v*10 + d
	}
	if i == start || i != len(b) || over {
		return 0, false
	}
	if neg {
		v = -v
	}
	return v, true
}

// strictInt is Redis's string2ll: an optional '-', digits without leading zeros, within int64.
func strictInt(b []byte) (int64, bool) {
	if len(b) == 0 || len(b) > 20 {
		return 0, false
	}
	if len(b) == 1 && b[0] == '0' {
		return 0, true
	}
	neg := b[0] == '-'
	p := b
	if neg {
		p = b[1:]
	}
	if len(p) == 0 || p[0] < '1' || p[0] > '9' {
		return 0, false
	}
	var v uint64
	for _, c := range p {
		if c < '0' || c > '9' {
			return 0, false
		}
		d := uint64(c - '0')
		if v > (math.MaxUint64-d)/10 {
			return 0, false
		}
		v = v*10 + d
	}
	if neg {
		if v > 1<<63 {
			return 0, false
		}
		return -int64(v), true
	}
	if v > math.MaxInt64 {
		return 0, false
	}
	return int64(v), true
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'
}
