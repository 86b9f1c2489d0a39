package strs

import (
	"errors"
	"math"
)

// LCS errors.
var (
	ErrLCSTooLong = errors.New("String too long for LCS")
	ErrLCSMemory  = errors.New("Insufficient memory, transient memory for LCS exceeds proto-max-bulk-len")
	ErrLCSAlloc   = errors.New("Insufficient memory, failed allocating transient memory for LCS")
)

// maxWalkBytes bounds the walk-back table whatever proto-max-bulk-len says: Redis would fail its
// allocation there, Go would die of it. 512 MB of bits is Redis's default limit times 32.
const maxWalkBytes = 512 << 20

// LCSOptions select what LCS computes besides the length.
type LCSOptions struct {
	Seq      bool  // the subsequence itself
	Matches  bool  // the matching ranges (LCS ... IDX)
	MinMatch int64 // ranges shorter than this are left out
}

// Match is one run common to both strings: a[AStart..AEnd] == b[BStart..BEnd], ends inclusive.
type Match struct {
	AStart, AEnd, BStart, BEnd int
}

// Len returns the run's length.
func (m Match) Len() int { return m.AEnd - m.AStart + 1 }

// LCSResult is what LCS found.
type LCSResult struct {
	Len     int
	Seq     []byte
	Matches []Match // from the end of the strings backwards, as Redis replies them
}

// LCS computes the longest common subsequence of a and b with Redis's dynamic programme and
// walks it back the way Redis does, so the subsequence and ranges chosen among equal-length
// candidates are Redis's. Redis refuses inputs whose table of (len(a)+1)*(len(b)+1) uint32 cells
// would exceed limit (proto-max-bulk-len); LCS refuses the same inputs so replies agree, but
// keeps only two rows of lengths and one bit per cell for the walk back (1/32 of Redis's
// memory), and none at all when only the length is wanted.
func LCS(a, b []byte, limit int64, o LCSOptions) (LCSResult, error) {
	if uint64(len(a)) >= math.MaxUint32-1 || uint64(len(b)) >= math.MaxUint32-1 {
		return LCSResult{}, ErrLCSTooLong
	}
	cells := uint64(len(a)+1) * uint64(len(b)+1) // below 2^64: both lengths are below 2^32
	switch {
	case cells > math.MaxUint64/4: // Redis's size computation overflows and its malloc fails
		return LCSResult{}, ErrLCSAlloc
	case cells*4 > uint64(max(limit, 0)):
		return LCSResult{}, ErrLCSMemory
	}
	var up []uint64
	if o.Seq || o.Matches {
		if cells/8 > maxWalkBytes {
			return LCSResult{}, ErrLCSAlloc
		}
		up = make([]uint64, (uint64(len(a))*uint64(len(b))+63)/64)
	}
	n := lcsTable(a, b, up)
	res := LCSResult{Len: n}
	if up != nil {
		walkBack(a, b, up, o, &res)
	}
	return res, nil
}

// lcsTable fills the table row by row and returns the LCS length. For each cell (i, j) with
// a[i-1] != b[j-1], it sets bit (i-1)*len(b)+(j-1) of up (when up is not nil) if
// LCS(i-1, j) > LCS(i, j-1): the only comparison the walk back makes.
func lcsTable(a, b []byte, up []uint64) int {
	prev := make([]uint32, len(b)+1)
	cur := make([]uint32, len(b)+1)
	for i := 1; i <= len(a); i++ {
		ai, row := a[i-1], (i-1)*len(b)
		for j := 1; j <= len(b); j++ {
			switch u, l := prev[j], cur[j-1]; {
			case ai == b[j-1]:
				cur[j] = prev[j-1] + 1
			case u > l:
				cur[j] = u
				if up != nil {
					bit := row + j - 1
					up[bit>>6] |= 1 << (bit & 63)
				}
			default:
				cur[j] = l
			}
		}
		prev, cur = cur, prev
	}
	return int(prev[len(b)])
}

// walkBack follows Redis's lcsCommand from the last cells backwards: a match steps diagonally
// and extends the current range, a mismatch steps towards the larger neighbour (left on ties)
// and closes the range.
func walkBack(a, b []byte, up []uint64, o LCSOptions, res *LCSResult) {
	if o.Seq {
		res.Seq = make([]byte, res.Len)
	}
	idx := res.Len
	unset := len(a) // range start meaning "no range open"
	cur := Match{AStart: unset}
	for i, j := len(a), len(b); i > 0 && j > 0; {
		emit := false
		if a[i-1] == b[j-1] {
			if res.Seq != nil {
				res.Seq[idx-1] = a[i-1]
			}
			switch {
			case cur.AStart == unset:
				cur = Match{i - 1, i - 1, j - 1, j - 1}
			case cur.AStart == i && cur.BStart == j:
				cur.AStart--
				cur.BStart--
			default:
				emit = true
			}
			emit = emit || cur.AStart == 0 || cur.BStart == 0
			idx, i, j = idx-1, i-1, j-1
		} else {
			if bit := (i-1)*len(b) + j - 1; up[bit>>6]&(1<<(bit&63)) != 0 {
				i--
			} else {
				j--
			}
			emit = cur.AStart != unset
		}
		if emit {
			if o.Matches && int64(cur.Len()) >= o.MinMatch {
				res.Matches = append(res.Matches, cur)
			}
			cur.AStart = unset
		}
	}
}
