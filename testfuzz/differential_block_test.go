package testfuzz

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hotkv/hotkv/net/resp/resptest"
)

var diffBlockSteps = flag.Int("diff.blocksteps", 400, "blocking differential test: steps per protocol run")

// blockClients is how many clients take turns blocking and writing.
const blockClients = 6

// TestDifferentialBlocking compares blocking commands served across connections: clients block
// in BLPOP, BRPOP, BLMOVE, BRPOPLPUSH, BLMPOP, BZPOPMIN, BZPOPMAX and BZMPOP on shared keys (some
// with timeouts that expire), other clients push, add, move, rename and change types, and a
// control connection unblocks with CLIENT UNBLOCK. Each client's ordered replies must be the
// same on both servers: FIFO among waiters, which key serves a client waiting on several, what
// a push of several elements hands to each waiter.
//
// The schedule is deterministic. redis-server runs first and drives it: after sending a blocking
// command the test waits until the client is either answered or shown blocked (CLIENT LIST flag
// b) before the next step, and after every write it reads the replies of exactly the clients
// CLIENT LIST no longer shows blocked. The recorded sequence of sends and reads is then replayed
// on HotKV, which must answer the same clients at the same points. Timeouts are never raced
// against writes: every pending timeout is awaited before the next command that may serve.
//
// The schedule leaves out one shape where HotKV answers differently by a documented decision: a
// waiter queued behind a cross-key BLMOVE (see blockCmd.crossMove).
func TestDifferentialBlocking(t *testing.T) {
	forEachDiffServers(t, func(t *testing.T, seed uint64, proto int, redis, hotkv string) {
		rec := newBlockSession(t, redis, proto)
		rec.record(seed, *diffBlockSteps)
		if t.Failed() {
			return
		}
		rep := newBlockSession(t, hotkv, proto)
		rep.ref = rec
		rep.replay(rec.events)
		compareBlockSessions(t, seed, rec, rep)
	})
}

type eventKind uint8

const (
	evSend    eventKind = iota // a client sends a command
	evRecv                     // a client reads one reply
	evControl                  // the control connection runs a command and reads its reply
)

// blockEvent is one step of the recorded schedule.
type blockEvent struct {
	kind   eventKind
	client int
	args   []string // evSend, evControl; in evControl "$id<n>" stands for client n's ID
	blocks bool     // evSend: redis-server blocked the client (its reply comes later)
	timed  bool     // evSend: a blocking command whose timeout may expire
}

// blockSession is one server's run of the schedule.
type blockSession struct {
	t       *testing.T
	ctl     *rawConn
	clients []*blockClient
	events  []blockEvent
	replies map[int]string // event index -> the reply it read
	seqs    [][]int        // per client (the last is the control connection): event indexes of its replies
	ref     *blockSession  // replay: the recording, to show its schedule in failures
	failed  bool
}

type blockClient struct {
	conn    *rawConn
	id      string
	replies chan []byte
	stash   [][]byte  // replies that arrived while the test waited for the client to block
	waiting *blockCmd // recording: the blocking command the client waits in
}

func newBlockSession(t *testing.T, addr string, proto int) *blockSession {
	s := &blockSession{t: t, ctl: dial(t, addr), replies: map[int]string{},
		seqs: make([][]int, blockClients+1)}
	for range blockClients {
		c := &blockClient{conn: dial(t, addr), replies: make(chan []byte, 64)}
		if proto == 3 {
			if r := c.conn.do("HELLO", "3"); !strings.HasPrefix(r, "%") {
				t.Fatalf("HELLO 3 to %s: %s", addr, quote(r))
			}
		}
		id, err := replyInt(c.conn.do("CLIENT", "ID"))
		if err != nil {
			t.Fatalf("CLIENT ID to %s: %v", addr, err)
		}
		c.id = strconv.FormatInt(id, 10)
		go c.read()
		s.clients = append(s.clients, c)
	}
	return s
}

// read delivers the client's replies until its connection closes. Blocked clients wait as long
// as the schedule needs, so there is no read deadline; the test's cleanup closes the socket.
func (c *blockClient) read() {
	defer close(c.replies)
	c.conn.c.SetReadDeadline(time.Time{})
	for {
		r, err := resptest.ReadRaw(c.conn.r)
		if err != nil {
			return
		}
		c.replies <- r
	}
}

