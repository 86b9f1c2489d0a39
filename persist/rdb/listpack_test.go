package rdb

import (
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestListpackProperty builds listpacks of random strings and integers (every
// encoding width, strings of 0-5000 bytes), with Bytes called midway, and
// reads them back against the list of what was appended.
func TestListpackProperty(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	ints := []int64{0, 127, 128, -1, -4096, 4095, -4097, 4096, math.MinInt16, math.MaxInt16, -1 << 23, 1<<23 - 1,
		1 << 23, math.MinInt32, math.MaxInt32, math.MaxInt32 + 1, math.MinInt64, math.MaxInt64}
	for round := range 300 {
		var lp Listpack
		var want []string
		n := r.IntN(200)
		for i := range n {
			switch r.IntN(4) {
			case 0:
				v := ints[r.IntN(len(ints))]
				lp.AppendInt(v)
				want = append(want, strconv.FormatInt(v, 10))
			case 1:
				v := int64(r.Uint64()) >> r.IntN(64)
				s := strconv.FormatInt(v, 10)
				lp.Append([]byte(s))
				want = append(want, s)
			default:
				s := strings.Repeat(string(rune('a'+r.IntN(26))), [...]int{0, 1, 63, 64, 4095, 4096, 5000, 7}[r.IntN(8)])
				if r.IntN(5) == 0 {
					s = "0" + s // leading zero: stays a string
				}
				lp.Append([]byte(s))
				want = append(want, s)
			}
			if i == n/2 {
				lp.Bytes()
			}
		}
		b := lp.Bytes()
		if lp.Len() != len(want) || lp.Size() != len(b) {
			t.Fatalf("round %d: Len %d Size %d, want %d and %d", round, lp.Len(), lp.Size(), len(want), len(b))
		}
		var v Value
		if err := v.pushListpack(b); err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		v.finish(&v.Elems, 0, 1)
		got := make([]string, len(v.Elems))
		for i, e := range v.Elems {
			got[i] = string(e)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("round %d: read back differs", round)
		}
	}
}

// TestIntsetProperty: IntsetBytes against a sorted, deduplicated reference.
func TestIntsetProperty(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	for range 300 {
		vals := make([]int64, r.IntN(100))
		shift := r.IntN(64)
		for i := range vals {
			vals[i] = int64(r.Uint64()) >> shift
		}
		if len(vals) > 1 {
			vals[0] = vals[len(vals)-1] // a duplicate
		}
		want := slices.Clone(vals)
		slices.Sort(want)
		want = slices.Compact(want)
		var got []int64
		if err := intsetVals(IntsetBytes(vals), func(v int64) { got = append(got, v) }); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("intset of %v read back %v", want, got)
		}
	}
}
