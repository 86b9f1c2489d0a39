package testfuzz

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestClusterManualFailover: CLUSTER FAILOVER (the coordinated form: the master pauses writes,
// the replica catches up, then wins the votes) on a replica of a 3+3 cluster while go-redis's
// ClusterClient writes through it: HotKV replica of a HotKV master, HotKV replica of a
// redis-server master, redis-server replica of a HotKV master, and redis-server only for
// reference. The replica must be the master and the old master its replica within 10 s, no
// command may fail and every acknowledged write must read back (0 lost). Ports from 27470-27499
// (clusterPorts); HOTKV_CLUSTER_LONG=1 as the other failover tests.
func TestClusterManualFailover(t *testing.T) {
	if !haveRedis() {
		t.Skip("redis-server not on PATH")
	}
	longCluster(t)
	for _, tc := range []struct {
		name                  string
		redisMaster, redisRep bool
	}{
		{"HotKV", false, false},
		{"RedisMasterHotKVReplica", true, false},
		{"HotKVMasterRedisReplica", false, true},
		{"Redis", true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ports := clusterPorts(t, 6)
			for i, p := range ports { // redis-cli makes the first three masters
				if (i < 3 && tc.redisMaster) || (i >= 3 && tc.redisRep) {
					startClusterRedis(t, p)
				} else {
					startClusterHotKV(t, p)
				}
			}
			createCluster(t, ports, "--cluster-replicas", "1")
			heir, victim := syncedReplica(t, ports)
			l := startReshardLoad(t, ports, 1<<40)
			time.Sleep(time.Second) // writes in every slot before the failover
			before := l.ops.Load()
			start := time.Now()
			if got := mustCli(t, "-p", fmt.Sprint(heir), "CLUSTER", "FAILOVER"); got != "OK" {
				t.Fatalf("CLUSTER FAILOVER: %q", got)
			}
			var promoted time.Duration
			for {
				if promoted == 0 && strings.HasPrefix(mustCli(t, "-p", fmt.Sprint(heir), "ROLE"), "master") {
					promoted = time.Since(start)
				}
				if promoted != 0 && strings.HasPrefix(mustCli(t, "-p", fmt.Sprint(victim), "ROLE"), "slave") {
					break
				}
				if time.Since(start) > 10*time.Second {
					t.Fatalf("CLUSTER FAILOVER on %d: roles not swapped 10 s later (promoted after %v)\n%s", heir,
						promoted, mustCli(t, "-p", fmt.Sprint(heir), "CLUSTER", "NODES"))
				}
				time.Sleep(20 * time.Millisecond)
			}
			swapped := time.Since(start)
			during := l.ops.Load() - before
			time.Sleep(time.Second) // writes go on to the new master
			lost := l.finish(t)
			checkCluster(t, ports)
			t.Logf("CLUSTER FAILOVER on %d (master %d): replica a master after %v, old master its replica after %v; %d commands during the failover; %d acked writes lost",
				heir, victim, promoted, swapped, during, lost)
		})
	}
}

// syncedReplica returns a replica of the cluster on ports and its master once the replica's link
// is up and the master counts it online.
func syncedReplica(t *testing.T, ports []int) (replica, master int) {
	t.Helper()
	replica, master, _ = firstReplica(t, ports[0], 15*time.Second)
	for end := time.Now().Add(20 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if strings.Contains(mustCli(t, "-p", fmt.Sprint(replica), "INFO", "replication"), "master_link_status:up") &&
			strings.Contains(mustCli(t, "-p", fmt.Sprint(master), "INFO", "replication"), "state=online") {
			return replica, master
		}
		if time.Now().After(end) {
			t.Fatalf("replica %d of %d not in sync 20 s after the cluster formed", replica, master)
		}
	}
}