func (s *blockSession) log(e blockEvent) int {
	s.events = append(s.events, e)
	return len(s.events) - 1
}

func (s *blockSession) send(i int, args []string) {
	if err := s.clients[i].conn.tryWrite(appendCommand(nil, args...)); err != nil {
		s.fatalf("client %d: write %s: %v", i, quoteArgs(args), err)
	}
}

// recv reads client i's next reply for event ev.
func (s *blockSession) recv(i, ev int) {
	c := s.clients[i]
	var r []byte
	if len(c.stash) > 0 {
		r, c.stash = c.stash[0], c.stash[1:]
	} else {
		select {
		case got, ok := <-c.replies:
			if !ok {
				s.fatalf("client %d: connection closed before event %d", i, ev)
				return
			}
			r = got
		case <-time.After(10 * time.Second):
			s.fatalf("client %d: no reply within 10s at event %d, where redis-server answered", i, ev)
			return
		}
	}
	s.replies[ev] = string(r)
	s.seqs[i] = append(s.seqs[i], ev)
}

// control runs a command on the control connection, with "$id<n>" replaced by client n's ID.
func (s *blockSession) control(ev int, args []string) string {
	sent := make([]string, len(args))
	for j, a := range args {
		sent[j] = a
		if n, ok := strings.CutPrefix(a, "$id"); ok {
			i, _ := strconv.Atoi(n)
			sent[j] = s.clients[i].id
		}
	}
	r, err := s.ctl.doErr(sent...)
	if err != nil {
		s.fatalf("control %s: %v", quoteArgs(sent), err)
	}
	s.replies[ev] = r
	s.seqs[blockClients] = append(s.seqs[blockClients], ev)
	return r
}

// fatalf reports a failure of the run at its latest event, ending the run.
func (s *blockSession) fatalf(format string, args ...any) {
	if s.failed {
		return
	}
	s.failed = true
	msg := fmt.Sprintf(format, args...)
	if ev := len(s.events) - 1; s.ref != nil && ev >= 0 {
		msg += fmt.Sprintf("\n  schedule up to there (Redis's replies; the last 30 events, before them only client %d's):\n%s",
			s.events[ev].client, s.ref.describe(ev, s.events[ev].client))
	}
	s.t.Errorf("%s: %s", s.ctl.addr, msg)
}

// executed waits until client i's command has run: it replied (the reply is stashed for the next
// read), or the server shows it blocked. It reports whether the client replied.
func (s *blockSession) executed(i int, cmdName string) bool {
	c := s.clients[i]
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case r, ok := <-c.replies:
			if ok {
				c.stash = append(c.stash, r)
			}
			return true
		default:
		}
		if s.flaggedBlocked(i) {
			return false
		}
		time.Sleep(time.Millisecond)
	}
	s.fatalf("client %d: %s neither replied nor blocked within 10s", i, cmdName)
	return true
}

// flaggedBlocked reports whether CLIENT LIST shows client i blocked (flag b).
func (s *blockSession) flaggedBlocked(i int) bool {
	line, err := s.ctl.doErr("CLIENT", "LIST", "ID", s.clients[i].id)
	if err == nil {
		line, err = replyText(line)
	}
	if err != nil {
		s.fatalf("CLIENT LIST: %v", err)
		return false
	}
	_, rest, _ := strings.Cut(line, " flags=")
	flags, _, _ := strings.Cut(rest, " ")
	return strings.Contains(flags, "b")
}

// replay runs the schedule recorded on redis-server against this session's server.
func (s *blockSession) replay(events []blockEvent) {
	waiting := make([]bool, blockClients) // blocked at this point of redis-server's run
	timed := make([]bool, blockClients)   // ... in a command whose timeout may expire
	for _, e := range events {
		ev := s.log(e)
		switch e.kind {
		case evSend:
			s.checkEarly(ev, waiting, timed)
			waiting[e.client], timed[e.client] = e.blocks, e.timed
			s.send(e.client, e.args)
			// A timed command may well time out while the test looks; only an untimed one
			// answering at once is a difference (its reply is compared later all the same).
			if e.blocks && s.executed(e.client, e.args[0]) && !e.timed {
				s.fatalf("event %d: %s answered at once on client %d; redis-server blocked it",
					ev, quoteArgs(e.args), e.client)
			}
		case evRecv:
			waiting[e.client] = false
			s.recv(e.client, ev)
		case evControl:
			s.control(ev, e.args)
		}
		if s.failed {
			return
		}
	}
}

