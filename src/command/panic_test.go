package command

import (
	"strings"
	"testing"

	"github.com/hotkv/hotkv/pipeline"
)

// Invariant 8: a command that panics on a shard answers its client with an error and marks only
// that client for closing; the shard's token is released and other clients keep being served.
func TestPanicInCommandClosesOnlyItsClient(t *testing.T) {
	e := newTestEngine()
	bad, good := newTestConn(t, e), newTestConn(t, e)
	good.do("SET", "k", "v")
	boom := &Spec{Name: "boom", Arity: 2, FirstKey: 1, LastKey: 1, Step: 1,
		Run: func(c *Ctx) { panic("boom") }}
	shard := e.shardOf([]byte("k"))
	s := &pipeline.Slot{Args: [][]byte{[]byte("boom"), []byte("k")}, Cmd: boom, Client: bad.client}
	e.Group.Do(int(shard), func(sh *pipeline.Shard) { e.call(&sh.Data.(*shardData).ctx, s, 0) })
	if got := string(s.Reply); !strings.HasPrefix(got, "-ERR") {
		t.Fatalf("panicking command replied %q", got)
	}
	if !bad.client.closeAfter {
		t.Fatal("the panicking client was not marked for closing")
	}
	if good.client.closeAfter {
		t.Fatal("another client was marked for closing")
	}
	if got := good.do("GET", "k"); got != "$1\r\nv\r\n" {
		t.Fatalf("after the panic GET on the same shard replied %q", got)
	}
}
