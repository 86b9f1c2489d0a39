package testfuzz

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// reshardLoad is go-redis ClusterClient traffic during resharding: workers SET a key then GET
// it back until stop; acked holds every key whose SET was acknowledged, with its value.
type reshardLoad struct {
	c       *redis.ClusterClient
	stop    chan struct{}
	wg      sync.WaitGroup
	ops     atomic.Int64
	mu      sync.Mutex
	acked   map[string]string
	failed  []string
	limit   int64
	workers int
}

func startReshardLoad(t *testing.T, ports []int, limit int64) *reshardLoad {
	var addrs []string
	for _, p := range ports {
		addrs = append(addrs, fmt.Sprintf("127.0.0.1:%d", p))
	}
	l := &reshardLoad{stop: make(chan struct{}), acked: map[string]string{}, limit: limit, workers: 8,
		c: redis.NewClusterClient(&redis.ClusterOptions{Addrs: addrs, MaxRedirects: 16,
			ReadTimeout: 10 * time.Second, WriteTimeout: 10 * time.Second})}
	t.Cleanup(func() { l.c.Close() })
	for w := range l.workers {
		l.wg.Add(1)
		go l.work(w)
	}
	return l
}

func (l *reshardLoad) fail(f string, a ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.failed) < 20 {
		l.failed = append(l.failed, fmt.Sprintf(f, a...))
	} else {
		l.failed[19] = "... and more"
	}
}

func (l *reshardLoad) work(w int) {
	defer l.wg.Done()
	ctx := context.Background()
	for i := 0; ; i++ {
		select {
		case <-l.stop:
			return
		default:
		}
		if l.ops.Load() >= l.limit {
			time.Sleep(10 * time.Millisecond) // the budget is spent; wait for stop
			continue
		}
		k, v := fmt.Sprintf("k:%d:%d", w, i), fmt.Sprintf("v%d", i)
		if err := l.c.Set(ctx, k, v, 0).Err(); err != nil {
			l.fail("SET %s: %v", k, err)
			continue
		}
		l.mu.Lock()
		l.acked[k] = v
		l.mu.Unlock()
		got, err := l.c.Get(ctx, k).Result()
		if err != nil || got != v {
			l.fail("GET %s: %q %v, want %q", k, got, err, v)
		}
		l.ops.Add(2)
	}
}

// waitOps waits until the workers have done n commands, failing the test (after finish has
// listed what failed) when they have not within d: a worker whose SETs all fail never counts
// one, and the wait must not then last until the package times out.
func (l *reshardLoad) waitOps(t *testing.T, n int64, d time.Duration) {
	t.Helper()
	for end := time.Now().Add(d); l.ops.Load() < n; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(end) {
			done := l.ops.Load()
			l.finish(t)
			t.Fatalf("the load did %d of %d commands in %v", done, n, d)
		}
	}
}

// finish stops the load and checks every acknowledged key; it returns how many do not read back.
func (l *reshardLoad) finish(t *testing.T) int {
	t.Helper()
	close(l.stop)
	l.wg.Wait()
	ctx := context.Background()
	lost := 0
	for k, v := range l.acked {
		if got, err := l.c.Get(ctx, k).Result(); err != nil || got != v {
			if lost < 5 {
				t.Errorf("acked key %s: %q %v, want %q", k, got, err, v)
			}
			lost++
		}
	}
	t.Logf("%d commands, %d acked keys, %d failed commands, %d acked keys unreadable", l.ops.Load(),
		len(l.acked), len(l.failed), lost)
	for _, f := range l.failed {
		t.Errorf("failed: %s", f)
	}
	return lost
}

