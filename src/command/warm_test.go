package command

import (
	"fmt"
	"strings"
	"testing"
)

// A pipelined batch longer than a warming chunk, of commands that also warm a member or a rank
// inside their key's collection, runs whole and answers each command: a member warmed after
// the chunk before it ran must belong to its own key (this batch once panicked in warm).
func TestWarmMoreThanAChunk(t *testing.T) {
	tc := newTestConn(t, newTestEngine())
	tc.do("HSET", "h", "f", "v")
	tc.do("ZADD", "z", "1", "a", "2", "b")
	var req []byte
	var want strings.Builder
	for i := range 3*warmChunk + 5 {
		switch i % 3 {
		case 0:
			req = append(req, encodeCommand([]string{"HGET", "h", "f"})...)
			want.WriteString("$1\r\nv\r\n")
		case 1:
			req = append(req, encodeCommand([]string{"ZRANGE", "z", "1", "1"})...)
			want.WriteString("*1\r\n$1\r\nb\r\n")
		default:
			req = append(req, encodeCommand([]string{"GET", fmt.Sprint("k", i)})...)
			want.WriteString("$-1\r\n")
		}
	}
	for round := range 4 { // the first batches are short; later ones hold the whole request
		out, err := tc.send(req)
		if err != nil || string(out) != want.String() {
			t.Fatalf("round %d: %v, replies %.300q", round, err, out)
		}
	}
}
