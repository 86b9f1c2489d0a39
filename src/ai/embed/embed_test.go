package embed

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func cos(a, b []float32) float64 {
	var d float64
	for i := range a {
		d += float64(a[i]) * float64(b[i])
	}
	return d
}

func TestNormalize(t *testing.T) {
	f := func(in, want string) {
		t.Helper()
		if got := string(Normalize([]byte(in), nil)); got != want {
			t.Errorf("Normalize(%q) = %q, want %q", in, got, want)
		}
	}
	f("  What  IS\t2+2?\n", "what is 2+2?")
	f("", "")
	f("   ", "")
	f("ÉCOLE Straße", "école straße")
	f("a\xffB", "a\xffb")
	if got := string(Normalize([]byte(" x y"), []byte("p:"))); got != "p:x y" {
		t.Errorf("Normalize with a prefix = %q", got)
	}
}

func TestLexical(t *testing.T) {
	l, err := NewLexical(256)
	if err != nil {
		t.Fatal(err)
	}
	a := l.Vector([]byte("How do I enable two factor authentication?"), nil)
	b := l.Vector([]byte("how do i   ENABLE two factor authentication?"), nil)
	c := l.Vector([]byte("How can I turn on two-factor authentication"), nil)
	d := l.Vector([]byte("Best pizza recipe with mozzarella"), nil)
	if s := cos(a, b); math.Abs(s-1) > 1e-5 {
		t.Errorf("normalized-equal prompts: cosine %v, want 1", s)
	}
	if cos(a, c) <= cos(a, d)+0.2 {
		t.Errorf("paraphrase %v not well above unrelated %v", cos(a, c), cos(a, d))
	}
	var n float64
	for _, x := range c {
		n += float64(x) * float64(x)
	}
	if math.Abs(n-1) > 1e-5 {
		t.Errorf("norm² %v, want 1", n)
	}
	z := l.Vector(nil, nil)
	for _, x := range z {
		if x != 0 {
			t.Fatal("empty text: not the zero vector")
		}
	}
	// Deterministic across instances (a restarted server embeds the same).
	l2, _ := NewLexical(256)
	if a2 := l2.Vector([]byte("How do I enable two factor authentication?"), nil); cos(a, a2) < 1-1e-6 {
		t.Error("not deterministic")
	}
	if _, err := NewLexical(1); err == nil {
		t.Error("dim 1 accepted")
	}
	if l.Name() != "lexical 256" || !l.Local() || l.Dim() != 256 {
		t.Error(l.Name(), l.Local(), l.Dim())
	}
}

func TestParse(t *testing.T) {
	f := func(words string, dim int, want string) {
		t.Helper()
		e, err := Parse(strings.Fields(words), dim, Options{})
		got := ""
		if err != nil {
			got = "error: " + err.Error()
		} else {
			got = e.Name()
		}
		if got != want {
			t.Errorf("Parse(%q) = %q, want %q", words, got, want)
		}
	}
	f("lexical", 0, "lexical 256")
	f("LEXICAL", 64, "lexical 64")
	f("lexical x", 0, "error: invalid embedder: lexical takes no arguments")
	f("openai http://127.0.0.1:1/v1 m", 0, "openai http://127.0.0.1:1/v1/embeddings m")
	f("openai http://h/v1/embeddings m", 8, "openai http://h/v1/embeddings m")
	f("openai ftp://h m", 0, "error: invalid embedder: URL must be http:// or https:// with a host")
	f("openai http://h", 0, "error: invalid embedder: openai takes URL and model")
	f("bert", 0, "error: invalid embedder: unknown kind 'bert' (lexical or openai)")
	f("", 0, "error: invalid embedder: missing kind")
}

// fakeServer answers /v1/embeddings with vectors [len(text), i, 1, ...] of dim, or by fn.
func fakeServer(t *testing.T, dim int, fn func(w http.ResponseWriter, in embedRequest) bool) (*httptest.Server, *atomic.Int64) {
	var batches atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var in embedRequest
		if r.URL.Path != "/v1/embeddings" || r.Method != http.MethodPost || json.NewDecoder(r.Body).Decode(&in) != nil {
			http.Error(w, `{"error":{"message":"bad request"}}`, 400)
			return
		}
		batches.Add(1)
		if fn != nil && fn(w, in) {
			return
		}
		type item struct {
			Embedding []float32 `json:"embedding"`
			Index     int       `json:"index"`
		}
		var out struct {
			Data []item `json:"data"`
		}
		for i := len(in.Input) - 1; i >= 0; i-- { // reversed: the index field orders them
			v := make([]float32, dim)
			v[0] = float32(len(in.Input[i]))
			out.Data = append(out.Data, item{v, i})
		}
		json.NewEncoder(w).Encode(out)
	}))
	t.Cleanup(srv.Close)
	return srv, &batches
}

func TestOpenAIReply(t *testing.T) {
	srv, _ := fakeServer(t, 4, nil)
	o, err := NewOpenAI(srv.URL+"/v1", "m", 0, Options{})
	if err != nil {
		t.Fatal(err)
	}
	vs, err := o.Embed(context.Background(), [][]byte{[]byte("a"), []byte("bbb")})
	if err != nil {
		t.Fatal(err)
	}
	if len(vs) != 2 || vs[0][0] != 1 || vs[1][0] != 3 || o.Dim() != 4 {
		t.Fatalf("got %v dim %d", vs, o.Dim())
	}
	// Cached now: no request, and Cached answers without I/O.
	before := o.Requests.Load()
	if _, err := o.Embed(context.Background(), [][]byte{[]byte("bbb")}); err != nil || o.Requests.Load() != before {
		t.Errorf("cached text sent again (err %v)", err)
	}
	if v, ok := o.Cached([]byte("a")); !ok || v[0] != 1 {
		t.Error("Cached missed")
	}
	if _, ok := o.Cached([]byte("zz")); ok {
		t.Error("Cached hit an unknown text")
	}
}

