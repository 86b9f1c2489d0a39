package rdb

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// A small ziplist and zipmap writer of the test's own, following the format
// description in ziplist.c and zipmap.c (Redis 6 and older wrote these; the
// local redis-server 7.0.15 loads them, converting on load).

func zlEncodeEntry(dst []byte, prev int, s string) []byte {
	if prev < 254 {
		dst = append(dst, byte(prev))
	} else {
		dst = append(dst, 0xfe)
		dst = binary.LittleEndian.AppendUint32(dst, uint32(prev))
	}
	if v, err := strconv.ParseInt(s, 10, 64); err == nil && strconv.FormatInt(v, 10) == s {
		switch {
		case v >= 0 && v <= 12:
			return append(dst, 0xf1+byte(v))
		case v >= -128 && v <= 127:
			return append(dst, 0xfe, byte(v))
		case v >= -32768 && v <= 32767:
			return append(dst, 0xc0, byte(v), byte(v>>8))
		case v >= -1<<23 && v < 1<<23:
			return append(dst, 0xf0, byte(v), byte(v>>8), byte(v>>16))
		case v >= -1<<31 && v < 1<<31:
			return binary.LittleEndian.AppendUint32(append(dst, 0xd0), uint32(v))
		default:
			return binary.LittleEndian.AppendUint64(append(dst, 0xe0), uint64(v))
		}
	}
	switch n := len(s); {
	case n < 64:
		dst = append(dst, byte(n))
	case n < 16384:
		dst = append(dst, 0x40|byte(n>>8), byte(n))
	default:
		dst = binary.BigEndian.AppendUint32(append(dst, 0x80), uint32(n))
	}
	return append(dst, s...)
}

func testZiplist(elems ...string) []byte {
	b := make([]byte, 10)
	prev, tail := 0, 10
	for _, s := range elems {
		tail = len(b)
		b = zlEncodeEntry(b, prev, s)
		prev = len(b) - tail
	}
	b = append(b, 0xff)
	binary.LittleEndian.PutUint32(b, uint32(len(b)))
	binary.LittleEndian.PutUint32(b[4:], uint32(tail))
	binary.LittleEndian.PutUint16(b[8:], uint16(min(len(elems), 65535)))
	return b
}

func testZipmap(pairs ...string) []byte {
	b := []byte{byte(min(len(pairs)/2, 254))}
	zlen := func(n int) {
		if n < 254 {
			b = append(b, byte(n))
		} else {
			b = binary.LittleEndian.AppendUint32(append(b, 254), uint32(n))
		}
	}
	for i := 0; i < len(pairs); i += 2 {
		zlen(len(pairs[i]))
		b = append(b, pairs[i]...)
		zlen(len(pairs[i+1]))
		b = append(b, 2) // two free bytes after the value
		b = append(b, pairs[i+1]...)
		b = append(b, 0, 0)
	}
	return append(b, 0xff)
}

// TestZiplistEraFile builds a version 9 file (Redis 6.2's) holding ZIPMAP (9),
// LIST_ZIPLIST (10), ZSET_ZIPLIST (12), HASH_ZIPLIST (13), LIST_QUICKLIST
// (14), LIST (1), ZSET (3) and a seconds expiry (253), checks that
// redis-server 7.0.15 loads it and serves the test's own expectation, and that
// the Decoder decodes it to the same.
func TestZiplistEraFile(t *testing.T) {
	file, want := ziplistEraFile()
	dec := decodeAll(t, file)
	if dec.version != 9 {
		t.Fatalf("version %d", dec.version)
	}
	for k, enc := range map[string]string{"0:zipmap": "zipmap", "0:ziplist": "ziplist", "0:zsetzl": "ziplist",
		"0:hashzl": "ziplist", "0:quicklist": "quicklist", "0:linked": "linkedlist", "0:oldzset": "skiplist"} {
		if got := dec.values[k].Encoding; got != enc {
			t.Errorf("%s: Value.Encoding %s, want %s", k, got, enc)
		}
	}
	diffModels(t, "decoder", want, noEnc(dec.keys))

	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "old.rdb"), file, 0o644); err != nil {
		t.Fatal(err)
	}
	s := startRedis(t, dir, "--dbfilename", "old.rdb")
	diffModels(t, "redis-server", want, noEnc(snapshot(t, s.client(t), 1)))
}

func noEnc(m map[string]keyModel) map[string]keyModel {
	for k, v := range m {
		v.Enc = ""
		m[k] = v
	}
	return m
}

