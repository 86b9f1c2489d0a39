package set

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// Inter, Union and Diff agree with maps over random sets of every encoding.
func TestOpsModel(t *testing.T) {
	r := rand.New(rand.NewPCG(4, 5))
	for round := range 200 {
		k := 1 + r.IntN(4)
		sets := make([]*Set, k)
		models := make([]map[string]bool, k)
		for i := range k {
			if r.IntN(8) == 0 {
				continue // a missing key
			}
			sets[i], models[i] = New(), map[string]bool{}
			size := []int{3, 50, 700}[r.IntN(3)]
			for range size {
				m := fmt.Sprint(r.IntN(800))
				switch r.IntN(6) {
				case 0, 1:
					m = "s" + m
				case 2: // past set-max-listpack-value: out of line while the set is small
					m = "L" + m + strings.Repeat("x", 60+r.IntN(20))
				}
				sets[i].Add([]byte(m), &defaultLimits)
				models[i][m] = true
			}
		}
		if k > 1 && r.IntN(5) == 0 {
			sets[k-1], models[k-1] = sets[0], models[0] // a key given twice
		}
		checkOps(t, round, sets, models)
	}
}

func checkOps(t *testing.T, round int, sets []*Set, models []map[string]bool) {
	inUnion, inInter, inDiff := map[string]bool{}, map[string]bool{}, map[string]bool{}
	for i, m := range models {
		for x := range m {
			inUnion[x] = true
			all := !slices.Contains(sets, nil)
			for _, o := range models {
				all = all && o[x]
			}
			inInter[x] = all
			if i == 0 {
				none := true
				for j, o := range models[1:] {
					none = none && (o == nil || !o[x]) && sets[j+1] != sets[0]
				}
				inDiff[x] = none
			}
		}
	}
	want := func(in map[string]bool) []string {
		var out []string
		for x, ok := range in {
			if ok {
				out = append(out, x)
			}
		}
		slices.Sort(out)
		return out
	}
	sorted := func(s *Set) []string { out := members(t, s); slices.Sort(out); return out }
	if got := sorted(Union(sets, &defaultLimits)); !slices.Equal(got, want(inUnion)) {
		t.Fatalf("round %d: union %v, want %v", round, got, want(inUnion))
	}
	if got := sorted(Diff(sets, &defaultLimits)); !slices.Equal(got, want(inDiff)) {
		t.Fatalf("round %d: diff %v, want %v", round, got, want(inDiff))
	}
	if slices.Contains(sets, nil) {
		return
	}
	got := interMembers(sets, 0)
	slices.Sort(got)
	if !slices.Equal(got, want(inInter)) {
		t.Fatalf("round %d: inter %v, want %v", round, got, want(inInter))
	}
}

// Inter walks the smallest set, the first of equal ones, so an intset gives ascending order.
func TestInterOrder(t *testing.T) {
	a, b := New(), New()
	for _, m := range []string{"x", "3", "1", "2"} {
		a.Add([]byte(m), &defaultLimits)
	}
	for _, m := range []string{"3", "2", "1", "x"} {
		b.Add([]byte(m), &defaultLimits)
	}
	got := interMembers([]*Set{a, b}, 0)
	if !slices.Equal(got, []string{"x", "3", "1", "2"}) {
		t.Fatalf("order %v, want a's insertion order", got)
	}
	c := New()
	for _, m := range []string{"9", "2", "1"} {
		c.Add([]byte(m), &defaultLimits)
	}
	got = interMembers([]*Set{a, c}, 1)
	if !slices.Equal(got, []string{"1"}) {
		t.Fatalf("stopped inter %v, want the intset's first common member", got)
	}
}

// interMembers collects Inter's members in order, stopping after limit (0: all).
func interMembers(sets []*Set, limit int) []string {
	var got []string
	add := func(m string) bool { got = append(got, m); return limit == 0 || len(got) < limit }
	Inter(slices.Clone(sets), func(v int64) bool { return add(fmt.Sprint(v)) },
		func(m []byte) bool { return add(string(m)) })
	return got
}

// A builder ends with what Add would have built from the same members in the same order: the
// same encoding, members, order and out-of-line members, with its buffer fitted and none of the
// members it borrowed.
func TestBuilderMatchesAdd(t *testing.T) {
	r := rand.New(rand.NewPCG(8, 9))
	for _, lim := range []Limits{defaultLimits, {Intset: 4, Listpack: 3, ListpackValue: 8},
		{Intset: 0, Listpack: 0, ListpackValue: 0}, {Intset: 8, Listpack: 200, ListpackValue: 2}} {
		for round := range 300 {
			added, bd := New(), newBuilder(&lim)
			var lent [][]byte // the members lent to the builder, overwritten once it is done
			for range []int{1, 3, 10, 40, 150, 600}[r.IntN(6)] {
				m := genMember(r)
				if v, err := strconv.ParseInt(m, 10, 64); err == nil && r.IntN(2) == 0 && strconv.FormatInt(v, 10) == m {
					bd.addInt(v)
				} else {
					lent = append(lent, []byte(m))
					bd.add(lent[len(lent)-1])
				}
				added.Add([]byte(m), &lim)
			}
			built := bd.done()
			for _, m := range lent {
				for i := range m {
					m[i] = '?'
				}
			}
			if built.enc != added.enc || !slices.Equal(members(t, built), members(t, added)) {
				t.Fatalf("%+v round %d: built encoding %d %q, added %d %q", lim, round, built.enc,
					members(t, built), added.enc, members(t, added))
			}
			if built.enc == encListpack && built.lp().extLen() != added.lp().extLen() {
				t.Fatalf("%+v round %d: %d members out of line, Add keeps %d", lim, round,
					built.lp().extLen(), added.lp().extLen())
			}
			if built.enc != encBig && cap(built.b)-len(built.b) > len(built.b)/8+16 {
				t.Fatalf("%+v round %d: built buffer %d of %d bytes", lim, round, len(built.b), cap(built.b))
			}
		}
	}
}
