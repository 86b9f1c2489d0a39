package command

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/hotkv/hotkv/ds/keyspace"
	"github.com/hotkv/hotkv/pipeline"
)

// jsonValue returns about n bytes of JSON-like text (repeated field names, varying values), the
// shape value compression is for.
func jsonValue(r *rand.Rand, n int) string {
	var b strings.Builder
	b.WriteString(`{"items":[`)
	for b.Len() < n {
		fmt.Fprintf(&b, `{"id":%d,"name":"user%04d","email":"u%d@example.com","active":%t,"score":%.2f},`,
			r.IntN(1e6), r.IntN(3000), r.IntN(1e5), r.IntN(2) == 0, r.Float64()*100)
	}
	return b.String()[:n]
}

// randomValue returns n random bytes: incompressible.
func randomValue(r *rand.Rand, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return string(b)
}

// packedValue picks a value around the threshold: compressible or not, above or below it.
func packedValue(r *rand.Rand) string {
	n := []int{10, 44, 45, 300, 511, 512, 513, 700, 2048, 5000}[r.IntN(10)]
	switch r.IntN(5) {
	case 0:
		return randomValue(r, n)
	case 1:
		return strings.Repeat("ab", n/2)
	}
	return jsonValue(r, n)
}

// recountPacked counts the packed entries and their savings by walking every keyspace, for
// comparison with the counts the keyspaces keep.
func recountPacked(e *Engine) (keys int, saved int64) {
	for i := range e.Group.Shards {
		e.Group.Do(i, func(*pipeline.Shard) {
			for _, ks := range e.data(int32(i)).dbs {
				for cur := ks.Scan(0, func(en *keyspace.Entry) {
					if en.Packed() {
						keys++
						saved += int64(en.RawLen() - len(en.Bytes()))
					}
				}); cur != 0; {
					cur = ks.Scan(cur, func(en *keyspace.Entry) {
						if en.Packed() {
							keys++
							saved += int64(en.RawLen() - len(en.Bytes()))
						}
					})
				}
			}
		})
	}
	return keys, saved
}

// checkPackedCounts compares INFO's counts with a walk of the keyspace.
func checkPackedCounts(t *testing.T, e *Engine, tc *testConn, when string) (keys int) {
	t.Helper()
	keys, saved := recountPacked(e)
	gotKeys := strings.TrimPrefix(infoLine(tc, "stats", "value_compressed_keys:"), "value_compressed_keys:")
	gotSaved := strings.TrimPrefix(infoLine(tc, "stats", "value_compression_saved_bytes:"), "value_compression_saved_bytes:")
	if gotKeys != strconv.Itoa(keys) || gotSaved != strconv.FormatInt(saved, 10) {
		t.Fatalf("%s: INFO says %s keys saving %s bytes; the keyspace holds %d saving %d",
			when, gotKeys, gotSaved, keys, saved)
	}
	return keys
}

// bulkOf returns the payload of a RESP bulk reply.
func bulkOf(t *testing.T, reply string) string {
	t.Helper()
	i := strings.Index(reply, "\r\n")
	if !strings.HasPrefix(reply, "$") || i < 0 {
		t.Fatalf("not a bulk: %q", reply)
	}
	return reply[i+2 : len(reply)-2]
}

