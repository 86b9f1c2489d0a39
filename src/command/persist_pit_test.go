package command

import (
	"bytes"
	"strconv"
	"testing"
	"time"
)

// A WriteRDB taken while clients move value between keys on different shards with MULTI/EXEC
// loads (LoadRDB into a fresh engine) with every pair's sum intact: the file is one instant.
func TestWriteRDBPointInTime(t *testing.T) {
	e := newTestEngine()
	slowSnapshots(t, 10*time.Microsecond)
	const pairs, total = 4, 1000
	names, moves := startMovers(t, e, pairs, total, 3, 9)
	for round := range 6 {
		before := moves.Load()
		file := writeRDB(t, e, RDBOptions{Checksum: true})
		during := moves.Load() - before
		dst := newTestEngine()
		if _, err := dst.LoadRDB(bytes.NewReader(file), LoadOptions{}); err != nil {
			t.Fatal(err)
		}
		dc := newTestConn(t, dst)
		for p := range pairs {
			sum := 0
			for _, k := range names[2*p : 2*p+2] {
				n, err := strconv.Atoi(replyText(t, dc.do("GET", k)))
				if err != nil {
					t.Fatal(err)
				}
				sum += n
			}
			if sum != total {
				t.Fatalf("round %d: pair %d sums to %d in the file, want %d (%d moves during the save)", round, p, sum, total, during)
			}
		}
		if n := replyAny(t, dc.do("DBSIZE")); n != int64(2*pairs+2000) {
			t.Fatalf("round %d: %v keys loaded", round, n)
		}
		if round == 5 {
			t.Logf("%d moves during the last save", during)
		}
	}
}