// reshard moves n slots from one node to another with redis-cli --cluster reshard.
func reshard(t *testing.T, via int, from, to string, n int) time.Duration {
	t.Helper()
	start := time.Now()
	out, err := cli(t, "--cluster", "reshard", fmt.Sprintf("127.0.0.1:%d", via), "--cluster-from", from,
		"--cluster-to", to, "--cluster-slots", strconv.Itoa(n), "--cluster-yes", "--cluster-pipeline", "10")
	if err != nil {
		t.Fatalf("--cluster reshard %s -> %s: %v\n%s", from, to, err, lastBytes(out, 2000))
	}
	return time.Since(start)
}

// checkCluster waits until --cluster check passes from the first port; on failure it shows every
// node's CLUSTER NODES.
func checkCluster(t *testing.T, ports []int) {
	t.Helper()
	for end := time.Now().Add(20 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		out, err := cli(t, "--cluster", "check", fmt.Sprintf("127.0.0.1:%d", ports[0]))
		if err == nil {
			return
		}
		if time.Now().After(end) {
			for _, p := range ports {
				nodes, _ := cli(t, "-p", strconv.Itoa(p), "CLUSTER", "NODES")
				t.Logf("CLUSTER NODES of %d:\n%s", p, nodes)
			}
			t.Fatalf("--cluster check: %v\n%s", err, lastBytes(out, 2000))
		}
	}
}

// TestClusterReshardGoRedis: go-redis ClusterClient SET/GET traffic while redis-cli --cluster
// reshard moves slots Redis -> HotKV -> Redis in a mixed cluster of 2 redis-server 7.0.15 masters
// and one HotKV, then HotKV -> HotKV in an all-HotKV cluster: no command fails and every
// acknowledged key reads back afterwards. In CI 100 slots each way and 20k commands;
// HOTKV_CLUSTER_LONG=1 moves 1000 slots under 100k commands (the numbers).
func TestClusterReshardGoRedis(t *testing.T) {
	if !haveRedis() {
		t.Skip("redis-server not on PATH")
	}
	slots, ops := 100, int64(20000)
	if os.Getenv("HOTKV_CLUSTER_LONG") != "" {
		slots, ops = 1000, 100000
	}
	t.Run("mixed", func(t *testing.T) {
		ports := clusterPorts(t, 3)
		startClusterRedis(t, ports[0])
		if os.Getenv("HOTKV_RESHARD_ALLREDIS") != "" { // the same on redis-server only, for comparison
			startClusterRedis(t, ports[1])
		} else {
			startClusterHotKV(t, ports[1])
		}
		startClusterRedis(t, ports[2])
		createCluster(t, ports)
		ids := clusterIDs(t, ports)
		l := startReshardLoad(t, ports, ops)
		time.Sleep(300 * time.Millisecond) // keys in every slot before they move
		t1 := reshard(t, ports[0], ids[0], ids[1], slots)
		checkCluster(t, ports)
		t2 := reshard(t, ports[0], ids[1], ids[2], slots)
		checkCluster(t, ports)
		l.waitOps(t, ops/2, 2*time.Minute)
		l.finish(t)
		t.Logf("%d slots Redis -> HotKV in %v, HotKV -> Redis in %v", slots, t1, t2)
	})
	t.Run("hotkv", func(t *testing.T) {
		ports := clusterPorts(t, 3)
		for _, p := range ports {
			startClusterHotKV(t, p)
		}
		createCluster(t, ports)
		ids := clusterIDs(t, ports)
		l := startReshardLoad(t, ports, ops)
		time.Sleep(300 * time.Millisecond)
		t1 := reshard(t, ports[0], ids[0], ids[1], slots)
		checkCluster(t, ports)
		l.waitOps(t, ops/2, 2*time.Minute)
		l.finish(t)
		t.Logf("%d slots HotKV -> HotKV in %v", slots, t1)
	})
}

func clusterIDs(t *testing.T, ports []int) []string {
	var ids []string
	for _, p := range ports {
		ids = append(ids, mustCli(t, "-p", strconv.Itoa(p), "CLUSTER", "MYID"))
	}
	return ids
}

func lastBytes(s string, n int) string {
	if len(s) > n {
		return "..." + s[len(s)-n:]
	}
	return s
}