// packedCommand returns one random command of the string, bitmap, HLL and key families over keys.
func packedCommand(r *rand.Rand, keys []string) []string {
	k := func() string { return keys[r.IntN(len(keys))] }
	n := func(lim int) string { return strconv.Itoa(r.IntN(lim)) }
	switch r.IntN(34) {
	case 0, 1, 2:
		return []string{"SET", k(), packedValue(r)}
	case 3:
		return []string{"SET", k(), packedValue(r), "GET"}
	case 4:
		return []string{"MSET", k(), packedValue(r), k(), packedValue(r)}
	case 5:
		return []string{"GETSET", k(), packedValue(r)}
	case 6, 7:
		return []string{"GET", k()}
	case 8:
		return []string{"MGET", k(), k(), k()}
	case 9:
		return []string{"GETEX", k(), "PERSIST"}
	case 10:
		return []string{"GETDEL", k()}
	case 11:
		return []string{"STRLEN", k()}
	case 12:
		return []string{[]string{"GETRANGE", "SUBSTR"}[r.IntN(2)], k(), n(3000), strconv.Itoa(r.IntN(6000) - 3000)}
	case 13:
		return []string{"APPEND", k(), []string{"x", jsonValue(r, 200), randomValue(r, 50)}[r.IntN(3)]}
	case 14:
		return []string{"SETRANGE", k(), n(6000), jsonValue(r, 1+r.IntN(100))}
	case 15:
		return []string{"SETBIT", k(), n(50000), n(2)}
	case 16:
		return []string{"GETBIT", k(), n(50000)}
	case 17:
		return []string{"BITCOUNT", k(), n(100), strconv.Itoa(r.IntN(3000) - 1000)}
	case 18:
		return []string{"BITPOS", k(), n(2), n(500)}
	case 19:
		return []string{"BITOP", []string{"AND", "OR", "XOR"}[r.IntN(3)], k(), k(), k()}
	case 20:
		return []string{"BITFIELD", k(), "GET", "u8", n(8000), "INCRBY", "i16", n(8000), "7"}
	case 21:
		return []string{"BITFIELD_RO", k(), "GET", "u16", n(8000)}
	case 22:
		return []string{[]string{"INCR", "DECR"}[r.IntN(2)], []string{k(), "num"}[r.IntN(2)]}
	case 23:
		return []string{"INCRBYFLOAT", []string{k(), "num"}[r.IntN(2)], "1.5"}
	case 24:
		return []string{"PFADD", []string{k(), "hll"}[r.IntN(2)], "e" + n(3000), "f" + n(3000)}
	case 25:
		return []string{"PFCOUNT", []string{k(), "hll"}[r.IntN(2)]}
	case 26:
		return []string{"OBJECT", "ENCODING", k()}
	case 27:
		return []string{"COPY", k(), k(), "REPLACE"}
	case 28:
		return []string{"RENAME", k(), k()}
	case 29:
		return []string{"DEL", k()}
	case 30:
		return []string{"SORT", "list", "BY", "w_*", "GET", "#", "GET", "v_*"}
	case 31:
		return []string{"SET", "v_" + n(4), packedValue(r)}
	case 32:
		return []string{"SUNIONSTORE", k(), "set"}
	}
	return []string{"EXISTS", k(), k()}
}

