package command

import (
	"bufio"
	"fmt"
	"net"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/hotkv/hotkv/net/resp/resptest"
)

// Memory per hash and per field, against Redis 7.0.15 loaded with the same commands: 100,000
// small hashes of 10 fields (listpack), and one hash of 1,000,000 fields (hashtable). HotKV's
// figure is the live heap the data adds (what INFO's used_memory counts), Redis's the growth of
// its used_memory. The test fails when HotKV uses more.

// memCase is a data set, written as batches of pipelined commands.
type memCase struct {
	name  string
	units int // hashes or fields the figure is per
	batch func(i int) [][]string
	n     int // batches
}

var memCases = []memCase{
	{"100k hashes x 10 fields", 100_000, func(i int) [][]string {
		var cmds [][]string
		for k := i * 1000; k < (i+1)*1000; k++ {
			cmd := []string{"HSET", fmt.Sprint("hash:", k)}
			for j := range 10 {
				cmd = append(cmd, fmt.Sprint("field:", j), fmt.Sprint("value:", k, ":", j))
			}
			cmds = append(cmds, cmd)
		}
		return cmds
	}, 100},
	{"1 hash x 1M fields", 1_000_000, func(i int) [][]string {
		var cmds [][]string
		for k := i * 10_000; k < (i+1)*10_000; k += 100 {
			cmd := []string{"HSET", "big"}
			for j := k; j < k+100; j++ {
				cmd = append(cmd, fmt.Sprint("field:", j), fmt.Sprint("value:", j))
			}
			cmds = append(cmds, cmd)
		}
		return cmds
	}, 100},
}

func TestHashMemoryVersusRedis(t *testing.T) {
	if testing.Short() {
		t.Skip("loads 2M fields: not with -short")
	}
	if hashRace {
		// No memory figures under the race detector, but the loads' long pipelined batches run
		// (a tenth of them), so that CI, which runs with -race, serves such batches too.
		for _, mc := range memCases {
			mc.n /= 10
			hotkvBytes(t, mc)
		}
		return
	}
	for _, mc := range memCases {
		t.Run(mc.name, func(t *testing.T) {
			ours := hotkvBytes(t, mc) / float64(mc.units)
			redis, ok := redisBytes(t, mc)
			if !ok {
				t.Logf("HotKV %.1f bytes each (no redis-server to compare)", ours)
				return
			}
			redis /= float64(mc.units)
			t.Logf("HotKV %.1f bytes each, Redis 7.0.15 %.1f", ours, redis)
			if ours > redis {
				t.Errorf("HotKV uses more memory than Redis: %.1f > %.1f bytes each", ours, redis)
			}
		})
	}
}

// hotkvBytes loads the data set into an engine and returns the live heap it added.
func hotkvBytes(t *testing.T, mc memCase) float64 {
	e := newTestEngine()
	tc := newTestConn(t, e)
	before := liveHeap()
	for i := range mc.n {
		var req []byte
		cmds := mc.batch(i)
		for _, c := range cmds {
			req = append(req, encodeCommand(c)...)
		}
		out, err := tc.send(req)
		if err != nil || strings.Contains(string(out), "-") {
			t.Fatalf("load: %v %.200q", err, out)
		}
	}
	after := liveHeap()
	runtime.KeepAlive(e)
	runtime.KeepAlive(tc)
	return float64(after) - float64(before)
}

func liveHeap() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// redisBytes loads the data set into a fresh redis-server and returns its used_memory growth.
func redisBytes(t *testing.T, mc memCase) (float64, bool) {
	conn, stop := startRedisIfAny(t)
	if conn == nil {
		return 0, false
	}
	defer stop()
	r := bufio.NewReader(conn)
	before := redisUsedMemory(t, conn, r)
	for i := range mc.n {
		cmds := mc.batch(i)
		var req []byte
		for _, c := range cmds {
			req = append(req, encodeCommand(c)...)
		}
		if _, err := conn.Write(req); err != nil {
			t.Fatal(err)
		}
		for range cmds {
			if _, err := resptest.ReadRaw(r); err != nil {
				t.Fatal(err)
			}
		}
	}
	return float64(redisUsedMemory(t, conn, r) - before), true
}

// startRedisIfAny is startRedis that reports a missing redis-server with a nil connection.
func startRedisIfAny(t *testing.T) (net.Conn, func()) {
	if _, err := exec.LookPath("redis-server"); err != nil {
		return nil, nil
	}
	return startRedis(t)
}

func redisUsedMemory(t *testing.T, conn net.Conn, r *bufio.Reader) int64 {
	conn.Write(encodeCommand([]string{"INFO", "memory"}))
	raw, err := resptest.ReadRaw(r)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(raw), "\r\n") {
		if v, ok := strings.CutPrefix(line, "used_memory:"); ok {
			n, _ := strconv.ParseInt(v, 10, 64)
			return n
		}
	}
	t.Fatal("no used_memory in INFO")
	return 0
}
