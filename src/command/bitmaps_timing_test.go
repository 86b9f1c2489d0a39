package command

import (
	"strconv"
	"strings"
	"testing"
)

// The bitmap and HyperLogLog commands of issue 15's benchmark rows, on the in-process path of
// strings_timing_test.go (a pipelined batch of 30): they must allocate nothing once warm.

// bitsBitmap is a 4 KiB bitmap with a mix of bytes, the key every bitmap case reads or writes.
var bitsBitmap = strings.Repeat("\x00\xff\x0f\xa5\x00\x00\x01\x80", 512)

// bitsCmds returns hotBatch commands made by f from the command's index.
func bitsCmds(f func(i int) []string) [][]string {
	out := make([][]string, hotBatch)
	for i := range out {
		out[i] = f(i)
	}
	return out
}

// hllSetup fills the HLLs h1 (dense, 20,000 elements), h2 and h3 (sparse, a few hundred).
func hllSetup() [][]string {
	var setup [][]string
	for k, n := range map[string]int{"h1": 20000, "h2": 300, "h3": 200} {
		for i := 0; i < n; i += 500 {
			cmd := []string{"PFADD", k}
			for j := i; j < min(i+500, n); j++ {
				cmd = append(cmd, k+":"+strconv.Itoa(j))
			}
			setup = append(setup, cmd)
		}
	}
	return setup
}

var bitsCases = []struct {
	name  string
	setup [][]string
	cmds  [][]string
}{
	{"SETBIT", [][]string{{"SET", "bm", bitsBitmap}},
		bitsCmds(func(i int) []string { return []string{"SETBIT", "bm", strconv.Itoa(i * 1031), strconv.Itoa(i & 1)} })},
	{"GETBIT", [][]string{{"SET", "bm", bitsBitmap}},
		bitsCmds(func(i int) []string { return []string{"GETBIT", "bm", strconv.Itoa(i * 1031)} })},
	// families.sh's shape: a 1,250-byte string that SETBIT created (raw, never packed), the
	// dense path on an existing string with nothing to grow.
	{"SETBIT-created", [][]string{{"SETBIT", "bm", "9999", "1"}},
		bitsCmds(func(i int) []string { return []string{"SETBIT", "bm", strconv.Itoa(i * 331), "1"} })},
	{"GETBIT-created", [][]string{{"SETBIT", "bm", "9999", "1"}},
		bitsCmds(func(i int) []string { return []string{"GETBIT", "bm", strconv.Itoa(i * 331)} })},
	{"BITCOUNT", [][]string{{"SET", "bm", bitsBitmap}}, [][]string{{"BITCOUNT", "bm"}}},
	{"BITCOUNT-range", [][]string{{"SET", "bm", bitsBitmap}}, [][]string{{"BITCOUNT", "bm", "3", "-100", "BIT"}}},
	{"BITPOS", [][]string{{"SET", "bm", strings.Repeat("\x00", 4095) + "\x01"}}, [][]string{{"BITPOS", "bm", "1"}}},
	{"PFADD-dense", hllSetup(),
		bitsCmds(func(i int) []string { return []string{"PFADD", "h1", "e:" + strconv.Itoa(i)} })},
	{"PFADD-sparse", hllSetup(),
		bitsCmds(func(i int) []string { return []string{"PFADD", "h2", "e:" + strconv.Itoa(i)} })},
	{"PFCOUNT-1", hllSetup(), [][]string{{"PFCOUNT", "h1"}}},
	{"PFCOUNT-3", hllSetup(), [][]string{{"PFCOUNT", "h1", "h2", "h3"}}},
}

func TestBitsHotPathAllocatesNothing(t *testing.T) {
	for _, bc := range bitsCases {
		h := newBatchConn(t, bc.setup, bc.cmds...)
		hotReplies(t, bc.name, h)
		checkNoAllocs(t, bc.name, h)
	}
}

func BenchmarkBitsHotPath(b *testing.B) {
	for _, bc := range bitsCases {
		b.Run(bc.name, func(b *testing.B) { benchHot(b, newBatchConn(b, bc.setup, bc.cmds...)) })
	}
}
