package command

import (
	"fmt"
	"testing"
)

// Waiters of both kinds on one key, and keys that change type under their waiters, as Redis 7.0
// serves them: when a key becomes ready, its waiters are walked in the order they blocked and
// those whose command cannot take from the key's type are skipped, keeping their place.

// A list push serves the list waiter queued behind a sorted-set waiter, and the other way round.
func TestBlockSkipsWaitersOfOtherType(t *testing.T) {
	e := newTestEngine()
	cs := conns(t, e, 5)
	zFirst := blockedDo(t, cs[0], "BZPOPMIN", "k", "0")
	lSecond := blockedDo(t, cs[1], "BLPOP", "k", "0")
	zThird := blockedDo(t, cs[2], "BZPOPMAX", "k", "0")
	if got := cs[4].do("LPUSH", "k", "m"); got != ":1\r\n" {
		t.Fatalf("LPUSH: %q", got)
	}
	if got := recv(t, lSecond); got != "*2\r\n$1\r\nk\r\n$1\r\nm\r\n" {
		t.Errorf("list waiter behind a sorted-set waiter: %q", got)
	}
	pending(t, zFirst)
	lFourth := blockedDo(t, cs[3], "BRPOP", "k", "0")
	if got := cs[4].do("ZADD", "k", "1", "a", "2", "b"); got != ":2\r\n" {
		t.Fatalf("ZADD: %q", got)
	}
	// The sorted-set waiters keep their order: the first one takes the minimum.
	if got := recv(t, zFirst); got != "*3\r\n$1\r\nk\r\n$1\r\na\r\n$1\r\n1\r\n" {
		t.Errorf("first sorted-set waiter: %q", got)
	}
	if got := recv(t, zThird); got != "*3\r\n$1\r\nk\r\n$1\r\nb\r\n$1\r\n2\r\n" {
		t.Errorf("second sorted-set waiter: %q", got)
	}
	pending(t, lFourth)
	cs[4].do("RPUSH", "k", "x")
	if got := recv(t, lFourth); got != "*2\r\n$1\r\nk\r\n$1\r\nx\r\n" {
		t.Errorf("list waiter after the set was emptied: %q", got)
	}
}

// A push of several elements serves every list waiter in order, skipping the sorted-set waiters
// between them, and stops when the list is empty.
func TestBlockSkipsWhileElementsLast(t *testing.T) {
	e := newTestEngine()
	cs := conns(t, e, 5)
	var chs []<-chan string
	for i, cmd := range []string{"BLPOP", "BZPOPMIN", "BLPOP", "BZPOPMIN", "BLPOP"} {
		chs = append(chs, blockedDo(t, cs[i], cmd, "q", "0"))
	}
	ctl := newTestConn(t, e)
	ctl.do("RPUSH", "q", "1", "2")
	for i, want := range []string{"*2\r\n$1\r\nq\r\n$1\r\n1\r\n", "", "*2\r\n$1\r\nq\r\n$1\r\n2\r\n", "", ""} {
		if want == "" {
			pending(t, chs[i])
		} else if got := recv(t, chs[i]); got != want {
			t.Errorf("waiter %d: %q, want %q", i, got, want)
		}
	}
	if got := ctl.do("EXISTS", "q"); got != ":0\r\n" {
		t.Errorf("the emptied list is deleted: %q", got)
	}
}

// A list waiter that would move to a key on another shard is not woken when its source becomes a
// sorted set: it keeps waiting, and the list that comes later serves it.
func TestBlockCrossShardMoveIgnoresOtherType(t *testing.T) {
	for _, same := range []bool{true, false} {
		t.Run(fmt.Sprint("same shard ", same), func(t *testing.T) {
			e := newTestEngine()
			cs := conns(t, e, 2)
			src, dst := keyPair(e, "xm", same)
			ch := blockedDo(t, cs[0], "BRPOPLPUSH", src, dst, "0")
			if got := cs[1].do("ZADD", src, "1", "m"); got != ":1\r\n" {
				t.Fatalf("ZADD: %q", got)
			}
			pending(t, ch)
			cs[1].do("DEL", src)
			cs[1].do("RPUSH", src, "x")
			if got := recv(t, ch); got != "$1\r\nx\r\n" {
				t.Errorf("BRPOPLPUSH: %q", got)
			}
			if got := cs[1].do("LRANGE", dst, "0", "-1"); got != "*1\r\n$1\r\nx\r\n" {
				t.Errorf("destination: %q", got)
			}
		})
	}
}

// A store that overwrites an existing key leaves the key's waiters blocked (Redis 7.0 signals a
// key only when a command creates it), where one that creates the key, or RENAME and COPY (which
// delete and add), wake them.
func TestBlockStoreOverExistingKeyDoesNotWake(t *testing.T) {
	for _, tt := range []struct {
		waiter []string
		store  []string
		wake   bool
	}{
		{[]string{"BZPOPMIN", "z", "0"}, []string{"ZUNIONSTORE", "z", "1", "y"}, false},
		{[]string{"BZPOPMIN", "z", "0"}, []string{"ZINTERSTORE", "z", "1", "y"}, false},
		{[]string{"BZPOPMIN", "z", "0"}, []string{"ZDIFFSTORE", "z", "1", "y"}, false},
		{[]string{"BZPOPMAX", "z", "0"}, []string{"ZRANGESTORE", "z", "y", "0", "-1"}, false},
		{[]string{"BZPOPMIN", "z", "0"}, []string{"RENAME", "y", "z"}, true},
		{[]string{"BZPOPMIN", "z", "0"}, []string{"COPY", "y", "z", "REPLACE"}, true},
		{[]string{"BLPOP", "z", "0"}, []string{"SORT", "l", "ALPHA", "STORE", "z"}, false},
	} {
		for _, existing := range []bool{true, false} {
			e := newTestEngine()
			cs := conns(t, e, 2)
			ch := blockedDo(t, cs[0], tt.waiter...)
			cs[1].do("ZADD", "y", "1", "m")
			cs[1].do("RPUSH", "l", "m")
			if existing {
				cs[1].do("SET", "z", "x")
			}
			cs[1].do(tt.store...)
			if tt.wake || !existing {
				if got := recv(t, ch); len(got) < 2 || got[:2] != "*2" && got[:2] != "*3" {
					t.Errorf("%q over existing %v: %q", tt.store, existing, got)
				}
				continue
			}
			pending(t, ch)
			cs[1].do("DEL", "z")
			cs[1].do(tt.store...) // creates the key now
			if got := recv(t, ch); len(got) < 2 || got[:2] != "*2" && got[:2] != "*3" {
				t.Errorf("%q creating the key: %q", tt.store, got)
			}
		}
	}
}
