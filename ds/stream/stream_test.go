package stream

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// refEntry is one entry of the reference: a sorted slice of live entries.
type refEntry struct {
	id ID
	fv [][]byte
}

type ref struct {
	entries []refEntry
	last    ID
}

func (r *ref) rangeOf(start, end ID, rev bool) []refEntry {
	var out []refEntry
	for _, e := range r.entries {
		if !e.id.Less(start) && !end.Less(e.id) {
			out = append(out, e)
		}
	}
	if rev {
		slices.Reverse(out)
	}
	return out
}

// testScratch is shared by every collect, as a handler's pooled Scratch is by its iterators.
var testScratch Scratch

func collect(s *Stream, start, end ID, rev bool) []refEntry {
	var out []refEntry
	it := s.RangeWith(start, end, rev, &testScratch)
	for {
		id, fv, ok := it.Next()
		if !ok {
			return out
		}
		cp := make([][]byte, len(fv))
		for i := range fv {
			cp[i] = bytes.Clone(fv[i])
		}
		out = append(out, refEntry{id, cp})
	}
}

func sameEntries(a, b []refEntry) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].id != b[i].id || len(a[i].fv) != len(b[i].fv) {
			return false
		}
		for j := range a[i].fv {
			if !bytes.Equal(a[i].fv[j], b[i].fv[j]) {
				return false
			}
		}
	}
	return true
}

func randFV(r *rand.Rand) [][]byte {
	n := 1 + r.IntN(3)
	fv := make([][]byte, 0, 2*n)
	for i := 0; i < n; i++ {
		f := []byte{'a' + byte(i)}
		if r.IntN(4) == 0 {
			f = []byte(fmt.Sprint("f", r.IntN(5)))
		}
		v := []byte(fmt.Sprint(r.IntN(1000)))
		if r.IntN(5) == 0 {
			v = bytes.Repeat([]byte{'x'}, r.IntN(300))
		}
		fv = append(fv, f, v)
	}
	return fv
}

func randID(r *rand.Rand, s *Stream) ID {
	if r.IntN(3) == 0 {
		return ID{uint64(r.IntN(1000)), uint64(r.IntN(5))}
	}
	last := s.LastID()
	return ID{last.Ms + uint64(r.IntN(3)), uint64(r.IntN(4))}
}

// TestStreamAgainstReference runs random adds, deletes, trims and ranges on a Stream and on a
// sorted slice, comparing every range both ways and the metadata after each step.
func TestStreamAgainstReference(t *testing.T) {
	for seed := uint64(1); seed <= 40; seed++ {
		r := rand.New(rand.NewPCG(seed, 7))
		s, rf := New(), &ref{}
		lim := Limits{MaxBytes: int64(64 + r.IntN(600)), MaxEntries: int64(1 + r.IntN(12))}
		for step := 0; step < 600; step++ {
			switch op := r.IntN(10); {
			case op < 5:
				id, fv := randID(r, s), randFV(r)
				err := s.Add(id, fv, lim)
				if want := rf.last.Less(id); (err == nil) != want {
					t.Fatalf("seed %d step %d: Add %v after %v: %v", seed, step, id, rf.last, err)
				}
				if err == nil {
					rf.entries = append(rf.entries, refEntry{id, fv})
					rf.last = id
				}
			case op < 7:
				var id ID
				if len(rf.entries) > 0 && r.IntN(3) > 0 {
					id = rf.entries[r.IntN(len(rf.entries))].id
				} else {
					id = randID(r, s)
				}
				i := slices.IndexFunc(rf.entries, func(e refEntry) bool { return e.id == id })
				if got := s.Delete(id); got != (i >= 0) {
					t.Fatalf("seed %d step %d: Delete %v = %v", seed, step, id, got)
				}
				if i >= 0 {
					rf.entries = slices.Delete(rf.entries, i, i+1)
				}
			case op < 8:
				tr := Trim{Approx: r.IntN(2) == 0}
				if r.IntN(2) == 0 {
					tr.MaxLen = uint64(r.IntN(len(rf.entries) + 2))
				} else {
					tr.ByMinID, tr.MinID = true, randID(r, s)
				}
				if tr.Approx && r.IntN(2) == 0 {
					tr.Limit = int64(1 + r.IntN(20))
				}
				n := s.Trim(tr)
				if !tr.Approx && tr.Limit == 0 {
					want := 0
					for _, e := range rf.entries {
						if tr.ByMinID && e.id.Less(tr.MinID) || !tr.ByMinID && uint64(len(rf.entries)-want) > tr.MaxLen {
							want++
						}
					}
					if int(n) != want {
						t.Fatalf("seed %d step %d: exact trim %+v removed %d, want %d", seed, step, tr, n, want)
					}
				}
				if n < 0 || int(n) > len(rf.entries) {
					t.Fatalf("seed %d step %d: trim removed %d of %d", seed, step, n, len(rf.entries))
				}
				if tr.Limit > 0 && n > tr.Limit {
					t.Fatalf("seed %d step %d: trim removed %d past limit %d", seed, step, n, tr.Limit)
				}
				if !tr.ByMinID && uint64(len(rf.entries))-uint64(n) < tr.MaxLen && n > 0 {
					t.Fatalf("seed %d step %d: trim went below maxlen", seed, step)
				}
				rf.entries = rf.entries[n:] // a trim removes a prefix
			default:
				a, b := randID(r, s), randID(r, s)
				if r.IntN(4) == 0 {
					a, b = ID{}, Max
				}
				rev := r.IntN(2) == 0
				if got, want := collect(s, a, b, rev), rf.rangeOf(a, b, rev); !sameEntries(got, want) {
					t.Fatalf("seed %d step %d: range %v..%v rev %v: %d entries, want %d", seed, step, a, b, rev, len(got), len(want))
				}
			}
			checkMeta(t, s, rf, seed, step)
		}
	}
}

