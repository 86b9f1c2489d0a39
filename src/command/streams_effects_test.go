package command

import (
	"strings"
	"testing"
)

// Effects of the stream commands, each row as redis-server 7.0.15 showed them (its
// __keyspace@0__ notifications, its appendonlydir/*.incr.aof with appendfsync always, and
// rdb_changes_since_last_save before and after): generated IDs replicated as given, `~` trims
// as `=` with the length or first ID they left (even when they removed nothing).
func TestStreamEffects(t *testing.T) {
	x := newListFx(t)
	tc := newTestConn(t, x.e)
	tc.do("SET", "str", "v")
	x.events()
	x.feed()
	steps := []struct {
		cmd string
		fxWant
	}{
		{"XADD s 1-1 f v", fxWant{lev("s=xadd"), lev("XADD s 1-1 f v"), 1}},
		{"XADD s 1-* f v", fxWant{lev("s=xadd"), lev("XADD s 1-2 f v"), 1}},
		{"XADD s 1-1 f v", fxWant{nil, nil, 0}},
		{"XADD nokey NOMKSTREAM 1-1 f v", fxWant{nil, nil, 0}},
		{"XADD s 2-0 g w h x", fxWant{lev("s=xadd"), lev("XADD s 2-0 g w h x"), 1}},
		{"XADD s 3-0 f v", fxWant{lev("s=xadd"), lev("XADD s 3-0 f v"), 1}},
		{"XADD s MAXLEN 2 4-0 f v", fxWant{lev("s=xadd", "s=xtrim"), lev("XADD s MAXLEN 2 4-0 f v"), 1}},
		{"XADD s MAXLEN ~ 1 5-0 f v", fxWant{lev("s=xadd"), lev("XADD s MAXLEN = 3 5-0 f v"), 1}},
		{"XADD s MINID = 5 6-0 f v", fxWant{lev("s=xadd", "s=xtrim"), lev("XADD s MINID = 5 6-0 f v"), 1}},
		{"XADD s MINID ~ 6 7-0 f v", fxWant{lev("s=xadd"), lev("XADD s MINID = 1-1 7-0 f v"), 1}},
		{"XDEL s 99-0", fxWant{nil, nil, 0}},
		{"XDEL s 5-0 6-0 98-0", fxWant{lev("s=xdel"), lev("XDEL s 5-0 6-0 98-0"), 2}},
		{"XTRIM s MAXLEN 5", fxWant{nil, nil, 0}},
		{"XTRIM s MAXLEN 0", fxWant{lev("s=xtrim"), lev("XTRIM s MAXLEN 0"), 1}},
		{"XADD s 8-0 f v", fxWant{lev("s=xadd"), lev("XADD s 8-0 f v"), 1}},
		{"XADD s 9-0 f v", fxWant{lev("s=xadd"), lev("XADD s 9-0 f v"), 1}},
		{"XTRIM s MAXLEN ~ 0", fxWant{lev("s=xtrim"), lev("XTRIM s MAXLEN = 0"), 2}},
		{"XTRIM s MAXLEN ~ 0", fxWant{nil, nil, 0}},
		{"XADD s 10-0 f v", fxWant{lev("s=xadd"), lev("XADD s 10-0 f v"), 1}},
		{"XADD s 11-0 f v", fxWant{lev("s=xadd"), lev("XADD s 11-0 f v"), 1}},
		{"XTRIM s MINID ~ 11 LIMIT 0", fxWant{nil, nil, 0}},
		{"XADD s 12-0 f v", fxWant{lev("s=xadd"), lev("XADD s 12-0 f v"), 1}},
		{"XTRIM s MINID 12", fxWant{lev("s=xtrim"), lev("XTRIM s MINID 12"), 2}},
		{"XSETID s 20-0", fxWant{lev("s=xsetid"), lev("XSETID s 20-0"), 1}},
		{"XSETID s 20-0 ENTRIESADDED 30 MAXDELETEDID 15-0", fxWant{lev("s=xsetid"), lev("XSETID s 20-0 ENTRIESADDED 30 MAXDELETEDID 15-0"), 1}},
		{"XSETID s 1-0", fxWant{nil, nil, 0}},
		{"XADD str 1-1 f v", fxWant{nil, nil, 0}},
		{"XLEN s", fxWant{nil, nil, 0}},
		{"XRANGE s - +", fxWant{nil, nil, 0}},
	}
	before := x.dirty()
	for _, s := range steps {
		tc.do(strings.Fields(s.cmd)...)
		before = x.check(s.cmd, before, s.fxWant)
	}
	// XADD with * replicates the ID it generated, the one it replied.
	id := replyText(t, tc.do("XADD", "s", "*", "f", "v"))
	x.check("XADD s * f v", before, fxWant{lev("s=xadd"), lev("XADD s " + id + " f v"), 1})
}
