package command

import (
	"bufio"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hotkv/hotkv/ds/keyspace"
	"github.com/hotkv/hotkv/net/resp/resptest"
)

// infoDoc is INFO's text split into sections: titles in order, and each section's fields.
type infoDoc struct {
	titles []string
	fields map[string][][2]string
}

func parseInfo(t testing.TB, text string) infoDoc {
	t.Helper()
	doc := infoDoc{fields: map[string][][2]string{}}
	cur := ""
	for _, line := range strings.Split(text, "\r\n") {
		switch {
		case line == "":
		case strings.HasPrefix(line, "# "):
			cur = line[2:]
			doc.titles = append(doc.titles, cur)
		default:
			k, v, ok := strings.Cut(line, ":")
			if !ok || cur == "" {
				t.Fatalf("bad INFO line %q", line)
			}
			doc.fields[cur] = append(doc.fields[cur], [2]string{k, v})
		}
	}
	return doc
}

func (d infoDoc) get(section, name string) string {
	for _, f := range d.fields[section] {
		if f[0] == name {
			return f[1]
		}
	}
	return "<missing>"
}

func (d infoDoc) getInt(t testing.TB, section, name string) int64 {
	t.Helper()
	n, err := strconv.ParseInt(d.get(section, name), 10, 64)
	if err != nil {
		t.Fatalf("%s.%s: %v", section, name, err)
	}
	return n
}

func infoOf(t testing.TB, tc *testConn, args ...string) infoDoc {
	t.Helper()
	return parseInfo(t, replyText(t, tc.do(append([]string{"INFO"}, args...)...)))
}

// listSections lists sections whose entries depend on what ran (per command, per error, per db):
// their field names are not compared with Redis's.
var listSections = map[string]bool{"Commandstats": true, "Errorstats": true, "Latencystats": true, "Keyspace": true}

// TestInfoMatchesRedis compares INFO everything's sections and field names, in order, with a
// real redis-server's. HotKV adds only hotkv_version, at the end of the server section, and the
// value compression counts at the end of stats.
func TestInfoMatchesRedis(t *testing.T) {
	conn, stop := startRedis(t)
	defer stop()
	conn.Write(encodeCommand([]string{"INFO", "everything"}))
	raw, err := resptest.ReadRaw(bufio.NewReader(conn))
	if err != nil {
		t.Fatal(err)
	}
	redis := parseInfo(t, replyText(t, string(raw)))
	ours := infoOf(t, newTestConn(t, newTestEngine()), "everything")
	if !slices.Equal(ours.titles, redis.titles) {
		t.Fatalf("sections\n ours: %v\nredis: %v", ours.titles, redis.titles)
	}
	for _, title := range redis.titles {
		if listSections[title] {
			continue
		}
		got, want := fieldNames(ours.fields[title]), fieldNames(redis.fields[title])
		switch title {
		case "Server":
			want = append(want, "hotkv_version")
		case "Stats":
			want = append(want, "value_compressed_keys", "value_compression_saved_bytes")
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s fields\n ours: %v\nredis: %v", title, got, want)
		}
	}
}

func TestInfoSectionSelection(t *testing.T) {
	tc := newTestConn(t, newTestEngine())
	dflt := []string{"Server", "Clients", "Memory", "Persistence", "Stats", "Replication", "CPU", "Modules",
		"Errorstats", "Cluster", "Keyspace"}
	all := []string{"Server", "Clients", "Memory", "Persistence", "Stats", "Replication", "CPU", "Modules",
		"Commandstats", "Errorstats", "Latencystats", "Cluster", "Keyspace"}
	cases := []struct {
		args []string
		want []string
	}{
		{nil, dflt},
		{[]string{"default"}, dflt},
		{[]string{"all"}, all},
		{[]string{"EVERYTHING"}, all},
		{[]string{"keyspace", "cpu"}, []string{"CPU", "Keyspace"}},
		{[]string{"Server", "server", "bogus"}, []string{"Server"}},
		{[]string{"commandstats", "default"}, all[:8:8]},
		{[]string{"bogus"}, nil},
	}
	cases[6].want = append(cases[6].want, "Commandstats", "Errorstats", "Cluster", "Keyspace")
	for _, c := range cases {
		if got := infoOf(t, tc, c.args...).titles; !slices.Equal(got, c.want) {
			t.Errorf("INFO %v: %v, want %v", c.args, got, c.want)
		}
	}
	if got := tc.do("INFO", "bogus"); got != "$0\r\n\r\n" {
		t.Errorf("INFO bogus: %q", got)
	}
	// Sections are separated by one empty line; RESP3 sends a verbatim string.
	body := "# Modules\r\n\r\n# Cluster\r\ncluster_enabled:0\r\n"
	if got, want := tc.do("INFO", "modules", "cluster"), fmt.Sprintf("$%d\r\n%s\r\n", len(body), body); got != want {
		t.Errorf("INFO modules cluster: %q, want %q", got, want)
	}
	tc.do("HELLO", "3")
	body = "# Cluster\r\ncluster_enabled:0\r\n"
	if got, want := tc.do("INFO", "cluster"), fmt.Sprintf("=%d\r\ntxt:%s\r\n", len(body)+4, body); got != want {
		t.Errorf("RESP3 INFO cluster: %q, want %q", got, want)
	}
}

