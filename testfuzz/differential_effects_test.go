package testfuzz

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hotkv/hotkv/net/resp/resptest"
	"github.com/hotkv/hotkv/pipeline/feed"
)

var (
	effectsOps     = flag.Int("effects.ops", 4000, "effects differential: commands per run")
	effectsClasses = flag.String("effects.classes", "KEA,K$,Eg,Kl,Es,Kh,Ez,Ex,KEn",
		"effects differential: notify-keyspace-events values to run, comma-separated")
)

// TestEffectsDifferential sends one random command stream (every family the generator knows, or
// those of -diff.only) over one connection to HotKV and to redis-server, both with the same
// notify-keyspace-events and a subscriber on __key*__:*, and Redis writing its AOF (appendonly
// yes, appendfsync always). Then:
//   - the subscriber received the same notifications, in the same order, from both;
//   - HotKV's write-effect feed, rendered as an AOF, replays as Redis's AOF does: the same
//     commands for every key in the same order (absolute times within 2 s), see compareAOF;
//   - rdb_changes_since_last_save is the same.
//
// One connection, so that the order of the stream is defined; pipelined batches of 1..50, so
// that HotKV's shards run a batch's commands in any order and Env.Completed must restore it.
func TestEffectsDifferential(t *testing.T) {
	if !haveRedis() {
		t.Skip("redis-server not on PATH")
	}
	seed := *diffSeed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	for _, classes := range strings.Split(*effectsClasses, ",") {
		t.Run(classes, func(t *testing.T) { effectsRun(t, seed, classes) })
	}
}

