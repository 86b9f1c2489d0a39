package pipeline

import (
	"bytes"
	"fmt"
	"hash/fnv"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/hotkv/hotkv/net/resp"
)

// The tests drive the stages with a toy command set over per-shard maps, no sockets:
//   INCR k        -> integer after increment (single shard)
//   GET k         -> integer value
//   MOVE1 a b     -> moves one unit from a to b atomically (barrier over both shards)
//   SUM k...      -> sum of keys (barrier)
//   PANIC         -> panics on the connection during routing's barrier

type toyShard struct{ m map[string]int }

type toyCmd struct {
	name string
	keys []int
}

func toyEnv(shards int) *Env {
	var g *Group
	shardOf := func(k []byte) int32 {
		h := fnv.New32a()
		h.Write(k)
		return int32(h.Sum32() % uint32(shards))
	}
	exec := func(sh *Shard, s *Slot) {
		m := sh.Data.(*toyShard).m
		k := string(s.Args[1])
		switch string(s.Args[0]) {
		case "INCR":
			m[k]++
			s.Reply = resp.AppendInt(s.Reply, int64(m[k]))
		case "GET":
			s.Reply = resp.AppendInt(s.Reply, int64(m[k]))
		}
	}
	g = NewGroup(shards, func(sh *Shard, w *Work) {
		for _, i := range w.Slots {
			exec(sh, &w.Batch().Slots[i])
		}
	}, func(int) any { return &toyShard{m: map[string]int{}} })
	lockSet := func(s *Slot) []int32 {
		var ids []int32
		seen := map[int32]bool{}
		for _, k := range s.Args[1:] {
			id := shardOf(k)
			if !seen[id] {
				seen[id] = true
				ids = append(ids, id)
			}
		}
		for i := 1; i < len(ids); i++ {
			for j := i; j > 0 && ids[j] < ids[j-1]; j-- {
				ids[j], ids[j-1] = ids[j-1], ids[j]
			}
		}
		return ids
	}
	return &Env{
		Group: g,
		Route: func(client any, s *Slot) {
			switch string(s.Args[0]) {
			case "INCR", "GET":
				s.Target = Target(shardOf(s.Args[1]))
			case "PING":
				s.Target = TargetNone
				s.Reply = append(s.Reply, "+PONG\r\n"...)
			default:
				s.Target = TargetBarrier
			}
		},
		Barrier: func(s *Slot) {
			switch string(s.Args[0]) {
			case "PANIC":
				panic("toy panic")
			case "MOVE1":
				ids := lockSet(s)
				g.Lock(ids)
				a, b := string(s.Args[1]), string(s.Args[2])
				g.Shards[shardOf(s.Args[1])].Data.(*toyShard).m[a]--
				g.Shards[shardOf(s.Args[2])].Data.(*toyShard).m[b]++
				g.Unlock(ids)
				s.Reply = append(s.Reply, "+OK\r\n"...)
			case "SUM":
				ids := lockSet(s)
				g.Lock(ids)
				sum := 0
				for _, k := range s.Args[1:] {
					sum += g.Shards[shardOf(k)].Data.(*toyShard).m[string(k)]
				}
				g.Unlock(ids)
				s.Reply = resp.AppendInt(s.Reply, int64(sum))
			}
		},
		Limits:           func(any) *resp.Limits { l := resp.DefaultLimits(); return &l },
		QueryBufferLimit: func() int { return 1 << 30 },
		Closing:          func(any) bool { return false },
	}
}

// chanStream is an in-memory Stream.
type chanStream struct {
	in      []byte
	off     int
	out     bytes.Buffer
	writes  int
	pending []byte // what Fill adds: bytes "already in the socket"
	chunk   int    // bytes one Fill adds at most (0: all pending)
	fills   int
}

