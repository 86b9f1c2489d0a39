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
	return newBatchConn(tb, bigSetSetup("k"),
		churn("SADD", "SREM", "k", func(i int) []string { return []string{setMember(5000 + i)} })...)
}

func TestSetsHotPathAllocatesNothing(t *testing.T) {
	for _, hc := range setHotCases {
		h := newSetHotConn(t, hc.cmd)
		hotReplies(t, hc.name, h)
		checkNoAllocs(t, hc.name, h)
	}
}

func BenchmarkSetsHotPath(b *testing.B) {
	for _, hc := range setHotCases {
		b.Run(hc.name, func(b *testing.B) { benchHot(b, newSetHotConn(b, hc.cmd)) })
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
			benchHot(b, newHotConn(b, setup, cmd...))
		})
	}
}
