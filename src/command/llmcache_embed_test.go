package command

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// embedEndpoint is an OpenAI-compatible /v1/embeddings on loopback that answers after delay with
// 4-dimensional vectors (1, len(text), 0, 0), or with status and body when status is set.
func embedEndpoint(t *testing.T, delay time.Duration, status int, body string) (*httptest.Server, *atomic.Int64) {
	var calls atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		var in struct {
			Input []string `json:"input"`
		}
		json.NewDecoder(r.Body).Decode(&in)
		select {
		case <-time.After(delay):
		case <-r.Context().Done():
			return
		}
		if status != 0 {
			w.WriteHeader(status)
			fmt.Fprint(w, body)
			return
		}
		var sb strings.Builder
		sb.WriteString(`{"data":[`)
		for i, s := range in.Input {
			if i > 0 {
				sb.WriteByte(',')
			}
			fmt.Fprintf(&sb, `{"index":%d,"embedding":[1,%d,0,0]}`, i, len(s))
		}
		sb.WriteString(`]}`)
		fmt.Fprint(w, sb.String())
	}))
	t.Cleanup(srv.Close)
	return srv, &calls
}

// TestSlowEmbedderDoesNotHoldShard: while one client's LLMCACHE.GET waits 2 s for the endpoint,
// other clients' commands on the same key (so the same shard) answer at once: the embedding runs
// holding no token (DESIGN invariant 6). The waiting client then gets its reply.
func TestSlowEmbedderDoesNotHoldShard(t *testing.T) {
	srv, calls := embedEndpoint(t, 2*time.Second, 0, "")
	e := newTestEngine()
	a, b := newTestConn(t, e), newTestConn(t, e)
	if got := a.do("LLMCACHE.CREATE", "c", "DIM", "4", "EMBEDDER", "openai", srv.URL+"/v1", "test-model"); got != "+OK\r\n" {
		t.Fatal(got)
	}
	v := fp32([]float32{1, 2, 0, 0})
	if got := b.do("LLMCACHE.SET", "c", "NS", "n", "PROMPT", "hi", "RESPONSE", "hello", "VECTOR", "FP32", v, "TOKENS", "1", "1"); got != ":1\r\n" {
		t.Fatal(got)
	}
	var wg sync.WaitGroup
	var slow string
	var slowTook time.Duration
	wg.Add(1)
	go func() {
		defer wg.Done()
		start := time.Now()
		slow = a.do("LLMCACHE.GET", "c", "NS", "n", "PROMPT", "hi!")
		slowTook = time.Since(start)
	}()
	for calls.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	start := time.Now()
	for i := range 20 {
		if got := b.do("LLMCACHE.GET", "c", "NS", "n", "PROMPT", "hi"); !strings.Contains(got, "hello") {
			t.Fatalf("exact GET while the embedder is slow: %q", got)
		}
		if got := b.do("LLMCACHE.SET", "c", "NS", "n", "PROMPT", "p"+string(rune('a'+i)), "RESPONSE", "r", "VECTOR", "FP32", v); got[0] != ':' {
			t.Fatalf("SET while the embedder is slow: %q", got)
		}
		b.do("SET", "c{x}", "1")
	}
	if took := time.Since(start); took > 500*time.Millisecond {
		t.Fatalf("60 commands on the shard took %v while another client waited for its embedding", took)
	}
	wg.Wait()
	// "hi!" embeds to (1, 3, 0, 0): cosine 0.99 with (1, 2, 0, 0), a semantic hit.
	if slowTook < 2*time.Second || !strings.Contains(slow, "semantic") {
		t.Fatalf("the waiting GET replied %q after %v", slow, slowTook)
	}
	// The exact lookup costs no embedding; the recent-vector cache answers a repeat.
	before := calls.Load()
	a.do("LLMCACHE.GET", "c", "NS", "n", "PROMPT", "hi")
	a.do("LLMCACHE.GET", "c", "NS", "n", "PROMPT", "hi!")
	if calls.Load() != before {
		t.Errorf("exact hit or cached prompt called the endpoint")
	}
	// SET without VECTOR embeds too, and a MULTI cannot wait for the endpoint.
	a.do("MULTI")
	a.do("LLMCACHE.GET", "c", "NS", "n", "PROMPT", "never seen")
	if got := a.do("EXEC"); !strings.Contains(got, "MULTI/EXEC and scripts cannot wait") {
		t.Errorf("EXEC: %q", got)
	}
}

// TestEmbedderErrors: an endpoint's failures are one-line error replies.
func TestEmbedderErrors(t *testing.T) {
	f := func(name string, delay time.Duration, status int, body, want string) {
		t.Run(name, func(t *testing.T) {
			srv, _ := embedEndpoint(t, delay, status, body)
			old := llmEmbedTimeout
			llmEmbedTimeout = 300 * time.Millisecond
			defer func() { llmEmbedTimeout = old }()
			tc := newTestConn(t, newTestEngine())
			tc.do("LLMCACHE.CREATE", "c", "DIM", "4", "EMBEDDER", "openai", srv.URL, "m")
			for _, cmd := range [][]string{
				{"LLMCACHE.GET", "c", "NS", "n", "PROMPT", "q"},
				{"LLMCACHE.SET", "c", "NS", "n", "PROMPT", "q", "RESPONSE", "r"},
			} {
				if got := tc.do(cmd...); got != want {
					t.Errorf("%s: %q, want %q", cmd[0], got, want)
				}
			}
		})
	}
	f("timeout", time.Second, 0, "", "-ERR embedding endpoint: no reply within 300ms\r\n")
	f("http 500", 0, 500, `{"error":{"message":"overloaded"}}`, "-ERR embedding endpoint: HTTP 500: overloaded\r\n")
	f("bad json", 0, 200, `{"data":[`, "-ERR embedding endpoint: invalid JSON in the reply\r\n")
	f("wrong dims", 0, 200, `{"data":[{"index":0,"embedding":[1,2]}]}`, "-ERR embedding endpoint: embedding of 2 dimensions, expected 4\r\n")
}
