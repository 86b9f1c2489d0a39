package command

import (
	"math/rand/v2"
	"slices"
	"strconv"
	"sync"
	"testing"
)

// Clients tagging, overwriting, renaming, deleting and invalidating the same keys at once (run it
// with -race): afterwards the index agrees with the keyspace: every member of a tag exists and
// carries it, and every key's tags list it among their members.
func TestTagsConcurrent(t *testing.T) {
	e := newTestEngine()
	const workers, nkeys, ntags = 4, 200, 6
	ops := 20_000
	if testing.Short() {
		ops = 2_000
	}
	var wg sync.WaitGroup
	for w := range workers {
		tc := newTestConn(t, e)
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(w), 7))
			k := func() string { return "k" + strconv.Itoa(r.IntN(nkeys)) }
			tg := func() string { return "t" + strconv.Itoa(r.IntN(ntags)) }
			for range ops {
				switch op := r.IntN(20); {
				case op < 4:
					tc.do("SET", k(), "v")
				case op < 11:
					tc.do("TAG.SET", k(), tg(), tg())
				case op < 13:
					tc.do("TAG.DEL", k(), tg())
				case op < 14:
					tc.do("DEL", k())
				case op < 16:
					tc.do("RENAME", k(), k())
				case op < 17:
					tc.do("TAG.INVALIDATE", tg())
				case op < 18:
					tc.do("TAG.MEMBERS", tg())
				case op < 19:
					tc.do("MOVE", k(), "1")
				default:
					tc.do("TAG.COUNT", tg())
				}
			}
		}()
	}
	wg.Wait()
	tc := newTestConn(t, e)
	for db := range 2 {
		tc.do("SELECT", strconv.Itoa(db))
		members := map[string][]string{}
		for i := range ntags {
			tag := "t" + strconv.Itoa(i)
			got := replyStrings(t, tc.do("TAG.MEMBERS", tag))
			if n := tc.do("TAG.COUNT", tag); n != ":"+strconv.Itoa(len(got))+"\r\n" {
				t.Fatalf("db %d: TAG.COUNT %s = %q, TAG.MEMBERS has %d", db, tag, n, len(got))
			}
			for _, k := range got {
				members[k] = append(members[k], tag)
			}
		}
		for i := range nkeys {
			k := "k" + strconv.Itoa(i)
			tags := replyStrings(t, tc.do("TAG.GET", k))
			if len(tags) > 0 && tc.do("EXISTS", k) != ":1\r\n" {
				t.Fatalf("db %d: missing key %s has tags %v", db, k, tags)
			}
			slices.Sort(tags)
			slices.Sort(members[k])
			if !slices.Equal(tags, members[k]) {
				t.Fatalf("db %d: TAG.GET %s = %v, but it is a member of %v", db, k, tags, members[k])
			}
		}
	}
}
