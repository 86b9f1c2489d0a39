package command

import (
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hotkv/hotkv/ds/keyspace"
)

// TestVsimSearchTagRecall: VSIM.SEARCH with a tag on 1% of 20,000 elements (the exact path over
// the tag's members) and with one on 60% (more than vsimExactLimit: the filtered graph search)
// returns K results at recall >= 0.9 against the exact filtered scan (VSIM.SEARCH … EXACT, which
// scores every member of the tag). Clustered data, 32 dimensions, cosine Q8, K 10.
func TestVsimSearchTagRecall(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a 20,000-element index")
	}
	const n, dim, k, queries = 20000, 32, 10, 50
	e := newTestEngine()
	tc := newTestConn(t, e)
	tc.do("VSIM.CREATEINDEX", "idx", "DIM", strconv.Itoa(dim))
	r := rand.New(rand.NewPCG(7, 8))
	centers := make([][]float32, 50)
	for i := range centers {
		centers[i] = make([]float32, dim)
		for j := range centers[i] {
			centers[i][j] = float32(r.NormFloat64())
		}
	}
	point := func() []float32 {
		c := centers[r.IntN(len(centers))]
		v := make([]float32, dim)
		for j := range v {
			v[j] = c[j] + float32(r.NormFloat64())*0.5
		}
		return v
	}
	start := time.Now()
	const batch = 200
	for i := 0; i < n; i += batch {
		// Elements i%100 == 0 carry "rare" (1%), i%10 < 6 "common" (60%).
		for _, tag := range []string{"rare", "common", ""} {
			args := []string{"VSIM.SET", "idx"}
			if tag != "" {
				args = append(args, "TAGS", "1", tag)
			}
			var items []string
			for j := i; j < i+batch; j++ {
				if tagOf(j) == tag {
					items = append(items, "e"+strconv.Itoa(j), fp32(point()))
				}
			}
			if len(items) == 0 {
				continue
			}
			args = append(append(args, "ITEMS", strconv.Itoa(len(items)/2)), items...)
			if got := tc.do(args...); got[0] != ':' {
				t.Fatalf("VSIM.SET: %q", got)
			}
		}
	}
	t.Logf("built %d elements in %v", n, time.Since(start))
	ks := e.keyspace(0, []byte("idx"))
	v := keyspace.Obj[vsetValue](ks.FindQuiet([]byte("idx"), time.Now().UnixNano()))
	if got := v.tags.Match([][]byte{[]byte("rare")}, false).GetCardinality(); got != n/100 {
		t.Fatalf("rare tag on %d elements, want %d", got, n/100)
	}
	if got := v.tags.Match([][]byte{[]byte("common")}, false).GetCardinality(); got <= vsimExactLimit {
		t.Fatalf("common tag on %d elements: not over the exact limit", got)
	}
	for _, tag := range []string{"rare", "common"} {
		hits, total := 0, 0
		for range queries {
			q := fp32(point())
			got := replyNames(tc.do("VSIM.SEARCH", "idx", "FP32", q, "K", strconv.Itoa(k), "TAGS", "ANY", "1", tag))
			want := replyNames(tc.do("VSIM.SEARCH", "idx", "FP32", q, "K", strconv.Itoa(k), "TAGS", "ANY", "1", tag, "EXACT"))
			if len(got) != k || len(want) != k {
				t.Fatalf("%s: %d results, exact %d, want %d", tag, len(got), len(want), k)
			}
			for _, g := range got {
				j, _ := strconv.Atoi(strings.TrimPrefix(g, "e"))
				if tagOf(j) != tag {
					t.Fatalf("%s: result %s does not carry the tag", tag, g)
				}
			}
			hits += overlap(got, want)
			total += k
		}
		recall := float64(hits) / float64(total)
		t.Logf("tag %s: recall@%d %.3f over %d queries", tag, k, recall, queries)
		if recall < 0.9 {
			t.Errorf("tag %s: recall@%d %.3f, want >= 0.9", tag, k, recall)
		}
	}
}

func tagOf(j int) string {
	switch {
	case j%100 == 0:
		return "rare"
	case j%10 < 6:
		return "common"
	}
	return ""
}

// replyNames returns the bulk strings of a flat array reply.
func replyNames(reply string) []string {
	var out []string
	lines := strings.Split(reply, "\r\n")
	for i := 1; i+1 < len(lines); i += 2 {
		out = append(out, lines[i+1])
	}
	return out
}

func overlap(a, b []string) int {
	set := map[string]bool{}
	for _, x := range b {
		set[x] = true
	}
	n := 0
	for _, x := range a {
		if set[x] {
			n++
		}
	}
	return n
}
