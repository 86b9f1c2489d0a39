package testfuzz

import (
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestClusterCommandsAgainstRedis sends the same CLUSTER subcommands, redirections and refusals to a
// fresh one-node HotKV cluster and a fresh redis-server 7.0.15 cluster node (ports from clusterPorts)
// and compares every reply, with each node's own id written as <me>, its ports as <port> and <bus>,
// and CLUSTER NODES's times blanked. (REPLICAOF's refusal needs src/repl's REPLICAOF: not compared.)
func TestClusterCommandsAgainstRedis(t *testing.T) {
	if !haveRedis() {
		t.Skip("redis-server not on PATH")
	}
	pp := clusterPorts(t, 2)
	hk, rd := strconv.Itoa(pp[0]), strconv.Itoa(pp[1])
	startClusterHotKV(t, pp[0])
	dir := t.TempDir()
	cmd := exec.Command("redis-server", "--port", rd, "--bind", "127.0.0.1", "--dir", dir,
		"--cluster-enabled", "yes", "--cluster-config-file", filepath.Join(dir, "nodes.conf"),
		"--cluster-node-timeout", "3000", "--save", "", "--appendonly", "no")
	cmd.Dir = dir
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	for end := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if out, err := cli(t, "-p", rd, "PING"); err == nil && strings.TrimSpace(out) == "PONG" {
			break
		} else if time.Now().After(end) {
			t.Fatal("redis-server did not start")
		}
	}
	ids := map[string]string{hk: mustCli(t, "-p", hk, "CLUSTER", "MYID"), rd: mustCli(t, "-p", rd, "CLUSTER", "MYID")}
	times := regexp.MustCompile(`(myself,master(?:,nofailover)? - )\d+ \d+`)
	cmds := []string{
		"CLUSTER KEYSLOT foo", "CLUSTER KEYSLOT {user1000}.following", "CLUSTER KEYSLOT {}x",
		"CLUSTER INFO", "CLUSTER SLOTS",
		"CLUSTER ADDSLOTS 1 1", "CLUSTER ADDSLOTS 16384", "CLUSTER ADDSLOTS abc", "CLUSTER ADDSLOTS -1",
		"CLUSTER ADDSLOTS 1 2", "CLUSTER ADDSLOTS 2 3", "CLUSTER ADDSLOTSRANGE 5 3",
		"CLUSTER ADDSLOTSRANGE 10 20 30", "CLUSTER ADDSLOTSRANGE 10 20 30 40", "CLUSTER ADDSLOTSRANGE 35 36",
		"CLUSTER DELSLOTS 9", "CLUSTER DELSLOTS 1", "CLUSTER DELSLOTSRANGE 10 12", "CLUSTER DELSLOTSRANGE 12 12",
		"CLUSTER NODES", "CLUSTER SLOTS", "CLUSTER SHARDS", "CLUSTER INFO",
		"CLUSTER SET-CONFIG-EPOCH -1", "CLUSTER SET-CONFIG-EPOCH abc", "CLUSTER SET-CONFIG-EPOCH 5",
		"CLUSTER SET-CONFIG-EPOCH 6", "CLUSTER BUMPEPOCH", "CLUSTER INFO",
		"CLUSTER FORGET <me>", "CLUSTER FORGET nobody", "CLUSTER COUNT-FAILURE-REPORTS nobody",
		"CLUSTER COUNT-FAILURE-REPORTS <me>", "CLUSTER REPLICATE nobody", "CLUSTER REPLICATE <me>",
		"CLUSTER REPLICAS nobody", "CLUSTER REPLICAS <me>", "CLUSTER SLAVES <me>",
		"CLUSTER SETSLOT 5 NODE nobody", "CLUSTER SETSLOT 5 MIGRATING nobody", "CLUSTER SETSLOT 2 MIGRATING <me>",
		"CLUSTER SETSLOT 100 IMPORTING <me>", "CLUSTER SETSLOT 2 IMPORTING <me>", "CLUSTER SETSLOT 2 STABLE",
		"CLUSTER SETSLOT 2 BLAH", "CLUSTER SETSLOT 2 STABLE extra", "CLUSTER SETSLOT 99999 STABLE",
		"CLUSTER SETSLOT 100 NODE <me>", "CLUSTER NODES", "CLUSTER SHARDS",
		"CLUSTER MEET 127.0.0.1 abc", "CLUSTER MEET 127.0.0.1 1234 abc", "CLUSTER MEET nohost 1234",
		"CLUSTER NOSUCH", "CLUSTER", "CLUSTER FAILOVER", "CLUSTER FAILOVER FORCE", "CLUSTER FAILOVER BLAH",
		"CLUSTER FAILOVER FORCE TAKEOVER",
		"SELECT 1", "SELECT 0", "SELECT x", "MSET a 1 b 2", "GET foo", "SET {t}a 1", "MGET {t}a {t}b",
		"GET 3560", "READONLY", "READWRITE", "ASKING",
		"INFO cluster", "CLUSTER HELP", "CLUSTER HELP x",
		"CLUSTER FLUSHSLOTS", "CLUSTER INFO", "CLUSTER SAVECONFIG", "CLUSTER RESET foo",
		"CONFIG SET cluster-replica-no-failover yes", "CLUSTER NODES", "CONFIG GET cluster-slave-no-failover",
		"CONFIG SET cluster-replica-no-failover no", "CLUSTER NODES",
		"CONFIG SET cluster-replica-validity-factor -1", "CONFIG SET cluster-slave-validity-factor 0",
		"CONFIG GET cluster-replica-validity-factor",
	}
	norm := func(port, out string) string {
		out = strings.ReplaceAll(out, ids[port], "<me>")
		p, _ := strconv.Atoi(port)
		out = strings.ReplaceAll(strings.ReplaceAll(out, strconv.Itoa(p+10000), "<bus>"), port, "<port>")
		return times.ReplaceAllString(out, "${1}T T")
	}
	for _, c := range cmds {
		var got [2]string
		for i, port := range []string{hk, rd} {
			args := strings.Fields(strings.ReplaceAll(c, "<me>", ids[port]))
			out, _ := cli(t, append([]string{"-p", port}, args...)...)
			got[i] = norm(port, out)
		}
		if got[0] != got[1] {
			t.Errorf("%s:\nHotKV: %q\nRedis: %q", c, got[0], got[1])
		}
	}
}