// cmdStat parses a cmdstat_ value into its counters (usec_per_call dropped).
func cmdStat(t testing.TB, d infoDoc, name string) map[string]int64 {
	t.Helper()
	out := map[string]int64{}
	v := d.get("Commandstats", "cmdstat_"+name)
	if v == "<missing>" {
		return out
	}
	re := regexp.MustCompile(`^calls=(\d+),usec=(\d+),usec_per_call=\d+\.\d\d,rejected_calls=(\d+),failed_calls=(\d+)$`)
	m := re.FindStringSubmatch(v)
	if m == nil {
		t.Fatalf("cmdstat_%s: %q", name, v)
	}
	for i, k := range []string{"calls", "usec", "rejected", "failed"} {
		out[k], _ = strconv.ParseInt(m[i+1], 10, 64)
	}
	return out
}

// TestInfoCounters checks the stats that count calls. Command statistics live in the command
// table, shared by every engine of the test binary, so they are compared as differences.
func TestInfoCounters(t *testing.T) {
	e := newTestEngine()
	a, b := newTestConn(t, e), newTestConn(t, e)
	before := infoOf(t, a, "stats", "clients", "commandstats")
	if n := before.getInt(t, "Clients", "connected_clients"); n != 2 {
		t.Errorf("connected_clients %d, want 2", n)
	}
	for range 10 {
		b.do("PING")
	}
	b.do("ECHO")                     // rejected: arity
	b.do("NOSUCH")                   // rejected: unknown
	b.do("DEBUG", "OBJECT", "nokey") // failed
	after := infoOf(t, a, "stats", "commandstats", "errorstats")
	// 10 PINGs, the DEBUG and the first INFO ran; rejected commands do not count.
	if d := after.getInt(t, "Stats", "total_commands_processed") - before.getInt(t, "Stats", "total_commands_processed"); d != 12 {
		t.Errorf("total_commands_processed grew by %d, want 12", d)
	}
	if n := after.getInt(t, "Stats", "total_error_replies"); n != 3 {
		t.Errorf("total_error_replies %d, want 3", n)
	}
	if got := after.get("Errorstats", "errorstat_ERR"); got != "count=3" {
		t.Errorf("errorstat_ERR %q", got)
	}
	delta := func(name string) map[string]int64 {
		x, y := cmdStat(t, before, name), cmdStat(t, after, name)
		return map[string]int64{"calls": y["calls"] - x["calls"], "rejected": y["rejected"] - x["rejected"],
			"failed": y["failed"] - x["failed"]}
	}
	want := map[string]map[string]int64{
		"ping":  {"calls": 10, "rejected": 0, "failed": 0},
		"echo":  {"calls": 0, "rejected": 1, "failed": 0},
		"debug": {"calls": 1, "rejected": 0, "failed": 1},
	}
	for name, w := range want {
		if got := delta(name); fmt.Sprint(got) != fmt.Sprint(w) {
			t.Errorf("cmdstat_%s grew by %v, want %v", name, got, w)
		}
	}
	if got := after.get("Server", "redis_version"); got != "<missing>" {
		t.Errorf("INFO stats included the server section")
	}
	srv := infoOf(t, a, "server")
	if srv.get("Server", "redis_version") != RedisVersion || srv.get("Server", "hotkv_version") != HotKVVersion {
		t.Errorf("versions: %v", srv.fields["Server"][:1])
	}
}

