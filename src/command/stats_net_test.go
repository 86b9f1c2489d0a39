package command

import (
	"math"
	"strconv"
	"strings"
	"testing"
	"time"
)

// infoStat reads an INFO stats field through tc, returning what INFO printed.
func infoStat(t *testing.T, tc *testConn, name string) string {
	t.Helper()
	for _, line := range strings.Split(replyText(t, tc.do("INFO", "stats")), "\r\n") {
		if v, ok := strings.CutPrefix(line, name+":"); ok {
			return v
		}
	}
	t.Fatalf("no %s in INFO stats", name)
	return ""
}

// total_net_input_bytes and total_net_output_bytes count exactly the bytes clients sent and
// were sent, across connections, closed ones included; a client without a socket counts none.
func TestNetBytesAgainstSent(t *testing.T) {
	e := newTestEngine()
	tc := newTestConn(t, e)
	tc.client.SetFD(100)
	var sent, got int64
	do := func(tc *testConn, args ...string) {
		req := encodeCommand(args)
		out, err := tc.send(req)
		if err != nil {
			t.Fatal(err)
		}
		sent += int64(len(req))
		got += int64(len(out))
	}
	do(tc, "SET", "k", strings.Repeat("v", 1000))
	do(tc, "GET", "k")
	do(tc, "HELLO", "3")
	do(tc, "MGET", "k", "nokey", "k")
	do(tc, "NOSUCHCMD")
	pipelined := append(encodeCommand([]string{"INCR", "n"}), encodeCommand([]string{"PING"})...)
	out, _ := tc.send(pipelined)
	sent, got = sent+int64(len(pipelined)), got+int64(len(out))
	other := newTestConn(t, e)
	other.client.SetFD(101)
	do(other, "SET", "x", "y")
	e.RemoveClient(other.client)
	fake := newTestConn(t, e) // no socket: AOF loading's and a script's clients count nothing
	fake.do("SET", "z", strings.Repeat("w", 500))
	info := encodeCommand([]string{"INFO", "stats"})
	in := infoStat(t, tc, "total_net_input_bytes")
	if want := strconv.FormatInt(sent+int64(len(info)), 10); in != want {
		t.Errorf("total_net_input_bytes %s, sent %s (INFO's own request included, as Redis reads it first)", in, want)
	}
	// The output so far is what was received before the INFO above, plus its reply.
	if o := infoStat(t, tc, "total_net_output_bytes"); o == strconv.FormatInt(got, 10) || o == "0" {
		t.Errorf("total_net_output_bytes %s does not count the first INFO's reply (before it: %d)", o, got)
	}
	n, _ := e.NetBytes()
	if n != sent+2*int64(len(info)) {
		t.Errorf("NetBytes in %d, sent %d", n, sent+2*int64(len(info)))
	}
	_, o := e.NetBytes()
	if o <= got {
		t.Errorf("NetBytes out %d, received before the INFOs %d", o, got)
	}
}

// instantaneous_input_kbps and _output_kbps are the mean of the last 16 samples' rates, as
// Redis's getInstantaneousMetric: 10,240 bytes each 100 ms is 100 KB/s.
func TestNetKbpsMovingAverage(t *testing.T) {
	e := newTestEngine()
	tc := newTestConn(t, e)
	tc.client.SetFD(100)
	var req []byte
	for n := 10200; len(req) != 10240; n++ {
		req = encodeCommand([]string{"SET", "k", strings.Repeat("v", n)})
	}
	if len(req) != 10240 {
		t.Fatalf("request of %d bytes", len(req))
	}
	t0 := time.Now().UnixNano() + int64(time.Hour) // ahead of INFO's own samples
	e.sampleMetrics(t0)
	for i := 1; i <= 20; i++ {
		if _, err := tc.send(req); err != nil {
			t.Fatal(err)
		}
		e.sampleMetrics(t0 + int64(i)*int64(100*time.Millisecond))
	}
	if in := e.info.kbps(1); math.Abs(in-100) > 1e-9 {
		t.Errorf("input kbps %v, want 100", in)
	}
	if out := e.info.kbps(2); math.Abs(out-5*10/1024.0) > 1e-9 { // +OK\r\n each 100 ms
		t.Errorf("output kbps %v, want %v", out, 5*10/1024.0)
	}
	// A quiet period: the average falls as samples of 0 replace the busy ones.
	for i := 21; i <= 28; i++ {
		e.sampleMetrics(t0 + int64(i)*int64(100*time.Millisecond))
	}
	if in := e.info.kbps(1); math.Abs(in-50) > 1e-9 {
		t.Errorf("input kbps after 8 idle samples of 16: %v, want 50", in)
	}
	if v := infoStat(t, tc, "instantaneous_input_kbps"); v != "50.00" {
		t.Errorf("INFO instantaneous_input_kbps %s, want 50.00", v)
	}
}
