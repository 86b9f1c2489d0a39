package command

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// tagModel is the reference: the live keys (each with its tags in the order added) and the keys
// given a TTL of a few milliseconds or less, which no operation touches until the next check has
// waited them out (their death is then certain, not a race with the clock).
type tagModel struct {
	keys  map[string][]string // live keys; nil slice: no tags
	dying map[string]bool
}

func (m *tagModel) members(tag string) []string {
	var out []string
	for k, ts := range m.keys {
		if !m.dying[k] && slices.Contains(ts, tag) {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

// TestTagsAgainstModel runs tagPropOps random SET/DEL/EXPIRE (seconds, ms and ns; long, short and
// past)/RENAME/TAG.* operations, checking every reply against the model, and every 5,000
// operations TAG.COUNT and TAG.MEMBERS of every tag against the model's live keys, with and
// without an active expiry cycle first.
func TestTagsAgainstModel(t *testing.T) {
	ops := tagPropOps
	if testing.Short() {
		ops /= 10
	}
	e := newTestEngine()
	tc := newTestConn(t, e)
	r := rand.New(rand.NewPCG(18, 6))
	m := &tagModel{keys: map[string][]string{}, dying: map[string]bool{}}
	const nkeys, ntags = 3000, 24
	key := func() string {
		for {
			if k := "k" + strconv.Itoa(r.IntN(nkeys)); !m.dying[k] {
				return k
			}
		}
	}
	tag := func() string { return "t" + strconv.Itoa(r.IntN(ntags)) }
	tagsArg := func() []string {
		out := make([]string, 1+r.IntN(3))
		for i := range out {
			out[i] = tag()
		}
		return out
	}
	expect := func(args []string, want string) {
		t.Helper()
		if got := tc.do(args...); got != want {
			t.Fatalf("%q = %q, model %q", args, got, want)
		}
	}
	start := time.Now()
	for i := range ops {
		if i%5000 == 4999 {
			checkTagModel(t, e, tc, m, ntags, r.IntN(2) == 0)
		}
		k := key()
		_, live := m.keys[k]
		switch op := r.IntN(100); {
		case op < 20: // SET drops the tags and the TTL
			expect([]string{"SET", k, "v"}, "+OK\r\n")
			m.keys[k] = nil
		case op < 25: // KEEPTTL keeps both
			expect([]string{"SET", k, "w", "KEEPTTL"}, "+OK\r\n")
			if !live {
				m.keys[k] = nil
			}
		case op < 32:
			expect([]string{"DEL", k}, ":"+b01(live)+"\r\n")
			delete(m.keys, k)
		case op < 38: // a long TTL in s, ms or ns keeps the tags
			unit := []string{"EXPIRE", "PEXPIRE", "NEXPIRE"}[r.IntN(3)]
			n := map[string]int64{"EXPIRE": 3600, "PEXPIRE": 3_600_000, "NEXPIRE": 3_600_000_000_000}[unit]
			expect([]string{unit, k, strconv.FormatInt(n+r.Int64N(1000), 10)}, ":"+b01(live)+"\r\n")
		case op < 42: // a TTL of up to 2 ms, or ns: the key dies before the next check
			unit, n := "PEXPIRE", 1+r.Int64N(2)
			if r.IntN(2) == 0 {
				unit, n = "NEXPIRE", 1+r.Int64N(2_000_000)
			}
			expect([]string{unit, k, strconv.FormatInt(n, 10)}, ":"+b01(live)+"\r\n")
			if live {
				m.dying[k] = true
			}
		case op < 44: // a time already past deletes at once
			unit := []string{"PEXPIRE", "NEXPIRE", "EXPIRE"}[r.IntN(3)]
			expect([]string{unit, k, strconv.Itoa(-r.IntN(5))}, ":"+b01(live)+"\r\n")
			delete(m.keys, k)
		case op < 52:
			dst := key()
			switch {
			case !live:
				expect([]string{"RENAME", k, dst}, "-ERR no such key\r\n")
			default:
				expect([]string{"RENAME", k, dst}, "+OK\r\n")
				if dst != k {
					m.keys[dst] = m.keys[k]
					delete(m.keys, k)
				}
			}
		case op < 72:
			ts := tagsArg()
			if !live {
				expect(append([]string{"TAG.SET", k}, ts...), "-ERR no such key\r\n")
				break
			}
			n := 0
			for _, tg := range ts {
				if !slices.Contains(m.keys[k], tg) {
					m.keys[k] = append(m.keys[k], tg)
					n++
				}
			}
			expect(append([]string{"TAG.SET", k}, ts...), ":"+strconv.Itoa(n)+"\r\n")
		case op < 80:
			ts := tagsArg()
			n := 0
			for _, tg := range ts {
				if j := slices.Index(m.keys[k], tg); j >= 0 {
					m.keys[k] = slices.Delete(m.keys[k], j, j+1)
					n++
				}
			}
			expect(append([]string{"TAG.DEL", k}, ts...), ":"+strconv.Itoa(n)+"\r\n")
		case op < 83:
			expect([]string{"TAG.CLEAR", k}, ":"+strconv.Itoa(len(m.keys[k]))+"\r\n")
			if live {
				m.keys[k] = nil
			}
		case op < 84: // invalidates a tag's keys (dying ones are not counted: they may be gone)
			tg := tag()
			gone := m.members(tg)
			got := tc.do("TAG.INVALIDATE", tg)
			n, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(got, ":"), "\r\n"))
			dyingTagged := 0
			for k, ts := range m.keys {
				if m.dying[k] && slices.Contains(ts, tg) {
					dyingTagged++
				}
			}
			if n < len(gone) || n > len(gone)+dyingTagged {
				t.Fatalf("TAG.INVALIDATE %s = %q, model %d live (+%d dying)", tg, got, len(gone), dyingTagged)
			}
			for k, ts := range m.keys {
				if slices.Contains(ts, tg) {
					delete(m.keys, k)
				}
			}
		default:
			want := "*" + strconv.Itoa(len(m.keys[k])) + "\r\n"
			for _, tg := range m.keys[k] {
				want += "$" + strconv.Itoa(len(tg)) + "\r\n" + tg + "\r\n"
			}
			expect([]string{"TAG.GET", k}, want)
		}
	}
	checkTagModel(t, e, tc, m, ntags, true)
	t.Logf("%d operations in %v", ops, time.Since(start).Round(time.Millisecond))
}

func b01(b bool) string {
	if b {
		return "1"
	}
	return "0"
}

// checkTagModel waits out the dying keys, optionally runs an active expiry cycle (else they go
// lazily, when TAG.COUNT or TAG.MEMBERS meet them), and compares every tag's TAG.COUNT and
// TAG.MEMBERS with the model's live keys.
func checkTagModel(t *testing.T, e *Engine, tc *testConn, m *tagModel, ntags int, active bool) {
	t.Helper()
	time.Sleep(3 * time.Millisecond)
	for k := range m.dying {
		delete(m.keys, k)
	}
	clear(m.dying)
	if active {
		e.ActiveExpire(time.Second)
	}
	for i := range ntags {
		tg := "t" + strconv.Itoa(i)
		want := m.members(tg)
		if got := tc.do("TAG.COUNT", tg); got != fmt.Sprintf(":%d\r\n", len(want)) {
			t.Fatalf("TAG.COUNT %s = %q, model %d", tg, got, len(want))
		}
		got := replyStrings(t, tc.do("TAG.MEMBERS", tg))
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Fatalf("TAG.MEMBERS %s: %d keys, model %d", tg, len(got), len(want))
		}
	}
}
