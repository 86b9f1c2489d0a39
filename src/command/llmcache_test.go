package command

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hotkv/hotkv/src/ai/llmcache"
)

// TestLLMCacheTranscript replays testdata/hotkv/llmcache.txt (HotKV-only: see its header).
func TestLLMCacheTranscript(t *testing.T) { hotkvTranscript(t, "llmcache") }

// TestLLMCacheEffects: keyspace events (class d, named after the command) and the replicated
// forms: SET with its id, vector, token counts and absolute expiry; evictions as DEL before it;
// INVALIDATE as DEL of the ids; FEEDBACK with the paraphrase it resolved; GET not at all.
func TestLLMCacheEffects(t *testing.T) {
	x := newHashFx(t)
	st := *x.e.Settings()
	st.NotifyKeyspaceEvents |= int64(NotifyModule | NotifyEvicted)
	x.e.SetSettings(st)
	v1 := fp32([]float32{1, 0})
	v2 := fp32([]float32{0.99, 0.1})
	x.check([]hashEffect{
		{cmd: []string{"LLMCACHE.CREATE", "k", "THRESHOLD", "0.9", "MAXENTRIES", "2"}, reply: "+OK\r\n",
			events: ev("llmcache.create", "k"), feed: []string{"0:LLMCACHE.CREATE k THRESHOLD 0.9 MAXENTRIES 2"}, dirty: 1},
		{cmd: []string{"LLMCACHE.SET", "k", "NS", "m", "PROMPT", "hi there", "RESPONSE", "hello", "VECTOR", "FP32", v1, "TOKENS", "2", "1", "TTL", "100"},
			reply: ":1\r\n", events: ev("llmcache.set", "k"),
			feed: []string{"0:LLMCACHE.SET k NS m PROMPT hi there RESPONSE hello VECTOR FP32 " + v1 + " TOKENS 2 1 COST 0 ID 1 PXAT ~" + msFromNow(100*time.Second)}, dirty: 1},
		// TOKENS omitted: counted server-side (cl100k_base: "what is up" is 3 tokens, "nothing" 1).
		{cmd: []string{"LLMCACHE.SET", "k", "NS", "m", "PROMPT", "what is up", "RESPONSE", "nothing", "TAGS", "1", "t"},
			reply: ":2\r\n", events: ev("llmcache.set", "k"),
			feed: []string{"0:LLMCACHE.SET k NS m PROMPT what is up RESPONSE nothing TOKENS 3 1 COST 0 TAGS 1 t ID 2 PXAT 0"}, dirty: 1},
		{cmd: []string{"LLMCACHE.GET", "k", "NS", "m", "PROMPT", "hi, there", "VECTOR", "FP32", v2}},
		{cmd: []string{"LLMCACHE.SET", "k", "NS", "m", "PROMPT", "third", "RESPONSE", "3", "TOKENS", "1", "1"},
			reply: ":3\r\n", events: evs(ev("llmcache.evict", "k"), ev("llmcache.set", "k")),
			feed: []string{"0:MULTI", "0:LLMCACHE.DEL k 2", "0:LLMCACHE.SET k NS m PROMPT third RESPONSE 3 TOKENS 1 1 COST 0 ID 3 PXAT 0", "0:EXEC"}, dirty: 1},
		{cmd: []string{"LLMCACHE.FEEDBACK", "k", "1", "BAD"}, reply: ":1\r\n", events: ev("llmcache.feedback", "k"),
			feed: []string{"0:LLMCACHE.FEEDBACK k 1 BAD PROMPT hi, there"}, dirty: 1},
		{cmd: []string{"LLMCACHE.INVALIDATE", "k", "NS", "m"}, reply: ":1\r\n", events: ev("llmcache.invalidate", "k"),
			feed: []string{"0:LLMCACHE.DEL k 3"}, dirty: 1},
		{cmd: []string{"LLMCACHE.INVALIDATE", "k"}, reply: ":0\r\n"},
		{cmd: []string{"LLMCACHE.DEL", "k", "5"}, reply: ":0\r\n"},
		{cmd: []string{"LLMCACHE.STATS", "k"}},
	})
}

