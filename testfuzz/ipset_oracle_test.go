package testfuzz

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hotkv/hotkv/net/resp/resptest"
)

// The oracles of IP sets (issue 21): IPSET.MCONTAINS over libloc's drop list and its US IPv4
// networks answers exactly what grepcidr answers, and IPSET.SCAN MERGED of the IPv4 entries lists
// exactly what iprange --optimize prints. The data comes from benchmarks/ipsets/data.sh (libloc's
// database is CC BY-SA, so it is not in the repository); without it or without grepcidr and iprange
// (Debian: apt-get install grepcidr iprange location libloc-database tor-geoipdb) the test skips.
// HOTKV_IPSET_DATA names another data folder. .ci/run writes the data (ONLY=oracles bash
// benchmarks/ipsets/data.sh).

func ipsetData(t *testing.T, files ...string) string {
	t.Helper()
	dir := os.Getenv("HOTKV_IPSET_DATA")
	if dir == "" {
		_, self, _, _ := runtime.Caller(0)
		dir = filepath.Join(filepath.Dir(self), "..", "benchmarks", "ipsets", "data")
	}
	for _, f := range files {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Skipf("no %s: run bash benchmarks/ipsets/data.sh first (%v)", f, err)
		}
	}
	for _, tool := range []string{"grepcidr", "iprange"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not installed (apt-get install grepcidr iprange)", tool)
		}
	}
	return dir
}

func readLines(t *testing.T, path string) []string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, l := range strings.Split(string(data), "\n") {
		if l = strings.TrimSpace(l); l != "" && l[0] != '#' {
			out = append(out, strings.Fields(l)[0])
		}
	}
	return out
}

func runTool(t *testing.T, name string, args ...string) []string {
	t.Helper()
	out, err := exec.Command(name, args...).Output()
	if err != nil {
		if ee, ok := err.(*exec.ExitError); !(ok && name == "grepcidr" && ee.ExitCode() == 1) { // 1: no match
			t.Fatalf("%s %q: %v", name, args, err)
		}
	}
	return strings.Fields(string(out))
}

// pipelined sends one command per item (built by mk) in batches of 200 and hands each reply to got.
func pipelined(t *testing.T, c *rawConn, items []string, per int, mk func(batch []string) []string, got func(batch []string, v resptest.Value)) {
	t.Helper()
	const depth = 200
	for off := 0; off < len(items); off += per * depth {
		var buf []byte
		var batches [][]string
		for i := off; i < min(len(items), off+per*depth); i += per {
			b := items[i:min(len(items), i+per)]
			buf = appendCommand(buf, mk(b)...)
			batches = append(batches, b)
		}
		c.write(buf)
		for _, b := range batches {
			v, err := resptest.Parse(c.reply())
			if err != nil {
				t.Fatal(err)
			}
			if v.Kind == '-' {
				t.Fatalf("error reply %q to a command on %q…", v.Str, b[0])
			}
			got(b, v)
		}
	}
}

func loadIPSet(t *testing.T, c *rawConn, key string, entries []string) {
	t.Helper()
	pipelined(t, c, entries, 100, func(b []string) []string { return append([]string{"IPSET.ADD", key}, b...) },
		func([]string, resptest.Value) {})
}

