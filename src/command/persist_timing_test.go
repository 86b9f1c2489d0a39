package command

import (
	"bytes"
	"context"
	"io"
	"os"
	"strconv"
	"strings"
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
