package main

import (
	"fmt"
	"net"
	"strconv"
	"strings"
	"testing"

	hkconfig "github.com/hotkv/hotkv/src/config"
	"github.com/hotkv/hotkv/src/server"
)

// startHotKV runs an in-process HotKV on one of this package's ports and returns the port; the
// test skips when the server has no IP sets yet.
func startHotKV(t *testing.T) int {
	t.Helper()
	port := freePort(t)
	cfg, err := hkconfig.Load([]string{"--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--loglevel", "warning", "--save", "", "--dir", t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	s, err := server.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Listen(); err != nil {
		t.Fatal(err)
	}
	s.Start()
	t.Cleanup(s.Stop)
	if c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port)); err != nil {
		t.Fatal(err)
	} else {
		c.Close()
	}
	if got := ask(t, port, "IPSET.CARD", "nokey"); strings.HasPrefix(got, "-ERR unknown command") {
		t.Skip("this HotKV has no IPSET commands")
	}
	return port
}

// The loader's IP-list form of IPSET.ADD against HotKV: labels, ranges, ipset save's timeout and
// nomatch; ten bad entries give ten errors with their lines and exit 1.
func TestLoadIPSetIntoHotKV(t *testing.T) {
	for _, entries := range []string{"1", "50"} {
		t.Run("entries="+entries, func(t *testing.T) { loadIPSetIntoHotKV(t, entries) })
	}
}

// loadIPSetIntoHotKV: with --entries > 1 a grouped IPSET.ADD holding a bad entry fails whole and its
// lines go again one per command: the same ten errors at the same lines, the same entries loaded.
func loadIPSetIntoHotKV(t *testing.T, entries string) {
	port := startHotKV(t)
	p := strconv.Itoa(port)
	var b strings.Builder
	b.WriteString("# drop list\ncreate x hash:net\n")
	var bad []string
	for i := range 1000 {
		if i%100 == 50 {
			fmt.Fprintf(&b, "10.%d.0.%d/33 ; bad length\n", i/256, i%256)
			bad = append(bad, strconv.Itoa(i+3))
			continue
		}
		fmt.Fprintf(&b, "10.%d.%d.0/24 L%d\n", i/256, i%256, i)
	}
	b.WriteString("16777216,16777471,AU\nadd x 192.168.0.0/16 timeout 300 nomatch\n")
	st, out := runLoad(t, nil, "-p", p, "-c", "2", "--entries", entries, "--key", "drop", writeFile(t, "drop.txt", b.String()))
	if st != 1 || !strings.Contains(out, "10 errors") || !strings.Contains(out, "at line "+strings.Join(bad, ", ")+"\n") {
		t.Fatalf("exit %d, want 10 errors at lines %v:\n%s", st, bad, out)
	}
	if got := ask(t, port, "IPSET.CARD", "drop"); got != "992" {
		t.Fatalf("IPSET.CARD %s", got)
	}
	if got := ask(t, port, "IPSET.MATCH", "drop", "10.0.7.9"); !strings.HasPrefix(got, "10.0.7.0/24 L7 ") {
		t.Fatalf("MATCH %q", got)
	}
	if got := ask(t, port, "IPSET.MATCH", "drop", "1.0.0.200"); !strings.HasPrefix(got, "1.0.0.0/24 AU") {
		t.Fatalf("MATCH %q", got)
	}
	if got := ask(t, port, "IPSET.CONTAINS", "drop", "192.168.1.1"); got != "0" {
		t.Fatalf("CONTAINS of a NOMATCH entry %q", got)
	}
	if ttl, _ := strconv.Atoi(ask(t, port, "PTTL", "drop")); ttl != -1 {
		t.Fatalf("PTTL of the key %d", ttl)
	}
}

// CLIENT KILL mid-load of IPSET.ADD: every entry present once; --replace swaps an IP set in.
func TestLoadIPSetKillAndReplace(t *testing.T) {
	port := startHotKV(t)
	p := strconv.Itoa(port)
	const n = 200_000
	file := writeFile(t, "hosts", hostLines(n))
	d, kills := killer(t, port, 2)
	st, out := runLoad(t, d, "-p", p, "-c", "2", "--entries", "20", "--key", "hosts", file)
	if st != 0 || kills.Load() == 0 {
		t.Fatalf("exit %d after %d kills: %s", st, kills.Load(), out)
	}
	if got := ask(t, port, "IPSET.CARD", "hosts"); got != strconv.Itoa(n) {
		t.Fatalf("IPSET.CARD %s after %d kills: %s", got, kills.Load(), out)
	}
	t.Logf("%d kills: %s", kills.Load(), out)
	st, out = runLoad(t, nil, "-p", p, "--key", "hosts", "--replace", "hosts", writeFile(t, "new", "1.1.1.1\n2.2.2.0/24\n"))
	if st != 0 || ask(t, port, "IPSET.CARD", "hosts") != "2" || ask(t, port, "TYPE", "hosts") != "ipset" || ask(t, port, "DBSIZE") != "1" {
		t.Fatalf("exit %d: %s", st, out)
	}
}
