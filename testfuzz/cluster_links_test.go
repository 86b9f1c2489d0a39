package testfuzz

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestClusterLinksAgainstRedis: a HotKV node and a redis-server 7.0.15 node MEET; then each
// node's CLUSTER LINKS (RESP2 and RESP3) lists, for the other, its link to it and the other's
// link in, with Redis's fields in Redis's order. Node names, create times (checked to be within
// the test's run) and send-buffer sizes (HotKV writes without a buffer: 0) are normalized before
// the replies are compared.
func TestClusterLinksAgainstRedis(t *testing.T) {
	if !haveRedis() {
		t.Skip("redis-server not on PATH")
	}
	start := time.Now().UnixMilli()
	pp := clusterPorts(t, 2)
	hk, rd := fmt.Sprint(pp[0]), fmt.Sprint(pp[1])
	startClusterHotKV(t, pp[0])
	startClusterRedis(t, pp[1])
	if got := mustCli(t, "-p", hk, "CLUSTER", "MEET", "127.0.0.1", rd); got != "OK" {
		t.Fatalf("CLUSTER MEET: %q", got)
	}
	ids := map[string]string{hk: mustCli(t, "-p", hk, "CLUSTER", "MYID"), rd: mustCli(t, "-p", rd, "CLUSTER", "MYID")}
	peer := map[string]string{hk: rd, rd: hk}
	// Both links up on both sides: two entries each (redis-cli prints 12 lines a link in RESP2).
	for end := time.Now().Add(15 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		a, b := mustCli(t, "-p", hk, "CLUSTER", "LINKS"), mustCli(t, "-p", rd, "CLUSTER", "LINKS")
		if strings.Count(a, "\n") == 23 && strings.Count(b, "\n") == 23 {
			break
		}
		if time.Now().After(end) {
			t.Fatalf("links not up 15 s after MEET:\nHotKV:\n%s\nRedis:\n%s", a, b)
		}
	}
	num := regexp.MustCompile(`(?m)^(create-time|send-buffer-allocated|send-buffer-used)\n(\d+)$`)
	for _, proto := range []string{"-2", "-3"} {
		var got [2]string
		for i, port := range []string{hk, rd} {
			out := mustCli(t, proto, "-p", port, "CLUSTER", "LINKS")
			if proto == "-3" { // redis-cli prints a RESP3 map entry as "key value"
				out = strings.ReplaceAll(out, " ", "\n")
			}
			out = strings.ReplaceAll(out, ids[peer[port]], "<peer>")
			out = num.ReplaceAllStringFunc(out, func(m string) string {
				f := strings.SplitN(m, "\n", 2)
				if f[0] == "create-time" {
					var ms int64
					fmt.Sscan(f[1], &ms)
					if ms < start || ms > time.Now().UnixMilli() {
						t.Errorf("port %s: create-time %d outside the test's run", port, ms)
					}
				}
				return f[0] + "\n<n>"
			})
			got[i] = out
		}
		if got[0] != got[1] {
			t.Errorf("CLUSTER LINKS %s:\nHotKV:\n%s\nRedis:\n%s", proto, got[0], got[1])
		}
	}
}
