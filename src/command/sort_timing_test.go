package command

import (
	"strconv"
	"strings"
	"testing"
)

// SORT on batches of hotBatch commands. Sorting reuses a pooled sorter, so a SORT that replies
// allocates nothing once warm; STORE allocates the list it stores.

// sortSetup makes a 100-element list and set of numbers, a 100-member sorted set, and a weight
// and an object key for each number.
func sortSetup() [][]string {
	l, s, z := []string{"RPUSH", "l"}, []string{"SADD", "s"}, []string{"ZADD", "z"}
	mset := []string{"MSET"}
	for i := range 100 {
		n := strconv.Itoa((i * 37) % 100)
		l, s, z = append(l, n), append(s, "m"+n), append(z, n, "m"+n)
		mset = append(mset, "w_"+n, strconv.Itoa(100-i), "o_"+n, strings.Repeat("o", 64))
	}
	return [][]string{l, s, z, mset}
}

var sortHotCases = []struct {
	name  string
	cmd   []string
	alloc bool // allocates by design
}{
	{"numeric", []string{"SORT", "l"}, false},
	{"numeric-limit-desc", []string{"SORT", "l", "LIMIT", "10", "5", "DESC"}, false},
	{"alpha-set", []string{"SORT", "s", "ALPHA"}, false},
	{"zset-nosort-limit", []string{"SORT_RO", "z", "BY", "nosort", "LIMIT", "50", "10"}, false},
	{"by-get", []string{"SORT", "l", "BY", "w_*", "GET", "#", "GET", "o_*"}, false},
	{"store", []string{"SORT", "l", "STORE", "dst"}, true},
}

func TestSortHotPathAllocatesNothing(t *testing.T) {
	if sortRace {
		t.Skip("sync.Pool drops items at random under -race")
	}
	for _, hc := range sortHotCases {
		if hc.alloc {
			continue
		}
		h := newHotConn(t, sortSetup(), hc.cmd...)
		hotReplies(t, hc.name, h)
		checkNoAllocs(t, hc.name, h)
	}
}

func BenchmarkSort(b *testing.B) {
	for _, hc := range sortHotCases {
		b.Run(hc.name, func(b *testing.B) { benchHot(b, newHotConn(b, sortSetup(), hc.cmd...)) })
	}
}
