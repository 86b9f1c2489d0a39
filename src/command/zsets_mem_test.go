package command

import (
	"bufio"
	"fmt"
	"math/rand"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/hotkv/hotkv/net/resp/resptest"
)

// Memory per member, against Redis 7.0.15 loaded with the same commands: one sorted set of
// 1,000,000 members with random scores ("skiplist"), and 100,000 sets of 10 members
// ("listpack"). HotKV's figure is the live heap the data adds (what INFO's used_memory counts),
// Redis's the growth of its used_memory. The test fails when HotKV uses more.
//
// For the many small sets the figure compared is the values' cost: the growth minus that of
// the same keys holding a one-byte string, since the keys themselves cost what the keyspace
// costs (about 60 bytes a key more than Redis's dict today, which is not this family's).

type zmemCase struct {
	name     string
	members  int
	batches  int
	batch    func(rng *rand.Rand, i int) [][]string
	baseline func(rng *rand.Rand, i int) [][]string // the same keys as strings, or nil
}

var zmemCases = []zmemCase{
	{"1 zset x 1M members", 1_000_000, 100, func(rng *rand.Rand, i int) [][]string {
		var cmds [][]string
		for k := i * 10_000; k < (i+1)*10_000; k += 100 {
			cmd := []string{"ZADD", "big"}
			for j := k; j < k+100; j++ {
				cmd = append(cmd, strconv.FormatFloat(rng.Float64()*1e6, 'f', 6, 64), fmt.Sprint("member:", j))
			}
			cmds = append(cmds, cmd)
		}
		return cmds
	}, nil},
	{"100k zsets x 10 members", 1_000_000, 100, func(rng *rand.Rand, i int) [][]string {
		var cmds [][]string
		for k := i * 1000; k < (i+1)*1000; k++ {
			cmd := []string{"ZADD", fmt.Sprint("zset:", k)}
			for j := range 10 {
				cmd = append(cmd, strconv.Itoa(rng.Intn(1000)), fmt.Sprint("member:", j))
			}
			cmds = append(cmds, cmd)
		}
		return cmds
	}, func(_ *rand.Rand, i int) [][]string {
		var cmds [][]string
		for k := i * 1000; k < (i+1)*1000; k++ {
			cmds = append(cmds, []string{"SET", fmt.Sprint("zset:", k), "v"})
		}
		return cmds
	}},
}

func TestZSetMemoryVersusRedis(t *testing.T) {
	if testing.Short() || zsetRace {
		t.Skip("loads 2M members: not with -short or -race")
	}
	for _, mc := range zmemCases {
		t.Run(mc.name, func(t *testing.T) {
			ours := zmemHotKV(t, mc.batches, mc.batch)
			if mc.baseline != nil {
				keys := zmemHotKV(t, mc.batches, mc.baseline)
				t.Logf("HotKV keys as strings: %.1f bytes a member", keys/float64(mc.members))
				ours -= keys
			}
			ours /= float64(mc.members)
			if _, err := exec.LookPath("redis-server"); err != nil {
				t.Logf("HotKV %.1f bytes a member (no redis-server to compare)", ours)
				return
			}
			redis := zmemRedis(t, mc.batches, mc.batch)
			if mc.baseline != nil {
				keys := zmemRedis(t, mc.batches, mc.baseline)
				t.Logf("Redis keys as strings: %.1f bytes a member", keys/float64(mc.members))
				redis -= keys
			}
			redis /= float64(mc.members)
			t.Logf("HotKV %.1f bytes a member, Redis 7.0.15 %.1f", ours, redis)
			if ours > redis {
				t.Errorf("HotKV uses more memory than Redis: %.1f > %.1f bytes a member", ours, redis)
			}
		})
	}
}

func zmemLoad(batches int, batch func(*rand.Rand, int) [][]string, send func(req []byte, n int)) {
	rng := rand.New(rand.NewSource(1))
	for i := range batches {
		cmds := batch(rng, i)
		var req []byte
		for _, c := range cmds {
			req = append(req, encodeCommand(c)...)
		}
		send(req, len(cmds))
	}
}

func zmemHotKV(t *testing.T, batches int, batch func(*rand.Rand, int) [][]string) float64 {
	e := newTestEngine()
	tc := newTestConn(t, e)
	before := zliveHeap()
	zmemLoad(batches, batch, func(req []byte, _ int) {
		if out, err := tc.send(req); err != nil || strings.Contains(string(out), "-") {
			t.Fatalf("load: %v %.200q", err, out)
		}
	})
	after := zliveHeap()
	runtime.KeepAlive(e)
	runtime.KeepAlive(tc)
	return float64(after) - float64(before)
}

func zliveHeap() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

func zmemRedis(t *testing.T, batches int, batch func(*rand.Rand, int) [][]string) float64 {
	conn, stop := startRedis(t)
	defer stop()
	r := bufio.NewReader(conn)
	used := func() float64 {
		conn.Write(encodeCommand([]string{"INFO", "memory"}))
		raw, err := resptest.ReadRaw(r)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(string(raw), "\r\n") {
			if v, ok := strings.CutPrefix(line, "used_memory:"); ok {
				n, _ := strconv.ParseFloat(v, 64)
				return n
			}
		}
		t.Fatal("no used_memory in INFO")
		return 0
	}
	before := used()
	zmemLoad(batches, batch, func(req []byte, n int) {
		if _, err := conn.Write(req); err != nil {
			t.Fatal(err)
		}
		for range n {
			if _, err := resptest.ReadRaw(r); err != nil {
				t.Fatal(err)
			}
		}
	})
	return used() - before
}
