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
// pop) may wait on. Not the source of a waiting cross-key move (see blockCmd.crossMove), and not
// a key where a waiter of the other kind waits: HotKV serves a key's waiters in order and stops
// at the first one the key's type cannot serve, so a BLPOP waiting on k keeps a BZPOPMIN queued
// behind it from the sorted set ZADD k creates, which Redis 7.0 hands it (see the report of
// issue 3's differential test).
func (s *blockSession) allowedKeys(zset bool) []string {
	var out []string
	for _, k := range blockKeys {
		taken := false
		for _, c := range s.clients {
			if w := c.waiting; w != nil && slices.Contains(w.keys, k) {
				taken = taken || (w.crossMove() && w.keys[0] == k) || w.zset != zset
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
	if !s.executed(i, b.args[0], 0) {
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
	for s.zsetOnCrossMoveSource(args) || s.storeOverOtherType(args) {
		args = g.write()
	}
	s.log(blockEvent{kind: evSend, client: i, args: args})
	s.send(i, args)
	s.recv(i, s.log(blockEvent{kind: evRecv, client: i}))
	s.collectServed()
}

// zsetOnCrossMoveSource reports whether args may create a sorted set on the source key of a
// client waiting in a cross-key BLMOVE/BRPOPLPUSH. The schedule leaves that out: HotKV wakes such
// a waiter to rerun whatever type the key got, and the rerun answers WRONGTYPE, where Redis 7.0
// keeps a list waiter blocked when a sorted set appears on its key (see the report of issue 3's
// differential test; a list waiter served in place, BLPOP or BLMOVE k k, keeps waiting).
func (s *blockSession) zsetOnCrossMoveSource(args []string) bool {
	var dest string
	switch args[0] {
	case "ZADD", "ZINCRBY", "ZUNIONSTORE", "ZINTERSTORE", "ZRANGESTORE":
		dest = args[1]
	case "RENAME", "COPY":
		dest = args[2]
	default:
		return false
	}
	for _, c := range s.clients {
		if w := c.waiting; w != nil && w.crossMove() && w.keys[0] == dest {
			return true
		}
	}
	return false
}

// storeOverOtherType reports whether args is a ZUNIONSTORE, ZINTERSTORE or ZRANGESTORE that
// replaces a key of another type on which sorted-set pops wait. The schedule leaves that out:
// Redis 7.0 overwrites an existing key without waking its waiters (they keep waiting although a
// sorted set is there now; RENAME and COPY, which delete and add, do wake them), and HotKV
// serves them (see the report of issue 3's differential test).
func (s *blockSession) storeOverOtherType(args []string) bool {
	switch args[0] {
	case "ZUNIONSTORE", "ZINTERSTORE", "ZRANGESTORE":
	default:
		return false
	}
	waited := false
	for _, c := range s.clients {
		waited = waited || (c.waiting != nil && c.waiting.zset && slices.Contains(c.waiting.keys, args[1]))
	}
	if !waited {
		return false
	}
	typ, err := s.ctl.doErr("TYPE", args[1]) // a probe, not part of the schedule
	if err != nil {
		s.fatalf("TYPE: %v", err)
	}
	return typ != "+none\r\n" && typ != "+zset\r\n"
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
