package testfuzz

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"
)

// twoNodeCluster makes ports[0] own every slot and meet ports[1], and waits until both report
// cluster_state:ok with 2 known nodes. It returns their ids.
func twoNodeCluster(t *testing.T, ports []int) [2]string {
	t.Helper()
	p0, p1 := strconv.Itoa(ports[0]), strconv.Itoa(ports[1])
	mustCli(t, "-p", p0, "CLUSTER", "ADDSLOTSRANGE", "0", "16383")
	mustCli(t, "-p", p0, "CLUSTER", "MEET", "127.0.0.1", p1)
	for end := time.Now().Add(20 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		ok := true
		for _, p := range []string{p0, p1} {
			info := mustCli(t, "-p", p, "CLUSTER", "INFO")
			ok = ok && strings.Contains(info, "cluster_state:ok") && strings.Contains(info, "cluster_known_nodes:2")
		}
		if ok {
			break
		}
		if time.Now().After(end) {
			t.Fatalf("nodes %s and %s did not converge in 20 s", p0, p1)
		}
	}
	return [2]string{mustCli(t, "-p", p0, "CLUSTER", "MYID"), mustCli(t, "-p", p1, "CLUSTER", "MYID")}
}

// TestClusterReshardAgainstRedis runs one slot's resharding by hand (SETSLOT IMPORTING/MIGRATING,
// MIGRATE, SETSLOT NODE), the way redis-cli --cluster reshard does, on a two-node HotKV cluster and
// on a two-node redis-server 7.0.15 cluster, and compares every reply: -ASK for a key missing in a
// migrating slot, MOVED without ASKING at the importing node and service with it, -TRYAGAIN for a
// multi-key command missing keys there, COUNTKEYSINSLOT and GETKEYSINSLOT as keys leave, SETSLOT
// NODE refused while keys remain, CLUSTER RESET and REPLICATE refused on a master with keys, and
// redis-cli -c following the ASK.
// Ports from clusterPorts.
func TestClusterReshardAgainstRedis(t *testing.T) {
	if !haveRedis() {
		t.Skip("redis-server not on PATH")
	}
	ports := clusterPorts(t, 4)
	startClusterHotKV(t, ports[0])
	startClusterHotKV(t, ports[1])
	startClusterRedis(t, ports[2])
	startClusterRedis(t, ports[3])
	type pair struct {
		ports [2]int
		ids   [2]string
		conns [2]*rawConn
	}
	var pairs [2]pair
	for i := range pairs {
		pp := &pairs[i]
		pp.ports = [2]int{ports[2*i], ports[2*i+1]}
		pp.ids = twoNodeCluster(t, pp.ports[:])
		for j := range pp.conns {
			pp.conns[j] = dial(t, fmt.Sprintf("127.0.0.1:%d", pp.ports[j]))
		}
	}
	const slot = "12182" // CLUSTER KEYSLOT foo
	script := []struct {
		node int
		cmd  string
	}{
		{0, "SET foo 1"}, {0, "SET {foo}x 2"}, {0, "SET bar 3"},
		{0, "CLUSTER COUNTKEYSINSLOT " + slot}, {0, "CLUSTER GETKEYSINSLOT " + slot + " 0"},
		{0, "CLUSTER COUNTKEYSINSLOT 16384"}, {0, "CLUSTER COUNTKEYSINSLOT -1"}, {0, "CLUSTER COUNTKEYSINSLOT abc"},
		{0, "CLUSTER GETKEYSINSLOT 1 -1"}, {0, "CLUSTER GETKEYSINSLOT abc 1"}, {0, "CLUSTER GETKEYSINSLOT 16384 1"},
		{0, "CLUSTER COUNTKEYSINSLOT 5"},
		{0, "CLUSTER SETSLOT " + slot + " NODE <n1>"},
		{1, "CLUSTER SETSLOT " + slot + " IMPORTING <n0>"},
		{0, "CLUSTER SETSLOT " + slot + " MIGRATING <n1>"},
		{0, "GET foo"}, {0, "GET {foo}missing"}, {0, "MGET foo {foo}missing"}, {0, "SET {foo}new 1"},
		{0, "EXISTS {foo}missing {foo}other"}, {0, "GET bar"},
		{0, "MIGRATE 127.0.0.1 <p1> foo 0 5000"},
		{0, "GET foo"}, {0, "MGET foo {foo}x"}, {0, "TYPE foo"},
		{-1, "GET foo"}, // redis-cli -c on node 0 follows the ASK
		{-1, "SET {foo}z 9"},
		{1, "GET foo"}, {1, "ASKING"}, {1, "GET foo"}, {1, "GET foo"},
		{1, "ASKING"}, {1, "MGET foo {foo}x"}, {1, "ASKING"}, {1, "MGET foo foo"},
		{1, "ASKING"}, {1, "SET {foo}y 5"}, {1, "CLUSTER COUNTKEYSINSLOT " + slot},
		{0, "CLUSTER COUNTKEYSINSLOT " + slot}, {0, "CLUSTER GETKEYSINSLOT " + slot + " 10"},
		{0, "MIGRATE 127.0.0.1 <p1> \"\" 0 5000 KEYS {foo}x"},
		{0, "CLUSTER COUNTKEYSINSLOT " + slot}, {0, "CLUSTER GETKEYSINSLOT " + slot + " 10"},
		{1, "ASKING"}, {1, "MGET foo {foo}x {foo}y {foo}z"},
		{0, "CLUSTER SETSLOT " + slot + " NODE <n1>"}, {1, "CLUSTER SETSLOT " + slot + " NODE <n1>"},
		{0, "GET foo"}, {1, "GET foo"}, {1, "MGET foo {foo}x {foo}y"},
		{1, "CLUSTER RESET"}, {1, "CLUSTER RESET HARD"}, {1, "CLUSTER REPLICATE <n0>"},
		{0, "CLUSTER SETSLOT 5061 NODE <n1>"}, // bar's slot, bar still on node 0
	}
	for _, st := range script {
		var got [2]string
		for i := range pairs {
			pp := &pairs[i]
			c := st.cmd
			for j := range 2 {
				c = strings.ReplaceAll(c, fmt.Sprintf("<n%d>", j), pp.ids[j])
				c = strings.ReplaceAll(c, fmt.Sprintf("<p%d>", j), strconv.Itoa(pp.ports[j]))
			}
			args := strings.Fields(c)
			for k, a := range args {
				if a == `""` {
					args[k] = ""
				}
			}
			var out string
			if st.node < 0 {
				out, _ = cli(t, append([]string{"-c", "-p", strconv.Itoa(pp.ports[0])}, args...)...)
			} else {
				out = pp.conns[st.node].do(args...)
			}
			for j := range 2 {
				out = strings.ReplaceAll(out, pp.ids[j], fmt.Sprintf("<n%d>", j))
				out = strings.ReplaceAll(out, strconv.Itoa(pp.ports[j]), fmt.Sprintf("<p%d>", j))
			}
			got[i] = out
		}
		if st.node < 0 && st.cmd == "GET foo" && strings.TrimSpace(got[0]) != "1" {
			t.Errorf("redis-cli -c GET foo on HotKV: %q, want 1 (after following the ASK)", got[0])
		}
		if got[0] != got[1] {
			t.Errorf("node %d: %s:\nHotKV: %q\nRedis: %q", st.node, st.cmd, got[0], got[1])
		}
	}
}
