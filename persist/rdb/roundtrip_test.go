package rdb

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/redis-7.0.15.rdb from a live redis-server")

const funcCode = "#!lua name=mylib\nredis.register_function('myfunc', function(keys, args) return 1 end)"

// fill gives a live server every type in its small and large encodings.
func fill(t testing.TB, c *respConn) {
	r := rand.New(rand.NewPCG(7, 8))
	rnd := func(n int) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(r.Uint32())
		}
		return string(b)
	}
	cmds := [][]any{
		{"SET", "str:int", "12345"}, {"SET", "str:neg", "-7"}, {"SET", "str:int64", "12345678901234"},
		{"SET", "str:raw", "hello"}, {"SET", "str:empty", ""}, {"SET", "str:long", rnd(1000)},
		{"SET", "str:compressible", strings.Repeat("abc", 500)}, {"SET", "123", "int key"},
		{"SET", "str:ttl", "expires", "PXAT", 4102444800123},
		{"RPUSH", "list:small", "1", "2", "three", "-5", "100000", "9007199254740993", "", "-4096", "4095", "-32769", "8388608", "-2147483649"},
		{"SET", "str:lead0", "0123"}, {"SET", "str:minus0", "-0"},
		{"SADD", "set:intset", "1", "-2", "300", "70000", "5000000000", "-9223372036854775808"},
		{"SADD", "set:str", "a", "b", "c", "10"},
		{"HSET", "hash:small", "f1", "v1", "f2", "123", "f3", ""},
		{"HSET", "hash:longval", "f", strings.Repeat("v", 100)},
		{"ZADD", "zset:small", "1", "a", "2.5", "b", "-inf", "c", "+inf", "d", "0.1", "e", "-3", "f", "1e300", "g"},
		{"FUNCTION", "LOAD", funcCode},
	}
	for i := range 2000 {
		if i%3 == 0 {
			cmds = append(cmds, []any{"RPUSH", "list:big", i * 7919})
		} else {
			cmds = append(cmds, []any{"RPUSH", "list:big", fmt.Sprintf("element-%d-%s", i, strings.Repeat("x", i%40))})
		}
	}
	for i := range 6 {
		cmds = append(cmds, []any{"RPUSH", "list:hugeelems", strings.Repeat(string(rune('a'+i)), 10000+i)}, []any{"RPUSH", "list:hugeelems", i})
	}
	for i := range 600 {
		cmds = append(cmds, []any{"SADD", "set:bigintset", i*1000 - 300000})
		cmds = append(cmds, []any{"SADD", "set:bigstr", fmt.Sprintf("m%d", i)})
	}
	for i := range 200 {
		cmds = append(cmds, []any{"HSET", "hash:big", fmt.Sprintf("field%d", i), fmt.Sprintf("value%d", i*i)})
		cmds = append(cmds, []any{"ZADD", "zset:big", fmt.Sprintf("%g", float64(i)/7-10), fmt.Sprintf("member%d", i)})
	}
	cmds = append(cmds, []any{"ZADD", "zset:big", "inf", "top", "-inf", "bottom"}, []any{"PEXPIREAT", "hash:big", 4102444800999})
	// Streams: deleted entries, several nodes, groups with pending entries and consumers.
	for i := 1; i <= 250; i++ {
		args := []any{"XADD", "stream:big", fmt.Sprintf("%d-%d", 1000+i/3, i%3), "a", i, "b", "x"}
		if i%10 == 0 {
			args = append(args, "c", strings.Repeat("y", i))
		}
		cmds = append(cmds, args)
	}
	cmds = append(cmds,
		[]any{"XADD", "stream:s", "1-1", "a", "1", "b", "2"}, []any{"XADD", "stream:s", "2-1", "a", "3", "c", "4"},
		[]any{"XADD", "stream:s", "3-0", "a", "5", "b", "6"}, []any{"XADD", "stream:s", "4-0", "z", "7"},
		[]any{"XDEL", "stream:s", "2-1"}, []any{"XDEL", "stream:big", "1010-0", "1020-1", "1030-2"},
		[]any{"XGROUP", "CREATE", "stream:s", "g1", "0"}, []any{"XGROUP", "CREATE", "stream:s", "g2", "$"},
		[]any{"XREADGROUP", "GROUP", "g1", "alice", "COUNT", "1", "STREAMS", "stream:s", ">"},
		[]any{"XREADGROUP", "GROUP", "g1", "bob", "COUNT", "2", "STREAMS", "stream:s", ">"},
		[]any{"XGROUP", "CREATECONSUMER", "stream:s", "g1", "carol"},
		[]any{"XGROUP", "CREATE", "stream:big", "readers", "0"},
		[]any{"XREADGROUP", "GROUP", "readers", "r1", "COUNT", "100", "STREAMS", "stream:big", ">"},
		[]any{"XACK", "stream:big", "readers", "1001-0", "1002-1"},
		[]any{"XADD", "stream:empty", "5-5", "f", "v"}, []any{"XDEL", "stream:empty", "5-5"},
		[]any{"SELECT", 1}, []any{"SET", "db1:a", "1"}, []any{"RPUSH", "db1:list", "x"}, []any{"SET", "db1:ttl", "t", "PXAT", 4102444800456},
		[]any{"SELECT", 2}, []any{"HSET", "x", "y", "z"}, []any{"SELECT", 0},
	)
	for _, cmd := range cmds {
		c.must(t, cmd...)
	}
}

