package tokens

import (
	"bytes"
	"math/rand/v2"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"
)

// TestLoadCost logs what building each table costs (run with -v; it must be the
// first test of the package to see the first load); it checks
// only that a table loads and counts.
func TestLoadCost(t *testing.T) {
	for _, enc := range []Encoding{Cl100k, O200k} {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		start := time.Now()
		Load(enc)
		took := time.Since(start)
		runtime.GC()
		runtime.ReadMemStats(&after)
		t.Logf("%v: first Load %v, heap +%d KB", enc, took, (int64(after.HeapAlloc)-int64(before.HeapAlloc))/1024)
		if Count(enc, []byte("hello world")) != 2 {
			t.Fatalf("%v: hello world is not 2 tokens", enc)
		}
	}
}

// Counts from Python's tiktoken (OpenAI's reference): the cookbook's
// "tiktoken is great!" (6 tokens in cl100k_base), and the token ids the
// tiktoken-go tests recorded from tiktoken for the rest.
func TestCountKnown(t *testing.T) {
	cases := []struct {
		enc  Encoding
		text string
		want int
	}{
		{Cl100k, "tiktoken is great!", 6},
		{Cl100k, "hello world", 2},
		{Cl100k, "hello  world", 3},
		{Cl100k, "hello   world", 3},
		{Cl100k, "'RE", 1},
		{Cl100k, "supercalifragilistic", 7},
		{Cl100k, "We know what we are, but know not what we may be.", 14},
		{O200k, "hello world", 2},
		{O200k, "'RE", 2},
		{O200k, "supercalifragilistic", 6},
		{O200k, "We know what we are, but know not what we may be.", 14},
		{Cl100k, "", 0},
		{O200k, "", 0},
	}
	for _, c := range cases {
		if got := Count(c.enc, []byte(c.text)); got != c.want {
			t.Errorf("Count(%v, %q) = %d, want %d", c.enc, c.text, got, c.want)
		}
	}
	if got := Count(0, []byte("x")); got != -1 {
		t.Errorf("Count(unknown) = %d, want -1", got)
	}
	if Load(Encoding(9)) {
		t.Errorf("Load(9) = true")
	}
}

func TestParse(t *testing.T) {
	for name, want := range map[string]Encoding{
		"cl100k": Cl100k, "CL100K_BASE": Cl100k, "o200k": O200k, "o200k_base": O200k,
		"p50k": 0, "": 0, "cl100k_": 0,
	} {
		got, ok := Parse([]byte(name))
		if got != want || ok != (want != 0) {
			t.Errorf("Parse(%q) = %v %v, want %v", name, got, ok, want)
		}
	}
}

// Invalid UTF-8 counts as its U+FFFD replacement does, and a count is never
// more than one token per byte nor zero for a non-empty text.
func TestCountBounds(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	alphabet := []string{"a", "é", "的", " ", "\n", "1", "!", "\xff", "\xe2\x82", "ab", "😀", "'s"}
	for i := 0; i < 300; i++ {
		var b bytes.Buffer
		for j := r.IntN(60); j >= 0; j-- {
			b.WriteString(alphabet[r.IntN(len(alphabet))])
		}
		text := b.Bytes()
		for _, enc := range []Encoding{Cl100k, O200k} {
			n := Count(enc, text)
			if n < 1 || n > len(text) {
				t.Fatalf("Count(%v, %q) = %d, outside [1, %d]", enc, text, n, len(text))
			}
			if !utf8.Valid(text) {
				fixed := []byte(strings.ToValidUTF8(string(text), "\uFFFD"))
				// ToValidUTF8 replaces a run of invalid bytes with one U+FFFD, the
				// codec one per maximal subpart: compare only where they agree.
				if bytes.Count(text, []byte("\xe2\x82")) == 0 && !bytes.Contains(text, []byte("\xff\xff")) {
					if m := Count(enc, fixed); m != n {
						t.Fatalf("Count(%v, %q) = %d, its replacement %q counts %d", enc, text, n, fixed, m)
					}
				}
			}
		}
	}
}

// Concurrent counts (run under -race) equal the serial ones, including the
// first use of each table racing with itself.
func TestCountConcurrent(t *testing.T) {
	texts := [][]byte{
		[]byte("The quick brown fox jumps over the lazy dog."),
		[]byte(strings.Repeat("token budgets for AI workloads ", 20)),
		[]byte("网关在转发请求之前需要估算输入的令牌数量"),
	}
	var wg sync.WaitGroup
	got := make([][2][]int, 8)
	for g := range got {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, tx := range texts {
				got[g][0] = append(got[g][0], Count(Cl100k, tx))
				got[g][1] = append(got[g][1], Count(O200k, tx))
			}
		}()
	}
	wg.Wait()
	for g := range got {
		for i, tx := range texts {
			if got[g][0][i] != Count(Cl100k, tx) || got[g][1][i] != Count(O200k, tx) {
				t.Fatalf("goroutine %d text %d: %v differs from serial", g, i, got[g])
			}
		}
	}
}
