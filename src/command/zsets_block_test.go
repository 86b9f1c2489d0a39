package command

import (
	"strconv"
	"testing"
	"time"
)

// Blocking sorted set pops with real waits: each blocked client is a test connection whose
// command runs in its own goroutine while other connections change the keys.

// zKeysOnShards returns two keys on different shards.
func zKeysOnShards(e *Engine) (string, string) {
	a := "zk-a"
	for i := 0; ; i++ {
		b := "zk-" + strconv.Itoa(i)
		if e.shardOf([]byte(a)) != e.shardOf([]byte(b)) {
			return a, b
		}
	}
}

func zConns(t *testing.T, e *Engine, n int) []*testConn {
	out := make([]*testConn, n)
	for i := range out {
		out[i] = newTestConn(t, e)
	}
	return out
}

// Clients blocked on one key are served in the order they blocked, one member each.
func TestZBlockFIFO(t *testing.T) {
	e := newTestEngine()
	cs := zConns(t, e, 4)
	var chs []<-chan string
	for i, tc := range cs[:3] {
		cmd := "BZPOPMIN"
		if i == 1 {
			cmd = "BZPOPMAX"
		}
		chs = append(chs, blockedDo(t, tc, cmd, "z", "0"))
	}
	if got := cs[3].do("ZADD", "z", "1", "a", "2", "b", "3", "c"); got != ":3\r\n" {
		t.Fatalf("ZADD: %q", got)
	}
	if got := recv(t, chs[0]); got != "*3\r\n$1\r\nz\r\n$1\r\na\r\n$1\r\n1\r\n" {
		t.Errorf("first waiter: %q", got)
	}
	if got := recv(t, chs[1]); got != "*3\r\n$1\r\nz\r\n$1\r\nc\r\n$1\r\n3\r\n" {
		t.Errorf("second waiter (BZPOPMAX): %q", got)
	}
	if got := recv(t, chs[2]); got != "*3\r\n$1\r\nz\r\n$1\r\nb\r\n$1\r\n2\r\n" {
		t.Errorf("third waiter: %q", got)
	}
	if got := cs[3].do("EXISTS", "z"); got != ":0\r\n" {
		t.Errorf("the emptied set is deleted: %q", got)
	}
}

func TestZBlockTimeout(t *testing.T) {
	for _, proto := range []int{2, 3} {
		tc := newTestConn(t, newTestEngine())
		if proto == 3 {
			tc.do("HELLO", "3")
		}
		want := map[int]string{2: "*-1\r\n", 3: "_\r\n"}[proto]
		for _, cmd := range [][]string{{"BZPOPMIN", "a", "b", "0.1"}, {"BZMPOP", "0.1", "2", "a", "b", "MAX", "COUNT", "3"}} {
			start := time.Now()
			if got := tc.do(cmd...); got != want {
				t.Errorf("RESP%d %q: %q, want %q", proto, cmd, got, want)
			}
			if d := time.Since(start); d < 90*time.Millisecond || d > 2*time.Second { // deadlines are wall-clock
				t.Errorf("%q waited %v", cmd, d)
			}
		}
	}
}

// A client blocked on keys on several shards is served from the key that became ready.
func TestZBlockServedFromReadyKey(t *testing.T) {
	e := newTestEngine()
	cs := zConns(t, e, 3)
	k1, k2 := zKeysOnShards(e)
	ch := blockedDo(t, cs[0], "BZPOPMAX", k1, k2, "0")
	cs[2].do("ZADD", k2, "1", "x", "2", "y")
	if got, want := recv(t, ch), "*3\r\n$"+strconv.Itoa(len(k2))+"\r\n"+k2+"\r\n$1\r\ny\r\n$1\r\n2\r\n"; got != want {
		t.Errorf("served %q, want %q", got, want)
	}
	ch = blockedDo(t, cs[1], "BZMPOP", "0", "2", k1, "nosuch", "MIN", "COUNT", "5")
	cs[2].do("ZADD", k1, "5", "p", "6", "q")
	want := "*2\r\n$" + strconv.Itoa(len(k1)) + "\r\n" + k1 + "\r\n*2\r\n*2\r\n$1\r\np\r\n$1\r\n5\r\n*2\r\n$1\r\nq\r\n$1\r\n6\r\n"
	if got := recv(t, ch); got != want {
		t.Errorf("BZMPOP served %q, want %q", got, want)
	}
	if got := cs[2].do("ZCARD", k2); got != ":1\r\n" {
		t.Errorf("k2 left with %q", got)
	}
}

// Stores that create a set wake its waiters; a key that becomes ready holding another type
// leaves them blocked, without a WRONGTYPE reply.
func TestZBlockWokenByStoresNotByOtherTypes(t *testing.T) {
	e := newTestEngine()
	cs := zConns(t, e, 3)
	tc := cs[2]
	tc.do("ZADD", "src", "1", "a", "2", "b")
	ch := blockedDo(t, cs[0], "BZPOPMIN", "dst", "0")
	tc.do("LPUSH", "dst", "x") // a list: BLPOP's kind of ready, not ours
	pending(t, ch)
	tc.do("DEL", "dst")
	tc.do("ZUNIONSTORE", "dst", "1", "src")
	if got := recv(t, ch); got != "*3\r\n$3\r\ndst\r\n$1\r\na\r\n$1\r\n1\r\n" {
		t.Errorf("ZUNIONSTORE waiter: %q", got)
	}
	ch = blockedDo(t, cs[1], "BZPOPMAX", "r", "0")
	tc.do("ZRANGESTORE", "r", "src", "0", "-1")
	if got := recv(t, ch); got != "*3\r\n$1\r\nr\r\n$1\r\nb\r\n$1\r\n2\r\n" {
		t.Errorf("ZRANGESTORE waiter: %q", got)
	}
	cs[0].do("HELLO", "3")
	ch = blockedDo(t, cs[0], "BZPOPMIN", "i", "0")
	tc.do("ZINCRBY", "i", "2.5", "m")
	if got := recv(t, ch); got != "*3\r\n$1\r\ni\r\n$1\r\nm\r\n,2.5\r\n" {
		t.Errorf("RESP3 ZINCRBY waiter: %q", got)
	}
}

// CLIENT UNBLOCK ends a blocked pop with its timeout reply.
func TestZBlockUnblock(t *testing.T) {
	e := newTestEngine()
	cs := zConns(t, e, 2)
	ch := blockedDo(t, cs[0], "BZMPOP", "0", "1", "z", "MIN")
	id := cs[0].client.ID
	if got := cs[1].do("CLIENT", "UNBLOCK", strconv.FormatUint(id, 10)); got != ":1\r\n" {
		t.Fatalf("CLIENT UNBLOCK: %q", got)
	}
	if got := recv(t, ch); got != "*-1\r\n" {
		t.Errorf("unblocked reply %q", got)
	}
}
