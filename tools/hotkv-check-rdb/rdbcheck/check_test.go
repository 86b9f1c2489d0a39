package rdbcheck

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/hotkv/hotkv/persist/rdb"
	"github.com/hotkv/hotkv/tools/hotkv-check-rdb/redistest"
)

// redisDump fills a redis-server with every type, SAVEs and returns the file
// and the server's own counts (DBSIZE per database and INFO keyspace expires).
func redisDump(t *testing.T) (file string, keys map[int]int64, expires map[int]int64) {
	dir := t.TempDir()
	s := redistest.Start(t, dir)
	redistest.FillAll(t, s)
	keys, expires = map[int]int64{}, map[int]int64{}
	info := s.MustDo(t, "INFO", "keyspace").(string)
	for _, line := range strings.Split(info, "\r\n") {
		var db int
		var k, e, avg int64
		if n, _ := fmt.Sscanf(line, "db%d:keys=%d,expires=%d,avg_ttl=%d", &db, &k, &e, &avg); n == 4 {
			keys[db], expires[db] = k, e
		}
	}
	s.MustDo(t, "SAVE")
	s.Stop()
	return filepath.Join(dir, "dump.rdb"), keys, expires
}

func checkFile(t *testing.T, name string) *Report {
	t.Helper()
	f, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, _ := f.Stat()
	return Check(name, f, st.Size(), Options{})
}

// TestReportMatchesRedis: the report of a dump.rdb written by redis-server
// 7.0.15 has the keys and expires per database that the server's INFO
// keyspace listed, the aux fields and library it wrote, one count per type,
// and the checksum of its last 8 bytes; redis-check-rdb calls it OK too.
func TestReportMatchesRedis(t *testing.T) {
	file, keys, expires := redisDump(t)
	rep := checkFile(t, file)
	if !rep.OK {
		t.Fatalf("not OK: %+v", rep.Error)
	}
	if v := redistest.CheckRDB(t, file); !v.OK {
		t.Fatalf("redis-check-rdb disagrees:\n%s", v.Output)
	}
	var total int64
	for _, db := range rep.DBs {
		if db.Keys != keys[db.ID] || db.Expires != expires[db.ID] {
			t.Errorf("db %d: %d keys %d expires; redis said %d %d", db.ID, db.Keys, db.Expires, keys[db.ID], expires[db.ID])
		}
		total += db.Keys
	}
	if len(rep.DBs) != len(keys) || total != rep.Keys {
		t.Errorf("dbs %+v, redis %v", rep.DBs, keys)
	}
	var typed int64
	seen := map[string]bool{}
	for _, tc := range rep.Types {
		typed += tc.Keys
		seen[tc.Type+"/"+tc.Encoding] = true
	}
	if typed != rep.Keys {
		t.Errorf("types sum to %d, %d keys", typed, rep.Keys)
	}
	for _, want := range []string{"string/raw", "string/int", "string/lzf", "list/quicklist", "set/intset",
		"set/hashtable", "zset/listpack", "zset/skiplist", "hash/listpack", "hash/hashtable", "stream/stream"} {
		if !seen[want] {
			t.Errorf("no %s key in %+v", want, rep.Types)
		}
	}
	if len(rep.Functions) != 1 || rep.Functions[0] != "mylib" {
		t.Errorf("functions %q", rep.Functions)
	}
	if len(rep.Aux) == 0 || rep.Aux[0].Key != "redis-ver" || rep.Aux[0].Value != "7.0.15" {
		t.Errorf("aux %+v", rep.Aux)
	}
	b, _ := os.ReadFile(file)
	if want := fmt.Sprintf("%016x", rdb.CRC64(0, b[:len(b)-8])); rep.Checksum != want || rep.End != int64(len(b)) {
		t.Errorf("checksum %s end %d, want %s %d", rep.Checksum, rep.End, want, len(b))
	}
	var out bytes.Buffer
	rep.WriteText(&out)
	if !strings.Contains(out.String(), "RDB looks OK") {
		t.Errorf("text:\n%s", out.String())
	}
}

// recordStarts are the offsets where each record of a sound file begins.
func recordStarts(t *testing.T, b []byte) []int64 {
	d := rdb.NewDecoder(bytes.NewReader(b))
	starts := []int64{0}
	for {
		_, err := d.Next()
		if err == io.EOF {
			return starts
		}
		if err != nil {
			t.Fatal(err)
		}
		starts = append(starts, d.Offset())
	}
}

