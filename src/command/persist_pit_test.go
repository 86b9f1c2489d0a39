package command

import (
	"bytes"
	"math/rand/v2"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// A WriteRDB taken while clients move value between keys on different shards with MULTI/EXEC
// loads (LoadRDB into a fresh engine) with every pair's sum intact: the file is one instant.
func TestWriteRDBPointInTime(t *testing.T) {
	e := newTestEngine()
	slowSnapshots(t, 10*time.Microsecond)
	const pairs, total = 4, 1000
	var names []string
	seen := map[int32]bool{}
	for i := 0; len(names) < 2*pairs; i++ {
		k := "acct:" + strconv.Itoa(i)
		if sh := e.shardOf([]byte(k)); !seen[sh] {
			seen[sh] = true
			names = append(names, k)
		}
	}
	setup := newTestConn(t, e)
	for i := range pairs {
		setup.do("SET", names[2*i], strconv.Itoa(total))
		setup.do("SET", names[2*i+1], "0")
	}
	for i := range 2000 {
		setup.do("SET", "filler:"+strconv.Itoa(i), "x")
	}
	var stop atomic.Bool
	var moves atomic.Int64
	var wg sync.WaitGroup
	for w := range 3 {
		tc := newTestConn(t, e)
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(w), 9))
			for !stop.Load() {
				p := rng.IntN(pairs)
				from, to := names[2*p], names[2*p+1]
				if rng.IntN(2) == 0 {
					from, to = to, from
				}
				amount := strconv.Itoa(1 + rng.IntN(9))
				req := encodeCommand([]string{"MULTI"})
				req = append(req, encodeCommand([]string{"DECRBY", from, amount})...)
				req = append(req, encodeCommand([]string{"SET", "filler:" + strconv.Itoa(rng.IntN(2000)), amount})...)
				req = append(req, encodeCommand([]string{"INCRBY", to, amount})...)
				req = append(req, encodeCommand([]string{"EXEC"})...)
				if _, err := tc.send(req); err != nil {
					t.Error(err)
					return
				}
				moves.Add(1)
			}
		}()
	}
	defer func() { stop.Store(true); wg.Wait() }()
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