// ziplistEraFile returns the file and what it holds, by the test's own reckoning.
func ziplistEraFile() ([]byte, map[string]keyModel) {
	long := strings.Repeat("L", 300) // a 5-byte previous length after it
	huge := strings.Repeat("H", 17000)
	listElems := []string{"0", "12", "13", "-1", "127", "-128", "200", "-32768", "32767", "8388607", "-8388608",
		"2147483647", "-2147483648", "9223372036854775807", "-9223372036854775808", "007", "", long, "x",
		strings.Repeat("m", 63), strings.Repeat("m", 64), huge, "after-huge"}
	hashPairs := []string{"f", "1", "long", long, "n", "-9999999999", "empty", ""}
	zipmapPairs := []string{"a", "1", "bb", "hello", "k", long}
	zsetPairs := []string{"a", "1", "b", "1.5", "c", "300", "d", "1e+300"} // ascending, as a zset ziplist must be
	var e Encoder
	e.Header(9)
	e.Aux("redis-ver", "6.2.14")
	e.SelectDB(0)
	key := func(t byte, k string) { e.Type(t); e.String([]byte(k)) }
	key(TypeHashZipmap, "zipmap")
	e.String(testZipmap(zipmapPairs...))
	key(TypeListZiplist, "ziplist")
	e.String(testZiplist(listElems...))
	key(TypeZSetZiplist, "zsetzl")
	e.String(testZiplist(zsetPairs...))
	key(TypeHashZiplist, "hashzl")
	e.String(testZiplist(hashPairs...))
	key(TypeListQuicklist, "quicklist")
	e.Len(2)
	e.String(testZiplist(listElems[:10]...))
	e.String(testZiplist(listElems[10:]...))
	key(TypeList, "linked")
	e.Len(3)
	for _, s := range []string{"a", "1", long} {
		e.String([]byte(s))
	}
	key(TypeZSet, "oldzset")
	e.Len(4)
	for _, p := range [][2]string{{"x", "2.5"}, {"y", ""}, {"z", "-"}, {"w", "17"}} {
		e.String([]byte(p[0]))
		switch p[1] {
		case "":
			e.Buf = append(e.Buf, 254) // +inf
		case "-":
			e.Buf = append(e.Buf, 255) // -inf
		default:
			e.Buf = append(e.Buf, byte(len(p[1])))
			e.Buf = append(e.Buf, p[1]...)
		}
	}
	e.Buf = append(e.Buf, OpExpire)
	e.Buf = binary.LittleEndian.AppendUint32(e.Buf, 2147483647) // int32 seconds: the latest such a record can say
	key(TypeString, "secs")
	e.String([]byte("v"))
	e.EOF(CRC64(0, append(e.Buf, OpEOF)))

	sortedHash := func(kv []string) [][2]string {
		return modelOf(&Value{Type: ValHash, Fields: bs(kv, 0), Vals: bs(kv, 1)}, -1).Hash
	}
	all := listElems
	want := map[string]keyModel{
		"0:zipmap":    {Type: "hash", ExpireMs: -1, Hash: sortedHash(zipmapPairs)},
		"0:ziplist":   {Type: "list", ExpireMs: -1, List: all},
		"0:zsetzl":    {Type: "zset", ExpireMs: -1, ZSet: []zm{{"a", 1}, {"b", 1.5}, {"c", 300}, {"d", 1e300}}},
		"0:hashzl":    {Type: "hash", ExpireMs: -1, Hash: sortedHash(hashPairs)},
		"0:quicklist": {Type: "list", ExpireMs: -1, List: all},
		"0:linked":    {Type: "list", ExpireMs: -1, List: []string{"a", "1", long}},
		"0:oldzset":   {Type: "zset", ExpireMs: -1, ZSet: []zm{{"z", inf(-1)}, {"x", 2.5}, {"w", 17}, {"y", inf(1)}}},
		"0:secs":      {Type: "string", ExpireMs: 2147483647000, Str: "v"},
	}
	return e.Buf, want
}

func bs(kv []string, first int) [][]byte {
	var out [][]byte
	for i := first; i < len(kv); i += 2 {
		out = append(out, []byte(kv[i]))
	}
	return out
}

func inf(sign int) float64 {
	f, _ := strconv.ParseFloat(fmt.Sprintf("%cinf", "-+"[(sign+1)/2]), 64)
	return f
}
