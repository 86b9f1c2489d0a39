package testfuzz

import (
	"flag"
	"math/rand/v2"
	"testing"
	"time"
)

var effectsBlockSteps = flag.Int("effects.blocksteps", 300, "blocking effects differential: steps per run")

// TestEffectsDifferentialBlocking is TestEffectsDifferential for blocked clients served by
// pushes: the lists-only schedule of TestDifferentialBlocking (clients block in BLPOP, BRPOP,
// BLMOVE, BRPOPLPUSH and BLMPOP, others push, move, pop, edit and delete, a control connection
// unblocks) is recorded on redis-server with notify-keyspace-events KEA and its AOF on, and
// replayed on HotKV with a feed reader attached. Besides each client's replies, it compares the
// __key*__:* notification stream (a served client's events right after the push's), HotKV's
// feed rendered as an AOF against Redis's (a served client replicated as LPOP, RPOP, LMOVE,
// RPOPLPUSH or LPOP/RPOP key count, after the push), and rdb_changes_since_last_save.
//
// Every step waits for the command it sent, so both servers see one order of commands; waiters
// whose move crosses keys are left out (blockGen.lists).
func TestEffectsDifferentialBlocking(t *testing.T) {
	if !haveRedis() {
		t.Skip("redis-server not on PATH")
	}
	seed := *diffSeed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	const classes = "KEA"
	dir := t.TempDir()
	redis := startRedis(t, "--hz", "100", "--notify-keyspace-events", classes, "--appendonly", "yes",
		"--appendfsync", "always", "--aof-use-rdb-preamble", "no", "--dir", dir)
	hotkv, srv := startHotKV(t, "--notify-keyspace-events", classes)

	rSub := newEventSub(t, redis)
	rec := newBlockSession(t, redis, 2)
	g := &blockGen{r: rand.New(rand.NewPCG(seed, 0xef0c)), lists: true}
	for range *effectsBlockSteps {
		switch n := g.r.IntN(20); {
		case n < 9:
			rec.recBlock(g)
		case n < 19:
			rec.recWrite(g)
		default:
			rec.recUnblock(g)
		}
		if rec.failed {
			t.Fatalf("seed %d: recording on redis-server failed", seed)
		}
	}
	rec.recFinish()
	rEvents := rSub.finish(t, rec.ctl)
	rDirty := infoField(t, rec.ctl, "persistence", "rdb_changes_since_last_save")

	rd := srv.Engine.AttachFeed()
	defer rd.Close()
	hSub := newEventSub(t, hotkv)
	rep := newBlockSession(t, hotkv, 2)
	rep.ref = rec
	rep.replay(rec.events)
	compareBlockSessions(t, seed, rec, rep)
	if t.Failed() {
		return
	}
	hEvents := hSub.finish(t, rep.ctl)
	var feedCmds [][]string
	lastDB := -1
	for {
		es, err := rd.Next()
		if err != nil {
			t.Fatalf("feed: %v", err)
		}
		if len(es) == 0 {
			break
		}
		feedCmds = appendFeedCommands(t, feedCmds, es, &lastDB)
	}
	compareEvents(t, seed, classes, hEvents, rEvents)
	compareAOF(t, seed, feedCmds, readRedisAOF(t, dir))
	if h := infoField(t, rep.ctl, "persistence", "rdb_changes_since_last_save"); h != rDirty {
		t.Errorf("seed %d: rdb_changes_since_last_save: HotKV %s, Redis %s", seed, h, rDirty)
	}
}