// recordOf is the start of the record holding offset p.
func recordOf(starts []int64, p int64) int64 {
	at := int64(0)
	for _, s := range starts {
		if s <= p {
			at = s
		}
	}
	return at
}

// TestDamagedAgreesWithRedis truncates a redis-server 7.0.15 dump at many
// offsets and flips bytes at others: hotkv-check-rdb's verdict is always
// redis-check-rdb's, a cut is "truncated" at or after redis-check-rdb's
// offset, and a flip is reported at or after the start of its record.
func TestDamagedAgreesWithRedis(t *testing.T) {
	file, _, _ := redisDump(t)
	good, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	starts := recordStarts(t, good)
	dir := t.TempDir()
	size := int64(len(good))
	named := 0
	var cuts []int64
	for i := int64(0); i < 24; i++ {
		cuts = append(cuts, i*size/24)
	}
	for _, s := range starts[1:] {
		cuts = append(cuts, s, s+1)
	}
	cuts = append(cuts, size-8, size-1)
	for _, cut := range cuts {
		if cut >= size {
			continue
		}
		name := filepath.Join(dir, "cut.rdb")
		os.WriteFile(name, good[:cut], 0o644)
		ours, theirs := checkFile(t, name), redistest.CheckRDB(t, name)
		if ours.OK || theirs.OK {
			t.Fatalf("cut %d: ours OK=%v, redis-check-rdb OK=%v", cut, ours.OK, theirs.OK)
		}
		if ours.Error.Kind != "truncated" || ours.Error.Offset > cut || ours.Error.Offset < theirs.Offset {
			t.Errorf("cut %d: ours %+v, redis-check-rdb at %d", cut, ours.Error, theirs.Offset)
		}
		sameKey(t, fmt.Sprintf("cut %d", cut), ours, theirs, &named)
	}
	sameRecord, flips := 0, 0
	for i := int64(0); i < 60; i++ {
		p := 5 + i*(size-5)/60
		for _, x := range []byte{0xff, 0x01} {
			b := bytes.Clone(good)
			b[p] ^= x
			name := filepath.Join(dir, "flip.rdb")
			os.WriteFile(name, b, 0o644)
			ours, theirs := checkFile(t, name), redistest.CheckRDB(t, name)
			flips++
			if ours.OK != theirs.OK {
				t.Fatalf("flip %#x at %d: ours OK=%v %+v, redis-check-rdb OK=%v:\n%s", x, p, ours.OK, ours.Error, theirs.OK, theirs.Output)
			}
			if ours.OK {
				continue
			}
			rec := recordOf(starts, p)
			if ours.Error.Offset < rec {
				t.Errorf("flip at %d (record at %d): ours at %d", p, rec, ours.Error.Offset)
			}
			if recordOf(starts, ours.Error.Offset) == recordOf(starts, theirs.Offset) {
				sameRecord++
			}
			sameKey(t, fmt.Sprintf("flip %#x at %d", x, p), ours, theirs, &named)
		}
	}
	t.Logf("%d cuts agree; %d flips agree, %d of them reported in the same record as redis-check-rdb; %d errors name the key being read, as redis-check-rdb does", len(cuts), flips, sameRecord, named)
}

var readingRE = regexp.MustCompile(`\[additional info\] Reading key '(.*)'\n`)

// sameKey: when redis-check-rdb names the key it was reading and the error is
// in a key record, ours names the same key.
func sameKey(t *testing.T, what string, ours *Report, theirs redistest.Verdict, named *int) {
	t.Helper()
	m := readingRE.FindStringSubmatch(theirs.Output)
	if m == nil || ours.Error.Reading == "" {
		return
	}
	if ours.Error.Reading != m[1] {
		t.Errorf("%s: ours reading %q, redis-check-rdb %q", what, ours.Error.Reading, m[1])
	}
	*named++
}