func (m *chanStream) Len() int { return len(m.in) - m.off }
func (m *chanStream) Peek(n int) ([]byte, error) {
	if n > m.Len() {
		return nil, fmt.Errorf("peek %d beyond %d buffered", n, m.Len())
	}
	return m.in[m.off : m.off+n], nil
}
func (m *chanStream) Skip(n int) error     { m.off += n; return nil }
func (m *chanStream) Release() error       { m.in, m.off = m.in[m.off:], 0; return nil }
func (*chanStream) Inline() bool           { return false }
func (m *chanStream) Write(p []byte) error { m.out.Write(p); m.writes++; return nil }
func (m *chanStream) Fill() bool {
	if len(m.pending) == 0 {
		return false
	}
	n := len(m.pending)
	if m.chunk > 0 {
		n = min(n, m.chunk)
	}
	m.in, m.pending = append(m.in, m.pending[:n]...), m.pending[n:]
	m.fills++
	return true
}

func cmd(args ...string) []byte {
	b := resp.AppendArrayLen(nil, len(args))
	for _, a := range args {
		b = resp.AppendBulkString(b, a)
	}
	return b
}

// Invariant 1: replies leave in request order, for a deep pipeline spanning every shard with
// barriers in the middle, while other connections hammer the same shards.
func TestReplyOrderDeepPipeline(t *testing.T) { runDeepPipeline(t, toyEnv(8)) }

// With a Warm hook, flush runs the work of every shard whose token is free itself: order and
// results stay the same, and Warm sees only shards whose tokens are held.
func TestWarmRunsHeldShards(t *testing.T) {
	env := toyEnv(8)
	var calls, slots atomic.Int64
	env.Group.Warm = func(b *Batch, held []int32) {
		calls.Add(1)
		for _, id := range held {
			if !env.Group.Shards[id].token.Load() {
				t.Errorf("Warm called for shard %d without its token", id)
			}
			slots.Add(int64(len(b.Work(id).Slots)))
		}
	}
	runDeepPipeline(t, env)
	if calls.Load() == 0 || slots.Load() == 0 {
		t.Fatalf("Warm never ran (calls %d, slots %d)", calls.Load(), slots.Load())
	}
	for i, sh := range env.Group.Shards {
		if sh.token.Load() || !sh.mailbox.Empty() {
			t.Errorf("shard %d left locked or with queued work", i)
		}
	}
}

func runDeepPipeline(t *testing.T, env *Env) {
	const depth = 3000
	serveConns(t, env, 4, func(c int) (req []byte) {
		for i := range depth {
			key := fmt.Sprintf("c%d:k%d", c, i%50)
			switch i % 7 {
			case 3:
				req = append(req, cmd("PING")...)
			case 5:
				req = append(req, cmd("SUM", key)...)
			default:
				req = append(req, cmd("INCR", key)...)
			}
		}
		return req
	}, func(c int, out []byte) { checkOrder(t, out, c, depth) })
}

// serveConns serves request(c) as one read on each of conns connections at once and passes
// each connection's replies to check.
func serveConns(t *testing.T, env *Env, conns int, request func(c int) []byte, check func(c int, out []byte)) {
	var wg sync.WaitGroup
	for c := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			st := &chanStream{in: request(c)}
			if err := NewConn(env, st, nil).Serve(); err != nil {
				t.Error(err)
				return
			}
			check(c, st.out.Bytes())
		}()
	}
	wg.Wait()
}

// checkOrder replays the request sequence against a model and compares reply by reply.
func checkOrder(t *testing.T, out []byte, c, depth int) {
	model := map[string]int{}
	var want bytes.Buffer
	for i := range depth {
		key := fmt.Sprintf("c%d:k%d", c, i%50)
		switch i % 7 {
		case 3:
			want.WriteString("+PONG\r\n")
		case 5:
			want.WriteString(":" + strconv.Itoa(model[key]) + "\r\n")
		default:
			model[key]++
			want.WriteString(":" + strconv.Itoa(model[key]) + "\r\n")
		}
	}
	if !bytes.Equal(out, want.Bytes()) {
		t.Errorf("conn %d: replies out of order or wrong (got %d bytes, want %d)", c, len(out), want.Len())
	}
}

