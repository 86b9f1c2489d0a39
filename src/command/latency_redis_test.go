package command

import (
	"bufio"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/hotkv/hotkv/net/resp/resptest"
)

var digits = regexp.MustCompile(`[0-9]+`)

// LATENCY against redis-server 7.0.15: the same spikes (DEBUG SLEEP over the threshold) give
// the same events, the same reply shapes and, numbers aside, the same DOCTOR and GRAPH texts.
func TestLatencyAgainstRedis(t *testing.T) {
	for _, proto := range []string{"2", "3"} {
		t.Run("RESP"+proto, func(t *testing.T) { latencyAgainstRedis(t, proto) })
	}
}

func latencyAgainstRedis(t *testing.T, proto string) {
	conn, stop := startRedis(t)
	defer stop()
	r := bufio.NewReader(conn)
	e := newObsEngine()
	tc := newTestConn(t, e)
	redisDo(t, conn, r, "HELLO", proto)
	tc.do("HELLO", proto)
	type step struct {
		args []string
		norm bool // compare with every number replaced
	}
	steps := []step{
		{[]string{"LATENCY", "DOCTOR"}, false},
		{[]string{"LATENCY", "LATEST"}, false},
		{[]string{"LATENCY", "HISTORY", "command"}, false},
		{[]string{"LATENCY", "GRAPH", "command"}, false},
		{[]string{"LATENCY", "RESET"}, false},
		{[]string{"LATENCY", "HELP"}, false},
		{[]string{"LATENCY", "NOPE"}, false},
		{[]string{"LATENCY", "HISTORY"}, false},
		{[]string{"CONFIG", "SET", "latency-monitor-threshold", "250"}, false}, // a 5 ms sleep took 31 on the loaded VM, a CONFIG SET 75 under -race
		{[]string{"LATENCY", "DOCTOR"}, false},
		{[]string{"DEBUG", "SLEEP", "0.005"}, false},
		{[]string{"LATENCY", "LATEST"}, false},
		{[]string{"DEBUG", "SLEEP", "0.3"}, false},
		{[]string{"LATENCY", "LATEST"}, true},
		{[]string{"LATENCY", "HISTORY", "command"}, true},
		{[]string{"LATENCY", "HISTORY", "Command"}, false},
		{[]string{"LATENCY", "GRAPH", "command"}, true},
		{[]string{"LATENCY", "DOCTOR"}, true},
		{[]string{"CONFIG", "SET", "slowlog-log-slower-than", "-1"}, false},
		{[]string{"LATENCY", "DOCTOR"}, true},
		{[]string{"LATENCY", "RESET", "nope", "COMMAND"}, false},
		{[]string{"LATENCY", "LATEST"}, false},
		{[]string{"LATENCY", "DOCTOR"}, false},
		{[]string{"CONFIG", "SET", "latency-monitor-threshold", "0"}, false},
		{[]string{"LATENCY", "DOCTOR"}, false},
	}
	for _, s := range steps {
		want, got := redisDo(t, conn, r, s.args...), tc.do(s.args...)
		if s.args[1] == "LATEST" && s.norm && !regexp.MustCompile(`^\*1\r\n\*4\r\n\$7\r\ncommand\r\n:\d+\r\n:([1-9]\d\d)\r\n`).MatchString(got) {
			t.Errorf("LATENCY LATEST after a 300 ms call: %q", got)
		}
		if s.norm {
			want, got = digits.ReplaceAllString(want, "N"), digits.ReplaceAllString(got, "N")
		}
		if want != got {
			t.Errorf("%q:\nredis %q\nhotkv %q", s.args, want, got)
		}
	}
}

// LATENCY HISTOGRAM: the same commands and call counts as redis-server's, container names
// expanded to their subcommands, unknown names left out, every bound one Redis prints.
func TestLatencyHistogramAgainstRedis(t *testing.T) {
	for _, proto := range []string{"2", "3"} {
		t.Run("RESP"+proto, func(t *testing.T) { latencyHistogramAgainstRedis(t, proto) })
	}
}

