package testfuzz

// Replica migration (src/cluster/migrate.go) between child processes, ports 32200-32249 as
// cluster_kill_test.go.

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestClusterReplicaMigration: redis-cli --cluster create --cluster-replicas 1 of 7 nodes gives
// one master (A) two replicas and the others one each. With cluster-allow-replica-migration set
// to no by CONFIG SET, kill -9 of master B's only replica leaves B orphaned and nothing moves for
// 7 s after its FAIL; CONFIG SET ... yes, and the replica of A with the smaller node id becomes B's
// replica in every live node's view (after Redis's 5 s delay), syncs B's keys, and A keeps its
// other replica. All-HotKV (the hotkv binary), HotKV replicas of redis-server 7.0.15 masters (the
// HotKV replica decides, on Redis's gossip), and all redis-server as the reference:
// HOTKV_CLUSTER_LONG=1 go test ./testfuzz -run TestClusterReplicaMigration -v
func TestClusterReplicaMigration(t *testing.T) {
	longChildCluster(t)
	hotkv := buildHotKV(t)
	for _, tc := range []struct {
		name           string
		master, replic string
	}{
		{"HotKV", hotkv, hotkv},
		{"RedisMastersHotKVReplicas", "redis-server", hotkv},
		{"Redis", "redis-server", "redis-server"},
	} {
		t.Run(tc.name, func(t *testing.T) { replicaMigration(t, tc.master, tc.replic) })
	}
}

// replicaMigration runs the test on 7 nodes: redis-cli makes the first three (masterBin) masters
// and the other four (replicaBin) replicas.
func replicaMigration(t *testing.T, masterBin, replicaBin string) {
	ports := killPorts(t, 7)
	nodes := map[int]*clusterChild{}
	for i, p := range ports {
		bin := replicaBin
		if i < 3 {
			bin = masterBin
		}
		nodes[p] = startClusterChild(t, bin, p)
	}
	createCluster(t, ports, "--cluster-replicas", "1")
	a, b, movers, victim := migrationLayout(t, ports)
	ids := readClusterView(t, ports[0])
	aID, bID := ids.id(a), ids.id(b)
	mover, stayer := movers[0], movers[1]
	if ids.id(stayer) < ids.id(mover) {
		mover, stayer = stayer, mover
	}
	tag := tagIn(t, b)
	var keys []string
	rc := dial(t, fmt.Sprintf("127.0.0.1:%d", b))
	for i := range 200 {
		k := fmt.Sprintf("mig:{%s}:%d", tag, i)
		if got := rc.do("SET", k, "v"+k); got != "+OK\r\n" {
			t.Fatalf("SET %s on %d: %q", k, b, got)
		}
		keys = append(keys, k)
	}
	rc.c.Close()
	setAll := func(v string) {
		for _, p := range ports {
			if p != victim {
				if got := mustCli(t, "-p", strconv.Itoa(p), "CONFIG", "SET", "cluster-allow-replica-migration", v); got != "OK" {
					t.Fatalf("CONFIG SET cluster-allow-replica-migration %s on %d: %q", v, p, got)
				}
			}
		}
	}
	setAll("no")
	nodes[victim].kill()
	victimID := ids.id(victim)
	for end := time.Now().Add(20 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if strings.Contains(readClusterView(t, mover)[victimID].flags, "fail") &&
			!strings.Contains(readClusterView(t, mover)[victimID].flags, "fail?") {
			break
		}
		if time.Now().After(end) {
			t.Fatalf("killed replica %d not FAIL on %d after 20 s", victim, mover)
		}
	}
	time.Sleep(7 * time.Second)
	for _, p := range ports {
		if p == victim {
			continue
		}
		v := readClusterView(t, p)
		if v[ids.id(mover)].master != aID || v[ids.id(stayer)].master != aID {
			t.Fatalf("with cluster-allow-replica-migration no, a replica of %d moved in %d's view:\n%s", a, p,
				mustCli(t, "-p", strconv.Itoa(p), "CLUSTER", "NODES"))
		}
	}
	setAll("yes")
	start := time.Now()
	for {
		ok := true
		for _, p := range ports {
			if p != victim {
				ok = ok && readClusterView(t, p)[ids.id(mover)].master == bID
			}
		}
		info := mustCli(t, "-p", strconv.Itoa(mover), "INFO", "replication")
		if ok && strings.Contains(info, fmt.Sprintf("master_port:%d", b)) && strings.Contains(info, "master_link_status:up") {
			break
		}
		if time.Since(start) > 30*time.Second {
			t.Fatalf("replica %d did not migrate to %d within 30 s of CONFIG SET yes:\n%s\n%s", mover, b,
				mustCli(t, "-p", strconv.Itoa(mover), "CLUSTER", "NODES"), info)
		}
		time.Sleep(50 * time.Millisecond)
	}
	took := time.Since(start)
	missing := countMissing(t, mover, keys)
	v := readClusterView(t, a)
	t.Logf("replica %d (the smaller id of %d's two) migrated to orphaned %d and synced %v after CONFIG SET cluster-allow-replica-migration yes; %d of %d of %d's keys missing on it",
		mover, a, b, took.Round(time.Millisecond), missing, len(keys), b)
	if missing > 0 {
		t.Errorf("%d of %d keys of %d missing on the migrated replica", missing, len(keys), b)
	}
	if v[ids.id(stayer)].master != aID {
		t.Errorf("the other replica %d of %d moved too: master %s", stayer, a, v[ids.id(stayer)].master)
	}
	if took < 4*time.Second {
		t.Errorf("migrated %v after the orphan could first be seen, under Redis's 5 s delay", took)
	}
}

// migrationLayout waits until every replica's link is up and returns the master with two
// replicas (a), a master with one (b), a's replicas and b's replica.
func migrationLayout(t *testing.T, ports []int) (a, b int, aReps []int, bRep int) {
	t.Helper()
	for end := time.Now().Add(20 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		v := readClusterView(t, ports[0])
		reps := map[string][]int{}
		up := 0
		for _, n := range v {
			if strings.Contains(n.flags, "slave") {
				reps[n.master] = append(reps[n.master], n.port)
				if strings.Contains(mustCli(t, "-p", strconv.Itoa(n.port), "INFO", "replication"), "master_link_status:up") {
					up++
				}
			}
		}
		a, b = 0, 0
		for id, rs := range reps {
			switch len(rs) {
			case 2:
				a, aReps = v[id].port, rs
			case 1:
				b, bRep = v[id].port, rs[0]
			}
		}
		if up == 4 && a != 0 && b != 0 {
			return a, b, aReps, bRep
		}
		if time.Now().After(end) {
			t.Fatalf("no master with 2 synced replicas and one with 1:\n%s", mustCli(t, "-p", strconv.Itoa(ports[0]), "CLUSTER", "NODES"))
		}
	}
}
