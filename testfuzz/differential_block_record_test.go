package testfuzz

import (
	"slices"
	"strconv"
)

// The recording half of TestDifferentialBlocking: it chooses each step against redis-server,
// watching which clients block and which get served, and logs the schedule HotKV replays.

// idle returns the clients not waiting in a blocking command.
func (s *blockSession) idle() []int {
	var out []int
	for i, c := range s.clients {
		if c.waiting == nil {
			out = append(out, i)
		}
	}
	return out
}

// allowedKeys returns the keys a new blocking command (a sorted-set pop when zset, else a list
// pop) may wait on: not the source of a waiting cross-key move (see blockCmd.crossMove).
func (s *blockSession) allowedKeys(zset bool) []string {
	var out []string
	for _, k := range blockKeys {
		taken := false
		for _, c := range s.clients {
			if w := c.waiting; w != nil && slices.Contains(w.keys, k) {
				taken = taken || (w.crossMove() && w.keys[0] == k)
			}
		}
		if !taken {
			out = append(out, k)
		}
	}
	return out
}

// recBlock has an idle client send a blocking command and waits until it blocks or replies.
func (s *blockSession) recBlock(g *blockGen) {
	idle := s.idle()
	if len(idle) == 0 {
		s.recUnblock(g)
		return
	}
	i := idle[g.r.IntN(len(idle))]
	b, ok := g.blocking(s.allowedKeys)
	if !ok {
		return
	}
	if b.dest != "" {
		// Served at once it pushes to its destination, which may serve others: no timeout may
		// be pending then.
		s.awaitTimed()
	}
	ev := s.log(blockEvent{kind: evSend, client: i, args: b.args, timed: b.timed})
	s.send(i, b.args)
	if !s.executed(i, b.args[0]) {
		s.events[ev].blocks = true
		s.clients[i].waiting = &b
		return
	}
	s.recv(i, s.log(blockEvent{kind: evRecv, client: i}))
	if b.dest != "" {
		s.collectServed()
	}
}

// recWrite has an idle client run a write, then reads the replies of the clients it served.
func (s *blockSession) recWrite(g *blockGen) {
	idle := s.idle()
	if len(idle) == 0 {
		s.recUnblock(g)
		return
	}
	s.awaitTimed()
	i := idle[g.r.IntN(len(idle))]
	args := g.write()
	s.log(blockEvent{kind: evSend, client: i, args: args})
	s.send(i, args)
	s.recv(i, s.log(blockEvent{kind: evRecv, client: i}))
	s.collectServed()
}

// collectServed reads the reply of every waiting client redis-server no longer shows blocked.
// Redis serves waiters before it runs the next command of any client, so after a write's reply
// CLIENT LIST shows exactly who is still waiting.
func (s *blockSession) collectServed() {
	for i, c := range s.clients {
		if c.waiting != nil && !s.flaggedBlocked(i) {
			c.waiting = nil
			s.recv(i, s.log(blockEvent{kind: evRecv, client: i}))
		}
	}
}

// awaitTimed reads the reply of every client waiting with a timeout, which expires meanwhile.
func (s *blockSession) awaitTimed() {
	for i, c := range s.clients {
		if c.waiting != nil && c.waiting.timed {
			c.waiting = nil
			s.recv(i, s.log(blockEvent{kind: evRecv, client: i}))
		}
	}
}

// recUnblock has the control connection CLIENT UNBLOCK a client that is idle or waits without a
// timeout (unblocking one whose timeout is running would race it).
func (s *blockSession) recUnblock(g *blockGen) {
	var targets []int
	for i, c := range s.clients {
		if c.waiting == nil || !c.waiting.timed {
			targets = append(targets, i)
		}
	}
	if len(targets) == 0 {
		s.awaitTimed()
		return
	}
	i := targets[g.r.IntN(len(targets))]
	args := []string{"CLIENT", "UNBLOCK", "$id" + strconv.Itoa(i)}
	if g.chance(0.5) {
		args = append(args, g.pick([]string{"TIMEOUT", "ERROR"}))
	}
	s.unblock(i, args)
}

func (s *blockSession) unblock(i int, args []string) {
	r := s.control(s.log(blockEvent{kind: evControl, args: args}), args)
	if s.clients[i].waiting != nil {
		if r != ":1\r\n" {
			s.fatalf("CLIENT UNBLOCK of waiting client %d: %s", i, quote(r))
			return
		}
		s.clients[i].waiting = nil
		s.recv(i, s.log(blockEvent{kind: evRecv, client: i}))
	}
}

// recFinish ends the schedule: timeouts expire, the remaining waiters are unblocked, every client
// answers a PING (a reply HotKV sent too many would show up there), and the keys are dumped.
func (s *blockSession) recFinish() {
	s.awaitTimed()
	for i, c := range s.clients {
		if c.waiting != nil {
			s.unblock(i, []string{"CLIENT", "UNBLOCK", "$id" + strconv.Itoa(i)})
		}
	}
	for i := range s.clients {
		s.log(blockEvent{kind: evSend, client: i, args: []string{"PING"}})
		s.send(i, []string{"PING"})
		s.recv(i, s.log(blockEvent{kind: evRecv, client: i}))
	}
	for _, k := range blockKeys {
		typ := []string{"TYPE", k}
		dump := map[string][]string{
			"+list\r\n":   {"LRANGE", k, "0", "-1"},
			"+zset\r\n":   {"ZRANGE", k, "0", "-1", "WITHSCORES"},
			"+set\r\n":    {"SMEMBERS", k},
			"+string\r\n": {"GET", k},
		}[s.control(s.log(blockEvent{kind: evControl, args: typ}), typ)]
		if dump != nil {
			s.control(s.log(blockEvent{kind: evControl, args: slices.Clone(dump)}), dump)
		}
	}
}