// TestLLMCacheRDBAndDump: a cache survives SAVE/load and DUMP/RESTORE with its entries, vectors,
// FEEDBACK pairs, statistics and embedder; a cut payload is refused.
func TestLLMCacheRDBAndDump(t *testing.T) {
	src := newTestEngine()
	tc := newTestConn(t, src)
	tc.do("LLMCACHE.CREATE", "c", "EMBEDDER", "lexical", "THRESHOLD", "0.5", "TTL", "1000")
	for i := range 50 {
		if got := tc.do("LLMCACHE.SET", "c", "NS", fmt.Sprint("ns", i%3), "PROMPT", fmt.Sprintf("question number %d about cats", i),
			"RESPONSE", fmt.Sprint("answer ", i), "TOKENS", "5", "7", "TAGS", "1", fmt.Sprint("t", i%2)); got[0] != ':' {
			t.Fatalf("SET: %q", got)
		}
	}
	tc.do("LLMCACHE.FEEDBACK", "c", "3", "BAD", "PROMPT", "question about dogs")
	queries := [][]string{
		{"LLMCACHE.GET", "c", "NS", "ns1", "PROMPT", "question number 4 about cats"},
		{"LLMCACHE.GET", "c", "NS", "ns2", "PROMPT", "Question number 5 about cats!"},
		{"LLMCACHE.GET", "c", "NS", "ns0", "PROMPT", "question number 99 about cats"},
		{"LLMCACHE.GET", "c", "NS", "ns0", "PROMPT", "question number 3 about cats", "MODE", "SEMANTIC"},
		{"LLMCACHE.STATS", "c"},
		{"TYPE", "c"},
	}
	want := make([]string, len(queries))
	for i, q := range queries {
		want[i] = tc.do(q...)
	}
	want[4] = tc.do(queries[4]...) // the GETs changed the statistics
	file := writeRDB(t, src, RDBOptions{Compress: true, Checksum: true})
	payload := bulkBody(t, tc.do("DUMP", "c"))
	dst := newTestEngine()
	if _, err := dst.LoadRDB(bytes.NewReader(file), LoadOptions{Size: int64(len(file))}); err != nil {
		t.Fatal(err)
	}
	dc := newTestConn(t, dst)
	if got := dc.do("RESTORE", "c2", "0", payload); got != "+OK\r\n" {
		t.Fatalf("RESTORE: %q", got)
	}
	for _, key := range []string{"c", "c2"} {
		if got := dc.do("LLMCACHE.STATS", key); got != want[4] {
			t.Errorf("%s STATS after load:\n got %q\nwant %q", key, got, want[4])
		}
		for i, q := range queries {
			q2 := append([]string{q[0], key}, q[2:]...)
			got := dc.do(q2...)
			if i == 4 {
				continue
			}
			if got != want[i] {
				t.Errorf("%s after load: %q\n got %q\nwant %q", key, q2, got, want[i])
			}
		}
	}
	for _, cut := range []int{3, 20, len(payload) / 2, len(payload) - 11} {
		if got := dc.do("RESTORE", "bad", "0", payload[:cut]); got[0] != '-' {
			t.Errorf("RESTORE of a payload cut at %d: %q", cut, got)
		}
	}
	// COPY is independent; MEMORY USAGE grows with the entries.
	if got := dc.do("COPY", "c", "c3"); got != ":1\r\n" {
		t.Fatal(got)
	}
	dc.do("LLMCACHE.INVALIDATE", "c3")
	if got := dc.do("LLMCACHE.GET", "c", "NS", "ns1", "PROMPT", "question number 4 about cats"); got == "$-1\r\n" {
		t.Fatal("INVALIDATE of a copy emptied the original")
	}
	small, big := replyAny(t, dc.do("MEMORY", "USAGE", "c3")).(int64), replyAny(t, dc.do("MEMORY", "USAGE", "c")).(int64)
	if small <= 0 || big <= small+50*100 {
		t.Errorf("MEMORY USAGE: empty %d, 50 entries %d", small, big)
	}
}

// TestLLMCacheEF: CREATE EF and GET EF are checked, kept by DUMP/RESTORE, and a GET with EF on
// a namespace above the exact-scan size finds an entry's own vector.
func TestLLMCacheEF(t *testing.T) {
	tc := newTestConn(t, newTestEngine())
	for _, bad := range []string{"0", "4097", "x"} {
		if got := tc.do("LLMCACHE.CREATE", "c", "DIM", "8", "EF", bad); got != "-"+errLLMEF+"\r\n" {
			t.Fatalf("EF %s: %q", bad, got)
		}
	}
	if got := tc.do("LLMCACHE.CREATE", "c", "DIM", "8", "EF", "32", "GUARD", "NONE"); got != "+OK\r\n" {
		t.Fatal(got)
	}
	r := rand.New(rand.NewPCG(1, 9))
	vecs := make([]string, llmcache.ExactBelow+200)
	for i := range vecs {
		vecs[i] = fp32(randVec(r, 8))
		tc.do("LLMCACHE.SET", "c", "NS", "n", "PROMPT", strconv.Itoa(i), "RESPONSE", "r"+strconv.Itoa(i), "VECTOR", "FP32", vecs[i], "TOKENS", "1", "1")
	}
	if got := tc.do("LLMCACHE.GET", "c", "NS", "n", "PROMPT", "x", "VECTOR", "FP32", vecs[7], "EF", "0"); got != "-"+errLLMEF+"\r\n" {
		t.Fatal(got)
	}
	for i := range 50 {
		got := tc.do("LLMCACHE.GET", "c", "NS", "n", "PROMPT", "x", "VECTOR", "FP32", vecs[i], "EF", "400")
		if !strings.Contains(got, "\r\nsemantic\r\n") {
			t.Fatalf("GET EF 400 of entry %d's vector: %q", i, got)
		}
	}
	payload := bulkBody(t, tc.do("DUMP", "c"))
	tc.do("DEL", "c")
	if got := tc.do("RESTORE", "c", "0", payload); got != "+OK\r\n" {
		t.Fatal(got)
	}
	if got := tc.do("LLMCACHE.STATS", "c"); !strings.Contains(got, "$2\r\nef\r\n:32\r\n") {
		t.Fatalf("EF after RESTORE: %q", got)
	}
}
