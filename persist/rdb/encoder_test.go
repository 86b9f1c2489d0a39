package rdb

import (
	"bytes"
	"os"
	"sort"
	"strings"
	"sync"
	"testing"
)

// TestEncoderAllocsPerKey: once warm, encoding a key of each type allocates nothing.
func TestEncoderAllocsPerKey(t *testing.T) {
	val := bytes.Repeat([]byte("abcdefgh"), 32)
	elems := [][]byte{[]byte("1"), []byte("two"), val, []byte("-17")}
	e := &Encoder{Compress: true}
	i := 0
	nextElem := func() []byte { i++; return elems[(i-1)%len(elems)] }
	nextPair := func() ([]byte, []byte) { i++; return elems[(i-1)%len(elems)], elems[i%len(elems)][:1] }
	var members [][]byte
	for k := range 256 {
		members = append(members, []byte{byte('a' + k%26), byte(k)})
	}
	digits := [][]byte{[]byte("1"), []byte("2"), []byte("3")}
	nextScore := func() ([]byte, float64) { i++; return members[i%256], float64(i%256) / 3 }
	s := &Stream{Entries: []StreamEntry{{StreamID{1, 1}, [][]byte{[]byte("f"), val}}}, Length: 1, LastID: StreamID{1, 1}}
	for name, f := range map[string]func(){
		"string":     func() { e.StringValue([]byte("key:1"), val) },
		"list":       func() { e.ListValue([]byte("l"), 300, nextElem) },
		"intset":     func() { e.SetValue([]byte("s"), 3, func() []byte { i++; return digits[i%3] }) },
		"set":        func() { e.SetValue([]byte("s"), 4, nextElem) },
		"hash small": func() { e.HashValue([]byte("h"), 4, nextPair) },
		"hash large": func() { e.HashValue([]byte("h"), 600, nextPair) },
		"zset small": func() { e.ZSetValue([]byte("z"), 20, nextScore) },
		"zset large": func() { e.ZSetValue([]byte("z"), 200, nextScore) },
		"stream":     func() { e.StreamValue([]byte("x"), s) },
	} {
		run := func() { e.Buf = e.Buf[:0]; f() }
		run()
		if n := testing.AllocsPerRun(20, run); n > 0 {
			t.Errorf("%s: %v allocations per key", name, n)
		}
	}
}

// TestEncoderChunksConcatenate: keys encoded by separate Encoders on separate
// goroutines, joined in order, make one file that decodes to the same keys.
func TestEncoderChunksConcatenate(t *testing.T) {
	file, err := os.ReadFile("testdata/redis-7.0.15.rdb")
	if err != nil {
		t.Fatal(err)
	}
	dec := decodeAll(t, file)
	var keys []string
	for k := range dec.values {
		if strings.HasPrefix(k, "0:") {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	chunks := make([][]byte, 4)
	var wg sync.WaitGroup
	for c := range chunks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			e := &Encoder{Compress: c%2 == 0}
			for i := c; i < len(keys); i += len(chunks) {
				v := dec.values[keys[i]]
				if ms := dec.expires[keys[i]]; ms >= 0 {
					e.ExpireMs(ms)
				}
				encodeValue(e, []byte(keys[i][2:]), &v)
			}
			chunks[c] = e.Buf
		}()
	}
	wg.Wait()
	var e Encoder
	e.Header(Version)
	e.SelectDB(0)
	for _, c := range chunks {
		e.Buf = append(e.Buf, c...)
	}
	e.EOF(CRC64(0, append(e.Buf, OpEOF)))
	got := decodeAll(t, e.Buf)
	want := map[string]keyModel{}
	for _, k := range keys {
		want[k] = dec.keys[k]
	}
	diffModels(t, "concatenated chunks", want, got.keys)
}
