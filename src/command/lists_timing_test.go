package command

import (
	"fmt"
	"strings"
	"testing"
)

// The lists family on pipelined batches of 30 commands with 256-byte elements (the size the
// design's probe measured with). Single-key commands allocate nothing once warm, including a
// list used as a queue: its nodes' buffers are reused (ds/list's spare node).

// listElem returns the i'th 256-byte element.
func listElem(i int) string {
	p := fmt.Sprint("elem:", i, ":")
	return p + strings.Repeat("v", 256-len(p))
}

// listSetup fills key with 1000 elements.
func listSetup(key string) [][]string {
	cmd := []string{"RPUSH", key}
	for i := range 1000 {
		cmd = append(cmd, listElem(i))
	}
	return [][]string{cmd}
}

var listHotCases = []struct {
	name string
	cmds [][]string // cycled to fill the batch
}{
	{"LPUSH-RPOP", [][]string{{"LPUSH", "q", listElem(7)}, {"RPOP", "q"}}},
	{"RPUSH-LPOP", [][]string{{"RPUSH", "q", listElem(7)}, {"LPOP", "q"}}},
	{"LPOP-RPUSH-count", [][]string{{"LPOP", "q", "3"}, {"RPUSH", "q", listElem(1), listElem(2), listElem(3)}}},
	{"LLEN", [][]string{{"LLEN", "q"}}},
	{"LINDEX-middle", [][]string{{"LINDEX", "q", "500"}}},
	{"LINDEX-tail", [][]string{{"LINDEX", "q", "-1"}}},
	{"LSET-middle", [][]string{{"LSET", "q", "500", listElem(9)}}},
	{"LRANGE-10", [][]string{{"LRANGE", "q", "0", "9"}}},
	{"LPOS", [][]string{{"LPOS", "q", listElem(100)}}},
	{"LMOVE-rotate", [][]string{{"LMOVE", "q", "q", "LEFT", "RIGHT"}}},
}

func TestListsHotPathAllocatesNothing(t *testing.T) {
	for _, hc := range listHotCases {
		h := newBatchConn(t, listSetup("q"), hc.cmds...)
		hotReplies(t, hc.name, h)
		checkNoAllocs(t, hc.name, h)
	}
}

func BenchmarkListsHotPath(b *testing.B) {
	for _, hc := range listHotCases {
		b.Run(hc.name, func(b *testing.B) { benchHot(b, newBatchConn(b, listSetup("q"), hc.cmds...)) })
	}
}

// Commands that move elements between keys on different shards, and blocking pops that find an
// element, run as barriers.
func BenchmarkListsBarrier(b *testing.B) {
	e := newTestEngine()
	src, dst := keyPair(e, "bench", false)
	for _, cmds := range [][][]string{
		{{"LMOVE", src, dst, "LEFT", "RIGHT"}, {"LMOVE", dst, src, "LEFT", "RIGHT"}},
		{{"BLPOP", src, "0"}, {"RPUSH", src, listElem(1)}},
	} {
		b.Run(cmds[0][0], func(b *testing.B) {
			tc := newTestConn(b, e)
			tc.do(listSetup(src)[0]...)
			tc.do(listSetup(dst)[0]...)
			h := &hotConn{tc: tc}
			for i := range hotBatch {
				h.req = append(h.req, encodeCommand(cmds[i%len(cmds)])...)
			}
			benchHot(b, h)
			tc.do("DEL", src, dst)
		})
	}
}