// checkEarly fails the run when a client that redis-server still kept blocked before event ev
// has a reply. It sees the replies that arrived by then; the final comparison catches the rest.
// A timed waiter's timeout may expire sooner here than it did in redis-server's run (the replay
// is slower on a loaded machine), so its null reply is no difference; any other early reply is.
func (s *blockSession) checkEarly(ev int, waiting, timed []bool) {
	for i, c := range s.clients {
		if !waiting[i] || len(c.stash) > 0 {
			continue
		}
		select {
		case r, ok := <-c.replies:
			if ok {
				c.stash = append(c.stash, r)
				if timed[i] && isNullReply(r) {
					continue
				}
				s.fatalf("before event %d client %d was answered %s; redis-server still kept it blocked",
					ev, i, quote(r))
			}
		default:
		}
	}
}

// isNullReply reports whether r is a timed-out blocking command's reply: RESP3's null, or
// RESP2's null array or null bulk string.
func isNullReply(r []byte) bool {
	switch string(r) {
	case "_\r\n", "*-1\r\n", "$-1\r\n":
		return true
	}
	return false
}

// compareBlockSessions compares each client's replies, in order, between the two runs.
func compareBlockSessions(t *testing.T, seed uint64, rec, rep *blockSession) {
	for i := range rec.seqs {
		who := "client " + strconv.Itoa(i)
		if i == blockClients {
			who = "control connection"
		}
		for j, ev := range rec.seqs[i] {
			var got string
			if j < len(rep.seqs[i]) {
				got = rep.replies[rep.seqs[i][j]]
			}
			if j >= len(rep.seqs[i]) && rep.failed {
				return // the run stopped early and said why
			}
			if want := rec.replies[ev]; j >= len(rep.seqs[i]) || got != want {
				t.Errorf("blocking differential mismatch (rerun with -diff.seed=%d), %s reply %d at event %d:\n"+
					"    HotKV:   %s\n    Redis:   %s\n  schedule up to there (Redis's replies; the last 30 events, before them only this client's):\n%s",
					seed, who, j, ev, quote(got), quote(want), rec.describe(ev, i))
				return
			}
		}
	}
}

// describe lists the events up to ev with redis-server's replies: the last 30 of all clients and,
// before those, the earlier ones of client (or of the control connection).
func (s *blockSession) describe(ev, client int) string {
	var b strings.Builder
	for i := 0; i <= ev && i < len(s.events); i++ {
		e := s.events[i]
		mine := (e.kind == evControl) == (client == blockClients) && (e.kind == evControl || e.client == client)
		if i < ev-30 && !mine {
			continue
		}
		switch e.kind {
		case evSend:
			note := ""
			if e.blocks {
				note = " (blocks)"
			}
			fmt.Fprintf(&b, "    #%d c%d > %s%s\n", i, e.client, quoteArgs(e.args), note)
		case evRecv:
			fmt.Fprintf(&b, "    #%d c%d < %s\n", i, e.client, quote(s.replies[i]))
		case evControl:
			fmt.Fprintf(&b, "    #%d ctl > %s < %s\n", i, quoteArgs(e.args), quote(s.replies[i]))
		}
	}
	return b.String()
}

// record runs steps random steps against redis-server, logging the schedule for replay.
func (s *blockSession) record(seed uint64, steps int) {
	g := &blockGen{r: rand.New(rand.NewPCG(seed, 0xb10c))}
	for range steps {
		switch n := g.r.IntN(20); {
		case n < 9:
			s.recBlock(g)
		case n < 19:
			s.recWrite(g)
		default:
			s.recUnblock(g)
		}
		if s.failed {
			return
		}
	}
	s.recFinish()
}