// TestVersionAndTypes: a file of our own Encoder at versions 9 and 10 reports
// its version, the RESIZEDB hints and its types; a zero checksum is "0".
func TestVersionAndTypes(t *testing.T) {
	for _, v := range []int{9, 10} {
		e := &rdb.Encoder{}
		e.Header(v)
		e.Aux("redis-ver", "7.0.15")
		e.SelectDB(2)
		e.ResizeDB(2, 1)
		e.ExpireMs(1)
		e.StringValue([]byte("a"), []byte("1"))
		e.SetValue([]byte("s"), 2, seq([]byte("x"), []byte("y")))
		e.EOF(0)
		rep := Check("mem", bytes.NewReader(e.Buf), int64(len(e.Buf)), Options{})
		if !rep.OK || rep.Version != v || rep.Checksum != "0" || rep.Expired != 1 {
			t.Fatalf("v%d: %+v", v, rep)
		}
		if len(rep.DBs) != 1 || rep.DBs[0] != (DB{ID: 2, Keys: 2, Expires: 1, HintKeys: 2, HintExpires: 1}) {
			t.Errorf("dbs %+v", rep.DBs)
		}
		want := []TypeCount{{"set", "hashtable", rdb.TypeSet, 1}, {"string", "int", rdb.TypeString, 1}}
		if fmt.Sprint(rep.Types) != fmt.Sprint(want) {
			t.Errorf("types %+v, want %+v", rep.Types, want)
		}
	}
}

func seq(elems ...[]byte) func() []byte {
	i := 0
	return func() []byte { i++; return elems[i-1] }
}

// TestLibraryName reads the shebang's name= wherever it is on the line.
func TestLibraryName(t *testing.T) {
	for code, want := range map[string]string{
		"#!lua name=lib1\nreturn":      "lib1",
		"#!lua engine=x name=two\n":    "two",
		"redis.register_function('f')": "?",
	} {
		if got := libraryName([]byte(code)); got != want {
			t.Errorf("%q: %q, want %q", code, got, want)
		}
	}
}

// TestErrorOffsets: the failure names the offset persist/rdb detected (the
// bad type byte itself, the end of a cut file), its kind, and the last key.
func TestErrorOffsets(t *testing.T) {
	e := &rdb.Encoder{}
	e.Header(rdb.Version)
	e.SelectDB(0)
	e.StringValue([]byte("k1"), []byte("v"))
	at := int64(len(e.Buf))
	good := bytes.Clone(e.Buf)
	for _, c := range []struct {
		tail []byte
		kind string
		off  int64
	}{
		{[]byte{100}, "corrupt", at},
		{[]byte{rdb.OpModuleAux}, "unsupported", at},
		{[]byte{rdb.TypeString, 3, 'k'}, "truncated", at + 3},
	} {
		b := append(bytes.Clone(good), c.tail...)
		rep := Check("mem", bytes.NewReader(b), int64(len(b)), Options{})
		if rep.OK || rep.Error.Kind != c.kind || rep.Error.Offset != c.off || rep.Error.LastKey != "k1" || rep.Error.Type != "string/raw" {
			t.Errorf("tail %q: %+v, want %s at %d after k1", c.tail, rep.Error, c.kind, c.off)
		}
		if strings.HasPrefix(rep.Error.Message, "rdb:") {
			t.Errorf("message keeps the prefix: %q", rep.Error.Message)
		}
	}
}

// TestPendingKey reads a record's key past its expiry, idle and freq
// opcodes, in the raw, integer and LZF encodings; a key cut short, or a
// record that is not a key, gives none.
func TestPendingKey(t *testing.T) {
	long := strings.Repeat("key", 30)
	for _, key := range []string{"plain", "12345", "-7", long} {
		e := &rdb.Encoder{Compress: true}
		e.ExpireMs(1 << 40)
		e.Idle(5)
		e.Freq(3)
		e.ListValue([]byte(key), 1, seq([]byte("x")))
		b := e.Buf
		if key == long && !bytes.Contains(b, []byte{0xc3}) {
			t.Fatal("the long key is not LZF-encoded")
		}
		for _, size := range []int64{int64(len(b)), int64(len(b) - 1)} {
			got, typ, ok := pendingKey(bytes.NewReader(b[:size]), 0, size)
			if !ok || got != key || typ != rdb.TypeListQuicklist2 {
				t.Errorf("%q in %d bytes: %q %d %v", key, size, got, typ, ok)
			}
		}
		if _, _, ok := pendingKey(bytes.NewReader(b[:20]), 0, 20); ok && key == long {
			t.Errorf("%q cut at 20 bytes still read", key)
		}
	}
	e := &rdb.Encoder{}
	e.Aux("a", "b")
	if k, _, ok := pendingKey(bytes.NewReader(e.Buf), 0, int64(len(e.Buf))); ok {
		t.Errorf("aux record read as key %q", k)
	}
}