func checkContains(t *testing.T, c *rawConn, key, netsPath, queriesPath string) {
	t.Helper()
	queries := readLines(t, queriesPath)
	tmp := filepath.Join(t.TempDir(), "q")
	if err := os.WriteFile(tmp, []byte(strings.Join(queries, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	hits := map[string]bool{}
	for _, a := range runTool(t, "grepcidr", "-f", netsPath, tmp) {
		hits[a] = true
	}
	mismatches, ones := 0, 0
	pipelined(t, c, queries, 100, func(b []string) []string { return append([]string{"IPSET.MCONTAINS", key}, b...) },
		func(b []string, v resptest.Value) {
			if len(v.Elems) != len(b) {
				t.Fatalf("MCONTAINS of %d gave %d", len(b), len(v.Elems))
			}
			for i, e := range v.Elems {
				n, _ := e.Int()
				if n == 1 {
					ones++
				}
				if (n == 1) != hits[b[i]] {
					if mismatches < 10 {
						t.Errorf("%s: IPSET.CONTAINS %d, grepcidr %v", b[i], n, hits[b[i]])
					}
					mismatches++
				}
			}
		})
	t.Logf("%s: %d queries, %d in the set, %d mismatches with grepcidr", key, len(queries), ones, mismatches)
	if mismatches > 0 {
		t.Fatalf("%d of %d queries disagree with grepcidr", mismatches, len(queries))
	}
	if ones == 0 || ones == len(queries) {
		t.Fatalf("%d of %d hits: the queries test nothing", ones, len(queries))
	}
}

// scanMerged4 walks IPSET.SCAN key … MERGED and keeps the IPv4 CIDRs.
func scanMerged4(t *testing.T, c *rawConn, key string) []string {
	t.Helper()
	var out []string
	cursor := "0"
	for range 1_000_000 {
		v, err := resptest.Parse([]byte(c.do("IPSET.SCAN", key, cursor, "COUNT", "20000", "MERGED")))
		if err != nil || v.Kind == '-' || len(v.Elems) != 2 {
			t.Fatalf("SCAN: %v %v", v, err)
		}
		cursor = v.Elems[0].Str
		list, err := v.Elems[1].Strings()
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range list {
			if !strings.Contains(s, ":") {
				out = append(out, s)
			}
		}
		if cursor == "0" {
			return out
		}
	}
	t.Fatal("SCAN does not end")
	return nil
}

func checkMerged(t *testing.T, c *rawConn, key, netsPath string) {
	t.Helper()
	var v4 []string
	for _, n := range readLines(t, netsPath) {
		if !strings.Contains(n, ":") {
			v4 = append(v4, n)
		}
	}
	tmp := filepath.Join(t.TempDir(), "v4")
	os.WriteFile(tmp, []byte(strings.Join(v4, "\n")+"\n"), 0o644)
	want := runTool(t, "iprange", "--optimize", tmp)
	got := scanMerged4(t, c, key)
	if !slices.Equal(got, want) {
		n := 0
		for i := 0; i < min(len(got), len(want)) && n < 5; i++ {
			if got[i] != want[i] {
				t.Errorf("CIDR %d: SCAN MERGED %s, iprange %s", i, got[i], want[i])
				n++
			}
		}
		t.Fatalf("%s: SCAN MERGED gave %d IPv4 CIDRs, iprange --optimize %d", key, len(got), len(want))
	}
	t.Logf("%s: SCAN MERGED = iprange --optimize: %d IPv4 CIDRs from %d networks", key, len(got), len(v4))
}

// TestIPSetOracles checks the drop list (10,120 networks, 240k queries: 200k half inside a network
// and every network's bounds and neighbours) in CI. HOTKV_IPSET_LONG=1 adds libloc's 301,041 US IPv4
// networks with all 1.4M of their queries (~20 s, ~60 s under -race on a shared 2-core machine).
func TestIPSetOracles(t *testing.T) {
	long := os.Getenv("HOTKV_IPSET_LONG") == "1"
	files := []string{"drop.txt", "drop-queries.txt"}
	if long {
		files = append(files, "us4.txt", "us4-queries.txt")
	}
	dir := ipsetData(t, files...)
	addr, _ := startHotKV(t)
	c := dial(t, addr)
	if r := c.do("IPSET.CARD", "nokey"); strings.HasPrefix(r, "-ERR unknown command") {
		t.Skip("this HotKV has no IPSET commands")
	}
	lap := time.Now()
	step := func(what string) { t.Logf("%s: %v", what, time.Since(lap).Round(time.Millisecond)); lap = time.Now() }
	drop := filepath.Join(dir, "drop.txt")
	loadIPSet(t, c, "drop", readLines(t, drop))
	step("load drop")
	checkContains(t, c, "drop", drop, filepath.Join(dir, "drop-queries.txt"))
	step("contains drop")
	checkMerged(t, c, "drop", drop)
	step("merged drop")
	if !long {
		t.Log("HOTKV_IPSET_LONG=1 adds the US networks")
		return
	}
	us := filepath.Join(dir, "us4.txt")
	loadIPSet(t, c, "us", readLines(t, us))
	step("load us")
	checkContains(t, c, "us", us, filepath.Join(dir, "us4-queries.txt"))
	step("contains us")
	checkMerged(t, c, "us", us)
	step("merged us")
}
