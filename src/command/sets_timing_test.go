package command

import (
	"fmt"
	"strings"
	"testing"
)

// The sets family's hot commands on a pipelined batch of 30, with 256-byte members (the size
// the design's probe measured with): single-key reads and writes allocate nothing once warm.

// setMember returns the i'th 256-byte member.
func setMember(i int) string {
	p := fmt.Sprint("member:", i, ":")
	return p + strings.Repeat("v", 256-len(p))
}

// bigSetSetup fills key with 1000 members, past the small encodings.
func bigSetSetup(key string) [][]string {
	cmd := []string{"SADD", key}
	for i := range 1000 {
		cmd = append(cmd, setMember(i))
	}
	return [][]string{cmd, {"SADD", "ints", "1", "2", "3", "4", "5", "6", "7", "8"}}
}

var setHotCases = []struct {
	name string
	cmd  []string
}{
	{"SADD-existing", []string{"SADD", "k", setMember(7)}},
	{"SISMEMBER", []string{"SISMEMBER", "k", setMember(500)}},
	{"SMISMEMBER", []string{"SMISMEMBER", "k", setMember(1), setMember(2), "nope"}},
	{"SCARD", []string{"SCARD", "k"}},
	{"SRANDMEMBER", []string{"SRANDMEMBER", "k"}},
	{"SMEMBERS-intset", []string{"SMEMBERS", "ints"}},
	{"SADD-SREM", nil}, // a new member added and removed: the arena's churn
}

func newSetHotConn(tb testing.TB, cmd []string) *hotConn {
	if cmd != nil {
		return newHotConn(tb, bigSetSetup("k"), cmd...)
	}
	h := newHotConn(tb, bigSetSetup("k"), "PING")
	h.req = h.req[:0]
	for i := range hotBatch / 2 {
		m := setMember(5000 + i)
		h.req = append(h.req, encodeCommand([]string{"SADD", "k", m})...)
		h.req = append(h.req, encodeCommand([]string{"SREM", "k", m})...)
	}
	for range 3 {
		h.run(tb)
	}
	return h
}

func TestSetsHotPathAllocatesNothing(t *testing.T) {
	for _, hc := range setHotCases {
		h := newSetHotConn(t, hc.cmd)
		h.tc.stream.in = h.req
		out, err := h.tc.send(nil)
		if err != nil || len(splitReplies(t, out)) != hotBatch || strings.HasPrefix(string(out), "-") {
			t.Fatalf("%s: bad replies %.100q, %v", hc.name, out, err)
		}
		if n := testing.AllocsPerRun(200, func() { h.run(t) }); n != 0 {
			t.Errorf("%s: %v allocations per batch of %d", hc.name, n, hotBatch)
		}
	}
}

func BenchmarkSetsHotPath(b *testing.B) {
	for _, hc := range setHotCases {
		b.Run(hc.name, func(b *testing.B) {
			h := newSetHotConn(b, hc.cmd)
			b.ReportAllocs()
			b.SetBytes(int64(len(h.req)))
			for b.Loop() {
				h.run(b)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*hotBatch), "ns/cmd")
		})
	}
}

// Multi-key commands run as barriers when their keys span shards; they allocate their result.
func BenchmarkSetsAlgebra(b *testing.B) {
	setup := [][]string{{"SADD", "a"}, {"SADD", "b"}}
	for i := range 200 {
		setup[0] = append(setup[0], setMember(i))
		setup[1] = append(setup[1], setMember(i+100))
	}
	for _, cmd := range [][]string{{"SINTER", "a", "b"}, {"SINTERCARD", "2", "a", "b"},
		{"SUNION", "a", "b"}, {"SDIFF", "a", "b"}, {"SUNIONSTORE", "u", "a", "b"}} {
		b.Run(cmd[0], func(b *testing.B) {
			h := newHotConn(b, setup, cmd...)
			b.ReportAllocs()
			for b.Loop() {
				h.run(b)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*hotBatch), "ns/cmd")
		})
	}
}