func functions(t testing.TB, c *respConn) []string {
	var out []string
	for _, lib := range c.must(t, "FUNCTION", "LIST", "WITHCODE").([]any) {
		out = append(out, string(kv(lib)["library_code"].([]byte)))
	}
	return out
}

type decoded struct {
	version int
	keys    map[string]keyModel
	values  map[string]Value // db:key -> copy of the value
	expires map[string]int64
	funcs   []string
	aux     map[string]string
	dbs     int
}

// decodeAll reads a whole file with the Decoder.
func decodeAll(t testing.TB, b []byte) *decoded {
	t.Helper()
	out := &decoded{keys: map[string]keyModel{}, values: map[string]Value{}, expires: map[string]int64{}, aux: map[string]string{}}
	d := NewDecoder(bytes.NewReader(b))
	db := 0
	for {
		rec, err := d.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("decode: %v", err)
		}
		switch rec.Kind {
		case RecAux:
			out.aux[string(rec.AuxKey)] = string(rec.AuxVal)
		case RecSelectDB:
			db = rec.DB
			out.dbs = max(out.dbs, db+1)
		case RecFunction:
			out.funcs = append(out.funcs, string(rec.Code))
		case RecKey:
			k := fmt.Sprintf("%d:%s", db, rec.Key)
			out.keys[k] = modelOf(&rec.Value, rec.ExpireMs)
			out.values[k] = cloneValue(&rec.Value)
			out.expires[k] = rec.ExpireMs
		}
	}
	out.version = d.Version()
	return out
}

// encodeAll writes decoded contents as an RDB file with our Encoder.
func encodeAll(dec *decoded, compress bool) []byte {
	e := &Encoder{Compress: compress}
	e.Header(Version)
	e.Aux("redis-ver", "7.0.15")
	e.Aux("redis-bits", "64")
	e.Aux("ctime", "1700000000")
	e.Aux("used-mem", "1000000")
	e.Aux("aof-base", "0")
	for _, f := range dec.funcs {
		e.FunctionLib([]byte(f))
	}
	for db := range dec.dbs {
		var keys []string
		for k := range dec.values {
			if strings.HasPrefix(k, fmt.Sprintf("%d:", db)) {
				keys = append(keys, k)
			}
		}
		if len(keys) == 0 {
			continue
		}
		e.SelectDB(db)
		e.ResizeDB(uint64(len(keys)), 0)
		for _, k := range keys {
			if ms := dec.expires[k]; ms >= 0 {
				e.ExpireMs(ms)
			}
			v := dec.values[k]
			encodeValue(e, []byte(k[strings.IndexByte(k, ':')+1:]), &v)
		}
	}
	e.EOF(CRC64(0, append(e.Buf, OpEOF)))
	return e.Buf
}