// TestPackedStringsMatchRedis runs random string, bitmap, HLL and key commands on values above
// and below value-compression-threshold, compressible and not, under lz4 and zstd, on HotKV and
// on redis-server 7.0.15: every reply is byte-equal, and so are DUMP payloads (rdbcompression no
// on both) and LCS. HotKV's INFO counts equal a walk of its keyspace throughout.
func TestPackedStringsMatchRedis(t *testing.T) {
	for _, algo := range []string{"lz4", "zstd"} {
		t.Run(algo, func(t *testing.T) {
			rs := newRedisSession(t)
			e := newTestEngine()
			tc := newTestConn(t, e)
			both := func(args ...string) string {
				t.Helper()
				want, got := rs.do(args...), tc.do(args...)
				if got != want {
					t.Fatalf("%.200q\n got: %.300q\nwant: %.300q", args, got, want)
				}
				return got
			}
			tc.do("CONFIG", "SET", "value-compression", algo)
			both("CONFIG", "SET", "rdbcompression", "no")
			both("RPUSH", "list", "1", "2", "3")
			both("SADD", "set", "m")
			for i := range 4 {
				both("SET", fmt.Sprint("w_", i), strconv.Itoa(3-i))
			}
			r := rand.New(rand.NewPCG(21, uint64(len(algo))))
			keys := []string{"a", "b", "c", "d", "e"}
			packedSeen := 0
			for step := range 2500 {
				both(packedCommand(r, keys)...)
				switch step % 50 {
				case 10:
					for _, k := range keys {
						if d := rs.do("DUMP", k); d != tc.do("DUMP", k) {
							t.Fatalf("step %d: DUMP %s differs", step, k)
						} else if d != "$-1\r\n" && r.IntN(2) == 0 { // Redis's payload restored into HotKV
							tc.do("RESTORE", k, "0", bulkOf(t, d), "REPLACE")
							both("GET", k)
						}
					}
				case 20:
					if la, lb := rs.do("STRLEN", "a"), rs.do("STRLEN", "b"); len(la) < 8 && len(lb) < 8 {
						both("LCS", "a", "b", "LEN")
					}
				case 30:
					packedSeen = max(packedSeen, checkPackedCounts(t, e, tc, fmt.Sprint("step ", step)))
				case 40:
					if r.IntN(4) == 0 { // a change at run time: values keep their form, new writes follow
						tc.do("CONFIG", "SET", "value-compression", []string{"no", algo}[r.IntN(2)])
						tc.do("CONFIG", "SET", "value-compression-threshold", []string{"64", "512"}[r.IntN(2)])
					}
				}
			}
			if packedSeen == 0 {
				t.Fatal("no value was ever held packed")
			}
			for _, k := range append(keys, "v_0", "v_1", "v_2", "v_3") {
				both("GET", k)
				both("OBJECT", "ENCODING", k)
			}
		})
	}
}

// TestPackedStringsAgainstModel runs random writes and reads of compressible and incompressible
// values on HotKV alone, switching value-compression and its threshold as it goes, against a
// map of what each key must hold; after every step the read matches and INFO's counts match a
// walk of the keyspace.
func TestPackedStringsAgainstModel(t *testing.T) {
	e := newTestEngine()
	tc := newTestConn(t, e)
	r := rand.New(rand.NewPCG(31, 32))
	model := map[string][]byte{}
	keys := []string{"a", "b", "c", "d"}
	bulk := func(v []byte) string { return fmt.Sprintf("$%d\r\n%s\r\n", len(v), v) }
	for step := range 6000 {
		k, k2 := keys[r.IntN(len(keys))], keys[r.IntN(len(keys))]
		switch r.IntN(9) {
		case 0, 1:
			v := packedValue(r)
			tc.do("SET", k, v)
			model[k] = []byte(v)
		case 2:
			v := jsonValue(r, 1+r.IntN(300))
			tc.do("APPEND", k, v)
			model[k] = append(model[k], v...)
		case 3:
			off, v := r.IntN(3000), jsonValue(r, 1+r.IntN(50))
			tc.do("SETRANGE", k, strconv.Itoa(off), v)
			cur := model[k]
			if len(cur) < off+len(v) {
				cur = append(cur, make([]byte, off+len(v)-len(cur))...)
			}
			copy(cur[off:], v)
			model[k] = cur
		case 4:
			off := r.IntN(20000)
			tc.do("SETBIT", k, strconv.Itoa(off), "1")
			cur := model[k]
			if len(cur) <= off/8 {
				cur = append(cur, make([]byte, off/8+1-len(cur))...)
			}
			cur[off/8] |= 0x80 >> (off % 8)
			model[k] = cur
		case 5:
			tc.do("DEL", k)
			delete(model, k)
		case 6:
			if _, ok := model[k]; ok && k != k2 {
				tc.do("COPY", k, k2, "REPLACE")
				model[k2] = bytes.Clone(model[k])
			}
		case 7:
			if _, ok := model[k]; ok && k != k2 {
				if r.IntN(2) == 0 { // to database 1 and back: the counts follow the value
					tc.do("MOVE", k, "1")
					checkPackedCounts(t, e, tc, fmt.Sprint("step ", step, " in db 1"))
					tc.do("SELECT", "1")
					tc.do("MOVE", k, "0")
					tc.do("SELECT", "0")
				}
				tc.do("RENAME", k, k2)
				model[k2] = model[k]
				delete(model, k)
			}
		default:
			tc.do("CONFIG", "SET", "value-compression", []string{"no", "lz4", "zstd"}[r.IntN(3)])
			tc.do("CONFIG", "SET", "value-compression-threshold", []string{"0", "100", "512", "4096"}[r.IntN(4)])
		}
		v, ok := model[k]
		want := "$-1\r\n"
		if ok {
			want = bulk(v)
		}
		if got := tc.do("GET", k); got != want {
			t.Fatalf("step %d: GET %s: %d bytes, model %d", step, k, len(got), len(want))
		}
		if ok {
			if got, want := tc.do("STRLEN", k), fmt.Sprintf(":%d\r\n", len(v)); got != want {
				t.Fatalf("step %d: STRLEN %s %q, model %q", step, k, got, want)
			}
			a := r.IntN(len(v) + 1)
			if got, want := tc.do("GETRANGE", k, strconv.Itoa(a), "-1"), bulk(v[a:]); got != want {
				t.Fatalf("step %d: GETRANGE %s %d -1 differs", step, k, a)
			}
		}
		if step%100 == 0 {
			checkPackedCounts(t, e, tc, fmt.Sprint("step ", step))
		}
	}
	tc.do("FLUSHALL")
	if n := checkPackedCounts(t, e, tc, "after FLUSHALL"); n != 0 {
		t.Fatalf("%d packed after FLUSHALL", n)
	}
}

