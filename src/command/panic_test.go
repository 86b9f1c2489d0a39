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
	// MGET reads its shards shared (shared.go): the writer checks that the panic left no
	// reader registered, which would keep every token taker of those shards waiting.
	got := within(t, "MGET or MSET after the panic (the barrier's shards stayed locked)", func() string {
		return tc.do("MGET", "a", "b", "c") + tc.do("MSET", "a", "1", "b", "2", "c", "3")
	})
	if got != "*3\r\n$-1\r\n$-1\r\n$-1\r\n+OK\r\n" {
		t.Fatalf("MGET and MSET after the panic replied %q", got)
	}
}

// within returns do's result, failing the test if it takes more than 10 seconds (what hangs).
func within(t *testing.T, what string, do func() string) string {
	t.Helper()
	done := make(chan string, 1)
	go func() { done <- do() }()
	select {
	case got := <-done:
		return got
	case <-time.After(10 * time.Second):
		t.Fatalf("%s hung", what)
		return ""
	}
}

// Invariant 8 in shared work (a GET run without its shard's token): the panic closes only its
// client, which is answered with an error, and writers of the shard are not kept waiting.
// (Shared work once ran pinned to its P, where a panic ends the process.)
func TestPanicInSharedWork(t *testing.T) {
	e := newTestEngine()
	bad, good := newTestConn(t, e), newTestConn(t, e)
	get := lookup([]byte("get"))
	run := get.Run
	get.Run = func(c *Ctx) {
		if string(c.Args[1]) == "boom" {
			panic("boom")
		}
		run(c)
	}
	defer func() { get.Run = run }()
	if got := bad.do("GET", "boom"); !strings.HasPrefix(got, "-ERR") {
		t.Fatalf("panicking GET replied %q", got)
	}
	if !bad.stream.closed && !bad.client.closeAfter {
		t.Fatal("the panicking client was not closed")
	}
	got := within(t, "SET after the panic (the shared reader stayed registered)", func() string {
		return good.do("SET", "boom", "v") + good.do("STRLEN", "boom")
	})
	if got != "+OK\r\n:1\r\n" {
		t.Fatalf("SET and STRLEN after the panic replied %q", got)
	}
}
