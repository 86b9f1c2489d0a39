package testfuzz

import (
	"bytes"
	"flag"
	"fmt"
	"strings"
	"testing"
	"time"
)

var multiOps = flag.Int("multi.ops", 6000, "transactions differential: commands per protocol run")

// TestDifferentialMulti mixes MULTI, EXEC, DISCARD, WATCH and UNWATCH into the random command
// stream of the differential generator (every family), from two connections that share one key
// space, and compares every reply with redis-server's byte for byte (through the generator's
// normalisations outside a transaction). The connections take turns, a pipelined batch of 1..20
// commands each, so that the order of their commands is the same on both servers: a WATCH on
// one connection meets the other's writes, FLUSHDB, FLUSHALL and SWAPDB in between, and its EXEC
// must fail exactly when Redis's does. Inside MULTI only commands whose replies are compared
// exactly are queued (EXEC's reply holds theirs); queuing errors (unknown commands, wrong arity)
// come from the generator and must abort EXEC as in Redis. After every round DBSIZE and every
// string key are compared.
func TestDifferentialMulti(t *testing.T) {
	forEachDiffServers(t, func(t *testing.T, seed uint64, proto int, redis, hotkv string) {
		now := time.Now().Unix()
		var conns [2]struct {
			h, r *rawConn
			g    *multiGen
		}
		for i := range conns {
			conns[i].h, conns[i].r = dial(t, hotkv), dial(t, redis)
			// One prefix for both (conn 0), two random streams.
			conns[i].g = &multiGen{gen: newGen(seed+uint64(i)*7919, 0, now)}
			if proto == 3 {
				conns[i].h.do("HELLO", "3")
				conns[i].r.do("HELLO", "3")
			}
		}
		var history []string
		execs, nulls, aborts := 0, 0, 0
		for done, round := 0, 0; done < *multiOps; round++ {
			for i := range conns {
				c := &conns[i]
				batch := make([]genCmd, 1+c.g.r.IntN(20))
				c.g.marks = c.g.marks[:0]
				for j := range batch {
					batch[j] = c.g.next()
				}
				done += len(batch)
				hr, herr := exchange(c.h, batch)
				rr, rerr := exchange(c.r, batch)
				if herr != nil || rerr != nil {
					t.Fatalf("seed %d round %d conn %d: exchange: HotKV %v, Redis %v", seed, round, i, herr, rerr)
				}
				for j, cmd := range batch {
					history = append(history, fmt.Sprintf("%d> %s", i, quoteArgs(cmd.args)))
					if len(history) > 60 {
						history = history[1:]
					}
					same := bytes.Equal(hr[j], rr[j])
					if !same && !c.g.inTx(j) {
						same = sameReply(cmd, hr[j], rr[j])
					}
					if !same {
						t.Fatalf("seed %d round %d conn %d: reply to %s differs:\nHotKV %s\nRedis %s\nlast commands:\n%s",
							seed, round, i, quoteArgs(cmd.args), quote(hr[j]), quote(rr[j]), strings.Join(history, "\n"))
					}
					if strings.EqualFold(cmd.args[0], "exec") {
						switch r := string(rr[j]); {
						case r == "*-1\r\n" || r == "_\r\n":
							nulls++
						case strings.HasPrefix(r, "-EXECABORT"):
							aborts++
						case strings.HasPrefix(r, "*"):
							execs++
						}
					}
				}
			}
			probe := []genCmd{exact("DBSIZE"), exact(append([]string{"MGET"}, prefixed(conns[0].g.gen, strKeys)...)...)}
			if conns[0].g.inMulti || conns[1].g.inMulti {
				continue // the probes would be queued
			}
			hr, herr := exchange(conns[0].h, probe)
			rr, rerr := exchange(conns[0].r, probe)
			if herr != nil || rerr != nil {
				t.Fatalf("seed %d: probe: HotKV %v, Redis %v", seed, herr, rerr)
			}
			for j := range probe {
				if !bytes.Equal(hr[j], rr[j]) {
					t.Fatalf("seed %d round %d: state differs at %s: HotKV %s, Redis %s\nlast commands:\n%s",
						seed, round, quoteArgs(probe[j].args), quote(hr[j]), quote(rr[j]), strings.Join(history, "\n"))
				}
			}
		}
		if execs == 0 || nulls == 0 || aborts == 0 {
			t.Errorf("seed %d: the stream ran %d EXECs, %d failed watches, %d EXECABORTs: each should occur", seed, execs, nulls, aborts)
		}
		t.Logf("seed %d: %d EXECs ran, %d failed on a watch, %d aborted", seed, execs, nulls, aborts)
	})
}

func prefixed(g *gen, keys []string) []string {
	out := make([]string, len(keys))
	for i, k := range keys {
		out[i] = g.prefix + k
	}
	return out
}

// multiGen is the generator's stream with transactions mixed in. It follows whether its
// connection is inside MULTI, so it queues only exactly compared commands there.
type multiGen struct {
	*gen
	inMulti bool
	// marks says, for each command of the batch being generated, whether it was generated inside
	// MULTI or is EXEC (its reply is compared exactly). The caller clears it before a batch.
	marks []bool
}

// inTx reports whether command j of the batch last generated was generated inside MULTI.
func (m *multiGen) inTx(j int) bool {
	n := len(m.marks)
	return n > 0 && j < n && m.marks[j]
}