// A compressible value above the threshold is held packed, below it or incompressible raw;
// values stored before a CONFIG SET keep their form.
func TestPackedThresholdAndSwitch(t *testing.T) {
	e := newTestEngine()
	tc := newTestConn(t, e)
	r := rand.New(rand.NewPCG(41, 42))
	isPacked := func(key string) bool {
		var p bool
		e.Group.Do(int(e.shardOf([]byte(key))), func(*pipeline.Shard) {
			p = e.keyspace(0, []byte(key)).Peek([]byte(key), 0).Packed()
		})
		return p
	}
	big, small, noise := jsonValue(r, 2048), jsonValue(r, 512), randomValue(r, 2048)
	tc.do("SET", "off", big)
	tc.do("CONFIG", "SET", "value-compression", "lz4")
	tc.do("SET", "big", big)
	tc.do("SET", "small", small) // not above 512
	tc.do("SET", "noise", noise)
	tc.do("SET", "hll", "HYLL"+big)
	tc.do("CONFIG", "SET", "value-compression", "no")
	tc.do("SET", "after", big)
	for key, want := range map[string]bool{"off": false, "big": true, "small": false, "noise": false, "hll": false, "after": false} {
		if got := isPacked(key); got != want {
			t.Errorf("%s packed %v, want %v", key, got, want)
		}
	}
	if got := tc.do("GET", "big"); got != fmt.Sprintf("$2048\r\n%s\r\n", big) {
		t.Fatal("GET of the packed value after switching off differs")
	}
	if got := tc.do("OBJECT", "ENCODING", "big"); got != "$3\r\nraw\r\n" {
		t.Fatalf("OBJECT ENCODING %q", got)
	}
	if keys := checkPackedCounts(t, e, tc, "end"); keys != 1 {
		t.Fatalf("%d packed keys, want 1", keys)
	}
}

