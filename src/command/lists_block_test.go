package command

import (
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Blocking list commands with real waits: each blocked client is a test connection whose
// command runs in its own goroutine, while other connections act on the keys.

// goDo sends a command from a goroutine (tc.do may only fail the test from the test's own
// goroutine); the raw reply arrives on the channel.
func goDo(tc *testConn, args ...string) <-chan string {
	ch := make(chan string, 1)
	go func() {
		out, _ := tc.send(encodeCommand(args))
		ch <- string(out)
	}()
	return ch
}

// blockedDo sends a command that must block and returns once its client is waiting.
func blockedDo(t *testing.T, tc *testConn, args ...string) <-chan string {
	t.Helper()
	ch := goDo(tc, args...)
	deadline := time.Now().Add(5 * time.Second)
	for tc.client.blockedOn.Load() == nil {
		select {
		case r := <-ch:
			t.Fatalf("%q did not block: %q", args, r)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("%q never blocked", args)
		}
		time.Sleep(time.Millisecond)
	}
	return ch
}

// recv waits for a blocked command's reply.
func recv(t *testing.T, ch <-chan string) string {
	t.Helper()
	select {
	case r := <-ch:
		return r
	case <-time.After(5 * time.Second):
		t.Fatal("no reply from the blocked client")
		return ""
	}
}

// pending fails the test if the blocked command has replied.
func pending(t *testing.T, ch <-chan string) {
	t.Helper()
	select {
	case r := <-ch:
		t.Fatalf("blocked client replied %q", r)
	case <-time.After(20 * time.Millisecond):
	}
}

// keyPair returns two keys on the same shard (same) or on different shards.
func keyPair(e *Engine, prefix string, same bool) (string, string) {
	a := prefix + "a"
	for i := 0; ; i++ {
		b := prefix + strconv.Itoa(i)
		if (e.shardOf([]byte(a)) == e.shardOf([]byte(b))) == same {
			return a, b
		}
	}
}

func conns(t *testing.T, e *Engine, n int) []*testConn {
	out := make([]*testConn, n)
	for i := range out {
		out[i] = newTestConn(t, e)
	}
	return out
}

// Clients blocked on one key are served in the order they blocked, one element each.
func TestBlockFIFO(t *testing.T) {
	e := newTestEngine()
	cs := conns(t, e, 4)
	var chs []<-chan string
	for i, tc := range cs[:3] {
		cmd := "BLPOP"
		if i == 1 {
			cmd = "BRPOP"
		}
		chs = append(chs, blockedDo(t, tc, cmd, "q", "0"))
	}
	if got := cs[3].do("RPUSH", "q", "1", "2"); got != ":2\r\n" {
		t.Fatalf("RPUSH: %q", got)
	}
	if got := recv(t, chs[0]); got != "*2\r\n$1\r\nq\r\n$1\r\n1\r\n" {
		t.Errorf("first waiter: %q", got)
	}
	if got := recv(t, chs[1]); got != "*2\r\n$1\r\nq\r\n$1\r\n2\r\n" {
		t.Errorf("second waiter (BRPOP): %q", got)
	}
	pending(t, chs[2])
	if got := cs[3].do("EXISTS", "q"); got != ":0\r\n" {
		t.Errorf("the served list is deleted: %q", got)
	}
	cs[3].do("LPUSH", "q", "3")
	if got := recv(t, chs[2]); got != "*2\r\n$1\r\nq\r\n$1\r\n3\r\n" {
		t.Errorf("third waiter: %q", got)
	}
}

// A client blocked on several keys, on several shards, is served by the first key that becomes
// ready and pops from that key, even when an earlier key in its list also holds elements by
// then.
func TestBlockServedFromReadyKey(t *testing.T) {
	e := newTestEngine()
	cs := conns(t, e, 2)
	k1, k2 := keyPair(e, "multi", false)
	ch := blockedDo(t, cs[0], "BLPOP", k1, k2, "0")
	cs[1].send([]byte(fmt.Sprintf("*3\r\n$5\r\nRPUSH\r\n$%d\r\n%s\r\n$1\r\nx\r\n*3\r\n$5\r\nRPUSH\r\n$%d\r\n%s\r\n$1\r\ny\r\n",
		len(k2), k2, len(k1), k1)))
	want := fmt.Sprintf("*2\r\n$%d\r\n%s\r\n$1\r\nx\r\n", len(k2), k2)
	if got := recv(t, ch); got != want {
		t.Errorf("served %q, want %q", got, want)
	}
	if got := cs[1].do("LRANGE", k1, "0", "-1"); got != "*1\r\n$1\r\ny\r\n" {
		t.Errorf("the other key was left alone: %q", got)
	}
	if got := cs[1].do("EXISTS", k2); got != ":0\r\n" {
		t.Errorf("the emptied key is deleted: %q", got)
	}
}

// A waiter served by a push that creates the key gets the element before any later command: an
// LPOP pipelined right after the LPUSH, or sent by another client once the LPUSH is answered,
// finds the list already empty.
func TestBlockWaiterBeatsLaterPop(t *testing.T) {
	e := newTestEngine()
	cs := conns(t, e, 3)
	ch := blockedDo(t, cs[0], "BRPOP", "job", "0")
	out, _ := cs[1].send(append(encodeCommand([]string{"LPUSH", "job", "j1"}),
		encodeCommand([]string{"LPOP", "job"})...))
	if got := splitReplies(t, out); len(got) != 2 || got[0] != ":1\r\n" || got[1] != "$-1\r\n" {
		t.Errorf("LPUSH then LPOP: %q", got)
	}
	if got := recv(t, ch); got != "*2\r\n$3\r\njob\r\n$2\r\nj1\r\n" {
		t.Errorf("waiter: %q", got)
	}
	ch = blockedDo(t, cs[0], "BLPOP", "job", "0")
	if got := cs[1].do("LPUSH", "job", "j2"); got != ":1\r\n" {
		t.Errorf("LPUSH: %q", got)
	}
	if got := cs[2].do("LPOP", "job"); got != "$-1\r\n" {
		t.Errorf("LPOP from another client after the LPUSH: %q", got)
	}
	if got := recv(t, ch); got != "*2\r\n$3\r\njob\r\n$2\r\nj2\r\n" {
		t.Errorf("waiter: %q", got)
	}
}

// Timeouts have sub-second resolution and reply the null of the connection's protocol: a null
// array for every blocking list command.
func TestBlockTimeout(t *testing.T) {
	e := newTestEngine()
	tc := newTestConn(t, e)
	for _, tt := range []struct {
		proto string
		cmd   []string
		want  string
	}{
		{"2", []string{"BLPOP", "none", "0.1"}, "*-1\r\n"},
		{"2", []string{"BRPOPLPUSH", "none", "dst", "0.1"}, "*-1\r\n"},
		{"2", []string{"BLMOVE", "none", "dst", "LEFT", "RIGHT", "0.1"}, "*-1\r\n"},
		{"2", []string{"BLMPOP", "0.1", "2", "none", "none2", "LEFT"}, "*-1\r\n"},
		{"3", []string{"BRPOP", "none", "0.1"}, "_\r\n"},
		{"3", []string{"BLMOVE", "none", "dst", "LEFT", "RIGHT", "0.1"}, "_\r\n"},
	} {
		tc.do("HELLO", tt.proto)
		start := time.Now()
		got := tc.do(tt.cmd...)
		took := time.Since(start)
		if got != tt.want || took < 90*time.Millisecond || took > 900*time.Millisecond {
			t.Errorf("%q (RESP%s): %q after %v, want %q after 0.1s", tt.cmd, tt.proto, got, took, tt.want)
		}
	}
	if got := tc.do("EXISTS", "dst"); got != ":0\r\n" {
		t.Errorf("a timed-out BLMOVE created its destination: %q", got)
	}
}

// BLMOVE served in place (destination on the same shard) and by a rerun (destination on another
// shard) moves the element and signals the destination ready for its own waiters.
func TestBlockMoveAcrossShards(t *testing.T) {
	for _, same := range []bool{true, false} {
		t.Run(fmt.Sprint("same shard ", same), func(t *testing.T) {
			e := newTestEngine()
			cs := conns(t, e, 3)
			src, dst := keyPair(e, "mv", same)
			down := blockedDo(t, cs[1], "BLPOP", dst, "0")
			ch := blockedDo(t, cs[0], "BLMOVE", src, dst, "RIGHT", "LEFT", "0")
			cs[2].do("RPUSH", src, "a", "b")
			if got := recv(t, ch); got != "$1\r\nb\r\n" {
				t.Errorf("BLMOVE: %q", got)
			}
			want := fmt.Sprintf("*2\r\n$%d\r\n%s\r\n$1\r\nb\r\n", len(dst), dst)
			if got := recv(t, down); got != want {
				t.Errorf("waiter on the destination: %q, want %q", got, want)
			}
			if got := cs[2].do("LRANGE", src, "0", "-1"); got != "*1\r\n$1\r\na\r\n" {
				t.Errorf("source: %q", got)
			}
		})
	}
}

// A blocked BLMOVE whose destination became another type is answered WRONGTYPE when the source
// fills, and the element stays, as in Redis.
func TestBlockMoveWrongTypeDestination(t *testing.T) {
	for _, same := range []bool{true, false} {
		e := newTestEngine()
		cs := conns(t, e, 2)
		src, dst := keyPair(e, "wt", same)
		ch := blockedDo(t, cs[0], "BRPOPLPUSH", src, dst, "0")
		cs[1].do("SET", dst, "x")
		cs[1].do("RPUSH", src, "a")
		if got := recv(t, ch); got != "-"+ErrWrongType+"\r\n" {
			t.Errorf("same shard %v: %q", same, got)
		}
		if got := cs[1].do("LLEN", src); got != ":1\r\n" {
			t.Errorf("same shard %v: source keeps its element: %q", same, got)
		}
	}
}

// BLMPOP served by a push pops up to COUNT elements from the key that became ready.
func TestBlockMPopCount(t *testing.T) {
	e := newTestEngine()
	cs := conns(t, e, 2)
	k1, k2 := keyPair(e, "mp", false)
	ch := blockedDo(t, cs[0], "BLMPOP", "0", "2", k1, k2, "RIGHT", "COUNT", "2")
	cs[1].do("RPUSH", k2, "a", "b", "c")
	want := fmt.Sprintf("*2\r\n$%d\r\n%s\r\n*2\r\n$1\r\nc\r\n$1\r\nb\r\n", len(k2), k2)
	if got := recv(t, ch); got != want {
		t.Errorf("BLMPOP: %q, want %q", got, want)
	}
}

// A key that becomes another type, then a list again, serves its waiter only once it is a list.
func TestBlockKeyOfOtherType(t *testing.T) {
	e := newTestEngine()
	cs := conns(t, e, 2)
	ch := blockedDo(t, cs[0], "BLPOP", "k", "0")
	cs[1].do("SET", "k", "v")
	pending(t, ch)
	cs[1].do("DEL", "k")
	cs[1].do("RPUSH", "k", "x")
	if got := recv(t, ch); got != "*2\r\n$1\r\nk\r\n$1\r\nx\r\n" {
		t.Errorf("BLPOP: %q", got)
	}
}

// Where blocking is not allowed (MULTI, scripts), the commands reply at once: a null array, but
// a null bulk for BLMOVE and BRPOPLPUSH, as Redis does; nothing is registered as waiting.
func TestBlockNotAllowed(t *testing.T) {
	e := newTestEngine()
	for _, tt := range []struct {
		proto int
		args  []string
		want  string
	}{
		{2, []string{"BLPOP", "a", "b", "0"}, "*-1\r\n"},
		{2, []string{"BRPOP", "a", "0"}, "*-1\r\n"},
		{2, []string{"BLMPOP", "0", "1", "a", "LEFT"}, "*-1\r\n"},
		{2, []string{"BLMOVE", "a", "b", "LEFT", "LEFT", "0"}, "$-1\r\n"},
		{2, []string{"BRPOPLPUSH", "a", "b", "0"}, "$-1\r\n"},
		{3, []string{"BLPOP", "a", "0"}, "_\r\n"},
		{3, []string{"BLMOVE", "a", "b", "LEFT", "LEFT", "0"}, "_\r\n"},
	} {
		argv := make([][]byte, len(tt.args))
		for i, a := range tt.args {
			argv[i] = []byte(a)
		}
		spec, _ := lookupArgs(argv)
		c := &Ctx{Args: argv, Proto: tt.proto, E: e, Spec: spec, Now: time.Now().UnixNano(), noBlock: true}
		spec.Run(c)
		if string(c.Out) != tt.want || c.blocked != nil {
			t.Errorf("%q: %q (blocked %v), want %q", tt.args, c.Out, c.blocked != nil, tt.want)
		}
	}
	if got := ktCall(e, 0, time.Now().UnixNano(), "LPUSH", "a", "x"); got != ":1\r\n" {
		t.Fatalf("LPUSH: %q", got)
	}
	c := &Ctx{Args: [][]byte{[]byte("BLPOP"), []byte("a"), []byte("0")}, Proto: 2, E: e,
		Spec: table["blpop"], Now: time.Now().UnixNano(), noBlock: true}
	blpop(c)
	if string(c.Out) != "*2\r\n$1\r\na\r\n$1\r\nx\r\n" {
		t.Errorf("BLPOP with an element, blocking not allowed: %q", c.Out)
	}
}

// CLIENT UNBLOCK ends a wait with the timeout reply or the UNBLOCKED error, and answers 0 for a
// client that is not blocked.
func TestClientUnblock(t *testing.T) {
	e := newTestEngine()
	cs := conns(t, e, 2)
	id := strconv.FormatUint(cs[0].client.ID, 10)
	if got := cs[1].do("CLIENT", "UNBLOCK", id); got != ":0\r\n" {
		t.Errorf("not blocked: %q", got)
	}
	for _, tt := range []struct{ args, want string }{
		{"", "*-1\r\n"},
		{"TIMEOUT", "*-1\r\n"},
		{"error", "-UNBLOCKED client unblocked via CLIENT UNBLOCK\r\n"},
	} {
		ch := blockedDo(t, cs[0], "BLMPOP", "0", "1", "k", "LEFT")
		args := []string{"CLIENT", "UNBLOCK", id}
		if tt.args != "" {
			args = append(args, tt.args)
		}
		if got := cs[1].do(args...); got != ":1\r\n" {
			t.Errorf("%q: %q", args, got)
		}
		if got := recv(t, ch); got != tt.want {
			t.Errorf("%q: blocked client got %q, want %q", args, got, tt.want)
		}
		if got := cs[1].do(args...); got != ":0\r\n" {
			t.Errorf("%q again: %q", args, got)
		}
	}
	// The unblocked client is gone from the key's waiters: a push is not swallowed.
	cs[1].do("RPUSH", "k", "x")
	if got := cs[1].do("LLEN", "k"); got != ":1\r\n" {
		t.Errorf("LLEN after unblocks: %q", got)
	}
}

// Producers and blocked consumers on a few keys across shards: every element pushed is popped
// exactly once, and no consumer stays blocked once enough elements were pushed (run with -race).
func TestBlockProducersConsumers(t *testing.T) {
	e := newTestEngine()
	const producers, consumers, perProducer = 4, 6, 150
	keys := []string{"pc:a", "pc:b", "pc:c"}
	total := producers * perProducer
	got := make(chan string, total)
	var wg sync.WaitGroup
	for i := range consumers {
		tc := newTestConn(t, e)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				out, _ := tc.send(encodeCommand([]string{"BRPOP", keys[i%3], keys[(i+1)%3], "0.2"}))
				r := string(out)
				if r == "*-1\r\n" {
					return // nothing left
				}
				got <- r
			}
		}()
	}
	for p := range producers {
		tc := newTestConn(t, e)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range perProducer {
				v := fmt.Sprintf("%d-%d", p, j)
				tc.send(encodeCommand([]string{"LPUSH", keys[j%3], v}))
			}
		}()
	}
	wg.Wait()
	close(got)
	seen := map[string]bool{}
	for r := range got {
		v := replyAny(t, r).([]any)[1].(string)
		if seen[v] {
			t.Fatalf("%q popped twice", v)
		}
		seen[v] = true
	}
	left := 0
	tc := newTestConn(t, e)
	for _, k := range keys {
		n, _ := strconv.Atoi(strings.TrimSpace(tc.do("LLEN", k)[1:]))
		left += n
	}
	if len(seen)+left != total {
		t.Errorf("popped %d and %d left of %d pushed", len(seen), left, total)
	}
}
