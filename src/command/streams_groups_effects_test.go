package command

import (
	"regexp"
	"strings"
	"testing"
)

// Effects of the consumer-group commands, each row as redis-server 7.0.15 showed them (its
// keyspace events, AOF and dirty counts): XREADGROUP is replicated as an XCLAIM … FORCE JUSTID
// per delivered entry (none for a history read), a NOACK read as XGROUP SETID (and XGROUP
// CREATECONSUMER when it made the consumer), several wrapped in MULTI/EXEC. Delivery times, which
// are the server's clock, are compared as T.
func TestStreamGroupEffects(t *testing.T) {
	x := newListFx(t)
	tc := newTestConn(t, x.e)
	x.events()
	x.feed()
	xclaim := func(consumer, id, retry, last string) string {
		return "XCLAIM s g " + consumer + " 0 " + id + " TIME T RETRYCOUNT " + retry + " FORCE JUSTID LASTID " + last
	}
	steps := []struct {
		cmd string
		fxWant
	}{
		{"XGROUP CREATE s g $ MKSTREAM", fxWant{lev("s=xgroup-create"), lev("XGROUP CREATE s g $ MKSTREAM"), 1}},
		{"XGROUP CREATE s g $", fxWant{nil, nil, 0}},
		{"XADD s 1-0 f v", fxWant{lev("s=xadd"), lev("XADD s 1-0 f v"), 1}},
		{"XADD s 2-0 f v", fxWant{lev("s=xadd"), lev("XADD s 2-0 f v"), 1}},
		{"XGROUP CREATECONSUMER s g c1", fxWant{lev("s=xgroup-createconsumer"), lev("XGROUP CREATECONSUMER s g c1"), 1}},
		{"XGROUP CREATECONSUMER s g c1", fxWant{nil, nil, 0}},
		{"XREADGROUP GROUP g c2 COUNT 1 STREAMS s >", fxWant{lev("s=xgroup-createconsumer"), lev(xclaim("c2", "1-0", "1", "1-0")), 2}},
		{"XREADGROUP GROUP g c2 STREAMS s >", fxWant{nil, lev(xclaim("c2", "2-0", "1", "2-0")), 1}},
		{"XREADGROUP GROUP g c2 STREAMS s >", fxWant{nil, nil, 0}},
		{"XREADGROUP GROUP g c2 STREAMS s 0", fxWant{nil, nil, 1}},
		{"XACK s g 1-0 5-0", fxWant{nil, lev("XACK s g 1-0 5-0"), 1}},
		{"XACK s g 1-0", fxWant{nil, nil, 0}},
		{"XGROUP CREATE s g2 0", fxWant{lev("s=xgroup-create"), lev("XGROUP CREATE s g2 0"), 1}},
		{"XREADGROUP GROUP g2 c3 NOACK STREAMS s >", fxWant{lev("s=xgroup-createconsumer"),
			lev("MULTI", "XGROUP CREATECONSUMER s g2 c3", "XGROUP SETID s g2 2-0 ENTRIESREAD 2", "EXEC"), 2}},
		{"XGROUP SETID s g 0 ENTRIESREAD 0", fxWant{lev("s=xgroup-setid"), lev("XGROUP SETID s g 0 ENTRIESREAD 0"), 1}},
		{"XCLAIM s g c4 0 2-0", fxWant{lev("s=xgroup-createconsumer"), lev(xclaim("c4", "2-0", "3", "0-0")), 2}},
		{"XCLAIM s g c4 0 2-0 JUSTID LASTID 9-0", fxWant{nil, lev(xclaim("c4", "2-0", "3", "9-0")), 1}},
		{"XCLAIM s g c4 0 7-0 LASTID 10-0", fxWant{nil, lev("XGROUP SETID s g 10-0 ENTRIESREAD 0"), 1}},
		{"XAUTOCLAIM s g c5 0 0", fxWant{lev("s=xgroup-createconsumer"), lev(xclaim("c5", "2-0", "4", "10-0")), 2}},
		{"XDEL s 2-0", fxWant{lev("s=xdel"), lev("XDEL s 2-0"), 1}},
		{"XAUTOCLAIM s g c5 0 0", fxWant{nil, lev(xclaim("c5", "2-0", "4", "10-0")), 1}},
		{"XGROUP DELCONSUMER s g c5", fxWant{lev("s=xgroup-delconsumer"), lev("XGROUP DELCONSUMER s g c5"), 1}},
		{"XGROUP DELCONSUMER s g c5", fxWant{nil, nil, 0}},
		{"XGROUP DESTROY s g2", fxWant{lev("s=xgroup-destroy"), lev("XGROUP DESTROY s g2"), 1}},
		{"XGROUP DESTROY s g2", fxWant{nil, nil, 0}},
	}
	times := regexp.MustCompile(` TIME [0-9]+ `)
	before := x.dirty()
	for _, s := range steps {
		tc.do(strings.Fields(s.cmd)...)
		after := x.dirty()
		if got := x.events(); strings.Join(got, ",") != strings.Join(s.events, ",") {
			t.Errorf("%s: events %q, want %q", s.cmd, got, s.events)
		}
		got := x.feed()
		for i := range got {
			got[i] = times.ReplaceAllString(got[i], " TIME T ")
		}
		if strings.Join(got, "\n") != strings.Join(s.feed, "\n") {
			t.Errorf("%s: replicated %q, want %q", s.cmd, got, s.feed)
		}
		if after-before != s.dirty {
			t.Errorf("%s: dirty +%d, want +%d", s.cmd, after-before, s.dirty)
		}
		before = after
	}
}
