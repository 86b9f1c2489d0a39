package command

import (
	"strings"
	"testing"
	"time"

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

// Invariant 8 on a barrier: a panic outside the command itself (here the key warming, given a
// database index no client can select) still releases the shards the barrier locked.
func TestPanicInBarrierReleasesShards(t *testing.T) {
	e := newTestEngine()
	tc := newTestConn(t, e)
	spec := lookup([]byte("mget"))
	s := &pipeline.Slot{Args: [][]byte{[]byte("MGET"), []byte("a"), []byte("b"), []byte("c")},
		Cmd: spec, Client: tc.client, DB: 99}
	e.routeKeys(tc.client, spec, s)
	func() {
		defer func() {
			if recover() == nil {
				t.Error("the barrier did not panic")
			}
		}()
		e.barrier(s)
	}()
	done := make(chan string)
	go func() { done <- tc.do("MGET", "a", "b", "c") }()
	select {
	case got := <-done:
		if got != "*3\r\n$-1\r\n$-1\r\n$-1\r\n" {
			t.Fatalf("MGET after the panic replied %q", got)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("MGET after the panic hung: the barrier's shards stayed locked")
	}
}