func TestInfoOpsPerSec(t *testing.T) {
	e := newTestEngine()
	tc := newTestConn(t, e)
	e.TrackMetrics()
	for range 3 {
		for range 200 {
			tc.do("PING")
		}
		time.Sleep(opsPeriod + 10*time.Millisecond)
		e.TrackMetrics()
	}
	ops := infoOf(t, tc, "stats").getInt(t, "Stats", "instantaneous_ops_per_sec")
	// About 200 commands per 110ms (less the time the PINGs take): well above 100/s.
	if ops < 100 || ops > 1_000_000 {
		t.Errorf("instantaneous_ops_per_sec %d", ops)
	}
}

func TestInfoKeyspace(t *testing.T) {
	e := newTestEngine()
	tc := newTestConn(t, e)
	now := time.Now()
	for i := range 50 {
		putString(e, 0, fmt.Sprint("p", i), "v", 0)
	}
	for i := range 30 {
		putString(e, 0, fmt.Sprint("t", i), "v", now.Add(100*time.Second).UnixNano())
	}
	putString(e, 9, "only", "v", 0)
	doc := infoOf(t, tc, "keyspace")
	fields := doc.fields["Keyspace"]
	if len(fields) != 2 || fields[0][0] != "db0" || fields[1] != [2]string{"db9", "keys=1,expires=0,avg_ttl=0"} {
		t.Fatalf("keyspace %v", fields)
	}
	m := regexp.MustCompile(`^keys=80,expires=30,avg_ttl=(\d+)$`).FindStringSubmatch(fields[0][1])
	if m == nil {
		t.Fatalf("db0: %q", fields[0][1])
	}
	// A sample may find no volatile key (avg_ttl 0); a found one has ~100s left.
	if avg, _ := strconv.Atoi(m[1]); avg != 0 && (avg < 98_000 || avg > 100_000) {
		t.Errorf("avg_ttl %d, want about 100000", avg)
	}
	total, n := int64(0), int64(0)
	for range 200 {
		e.eachKeyspace(0, func(ks *keyspace.Keyspace) {
			s, c := sampleTTL(ks, time.Now().UnixNano(), e.rand())
			total, n = total+s, n+c
		})
	}
	if n == 0 || total/n < 98_000 || total/n > 100_000 {
		t.Errorf("sampled %d TTLs averaging %d ms", n, total/max(n, 1))
	}
}

func TestInfoMemory(t *testing.T) {
	tc := newTestConn(t, newTestEngine())
	doc := infoOf(t, tc, "memory")
	used := doc.getInt(t, "Memory", "used_memory")
	peak := doc.getInt(t, "Memory", "used_memory_peak")
	if used <= 0 || peak < used || doc.getInt(t, "Memory", "used_memory_rss") <= 0 {
		t.Errorf("used %d peak %d rss %s", used, peak, doc.get("Memory", "used_memory_rss"))
	}
	if got := doc.getInt(t, "Memory", "used_memory_dataset") + doc.getInt(t, "Memory", "used_memory_overhead"); got != used {
		t.Errorf("dataset + overhead = %d, used %d", got, used)
	}
	f := func(n uint64, want string) {
		t.Helper()
		if got := bytesToHuman(n); got != want {
			t.Errorf("bytesToHuman(%d) = %q, want %q", n, got, want)
		}
	}
	f(0, "0B")
	f(1023, "1023B")
	f(1024, "1.00K")
	f(1113104, "1.06M")
	f(25276026880, "23.54G")
}

func TestInfoHooks(t *testing.T) {
	e := newTestEngine()
	e.Hooks.Info = func(section string, dst []byte) []byte {
		switch section {
		case "persistence":
			return append(dst, "loading:1\r\n"...)
		case "server":
			return append(dst, "listener0:name=tcp\r\n"...)
		}
		return dst
	}
	doc := infoOf(t, newTestConn(t, e), "server", "persistence", "replication")
	if got := doc.fields["Persistence"]; len(got) != 1 || got[0] != [2]string{"loading", "1"} {
		t.Errorf("hook-owned persistence: %v", got)
	}
	srv := doc.fields["Server"]
	if srv[len(srv)-1] != [2]string{"listener0", "name=tcp"} || doc.get("Server", "redis_version") != RedisVersion {
		t.Errorf("server section with hook: %v", srv)
	}
	if doc.get("Replication", "role") != "master" {
		t.Errorf("replication defaults missing when the hook writes none: %v", doc.fields["Replication"])
	}
}