func TestOpenAIErrors(t *testing.T) {
	f := func(name string, dim int, opts Options, fn func(w http.ResponseWriter, in embedRequest) bool, want string) {
		t.Run(name, func(t *testing.T) {
			srv, _ := fakeServer(t, 4, fn)
			o, err := NewOpenAI(srv.URL+"/v1", "m", dim, opts)
			if err != nil {
				t.Fatal(err)
			}
			_, err = o.Embed(context.Background(), [][]byte{[]byte("x")})
			if err == nil || !errors.Is(err, ErrEndpoint) || !strings.Contains(err.Error(), want) {
				t.Fatalf("err %v, want one containing %q", err, want)
			}
			if strings.ContainsAny(err.Error(), "\r\n") {
				t.Fatalf("error has a line break: %q", err)
			}
		})
	}
	f("timeout", 0, Options{Timeout: 100 * time.Millisecond}, func(w http.ResponseWriter, _ embedRequest) bool {
		time.Sleep(400 * time.Millisecond)
		return false
	}, "embedding endpoint: no reply within 100ms")
	f("http500", 0, Options{}, func(w http.ResponseWriter, _ embedRequest) bool {
		w.WriteHeader(500)
		fmt.Fprint(w, `{"error":{"message":"model\r\noverloaded"}}`)
		return true
	}, "embedding endpoint: HTTP 500: model  overloaded")
	f("http404 no json", 0, Options{}, func(w http.ResponseWriter, _ embedRequest) bool {
		w.WriteHeader(404)
		fmt.Fprint(w, `not found`)
		return true
	}, "embedding endpoint: HTTP 404")
	f("bad json", 0, Options{}, func(w http.ResponseWriter, _ embedRequest) bool {
		fmt.Fprint(w, `{"data":[{"embedding":[1,2,`)
		return true
	}, "embedding endpoint: invalid JSON in the reply")
	f("wrong dims", 8, Options{}, nil, "embedding endpoint: embedding of 4 dimensions, expected 8")
	f("wrong count", 0, Options{}, func(w http.ResponseWriter, _ embedRequest) bool {
		fmt.Fprint(w, `{"data":[]}`)
		return true
	}, "embedding endpoint: 0 embeddings for 1 inputs")
	f("empty vector", 0, Options{}, func(w http.ResponseWriter, _ embedRequest) bool {
		fmt.Fprint(w, `{"data":[{"embedding":[],"index":0}]}`)
		return true
	}, "embedding endpoint: embedding of 0 dimensions")
	f("bad index", 0, Options{}, func(w http.ResponseWriter, _ embedRequest) bool {
		fmt.Fprint(w, `{"data":[{"embedding":[1],"index":3}]}`)
		return true
	}, "embedding endpoint: bad embedding index 3")
	t.Run("refused", func(t *testing.T) {
		srv := httptest.NewServer(http.NotFoundHandler())
		u := srv.URL
		srv.Close()
		o, _ := NewOpenAI(u, "m", 0, Options{})
		if _, err := o.Embed(context.Background(), [][]byte{[]byte("x")}); err == nil || !errors.Is(err, ErrEndpoint) {
			t.Fatalf("err %v", err)
		}
	})
	t.Run("ctx", func(t *testing.T) {
		srv, _ := fakeServer(t, 4, func(w http.ResponseWriter, _ embedRequest) bool {
			time.Sleep(300 * time.Millisecond)
			return false
		})
		o, _ := NewOpenAI(srv.URL+"/v1", "m", 0, Options{})
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		start := time.Now()
		if _, err := o.Embed(ctx, [][]byte{[]byte("x")}); !errors.Is(err, context.DeadlineExceeded) || time.Since(start) > 250*time.Millisecond {
			t.Fatalf("err %v after %v", err, time.Since(start))
		}
	})
}

// TestOpenAIBatching: 40 concurrent calls against an endpoint that takes 50 ms a request, with
// one request in flight at a time, go out in a few batches, and each caller gets its own vector.
func TestOpenAIBatching(t *testing.T) {
	srv, batches := fakeServer(t, 4, func(w http.ResponseWriter, _ embedRequest) bool {
		time.Sleep(50 * time.Millisecond)
		return false
	})
	o, _ := NewOpenAI(srv.URL+"/v1", "m", 4, Options{MaxInflight: 1, MaxBatch: 64})
	var wg sync.WaitGroup
	errs := make(chan error, 40)
	for i := range 40 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			text := strings.Repeat("x", i+1)
			vs, err := o.Embed(context.Background(), [][]byte{[]byte(text)})
			if err == nil && vs[0][0] != float32(i+1) {
				err = fmt.Errorf("call %d got %v", i, vs[0])
			}
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if n := batches.Load(); n > 10 {
		t.Errorf("40 concurrent calls took %d requests, want batching (≤ 10)", n)
	}
	t.Logf("40 concurrent calls: %d requests", batches.Load())
}
