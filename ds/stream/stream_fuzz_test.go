package stream

import (
	"slices"
	"testing"
)

// FuzzAddTrim reads a program from the input: XADD-like adds with IDs parsed from input bytes
// (ParseID's every form, NewID's * and ms-*), deletes and trims with random arguments, under
// small random node limits. After each operation the stream must iterate in strictly growing
// ID order, backward as the reverse of forward, with Len, FirstID and LastID consistent.
func FuzzAddTrim(f *testing.F) {
	f.Add([]byte("a1-1\x00a1-*\x00a*\x00t\x05d1-1\x00"))
	f.Add([]byte("a18446744073709551615-18446744073709551614\x00a18446744073709551615-*\x00a*\x00"))
	f.Add([]byte("a5\x00a6\x00a7\x00m\x01d6\x00r\x00\x10"))
	f.Fuzz(func(t *testing.T, prog []byte) {
		lim := Limits{MaxBytes: 64, MaxEntries: 3}
		if len(prog) > 0 {
			lim = Limits{MaxBytes: int64(prog[0]) * 8, MaxEntries: int64(prog[0] % 7)}
			prog = prog[1:]
		}
		s := New()
		fv := [][]byte{[]byte("f"), []byte("v")}
		word := func() []byte {
			i := slices.Index(prog, 0)
			if i < 0 {
				i = len(prog)
			}
			w := prog[:i]
			prog = prog[min(i+1, len(prog)):]
			return w
		}
		num := func() byte {
			if len(prog) == 0 {
				return 0
			}
			b := prog[0]
			prog = prog[1:]
			return b
		}
		for steps := 0; len(prog) > 0 && steps < 2000; steps++ {
			op := prog[0]
			prog = prog[1:]
			switch op % 5 {
			case 0: // add
				w := word()
				auto := len(w) == 1 && w[0] == '*'
				id, seqGiven, ok := ParseID(w, 0, true, true)
				if !ok && !auto {
					continue
				}
				nid, err := s.NewID(id, auto, seqGiven, uint64(num()))
				if err != nil {
					continue
				}
				if len(fv) < 8 && num()%2 == 0 {
					fv = append(fv, []byte{num()}, w)
				}
				if err := s.Add(nid, fv, lim); err != nil {
					t.Fatalf("Add of NewID's %v: %v", nid, err)
				}
			case 1: // delete
				if id, _, ok := ParseID(word(), 0, true, false); ok {
					s.Delete(id)
				}
			case 2: // trim by length
				s.Trim(Trim{MaxLen: uint64(num()), Approx: op&8 != 0, Limit: int64(num() % 4)})
			case 3: // trim by min ID
				if id, _, ok := ParseID(word(), 0, true, false); ok {
					s.Trim(Trim{ByMinID: true, MinID: id, Approx: op&8 != 0})
				}
			case 4: // range
				a, _, ok1 := ParseID(word(), 0, false, false)
				b, _, ok2 := ParseID(word(), ^uint64(0), false, false)
				if ok1 && ok2 {
					fw, bw := ids(s, a, b, false), ids(s, a, b, true)
					slices.Reverse(bw)
					if !slices.Equal(fw, bw) {
						t.Fatalf("range %v..%v: forward %v, backward reversed %v", a, b, fw, bw)
					}
				}
			}
			all := ids(s, ID{}, Max, false)
			for i := 1; i < len(all); i++ {
				if !all[i-1].Less(all[i]) {
					t.Fatalf("IDs out of order: %v", all)
				}
			}
			if uint64(len(all)) != s.Len() {
				t.Fatalf("Len %d, iterated %d", s.Len(), len(all))
			}
			if len(all) > 0 && (s.FirstID() != all[0] || s.LastID().Less(all[len(all)-1])) {
				t.Fatalf("first %v last %v, entries %v..%v", s.FirstID(), s.LastID(), all[0], all[len(all)-1])
			}
			if steps%2 == 0 { // and the clone keeps the same sums
				checkKept(t, s)
			} else {
				checkKept(t, s.Clone().(*Stream))
			}
		}
	})
}

func ids(s *Stream, a, b ID, rev bool) []ID {
	var out []ID
	it := s.Range(a, b, rev)
	for {
		id, _, ok := it.Next()
		if !ok {
			return out
		}
		out = append(out, id)
	}
}
