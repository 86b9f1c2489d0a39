package command

import (
	"fmt"
	"strings"
	"testing"
)

// The hashes family's hot commands on a pipelined batch of 30: a hashtable hash of 1000 fields
// with 256-byte values (the size the design's probe measured with), and a listpack hash of 10
// fields with 40-byte values. Reads and in-place writes allocate nothing once warm.

// hashValue returns the i'th value of n bytes.
func hashValue(i, n int) string {
	p := fmt.Sprint("value:", i, ":")
	return p + strings.Repeat("v", n-len(p))
}

func hashSetup() [][]string {
	big := []string{"HSET", "big"}
	for i := range 1000 {
		big = append(big, fmt.Sprint("field:", i), hashValue(i, 256))
	}
	small := []string{"HSET", "small"}
	for i := range 10 {
		small = append(small, fmt.Sprint("field:", i), hashValue(i, 40))
	}
	return [][]string{big, small, {"HSET", "big", "counter", "1000000"}, {"HSET", "small", "counter", "1000000"}}
}

var hashHotCases = []struct {
	name    string
	cmd     []string
	noAlloc bool
}{
	{"HGET-hashtable", []string{"HGET", "big", "field:500"}, true},
	{"HGET-listpack", []string{"HGET", "small", "field:7"}, true},
	{"HSET-existing-hashtable", []string{"HSET", "big", "field:7", hashValue(99, 256)}, true},
	{"HSET-existing-listpack", []string{"HSET", "small", "field:7", hashValue(99, 40)}, true},
	{"HMGET-hashtable", []string{"HMGET", "big", "field:1", "field:2", "nope"}, true},
	{"HEXISTS-listpack", []string{"HEXISTS", "small", "field:9"}, true},
	{"HLEN", []string{"HLEN", "big"}, true},
	{"HINCRBY-hashtable", []string{"HINCRBY", "big", "counter", "1"}, true},
	{"HINCRBY-listpack", []string{"HINCRBY", "small", "counter", "1"}, true},
	{"HGETALL-listpack", []string{"HGETALL", "small"}, true},
	{"HSET-HDEL-hashtable", nil, false}, // a new field added and removed: the arena's churn
	{"HSET-HDEL-listpack", []string{"small"}, false},
}

func newHashHotConn(tb testing.TB, cmd []string) *hotConn {
	if len(cmd) > 1 {
		return newHotConn(tb, hashSetup(), cmd...)
	}
	key := "big"
	if cmd != nil {
		key = cmd[0]
	}
	return newBatchConn(tb, hashSetup(), churn("HSET", "HDEL", key, func(i int) []string {
		return []string{fmt.Sprint("new:", i), hashValue(i, 40)}
	})...)
}

func TestHashesHotPathAllocatesNothing(t *testing.T) {
	for _, hc := range hashHotCases {
		h := newHashHotConn(t, hc.cmd)
		hotReplies(t, hc.name, h)
		if hc.noAlloc {
			checkNoAllocs(t, hc.name, h)
		}
	}
}

func BenchmarkHashesHotPath(b *testing.B) {
	for _, hc := range hashHotCases {
		b.Run(hc.name, func(b *testing.B) { benchHot(b, newHashHotConn(b, hc.cmd)) })
	}
}
