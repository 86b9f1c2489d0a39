package command

import (
	"bytes"
	"context"
	"io"
	"math/rand/v2"
	"os"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hotkv/hotkv/ds/keyspace"
	"github.com/hotkv/hotkv/persist/rdb"
	"github.com/hotkv/hotkv/pipeline"
)

// serializerCases are one key of each kind the serializer has a zero-allocation path for.
var serializerCases = [][]string{
	{"SET", "str", strings.Repeat("v", 256)},
	{"SET", "int", "12345"},
	{"RPUSH", "list", "a", "b", "c", "12"},
	{"HSET", "hash", "f1", "v1", "f2", "v2", "f3", "3"},
	{"SADD", "iset", "1", "2", "300", "-4"},
	{"SADD", "sset", "a", "b", "c"},
	{"ZADD", "zset", "1", "a", "2", "b", "3.5", "c"},
}

// serializeLoop returns a function that serializes key's entry once (holding its shard), with a
// serializer and buffer reused from call to call, as a snapshot's shard does.
func serializeLoop(tb testing.TB, e *Engine, key string, compress bool) func() {
	s := e.newRDBSerializer(compress, time.Now())
	sh := int(e.shardOf([]byte(key)))
	ks := e.keyspace(0, []byte(key))
	var en *keyspace.Entry
	e.Group.Do(sh, func(*pipeline.Shard) { en = ks.Peek([]byte(key), time.Now().UnixNano()) })
	if en == nil {
		tb.Fatalf("no key %s", key)
	}
	buf := make([]byte, 0, 4096)
	return func() {
		e.Group.Do(sh, func(*pipeline.Shard) { buf = s.Entry(buf[:0], 0, en, ks) })
	}
}

// Once its scratch has grown, the serializer allocates nothing per key for strings, lists,
// small hashes, sets and sorted sets (invariant of persist_ser.go).
func TestRDBSerializerAllocatesNothing(t *testing.T) {
	e := newTestEngine()
	tc := newTestConn(t, e)
	for _, c := range serializerCases {
		tc.do(c...)
		for _, compress := range []bool{false, true} {
			f := serializeLoop(t, e, c[1], compress)
			f()
			if n := testing.AllocsPerRun(100, f); n != 0 {
				t.Errorf("%s (compress %v): %v allocations per key", c[1], compress, n)
			}
		}
	}
}

func BenchmarkRDBSerializer(b *testing.B) {
	e := newTestEngine()
	tc := newTestConn(b, e)
	for _, c := range serializerCases {
		tc.do(c...)
		b.Run(c[1], func(b *testing.B) {
			f := serializeLoop(b, e, c[1], true)
			f()
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				f()
			}
		})
	}
}

// stringsFile is an RDB file of n keys of 256-byte strings, written by the codec.
func stringsFile(n int) []byte {
	var enc rdb.Encoder
	enc.Header(rdb.Version)
	enc.SelectDB(0)
	val := []byte(strings.Repeat("x", 250))
	key := make([]byte, 0, 16)
	for i := range n {
		key = strconv.AppendInt(append(key[:0], "key:"...), int64(i), 10)
		copy(val, key)
		enc.StringValue(key, val)
	}
	enc.EOF(0)
	return enc.Buf
}

// BenchmarkWriteRDB1M saves 1,000,000 keys of 256-byte strings (loaded first) to io.Discard
// with rdbcompression and rdbchecksum on, reporting keys/s: -benchtime 1x.
func BenchmarkWriteRDB1M(b *testing.B) {
	const n = 1_000_000
	e := NewEngine(Options{Shards: 32, Databases: 16, Settings: DefaultSettings()})
	if _, err := e.LoadRDB(bytes.NewReader(stringsFile(n)), LoadOptions{}); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		t0 := time.Now()
		st, err := e.WriteRDB(context.Background(), io.Discard, RDBOptions{Compress: true, Checksum: true})
		if err != nil || st.Keys != n {
			b.Fatal(st, err)
		}
		b.ReportMetric(float64(n)/time.Since(t0).Seconds(), "keys/s")
		b.ReportMetric(float64(st.Bytes)/time.Since(t0).Seconds()/1e6, "MB/s")
	}
}