// Invariant 2: a barrier that spans shards is atomic against concurrent readers and writers.
func TestBarrierAtomic(t *testing.T) {
	env := toyEnv(8)
	keys := []string{"a", "b", "c", "d", "e", "f"}
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			st := &chanStream{}
			conn := NewConn(env, st, nil)
			for i := range 2000 {
				st.in = append(st.in, cmd("MOVE1", keys[(w+i)%6], keys[(w+i+1)%6])...)
				if i%64 == 63 {
					if err := conn.Serve(); err != nil {
						t.Error(err)
						return
					}
				}
			}
			conn.Serve()
		}()
	}
	for r := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			st := &chanStream{}
			conn := NewConn(env, st, nil)
			for range 2000 {
				st.in = append(st.in, cmd(append([]string{"SUM"}, keys...)...)...)
				conn.Serve()
				if got := st.out.String(); got != ":0\r\n" {
					t.Errorf("reader %d saw a partial move: %q", r, got)
					return
				}
				st.out.Reset()
			}
		}()
	}
	wg.Wait()
}

// Invariant 8: a panic while running a command ends only that connection's Serve with an error;
// other connections keep being served and every token was released.
func TestPanicClosesOnlyItsClient(t *testing.T) {
	env := toyEnv(4)
	bad := NewConn(env, &chanStream{in: append(cmd("INCR", "x"), cmd("PANIC")...)}, nil)
	if err := bad.Serve(); err == nil {
		t.Fatal("panicking command did not fail its connection")
	}
	st := &chanStream{in: append(cmd("INCR", "x"), cmd("SUM", "x", "y", "z")...)}
	good := NewConn(env, st, nil)
	if err := good.Serve(); err != nil {
		t.Fatal(err)
	}
	if got := st.out.String(); got != ":2\r\n:2\r\n" {
		t.Fatalf("after a panic elsewhere got %q", got)
	}
}

// A partial command stays buffered until the rest arrives, and commands before it are answered.
func TestPartialCommand(t *testing.T) {
	env := toyEnv(2)
	full := append(cmd("INCR", "k"), cmd("INCR", "k")...)
	st := &chanStream{in: full[:len(full)-3]}
	conn := NewConn(env, st, nil)
	if err := conn.Serve(); err != nil {
		t.Fatal(err)
	}
	if st.out.String() != ":1\r\n" || st.Len() == 0 {
		t.Fatalf("first part: out %q, buffered %d", st.out.String(), st.Len())
	}
	st.in = append(st.in, full[len(full)-3:]...)
	if err := conn.Serve(); err != nil {
		t.Fatal(err)
	}
	if st.out.String() != ":1\r\n:2\r\n" {
		t.Fatalf("after the rest: %q", st.out.String())
	}
}

// A protocol error answers the commands before it, then Redis's error, and fails the connection.
func TestProtocolErrorAfterCommands(t *testing.T) {
	env := toyEnv(2)
	st := &chanStream{in: append(cmd("INCR", "k"), "*abc\r\n"...)}
	err := NewConn(env, st, nil).Serve()
	if err == nil {
		t.Fatal("protocol error did not fail the connection")
	}
	if got := st.out.String(); got != ":1\r\n-ERR Protocol error: invalid multibulk length\r\n" {
		t.Fatalf("got %q", got)
	}
}

// A batch cut in two by the transport's read runs whole when Fill finds the rest: one write.
func TestFillRunsBatchWhole(t *testing.T) {
	env := toyEnv(2)
	full := append(append(cmd("INCR", "f"), cmd("INCR", "f")...), cmd("INCR", "f")...)
	cut := len(cmd("INCR", "f")) + 5
	st := &chanStream{in: full[:cut], pending: full[cut:]}
	conn := NewConn(env, st, nil)
	if err := conn.Serve(); err != nil {
		t.Fatal(err)
	}
	if st.out.String() != ":1\r\n:2\r\n:3\r\n" || st.writes != 1 || st.Len() != 0 {
		t.Fatalf("out %q in %d writes, %d bytes left", st.out.String(), st.writes, st.Len())
	}
}