func latencyHistogramAgainstRedis(t *testing.T, proto string) {
	conn, stop := startRedis(t)
	defer stop()
	r := bufio.NewReader(conn)
	e := newObsEngine()
	tc := newTestConn(t, e)
	script := [][]string{{"HELLO", proto}, {"CONFIG", "RESETSTAT"}, {"SET", "a", "1"}, {"SET", "a", "2"}, {"GET", "a"},
		{"CONFIG", "GET", "maxmemory"}, {"CLIENT", "ID"}, {"LPUSH", "l", "x"}}
	for _, c := range script {
		redisDo(t, conn, r, c...)
		tc.do(c...)
	}
	labels := map[int64]bool{}
	for i := range 30 {
		labels[hdrUsecLabel(1024<<i)] = true
	}
	wantKind := byte('*')
	if proto == "3" {
		wantKind = '%'
	}
	num := func(v resptest.Value) int64 {
		n, err := v.Int()
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	view := func(raw string) map[string]int64 {
		out := map[string]int64{}
		m := replyOf(t, raw)
		for _, agg := range []resptest.Value{m} {
			if agg.Kind != wantKind {
				t.Errorf("RESP%s reply kind %q", proto, agg.Kind)
			}
		}
		for i := 0; i+1 < len(m.Elems); i += 2 {
			name, h := m.Elems[i].Str, m.Elems[i+1]
			if h.Kind != wantKind || len(h.Elems) != 4 || h.Elems[3].Kind != wantKind {
				t.Fatalf("%s: %v", name, h)
			}
			calls, b := num(h.Elems[1]), h.Elems[3].Elems
			out[name] = calls
			for j := 0; j+1 < len(b); j += 2 {
				if !labels[num(b[j])] {
					t.Errorf("%s: bound %d is not one of Redis's", name, num(b[j]))
				}
			}
			if last := num(b[len(b)-1]); last != calls {
				t.Errorf("%s: last bucket %d of %d calls", name, last, calls)
			}
		}
		return out
	}
	for _, c := range [][]string{{"LATENCY", "HISTOGRAM", "set", "GET", "nosuch", "config", "client|id", "lpush"},
		{"LATENCY", "HISTOGRAM", "nosuch"}} {
		want, got := view(redisDo(t, conn, r, c...)), view(tc.do(c...))
		if fmt.Sprint(want) != fmt.Sprint(got) {
			t.Errorf("%q: redis %v, hotkv %v", c, want, got)
		}
		if c[2] == "set" && want["set"] != 2 {
			t.Errorf("redis-server counted %d SETs", want["set"])
		}
	}
}

// INFO latencystats against redis-server 7.0.15: the same commands listed with the same
// percentile labels (values differ: every number is normalised), for the default percentiles,
// a custom list and none; nothing while latency-tracking is off.
func TestInfoLatencyStatsAgainstRedis(t *testing.T) {
	conn, stop := startRedis(t)
	defer stop()
	r := bufio.NewReader(conn)
	tc := newTestConn(t, newObsEngine())
	section := func(raw string) string {
		lines := strings.Split(replyText(t, raw), "\r\n")
		sort.Strings(lines)
		return digits.ReplaceAllString(strings.Join(lines, "\n"), "N")
	}
	for _, c := range [][]string{{"CONFIG", "RESETSTAT"}, {"SET", "a", "1"}, {"SET", "a", "2"}, {"GET", "a"},
		{"INFO", "latencystats"}, {"CONFIG", "SET", "latency-tracking-info-percentiles", "50 99.9 100 0"},
		{"INFO", "latencystats"}, {"CONFIG", "SET", "latency-tracking-info-percentiles", ""}, {"INFO", "latencystats"},
		{"CONFIG", "SET", "latency-tracking", "no"}, {"INFO", "latencystats"}} {
		want, got := redisDo(t, conn, r, c...), tc.do(c...)
		if c[0] == "INFO" {
			want, got = section(want), section(got)
			if !strings.Contains(want, "latency_percentiles_usec_set") && !strings.HasSuffix(want, "# Latencystats") {
				t.Fatalf("redis-server's latencystats: %q", want)
			}
		}
		if want != got {
			t.Errorf("%q:\nredis %q\nhotkv %q", c, want, got)
		}
	}
}
