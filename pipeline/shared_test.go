package pipeline

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hotkv/hotkv/net/resp"
)

// sharedToyEnv is toyEnv with GET marked Shared.
func sharedToyEnv(shards int) *Env {
	env := toyEnv(shards)
	route := env.Route
	env.Route = func(client any, s *Slot) {
		route(client, s)
		s.Shared = string(s.Args[0]) == "GET"
	}
	return env
}

// Shared work runs only while no token holder is inside its shard, and work with a write runs
// holding the token: GETs and INCRs on the same keys from four connections, each connection
// reading its own writes, with every shard's state checked on entry.
func TestSharedReadersExcludeWriters(t *testing.T) {
	const shards, conns, depth, keys = 4, 4, 3000, 16
	env := sharedToyEnv(shards)
	var inside [shards]atomic.Int32
	var writing [shards]atomic.Bool
	var sharedRuns, tokenRuns atomic.Int64
	for _, sh := range env.Group.Shards {
		run := sh.exec
		sh.exec = func(sh *Shard, w *Work) {
			if w.Reader() < 0 {
				writing[sh.ID].Store(true)
				for range 100 { // long enough for a reader let in by mistake to show
					if n := inside[sh.ID].Load(); n != 0 {
						t.Errorf("shard %d: token holder runs beside %d shared readers", sh.ID, n)
						break
					}
				}
				run(sh, w)
				writing[sh.ID].Store(false)
				tokenRuns.Add(1)
				return
			}
			inside[sh.ID].Add(1)
			for range 100 {
				if writing[sh.ID].Load() {
					t.Errorf("shard %d: shared work runs beside its token holder", sh.ID)
					break
				}
			}
			for _, i := range w.Slots {
				if !w.Batch().Slots[i].Shared {
					t.Errorf("shard %d: %s ran shared", sh.ID, w.Batch().Slots[i].Args[0])
				}
			}
			run(sh, w)
			inside[sh.ID].Add(-1)
			sharedRuns.Add(1)
		}
	}
	serveConns(t, env, conns, func(c int) (req []byte) {
		for i := range depth {
			key := "k" + strconv.Itoa((i*7+c)%keys)
			if i%5 == 0 {
				req = append(req, cmd("INCR", key)...)
			} else {
				req = append(req, cmd("GET", key)...)
			}
		}
		return req
	}, func(c int, got []byte) {
		// A GET sees at least this connection's own INCRs of the key, and values never go
		// back.
		own, last := map[string]int{}, map[string]int{}
		out := string(got)
		for i := range depth {
			key := "k" + strconv.Itoa((i*7+c)%keys)
			line, rest, _ := strings.Cut(out, "\r\n")
			out = rest
			v, err := strconv.Atoi(strings.TrimPrefix(line, ":"))
			if err != nil {
				t.Errorf("conn %d reply %d: %q", c, i, line)
				return
			}
			if i%5 == 0 {
				own[key]++
			}
			if v < own[key] || v < last[key] {
				t.Errorf("conn %d reply %d: %s is %d after own %d, last seen %d", c, i, key, v, own[key], last[key])
				return
			}
			last[key] = v
		}
	})
	var req []byte
	for k := range keys {
		req = append(req, cmd("GET", "k"+strconv.Itoa(k))...)
	}
	var want bytes.Buffer
	for k := range keys {
		n := 0
		for c := range conns {
			for i := 0; i < depth; i += 5 {
				if (i*7+c)%keys == k {
					n++
				}
			}
		}
		fmt.Fprintf(&want, ":%d\r\n", n)
	}
	if got := serveReq(t, env, req); got != want.String() {
		t.Errorf("final values %q, want %q", got, want.String())
	}
	if sharedRuns.Load() == 0 || tokenRuns.Load() == 0 {
		t.Fatalf("shared runs %d, token runs %d: both paths must run", sharedRuns.Load(), tokenRuns.Load())
	}
}