// TestRedisRoundTrip: redis-server 7.0.15 saves every type, our Decoder reads
// the file (and each key's DUMP) equal to what the server serves; our Encoder
// writes the contents back (plain and LZF-compressed), redis-server loads the
// file and serves the same, and RESTOREs our DUMP payloads to the same.
func TestRedisRoundTrip(t *testing.T) {
	dir := t.TempDir()
	a := startRedis(t, dir)
	c := a.client(t)
	fill(t, c)
	want := snapshot(t, c, 3)
	wantFuncs := functions(t, c)
	c.must(t, "SAVE")
	file, err := os.ReadFile(filepath.Join(dir, "dump.rdb"))
	if err != nil {
		t.Fatal(err)
	}
	if *update {
		if err := os.WriteFile("testdata/redis-7.0.15.rdb", file, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	dec := decodeAll(t, file)
	if dec.version != 10 || dec.aux["redis-ver"] != "7.0.15" {
		t.Fatalf("version %d, aux %v", dec.version, dec.aux)
	}
	diffModels(t, "redis file decoded", want, dec.keys)
	if fmt.Sprint(dec.funcs) != fmt.Sprint(wantFuncs) {
		t.Errorf("functions %q, want %q", dec.funcs, wantFuncs)
	}
	// Each key's DUMP payload.
	for k, w := range want {
		db, key, _ := strings.Cut(k, ":")
		c.must(t, "SELECT", db)
		payload := c.must(t, "DUMP", key).([]byte)
		obj, err := CheckDump(payload, Version)
		if err != nil {
			t.Fatalf("DUMP %s: %v", k, err)
		}
		v, err := DecodeObject(obj)
		if err != nil {
			t.Fatalf("DUMP %s: %v", k, err)
		}
		if g := modelOf(&v, w.ExpireMs); !modelEqual(w, g) {
			t.Errorf("DUMP %s decoded\nwant %+v\ngot  %+v", k, w, g)
		}
	}
	c.must(t, "SELECT", 0)

	for _, compress := range []bool{false, true} {
		ours := encodeAll(dec, compress)
		d2 := t.TempDir()
		if err := os.WriteFile(filepath.Join(d2, "ours.rdb"), ours, 0o644); err != nil {
			t.Fatal(err)
		}
		b := startRedis(t, d2, "--dbfilename", "ours.rdb")
		bc := b.client(t)
		diffModels(t, fmt.Sprintf("redis loading ours (compress %v)", compress), want, snapshot(t, bc, 3))
		if got := functions(t, bc); fmt.Sprint(got) != fmt.Sprint(wantFuncs) {
			t.Errorf("functions after load %q, want %q", got, wantFuncs)
		}
		// Our file decodes to the same too.
		diffModels(t, "our file decoded", want, decodeAll(t, ours).keys)
		if !compress {
			continue
		}
		// RESTORE our DUMP payloads into database 9 and compare.
		bc.must(t, "SELECT", 9)
		e := &Encoder{OmitKey: true, Compress: true}
		restored := map[string]keyModel{}
		for k := range want {
			v := dec.values[k]
			e.Buf = e.Buf[:0]
			encodeValue(e, nil, &v)
			bc.must(t, "RESTORE", k, 0, DumpPayload(nil, e.Buf, Version))
			m := liveKey(t, bc, []byte(k))
			m.ExpireMs = want[k].ExpireMs
			restored[k] = m
		}
		diffModels(t, "RESTORE of our payloads", want, restored)
	}
}

// TestRecordedFile decodes the file recorded from redis-server 7.0.15 and
// checks its checksum handling: a flipped byte anywhere is an error, never a panic.
func TestRecordedFile(t *testing.T) {
	file, err := os.ReadFile("testdata/redis-7.0.15.rdb")
	if err != nil {
		t.Fatal(err)
	}
	dec := decodeAll(t, file)
	if len(dec.keys) < 20 || dec.keys["0:list:big"].Type != "list" || len(dec.keys["0:list:big"].List) != 2000 {
		t.Fatalf("recorded file decoded to %d keys", len(dec.keys))
	}
	r := rand.New(rand.NewPCG(9, 9))
	for range 300 {
		bad := bytes.Clone(file)
		i := 9 + r.IntN(len(bad)-17)
		bad[i] ^= byte(1 + r.IntN(255))
		if err := decodeErr(bad); err == nil {
			t.Fatalf("byte %d flipped: no error", i)
		}
	}
	if err := decodeErr(file[:len(file)-3]); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("truncated file: %v", err)
	}
}

func decodeErr(b []byte) error {
	d := NewDecoder(bytes.NewReader(b))
	for {
		_, err := d.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}
