package testfuzz

// Round trips of random states: the differential generator's commands (strings, keys and
// expiry, lists, hashes, sets, sorted sets) shape values into every encoding and back, then the
// state moves by RDB file and by DUMP/RESTORE.

import (
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// TestPersistRandomRoundTrip: 4 generators × 600 random commands in each of databases 0, 1
// and 9 on one server (redis-server proves the harness, then HotKV); SAVE; the file loaded by
// redis-server and by HotKV, and every key copied by DUMP/RESTORE into the other kind, dump
// equal to the source. -diff.seed fixes the seed; the seed is logged.
func TestPersistRandomRoundTrip(t *testing.T) {
	if !haveRedis() {
		t.Skip("redis-server not on PATH")
	}
	t.Parallel()
	seed := *diffSeed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	for _, from := range persistKinds {
		t.Run(from, func(t *testing.T) {
			t.Parallel()
			redisOnlyUnderRace(t, from)
			t.Logf("seed %d", seed)
			dir := t.TempDir()
			src := startNode(t, from, dir)
			randomState(t, src.addr, seed)
			want := dumpServer(t, src.addr, dumpOpts{})
			if len(want.keys) == 0 {
				t.Fatal("the random commands left no key")
			}
			t.Logf("%s", want.stats())
			if got := dial(t, src.addr).do("SAVE"); got != "+OK\r\n" {
				t.Fatalf("%s SAVE: %s", from, quote(got))
			}
			for _, to := range persistKinds {
				d := t.TempDir()
				if err := copyFile(filepath.Join(dir, "dump.rdb"), filepath.Join(d, "dump.rdb")); err != nil {
					t.Fatal(err)
				}
				n := startNode(t, to, d)
				compareDumps(t, "seed "+strconv.FormatUint(seed, 10)+": "+from+" SAVE loaded by "+to,
					want, dumpServer(t, n.addr, dumpOpts{}))
				n.stop(t)
			}
			other := persistKinds[0]
			if other == from {
				other = persistKinds[1]
			}
			dst := startNode(t, other, t.TempDir())
			copyByDump(t, src, dst, want)
			compareDumps(t, "seed "+strconv.FormatUint(seed, 10)+": DUMP from "+from+", RESTORE into "+other,
				want, dumpServer(t, dst.addr, dumpOpts{}))
		})
	}
}

// randomState sends the generators' commands, pipelined 50 at a time; replies (errors
// included) are read and dropped.
func randomState(t *testing.T, addr string, seed uint64) {
	c := dial(t, addr)
	now := time.Now().Unix()
	for _, db := range []int{0, 1, 9} {
		c.do("SELECT", strconv.Itoa(db))
		for conn := range 4 {
			g := newGen(seed+uint64(db), conn, now)
			for sent := 0; sent < 600; sent += 50 {
				var buf []byte
				for range 50 {
					buf = appendCommand(buf, g.next().args...)
				}
				c.write(buf)
				for range 50 {
					c.reply()
				}
			}
		}
	}
}
