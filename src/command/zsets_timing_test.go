package command

import (
	"fmt"
	"strings"
	"testing"
)

// The sorted set family's hot commands on a pipelined batch of 30: on a large set of 1000
// 256-byte members (the size the design's probe measured with; the "skiplist" encoding) and on
// a small listpack set. Single-key reads and writes allocate nothing once warm.

// zMember returns the i'th 256-byte member.
func zMember(i int) string {
	p := fmt.Sprint("member:", i, ":")
	return p + strings.Repeat("v", 256-len(p))
}

// zsetSetup fills "big" with 1000 256-byte members scored 0..999 and "small" with 20 short ones.
func zsetSetup() [][]string {
	big, small := []string{"ZADD", "big"}, []string{"ZADD", "small"}
	for i := range 1000 {
		big = append(big, fmt.Sprint(i), zMember(i))
	}
	for i := range 20 {
		small = append(small, fmt.Sprint(i), fmt.Sprint("m", i))
	}
	return [][]string{big, small}
}

var zsetHotCases = []struct {
	name string
	cmds [][]string // sent in turn to fill the batch
}{
	{"ZSCORE", [][]string{{"ZSCORE", "big", zMember(500)}}},
	{"ZMSCORE", [][]string{{"ZMSCORE", "big", zMember(1), zMember(2), "nope"}}},
	{"ZRANK", [][]string{{"ZRANK", "big", zMember(700)}}},
	{"ZCARD", [][]string{{"ZCARD", "big"}}},
	{"ZCOUNT", [][]string{{"ZCOUNT", "big", "(100", "200"}}},
	{"ZADD-update", [][]string{{"ZADD", "big", "1.5", zMember(7)}, {"ZADD", "big", "7", zMember(7)}}},
	{"ZINCRBY", [][]string{{"ZINCRBY", "big", "1", zMember(9)}, {"ZINCRBY", "big", "-1", zMember(9)}}},
	{"ZADD-ZREM", [][]string{{"ZADD", "big", "500.5", zMember(5000)}, {"ZREM", "big", zMember(5000)}}},
	{"ZRANGE-10", [][]string{{"ZRANGE", "big", "100", "109", "WITHSCORES"}}},
	{"ZRANGEBYSCORE-10", [][]string{{"ZRANGEBYSCORE", "big", "(250", "+inf", "LIMIT", "0", "10"}}},
	{"ZREVRANGE-10", [][]string{{"ZREVRANGE", "big", "0", "9"}}},
	{"ZPOPMIN-ZADD", [][]string{{"ZPOPMIN", "big"}, {"ZADD", "big", "0", zMember(0)}}},
	{"ZRANDMEMBER", [][]string{{"ZRANDMEMBER", "big"}}},
	{"small-ZADD-update", [][]string{{"ZADD", "small", "1.5", "m7"}, {"ZADD", "small", "7", "m7"}}},
	{"small-ZADD-ZREM", [][]string{{"ZADD", "small", "3.5", "new"}, {"ZREM", "small", "new"}}},
	{"small-ZSCORE", [][]string{{"ZSCORE", "small", "m13"}}},
	{"small-ZRANGE", [][]string{{"ZRANGE", "small", "0", "-1", "WITHSCORES"}}},
}

func TestZSetsHotPathAllocatesNothing(t *testing.T) {
	for _, hc := range zsetHotCases {
		h := newBatchConn(t, zsetSetup(), hc.cmds...)
		hotReplies(t, hc.name, h)
		checkNoAllocs(t, hc.name, h)
	}
}

func BenchmarkZSetsHotPath(b *testing.B) {
	for _, hc := range zsetHotCases {
		b.Run(hc.name, func(b *testing.B) { benchHot(b, newBatchConn(b, zsetSetup(), hc.cmds...)) })
	}
}

// Multi-key commands run as barriers when their keys span shards; they allocate their result.
func BenchmarkZSetsAlgebra(b *testing.B) {
	setup := [][]string{{"ZADD", "a"}, {"ZADD", "b"}}
	for i := range 200 {
		setup[0] = append(setup[0], fmt.Sprint(i), zMember(i))
		setup[1] = append(setup[1], fmt.Sprint(i), zMember(i+100))
	}
	for _, cmd := range [][]string{{"ZINTER", "2", "a", "b"}, {"ZINTERCARD", "2", "a", "b"},
		{"ZUNION", "2", "a", "b", "WITHSCORES"}, {"ZDIFF", "2", "a", "b"}, {"ZUNIONSTORE", "u", "2", "a", "b"},
		{"ZRANGESTORE", "r", "a", "0", "99"}} {
		b.Run(cmd[0], func(b *testing.B) {
			benchHot(b, newHotConn(b, setup, cmd...))
		})
	}
}