// TestClusterExecAgainstRedis: in cluster mode EXEC is checked as one command over every queued
// command's keys (Redis 7.0.15's getNodeByQuery): a transaction over two slots answers CROSSSLOT
// at EXEC (each SET passed when queued) and is discarded, one in one slot runs, a queued
// multi-key command over two slots is refused when queued (EXECABORT at EXEC), and a slot
// dropped between MULTI and EXEC makes the EXEC fail. One-node HotKV and redis-server clusters
// with every slot, the same commands on one connection each, every reply compared.
func TestClusterExecAgainstRedis(t *testing.T) {
	if !haveRedis() {
		t.Skip("redis-server not on PATH")
	}
	pp := clusterPorts(t, 2)
	startClusterHotKV(t, pp[0])
	startClusterRedis(t, pp[1])
	for _, p := range pp {
		port := strconv.Itoa(p)
		mustCli(t, "-p", port, "CLUSTER", "ADDSLOTSRANGE", "0", "16383")
		for end := time.Now().Add(15 * time.Second); ; time.Sleep(50 * time.Millisecond) {
			if strings.Contains(mustCli(t, "-p", port, "CLUSTER", "INFO"), "cluster_state:ok") {
				break
			} else if time.Now().After(end) {
				t.Fatalf("node %s: no cluster_state:ok", port)
			}
		}
	}
	// a and b hash to 15495 and 3300; {t}a and {t}b to one slot; {x}a to 16287.
	script := [][]string{
		{"MULTI"}, {"SET", "a", "1"}, {"SET", "b", "1"}, {"EXEC"},
		{"EXISTS", "a", "{t}a"},
		{"MULTI"}, {"SET", "{t}a", "1"}, {"GET", "{t}b"}, {"EXEC"},
		{"MULTI"}, {"MSET", "a", "1", "b", "2"}, {"EXEC"},
		{"MULTI"}, {"PING"}, {"EXEC"},
		{"MULTI"}, {"SET", "a", "1"}, {"GET", "foo"}, {"SET", "{x}q", "1"}, {"EXEC"},
		{"MULTI"}, {"SET", "{x}a", "1"}, {"SET", "b", "1"}, {"EXEC"},
		{"MULTI"}, {"GET", "{x}a"}, {"INCR", "{x}n"}, {"EXEC"},
		{"EXEC"}, {"MULTI"}, {"EXEC"},
		{"WATCH", "a"}, {"MULTI"}, {"SET", "a", "2"}, {"SET", "b", "2"}, {"EXEC"}, {"GET", "a"},
		{"MULTI"}, {"GET", "{x}a"}, {"CLUSTER", "DELSLOTS", "16287"}, {"EXEC"},
		{"CLUSTER", "ADDSLOTS", "16287"},
	}
	var got [2][]string
	for i, p := range pp {
		rc := dial(t, "127.0.0.1:"+strconv.Itoa(p))
		for _, c := range script {
			rc.write(appendCommand(nil, c...))
			got[i] = append(got[i], string(rc.reply()))
		}
	}
	for j, c := range script {
		if got[0][j] != got[1][j] {
			t.Errorf("%q:\nHotKV: %q\nRedis: %q", c, got[0][j], got[1][j])
		}
	}
}