// BenchmarkLoadRDB1M loads a file of 1,000,000 keys of 256-byte strings (written by the codec
// directly, or HOTKV_LOAD_RDB, e.g. redis-server's SAVE after DEBUG POPULATE 1000000 key 256)
// into a fresh engine, reporting keys/s. One iteration is enough: -benchtime 1x.
func BenchmarkLoadRDB1M(b *testing.B) {
	const n = 1_000_000
	file := stringsFile(n)
	if path := os.Getenv("HOTKV_LOAD_RDB"); path != "" { // a file of n keys Redis wrote instead
		var err error
		if file, err = os.ReadFile(path); err != nil {
			b.Fatal(err)
		}
	}
	b.SetBytes(int64(len(file)))
	b.ResetTimer()
	for b.Loop() {
		b.StopTimer()
		e := NewEngine(Options{Shards: 32, Databases: 16, Settings: DefaultSettings()})
		b.StartTimer()
		t0 := time.Now()
		st, err := e.LoadRDB(bytes.NewReader(file), LoadOptions{})
		if err != nil || st.Keys != n {
			b.Fatal(st, err)
		}
		b.ReportMetric(float64(n)/time.Since(t0).Seconds(), "keys/s")
	}
}

// collectionsFile is an RDB, written by WriteRDB, of either 100,000 each of hashes, lists, sets
// and sorted sets of 10 elements of 16-64 bytes (persist.sh's collections) or, large, one
// 1,000,000-element key of each of those types.
func collectionsFile(b *testing.B, large bool) []byte {
	e := newTestEngine()
	tc := newTestConn(b, e)
	if large {
		for _, typ := range []string{"list", "hash", "set", "zset"} {
			fillBig(b, tc, typ, "large:"+typ, 1_000_000)
		}
		return writeRDB(b, e, RDBOptions{Compress: true, Checksum: true})
	}
	r := rand.New(rand.NewPCG(1, 2))
	elem := func() string { return strings.Repeat("x", 16+r.IntN(49)) + strconv.Itoa(r.IntN(1e6)) }
	var req []byte
	for i := range 100_000 {
		k := strconv.Itoa(i)
		h, l, s, z := []string{"HSET", "h:" + k}, []string{"RPUSH", "l:" + k}, []string{"SADD", "s:" + k}, []string{"ZADD", "z:" + k}
		for j := range 10 {
			h = append(h, "f"+strconv.Itoa(j), elem())
			l = append(l, elem())
			s = append(s, elem())
			z = append(z, strconv.Itoa(r.IntN(1000)), elem())
		}
		for _, c := range [][]string{h, l, s, z} {
			req = append(req, encodeCommand(c)...)
		}
		if i%1000 == 999 {
			if _, err := tc.send(req); err != nil {
				b.Fatal(err)
			}
			req = req[:0]
		}
	}
	return writeRDB(b, e, RDBOptions{Compress: true, Checksum: true})
}

// BenchmarkLoadRDBCollections loads collectionsFile into a fresh engine (32 shards, 16
// databases), reporting elements/s: -benchtime 1x (building the file takes seconds).
//
// HOTKV_LOAD_COLL_RDB names a file to load instead (e.g. redis-server's SAVE of the same
// collections), of HOTKV_LOAD_COLL_ELEMS elements (default 4,000,000), as one more case.
func BenchmarkLoadRDBCollections(b *testing.B) {
	for _, name := range []string{"small", "large", "file"} {
		keys, elems := int64(400_000), 4_000_000.0
		if name == "large" {
			keys = 4
		}
		path := os.Getenv("HOTKV_LOAD_COLL_RDB")
		if name == "file" && path == "" {
			continue
		}
		b.Run(name, func(b *testing.B) {
			var file []byte
			if name == "file" {
				var err error
				if file, err = os.ReadFile(path); err != nil {
					b.Fatal(err)
				}
				if n, err := strconv.Atoi(os.Getenv("HOTKV_LOAD_COLL_ELEMS")); err == nil {
					elems = float64(n)
				}
				keys = -1
			} else {
				file = collectionsFile(b, name == "large")
			}
			b.SetBytes(int64(len(file)))
			b.ResetTimer()
			for b.Loop() {
				b.StopTimer()
				e := NewEngine(Options{Shards: 32, Databases: 16, Settings: DefaultSettings()})
				runtime.GC()
				b.StartTimer()
				t0, c0 := time.Now(), processCPU()
				st, err := e.LoadRDB(bytes.NewReader(file), LoadOptions{})
				if err != nil || keys >= 0 && st.Keys != keys {
					b.Fatal(st, err)
				}
				b.ReportMetric(elems/time.Since(t0).Seconds(), "elems/s")
				// CPU, the collector's included: the figure to compare on a shared machine.
				b.ReportMetric(float64(processCPU()-c0)/elems, "cpu-ns/elem")
			}
		})
	}
}

// processCPU is the process's user and system CPU time so far, in ns.
func processCPU() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