func checkMeta(t *testing.T, s *Stream, rf *ref, seed uint64, step int) {
	t.Helper()
	if s.Len() != uint64(len(rf.entries)) || s.LastID() != rf.last {
		t.Fatalf("seed %d step %d: len %d last %v, want %d %v", seed, step, s.Len(), s.LastID(), len(rf.entries), rf.last)
	}
	var first ID
	if len(rf.entries) > 0 {
		first = rf.entries[0].id
	}
	if s.FirstID() != first {
		t.Fatalf("seed %d step %d: first %v, want %v", seed, step, s.FirstID(), first)
	}
	if got := collect(s, ID{}, Max, false); !sameEntries(got, rf.entries) {
		t.Fatalf("seed %d step %d: full range differs", seed, step)
	}
	checkKept(t, s)
}

// checkKept compares what the stream keeps up to date (the blocks' memory, the last live ID)
// with the same counted afresh.
func checkKept(t *testing.T, s *Stream) {
	t.Helper()
	if s.blockMem != s.countBlockMem() {
		t.Fatalf("blockMem %d, counted %d", s.blockMem, s.countBlockMem())
	}
	id, ok := s.LastLiveID()
	wid, _, wok := s.LastEntry()
	if id != wid || ok != wok {
		t.Fatalf("LastLiveID %v %v, LastEntry %v %v", id, ok, wid, wok)
	}
}

// TestParseID checks the parser on the forms Redis 7.0.15 accepts and refuses (the same
// arguments are replayed against redis-server in testdata/streams.txt).
func TestParseID(t *testing.T) {
	f := func(in string, wantID ID, wantSeq, wantOK bool) {
		t.Helper()
		id, seq, ok := ParseID([]byte(in), 0, false, true)
		if ok != wantOK || ok && (id != wantID || seq != wantSeq) {
			t.Errorf("ParseID(%q) = %v %v %v", in, id, seq, ok)
		}
	}
	f("5", ID{5, 0}, true, true)
	f("5-3", ID{5, 3}, true, true)
	f("5-*", ID{5, 0}, false, true)
	f("-", ID{}, true, true)
	f("+", Max, true, true)
	f("18446744073709551615-18446744073709551615", Max, true, true)
	f("18446744073709551616", ID{}, false, false)
	f("-5", ID{}, false, false)
	f("1-2-3", ID{}, false, false)
	f("", ID{}, false, false)
	f("+7", ID{7, 0}, true, true)
	f("007-1", ID{7, 1}, true, true)
	f("a", ID{}, false, false)
}
