package testfuzz

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
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
//   - HotKV's write-effect feed, rendered as an AOF, is Redis's AOF (absolute times within 2 s);
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
			raw, err := s.c.tryReply()
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

func compareAOF(t *testing.T, seed uint64, h, r [][]string) {
	for i := 0; i < max(len(h), len(r)); i++ {
		if i < len(h) && i < len(r) && sameAOFCommand(h[i], r[i]) {
			continue
		}
		show := func(c [][]string) []string {
			var s []string
			for _, args := range c {
				s = append(s, quoteArgs(args))
			}
			return s
		}
		t.Errorf("seed %d: AOF command %d differs (HotKV %d, Redis %d in all)\n%s", seed, i, len(h), len(r),
			sideBySide(show(h), show(r), i))
		return
	}
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