// Serve fills at most once per call, however much the peer keeps sending: the rest waits for the
// next call, as it would for the transport's next read.
func TestFillOncePerServe(t *testing.T) {
	env := toyEnv(2)
	var full []byte
	for range 100 {
		full = append(full, cmd("INCR", "g")...)
	}
	step := len(cmd("INCR", "g"))
	// Each fill brings more than a batch holds, so a Serve that filled again after running a
	// batch would go on reading for as long as bytes were pending.
	st := &chanStream{in: full[:7*step+3], pending: full[7*step+3:], chunk: 10*step + 5}
	conn := NewConn(env, st, nil)
	for calls := 1; st.Len() > 0 || len(st.pending) > 0; calls++ {
		fills := st.fills
		if err := conn.Serve(); err != nil {
			t.Fatal(err)
		}
		if st.fills-fills > 1 {
			t.Fatalf("Serve call %d filled %d times", calls, st.fills-fills)
		}
		if calls > 200 {
			t.Fatal("no progress")
		}
		if len(st.pending) > 0 {
			st.Fill() // the transport's next read
		}
	}
	if got := strings.Count(st.out.String(), ":"); got != 100 {
		t.Fatalf("%d replies: %q", got, st.out.String())
	}
}

// Invariant 8 for panics in a shard's work, not on the connection: whether the batch runs the
// work itself or it is queued and run by the token's holder, or Warm panics, only the panicking
// batch's connection fails, the shards' tokens are released and their other work still runs.
func TestPanicInShardWork(t *testing.T) {
	env := toyEnv(4)
	exec := env.Group.Shards[0].exec
	for _, sh := range env.Group.Shards {
		sh.exec = func(sh *Shard, w *Work) {
			for _, i := range w.Slots {
				if string(w.Batch().Slots[i].Args[1]) == "boom" {
					panic("toy shard panic")
				}
			}
			exec(sh, w)
		}
	}
	route := &Slot{Args: [][]byte{[]byte("GET"), []byte("boom")}}
	env.Route(nil, route)
	boomShard := env.Group.Shards[route.Target]
	serveOK := func(name string) {
		t.Helper()
		serveReq(t, env, append(cmd("INCR", "boom-neighbour"), cmd("SUM", "a", "b", "c", "d", "e")...))
		for i, sh := range env.Group.Shards {
			if sh.token.Load() || !sh.mailbox.Empty() {
				t.Fatalf("%s: shard %d left locked or with queued work", name, i)
			}
		}
	}
	bad := func() *Conn {
		return NewConn(env, &chanStream{in: append(cmd("INCR", "x"), cmd("INCR", "boom")...)}, nil)
	}

	// The batch holds the shard and runs the work itself (with a Warm hook).
	env.Group.Warm = func(*Batch, []int32) {}
	if err := bad().Serve(); err == nil || !strings.Contains(err.Error(), "toy shard panic") {
		t.Fatalf("own work: Serve returned %v", err)
	}
	serveOK("own work")

	// The work is queued because another goroutine holds the token, which runs it on unlock.
	boomShard.token.Store(true)
	errs := make(chan error)
	go func() { errs <- bad().Serve() }()
	for boomShard.mailbox.Empty() {
	}
	boomShard.unlock() // runs the queued work; the panic must not escape here
	if err := <-errs; err == nil || !strings.Contains(err.Error(), "toy shard panic") {
		t.Fatalf("queued work: Serve returned %v", err)
	}
	serveOK("queued work")

	// Warm panics: the work still runs, the connection fails, nothing stays locked.
	env.Group.Warm = func(*Batch, []int32) { panic("toy warm panic") }
	st := &chanStream{in: cmd("INCR", "w")}
	if err := NewConn(env, st, nil).Serve(); err == nil || !strings.Contains(err.Error(), "toy warm panic") {
		t.Fatalf("warm: Serve returned %v", err)
	}
	env.Group.Warm = nil
	if got := serveReq(t, env, cmd("GET", "w")); got != ":1\r\n" {
		t.Fatalf("after the warm panic GET w = %q, want the INCR applied", got)
	}
	serveOK("warm")
}

// serveReq serves req on a new connection, which must not fail, and returns its replies.
func serveReq(t *testing.T, env *Env, req []byte) string {
	t.Helper()
	st := &chanStream{in: req}
	if err := NewConn(env, st, nil).Serve(); err != nil {
		t.Fatal(err)
	}
	return st.out.String()
}