// HotKV with compression saves an RDB that redis-server 7.0.15 loads (plain strings, LZF or
// not), with every value equal; HotKV loading it back packs again.
func TestPackedRDBLoadsInRedis(t *testing.T) {
	for _, algo := range []string{"lz4", "zstd"} {
		e := newTestEngine()
		tc := newTestConn(t, e)
		tc.do("CONFIG", "SET", "value-compression", algo)
		r := rand.New(rand.NewPCG(51, 52))
		want := map[string]string{}
		for i := range 200 {
			k, v := fmt.Sprint("k", i), packedValue(r)
			tc.do("SET", k, v)
			want[k] = v
		}
		if checkPackedCounts(t, e, tc, algo) == 0 {
			t.Fatal("nothing packed")
		}
		for _, o := range []RDBOptions{{Compress: true, Checksum: true}, {Compress: false, Checksum: true}} {
			dir := t.TempDir()
			path := dir + "/dump.rdb"
			if err := os.WriteFile(path, writeRDB(t, e, o), 0o600); err != nil {
				t.Fatal(err)
			}
			rs := startRedisIn(t, dir)
			for k, v := range want {
				if got := rs.do("GET", k); got != fmt.Sprintf("$%d\r\n%s\r\n", len(v), v) {
					t.Fatalf("%s %+v: redis-server's %s differs (%d bytes)", algo, o, k, len(got))
				}
			}
			back := newTestEngine()
			bc := newTestConn(t, back)
			bc.do("CONFIG", "SET", "value-compression", algo)
			if _, err := back.LoadRDB(bytes.NewReader(writeRDB(t, e, o)), LoadOptions{}); err != nil {
				t.Fatal(err)
			}
			for k, v := range want {
				if got := bc.do("GET", k); got != fmt.Sprintf("$%d\r\n%s\r\n", len(v), v) {
					t.Fatalf("%s: loaded %s differs", algo, k)
				}
			}
			if got, _ := recountPacked(back); got != checkPackedCounts(t, e, tc, "source") {
				t.Fatalf("%s: %d packed after loading, source has other", algo, got)
			}
		}
	}
}

// Shared readers (GET, MGET, STRLEN, GETRANGE run without the token) unpack packed values into
// their own clients' buffers beside a writer rewriting them: under -race, and every reply is
// one of the values written.
func TestPackedSharedReads(t *testing.T) {
	e := newTestEngine()
	w := newTestConn(t, e)
	w.do("CONFIG", "SET", "value-compression", "lz4")
	r := rand.New(rand.NewPCG(61, 62))
	vals := []string{jsonValue(r, 3000), jsonValue(r, 3000), strings.Repeat("x", 3000)}
	valid := map[string]bool{}
	for _, v := range vals {
		valid[fmt.Sprintf("$%d\r\n%s\r\n", len(v), v)] = true
	}
	w.do("SET", "k", vals[0])
	w.do("SET", "k2", vals[1])
	const rounds = 300
	var wg sync.WaitGroup
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rc := newTestConn(t, e)
			for range rounds {
				if got := rc.do("GET", "k"); !valid[got] {
					t.Errorf("GET: %.80q", got)
					return
				}
				if got := rc.do("STRLEN", "k"); got != ":3000\r\n" {
					t.Errorf("STRLEN: %q", got)
					return
				}
				m := rc.do("MGET", "k", "k2")
				parts := strings.SplitN(m, "\r\n", 2)
				if parts[0] != "*2" || !valid[m[len("*2\r\n"):len("*2\r\n")+len("$3000\r\n")+3002]] {
					t.Errorf("MGET: %.80q", m)
					return
				}
				if got := rc.do("GETRANGE", "k", "0", "9"); len(got) != len("$10\r\n")+12 {
					t.Errorf("GETRANGE: %q", got)
					return
				}
			}
		}()
	}
	for i := range rounds {
		w.do("SET", "k", vals[i%3])
		w.do("SET", "k2", vals[(i+1)%3])
	}
	wg.Wait()
	if calls, _, _ := e.readerCalls(lookup([]byte("get"))); calls == 0 {
		t.Error("GET never ran as shared work")
	}
}