// Work handed back by NeedToken runs again from that slot holding the token, after the slots
// before it ran shared; replies stay in order.
func TestNeedToken(t *testing.T) {
	env := sharedToyEnv(1)
	var shared, held []string
	sh := env.Group.Shards[0]
	run := sh.exec
	sh.exec = func(sh *Shard, w *Work) {
		b := w.Batch()
		for k, i := range w.Slots {
			key := string(b.Slots[i].Args[1])
			if w.Reader() < 0 {
				held = append(held, key)
				continue
			}
			if strings.HasPrefix(key, "x") {
				w.NeedToken(k)
				return
			}
			shared = append(shared, key)
			b.Slots[i].Reply = resp.AppendInt(b.Slots[i].Reply, int64(sh.Data.(*toyShard).m[key]))
		}
		if w.Reader() < 0 {
			run(sh, w)
		}
	}
	serveReq(t, env, append(append(cmd("INCR", "a"), cmd("INCR", "x")...), cmd("INCR", "x")...))
	shared, held = nil, nil
	got := serveReq(t, env, append(append(cmd("GET", "a"), cmd("GET", "x")...), cmd("GET", "a")...))
	if got != ":1\r\n:2\r\n:1\r\n" {
		t.Errorf("replies %q", got)
	}
	if fmt.Sprint(shared) != "[a]" || fmt.Sprint(held) != "[x a]" {
		t.Errorf("ran shared %v and holding the token %v, want [a] and [x a]", shared, held)
	}
}

// The protocol itself: a token taker waits for a registered reader to leave, and a reader
// cannot register while the token is taken.
func TestTokenWaitsForReaders(t *testing.T) {
	g := toyEnv(2).Group
	r := g.readers[len(g.readers)-1]
	if !g.enter(r, 1) {
		t.Fatal("a reader could not enter a free shard")
	}
	lockWaitsFor(t, g, 1, func() { r[1].Add(-1) })
	if g.enter(r, 1) {
		t.Fatal("a reader entered a shard whose token is taken")
	}
	if r[1].Load() != 0 {
		t.Fatal("a refused reader left its count raised")
	}
	g.Unlock([]int32{1})
	if !g.enter(r, 1) {
		t.Fatal("a reader could not enter once the token was let go")
	}
	r[1].Add(-1)
}

// Share takes all the shards or none: with one token taken it leaves no counter raised; once
// shared, a token taker of any of them waits for Unshare.
func TestShareAllOrNothing(t *testing.T) {
	g := toyEnv(4).Group
	g.Lock([]int32{2})
	if _, ok := g.Share([]int32{0, 1, 2, 3}); ok {
		t.Fatal("Share succeeded with a token taken")
	}
	for p, r := range g.readers {
		for id := range r {
			if r[id].Load() != 0 {
				t.Fatalf("a refused Share left P %d's counter of shard %d raised", p, id)
			}
		}
	}
	g.Unlock([]int32{2})
	p, ok := g.Share([]int32{0, 1, 2, 3})
	if !ok {
		t.Fatal("Share failed with every token free")
	}
	lockWaitsFor(t, g, 3, func() { g.Unshare(p, []int32{0, 1, 2, 3}) })
	g.Unlock([]int32{3})
}

// lockWaitsFor checks that taking shard id's token waits while a reader is inside and goes on
// once leave has let it out; the token is left taken.
func lockWaitsFor(t *testing.T, g *Group, id int32, leave func()) {
	t.Helper()
	locked := make(chan struct{})
	go func() {
		g.Lock([]int32{id})
		close(locked)
	}()
	select {
	case <-locked:
		t.Fatalf("shard %d's token was taken while a reader was inside", id)
	case <-time.After(50 * time.Millisecond):
	}
	leave()
	select {
	case <-locked:
	case <-time.After(10 * time.Second):
		t.Fatalf("the taker of shard %d's token did not go on once the reader left", id)
	}
}