func (m *multiGen) next() genCmd {
	c := m.pickCmd()
	m.marks = append(m.marks, m.inMulti || strings.EqualFold(c.args[0], "exec"))
	return c
}

func (m *multiGen) pickCmd() genCmd {
	p := m.r.Float64()
	if !m.inMulti {
		switch {
		case p < 0.08:
			m.inMulti = true
			return exact("MULTI")
		case p < 0.14:
			return exact(append([]string{"WATCH"}, m.keys(1, 3)...)...)
		case p < 0.16:
			return exact("UNWATCH")
		case p < 0.17:
			return exact(m.pick([]string{"EXEC", "DISCARD"}))
		case p < 0.19:
			return m.dbWideAll()
		}
		return m.gen.next()
	}
	switch {
	case p < 0.12:
		m.inMulti = false
		return exact("EXEC")
	case p < 0.14:
		m.inMulti = false
		return exact("DISCARD")
	case p < 0.15:
		return exact("WATCH", m.key())
	case p < 0.16:
		return exact("MULTI")
	case p < 0.17:
		return exact("UNWATCH")
	case p < 0.19:
		return m.dbWideAll()
	}
	for range 50 {
		if c := m.gen.next(); c.norm == normExact {
			return c
		}
	}
	return exact("PING")
}

// dbWideAll is a database-wide write, which the generator leaves out when connections run at
// once: here they take turns.
func (m *multiGen) dbWideAll() genCmd {
	forms := [][]string{{"FLUSHDB"}, {"FLUSHALL"}, {"SWAPDB", "0", "1"}, {"SWAPDB", "1", "0"}, {"SELECT", "1"}, {"SELECT", "0"}}
	return exact(m.pick2(forms)...)
}

// TestEffectsDifferentialMulti is TestEffectsDifferential's comparison (keyspace notifications in
// order, the feed rendered as an AOF against Redis's, rdb_changes_since_last_save) over the
// stream with transactions mixed in: EXEC's commands must be replicated as Redis 7.0.15 writes
// them (one write alone, several inside MULTI … EXEC, a read-only EXEC not at all) and their
// events published after EXEC, in order.
func TestEffectsDifferentialMulti(t *testing.T) {
	if !haveRedis() {
		t.Skip("redis-server not on PATH")
	}
	seed := *diffSeed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	for _, classes := range []string{"KEA", "Eg$lshzxn"} {
		t.Run(classes, func(t *testing.T) { effectsMultiRun(t, seed, classes) })
	}
}

func effectsMultiRun(t *testing.T, seed uint64, classes string) {
	dir := t.TempDir()
	redis := startRedis(t, "--notify-keyspace-events", classes, "--appendonly", "yes",
		"--appendfsync", "always", "--aof-use-rdb-preamble", "no", "--dir", dir)
	hotkv, srv := startHotKV(t, "--notify-keyspace-events", classes)
	rd := srv.Engine.AttachFeed()
	defer rd.Close()
	hSub, rSub := newEventSub(t, hotkv), newEventSub(t, redis)
	hc, rc := dial(t, hotkv), dial(t, redis)
	g := &multiGen{gen: newGen(seed, 0, time.Now().Unix())}
	var feedCmds [][]string
	lastDB := -1
	drain := func() {
		for {
			es, err := rd.Next()
			if err != nil {
				t.Fatalf("feed: %v", err)
			}
			if len(es) == 0 {
				return
			}
			feedCmds = appendFeedCommands(t, feedCmds, es, &lastDB)
		}
	}
	for done := 0; done < *effectsOps || g.inMulti; {
		batch := make([]genCmd, 1+g.r.IntN(30))
		g.marks = g.marks[:0]
		for i := range batch {
			batch[i] = g.next()
		}
		done += len(batch)
		hr, herr := exchange(hc, batch)
		rr, rerr := exchange(rc, batch)
		if herr != nil || rerr != nil {
			t.Fatalf("seed %d: exchange: HotKV %v, Redis %v", seed, herr, rerr)
		}
		for i := range batch {
			if !bytes.Equal(hr[i], rr[i]) && (g.inTx(i) || !sameReply(batch[i], hr[i], rr[i])) {
				t.Fatalf("seed %d: reply to %s differs: HotKV %s, Redis %s", seed,
					quoteArgs(batch[i].args), quote(hr[i]), quote(rr[i]))
			}
		}
		drain()
	}
	hEvents, rEvents := hSub.finish(t, hc), rSub.finish(t, rc)
	drain()
	compareEvents(t, seed, classes, hEvents, rEvents)
	compareAOF(t, seed, feedCmds, readRedisAOF(t, dir))
	if h, r := infoField(t, hc, "persistence", "rdb_changes_since_last_save"),
		infoField(t, rc, "persistence", "rdb_changes_since_last_save"); h != r {
		t.Errorf("seed %d: rdb_changes_since_last_save: HotKV %s, Redis %s", seed, h, r)
	}
	multis := 0
	for _, c := range feedCmds {
		if c[0] == "MULTI" {
			multis++
		}
	}
	if multis == 0 {
		t.Errorf("seed %d: no MULTI … EXEC block was replicated", seed)
	}
	t.Logf("seed %d: %d commands replicated, %d in MULTI blocks' openings", seed, len(feedCmds), multis)
}
