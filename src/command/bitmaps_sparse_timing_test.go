package command

import (
	"strconv"
	"strings"
	"testing"
)

// The same 1 MiB bitmap (8,388,608 bits, 1,000 of them set) in both forms: sparse, as SETBIT
// builds it on a new key, and dense, as SET stores it (a SET value is never sparse). The bit
// commands run on each in batches of 30 (strings_timing_test.go); the conversion between forms
// is BenchmarkSparseDensify here and ds/sparsebits's BenchmarkDense.

const sparseBenchBits = 8 << 20

// sparseBenchSetup builds key bm in the named form.
func sparseBenchSetup(form string) [][]string {
	if form == "dense" {
		b := make([]byte, sparseBenchBits/8)
		for i := range 1000 {
			off := sparseBenchBits - 1 - i*8209
			b[off/8] |= 0x80 >> (off % 8)
		}
		return [][]string{{"SET", "bm", string(b)}}
	}
	var setup [][]string
	for i := range 1000 {
		setup = append(setup, []string{"SETBIT", "bm", strconv.Itoa(sparseBenchBits - 1 - i*8209), "1"})
	}
	return setup
}

var sparseBenchCmds = []struct {
	name string
	cmds [][]string
}{
	{"SETBIT", bitsCmds(func(i int) []string { // sets then clears 15 bits: the count stays
		return []string{"SETBIT", "bm", strconv.Itoa(i/2*277_001 + 3), strconv.Itoa(1 - i&1)}
	})},
	{"GETBIT", bitsCmds(func(i int) []string { return []string{"GETBIT", "bm", strconv.Itoa(i * 277_001)} })},
	{"BITCOUNT", [][]string{{"BITCOUNT", "bm"}}},
	{"BITCOUNT-range", [][]string{{"BITCOUNT", "bm", "1000", "-1000", "BIT"}}},
	{"BITPOS", [][]string{{"BITPOS", "bm", "1", "100"}}},
	{"BITFIELD-GET", bitsCmds(func(i int) []string { return []string{"BITFIELD_RO", "bm", "GET", "u32", strconv.Itoa(i * 277_001)} })},
}

// TestSparseHotPathAllocatesNothing: on both forms the batches above allocate nothing once warm
// (BITFIELD aside) and answer the same.
func TestSparseHotPathAllocatesNothing(t *testing.T) {
	for _, bc := range sparseBenchCmds {
		var replies [2]string
		for i, form := range []string{"sparse", "dense"} {
			h := newBatchConn(t, sparseBenchSetup(form), bc.cmds...)
			if got := sparseKeys(h.tc.e, []string{"bm"})["bm"]; got != (form == "sparse") {
				t.Fatalf("%s %s: sparse %v", bc.name, form, got)
			}
			replies[i] = string(hotReplies(t, bc.name+" "+form, h))
			// parseFieldOps's slice: one BITFIELD allocation a command, either form. Under -race the
			// dense 1 MiB counts take minutes: the replies are still compared.
			if bc.name != "BITFIELD-GET" && !raceEnabledCmd {
				checkNoAllocs(t, bc.name+" "+form, h)
			}
		}
		if replies[0] != replies[1] {
			t.Fatalf("%s: sparse %q, dense %q", bc.name, strings.Split(replies[0], "\r\n")[0], strings.Split(replies[1], "\r\n")[0])
		}
	}
}

func BenchmarkSparseBits(b *testing.B) {
	for _, bc := range sparseBenchCmds {
		for _, form := range []string{"sparse", "dense"} {
			b.Run(bc.name+"/"+form, func(b *testing.B) {
				benchHot(b, newBatchConn(b, sparseBenchSetup(form), bc.cmds...))
			})
		}
	}
}

// BenchmarkSparseDensify: the write that converts a sparse 1 MiB bitmap at the limit of the
// rule to the dense string (one SETBIT past sparsebits.Fits), then DEL and a rebuild off the
// clock.
func BenchmarkSparseDensify(b *testing.B) {
	tc := newTestConn(b, newTestEngine())
	limit := (sparseBenchBits/8/16 - 5) / 4 // the most bits a 1 MiB sparse bitmap keeps
	build := func() {
		tc.do("DEL", "bm")
		for i := range limit {
			tc.do("SETBIT", "bm", strconv.Itoa(sparseBenchBits-1-i*61), "1")
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		build()
		b.StartTimer()
		tc.do("SETBIT", "bm", "7", "1")
	}
	if sparseKeys(tc.e, []string{"bm"})["bm"] {
		b.Fatal("still sparse")
	}
}