func effectsRun(t *testing.T, seed uint64, classes string) {
	dir := t.TempDir()
	redis := startRedis(t, "--notify-keyspace-events", classes, "--appendonly", "yes",
		"--appendfsync", "always", "--aof-use-rdb-preamble", "no", "--dir", dir)
	hotkv, srv := startHotKV(t, "--notify-keyspace-events", classes)
	rd := srv.Engine.AttachFeed()
	defer rd.Close()

	hSub, rSub := newEventSub(t, hotkv), newEventSub(t, redis)
	hc, rc := dial(t, hotkv), dial(t, redis)
	g := newGen(seed, 0, time.Now().Unix())
	var feedCmds [][]string
	var lastDB = -1
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
	var sent []genCmd
	for done := 0; done < *effectsOps; {
		batch := make([]genCmd, 1+g.r.IntN(50))
		for i := range batch {
			batch[i] = g.next()
		}
		done += len(batch)
		sent = append(sent, batch...)
		hr, herr := exchange(hc, batch)
		rr, rerr := exchange(rc, batch)
		if herr != nil || rerr != nil {
			t.Fatalf("seed %d: exchange: HotKV %v, Redis %v", seed, herr, rerr)
		}
		for i := range batch {
			if !sameReply(batch[i], hr[i], rr[i]) {
				// The reply differential (TestDifferential) owns replies; here a different reply
				// means the effects cannot be compared either.
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
		t.Errorf("seed %d: rdb_changes_since_last_save: HotKV %s, Redis %s after %d commands", seed, h, r, len(sent))
	}
}

// eventSub is a connection subscribed to every keyspace notification, and to "effects:end",
// whose message marks the end of the stream.
type eventSub struct {
	c      *rawConn
	events chan []string
}

func newEventSub(t *testing.T, addr string) *eventSub {
	s := &eventSub{c: dial(t, addr), events: make(chan []string, 1<<16)}
	s.c.write(appendCommand(nil, "PSUBSCRIBE", "__key*__:*"))
	s.c.reply()
	s.c.write(appendCommand(nil, "SUBSCRIBE", "effects:end"))
	s.c.reply()
	go func() {
		defer close(s.events)
		for {
			s.c.c.SetReadDeadline(time.Time{}) // classes with no events stay quiet: the end mark bounds the wait
			raw, err := resptest.ReadRaw(s.c.r)
			if err != nil {
				return
			}
			v, err := resptest.Parse(raw)
			if err != nil {
				return
			}
			msg, err := v.Strings()
			if err != nil {
				return
			}
			s.events <- msg
			if len(msg) == 3 && msg[1] == "effects:end" {
				return
			}
		}
	}()
	return s
}

// finish publishes the end mark from the command connection c and returns every notification
// received before it, each as "channel message".
func (s *eventSub) finish(t *testing.T, c *rawConn) []string {
	c.do("PUBLISH", "effects:end", "x")
	var out []string
	timeout := time.After(30 * time.Second)
	for {
		select {
		case msg, ok := <-s.events:
			if !ok {
				t.Fatalf("subscriber of %s closed before the end mark", s.c.addr)
			}
			if len(msg) == 3 && msg[1] == "effects:end" {
				return out
			}
			if len(msg) != 4 || msg[0] != "pmessage" {
				t.Fatalf("subscriber of %s got %q", s.c.addr, msg)
			}
			out = append(out, msg[2]+" "+msg[3])
		case <-timeout:
			t.Fatalf("no end mark from %s", s.c.addr)
		}
	}
}

func compareEvents(t *testing.T, seed uint64, classes string, h, r []string) {
	for i := 0; i < max(len(h), len(r)); i++ {
		if i < len(h) && i < len(r) && h[i] == r[i] {
			continue
		}
		t.Errorf("seed %d notify-keyspace-events %s: notification %d differs (HotKV %d, Redis %d in all)\n%s",
			seed, classes, i, len(h), len(r), sideBySide(h, r, i))
		return
	}
}

// sideBySide shows both streams around position at.
func sideBySide(h, r []string, at int) string {
	var b strings.Builder
	for i := max(0, at-4); i < at+6; i++ {
		get := func(s []string) string {
			if i < len(s) {
				return quote(s[i])
			}
			return "-"
		}
		mark := "  "
		if i == at {
			mark = "->"
		}
		fmt.Fprintf(&b, "    %s %4d HotKV %-50s Redis %s\n", mark, i, get(h), get(r))
	}
	return b.String()
}

// appendFeedCommands renders feed entries as the commands of an AOF, a SELECT before each change
// of database as Redis writes one.
func appendFeedCommands(t *testing.T, out [][]string, es []feed.Entry, lastDB *int) [][]string {
	for _, e := range es {
		if e.DB != *lastDB {
			out = append(out, []string{"SELECT", strconv.Itoa(e.DB)})
			*lastDB = e.DB
		}
		vs, err := resptest.ParseAll(e.Cmd)
		if err != nil {
			t.Fatalf("feed entry %d: %v", e.Seq, err)
		}
		for _, v := range vs {
			args, err := v.Strings()
			if err != nil {
				t.Fatalf("feed entry %d: %v", e.Seq, err)
			}
			out = append(out, args)
		}
	}
	return out
}

// readRedisAOF reads the commands of Redis's incremental AOF in dir.
func readRedisAOF(t *testing.T, dir string) [][]string {
	files, _ := filepath.Glob(filepath.Join(dir, "appendonlydir", "*.incr.aof"))
	if len(files) != 1 {
		t.Fatalf("Redis AOF files: %q", files)
	}
	data, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	var out [][]string
	r := bufio.NewReader(bytes.NewReader(data))
	for {
		v, err := resptest.Read(r)
		if err != nil {
			return out
		}
		args, err := v.Strings()
		if err != nil {
			t.Fatalf("Redis AOF: %v", err)
		}
		out = append(out, args)
	}
}

// compareAOF compares the two AOFs as replays of one history. HotKV's shards run a pipelined
// batch's commands on different keys in any order and its feed keeps the order they ran in, so the
// commands are compared key by key: the AOF is cut at database-wide commands (FLUSHALL, FLUSHDB,
// SWAPDB: they hold every shard, so everything is ordered around them), each command or
// MULTI/EXEC block is one unit in the database a SELECT put it in, and within a stretch every key
// the generator names (streamKey) must see the same units in the same order on both sides.
func compareAOF(t *testing.T, seed uint64, h, r [][]string) {
	hu, ru := aofUnits(h), aofUnits(r)
	if len(hu) != len(ru) {
		t.Errorf("seed %d: AOF has %d commands or blocks in HotKV, %d in Redis", seed, len(hu), len(ru))
	}
	hs, rs := aofStretches(hu), aofStretches(ru)
	for i := 0; i < max(len(hs), len(rs)); i++ {
		if i >= len(hs) || i >= len(rs) {
			t.Errorf("seed %d: AOF has %d database-wide commands in HotKV, %d in Redis", seed, len(hs)-1, len(rs)-1)
			return
		}
		if !sameUnit(hs[i].global, rs[i].global) {
			t.Errorf("seed %d: database-wide command %d differs: HotKV %s, Redis %s", seed, i,
				unitText(hs[i].global), unitText(rs[i].global))
			return
		}
		hk, rk := hs[i].perKey(), rs[i].perKey()
		for k, rv := range rk {
			hv := hk[k]
			for j := 0; j < max(len(hv), len(rv)); j++ {
				if j < len(hv) && j < len(rv) && sameUnit(hv[j], rv[j]) {
					continue
				}
				show := func(us []aofUnit) []string {
					var out []string
					for _, u := range us {
						out = append(out, unitText(u))
					}
					return out
				}
				t.Errorf("seed %d: stretch %d, key %q: AOF unit %d differs\n%s", seed, i, k, j,
					sideBySide(show(hv), show(rv), j))
				return
			}
		}
		for k := range hk {
			if _, ok := rk[k]; !ok {
				t.Errorf("seed %d: stretch %d: key %q only in HotKV's AOF", seed, i, k)
				return
			}
		}
	}
}

// aofUnit is one command of an AOF, or one MULTI … EXEC block, in the database it runs in.
type aofUnit struct {
	db   string
	cmds [][]string
	keys []string // the stream's keys it names
}

// streamKey reports whether an argument is one of the generator's keys ("c<conn>:…").
func streamKey(a string) bool {
	rest, ok := strings.CutPrefix(a, "c")
	digits := len(rest) - len(strings.TrimLeft(rest, "0123456789"))
	return ok && digits > 0 && strings.HasPrefix(rest[digits:], ":")
}

// aofUnits splits AOF commands into units, following SELECT.
func aofUnits(cmds [][]string) []aofUnit {
	var out []aofUnit
	db := "0"
	var block *aofUnit
	for _, c := range cmds {
		switch name := strings.ToUpper(c[0]); {
		case name == "SELECT" && len(c) == 2:
			db = c[1]
			continue
		case name == "MULTI":
			block = &aofUnit{db: db}
		}
		u := block
		if u == nil {
			u = &aofUnit{db: db}
		}
		u.cmds = append(u.cmds, c)
		for _, a := range c[1:] {
			if streamKey(a) && !slices.Contains(u.keys, a) {
				u.keys = append(u.keys, a)
			}
		}
		switch {
		case block != nil && strings.EqualFold(c[0], "EXEC"):
			out = append(out, *block)
			block = nil
		case block == nil:
			out = append(out, *u)
		}
	}
	return out
}

// aofStretch is the units up to a database-wide command, and that command (empty for the last).
type aofStretch struct {
	units  []aofUnit
	global aofUnit
}

func aofStretches(us []aofUnit) []aofStretch {
	out := []aofStretch{{}}
	for _, u := range us {
		if len(u.cmds) == 1 && slices.Contains([]string{"FLUSHALL", "FLUSHDB", "SWAPDB"}, strings.ToUpper(u.cmds[0][0])) {
			out[len(out)-1].global = u
			out = append(out, aofStretch{})
			continue
		}
		out[len(out)-1].units = append(out[len(out)-1].units, u)
	}
	return out
}

// perKey lists, for every key, the units that name it in order.
func (s aofStretch) perKey() map[string][]aofUnit {
	m := map[string][]aofUnit{}
	for _, u := range s.units {
		for _, k := range u.keys {
			m[k] = append(m[k], u)
		}
		if len(u.keys) == 0 {
			m[""] = append(m[""], u) // commands naming none of the stream's keys
		}
	}
	return m
}

func sameUnit(a, b aofUnit) bool {
	if a.db != b.db || len(a.cmds) != len(b.cmds) {
		return false
	}
	for i := range a.cmds {
		if !sameAOFCommand(a.cmds[i], b.cmds[i]) {
			return false
		}
	}
	return true
}

func unitText(u aofUnit) string {
	var parts []string
	for _, c := range u.cmds {
		parts = append(parts, quoteArgs(c))
	}
	return "db" + u.db + ": " + strings.Join(parts, " ; ")
}

// sameAOFCommand compares two AOF commands; unix times in milliseconds (PXAT, PEXPIREAT: the
// server's clock at the time) may differ by 2 s.
func sameAOFCommand(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] == b[i] {
			continue
		}
		x, err1 := strconv.ParseInt(a[i], 10, 64)
		y, err2 := strconv.ParseInt(b[i], 10, 64)
		if err1 != nil || err2 != nil || x < 1e12 || y < 1e12 || max(x-y, y-x) > 2000 {
			return false
		}
	}
	return true
}

// infoField reads one field of an INFO section.
func infoField(t *testing.T, c *rawConn, section, field string) string {
	v, err := resptest.Parse([]byte(c.do("INFO", section)))
	if err != nil {
		t.Fatal(err)
	}
	text, _ := v.Text()
	for _, line := range strings.Split(text, "\r\n") {
		if k, val, ok := strings.Cut(line, ":"); ok && k == field {
			return val
		}
	}
	t.Fatalf("INFO %s has no %s", section, field)
	return ""
}
