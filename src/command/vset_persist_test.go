package command

import (
	"bytes"
	"encoding/binary"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/hotkv/hotkv/ds/keyspace"
	"github.com/hotkv/hotkv/persist/rdb"
)

func fp32(v []float32) string {
	b := make([]byte, 4*len(v))
	for i, f := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(f))
	}
	return string(b)
}

// fillVsets makes a VADD set (attributes, REDUCE) and a VSIM.CREATEINDEX set (L2, tags, TTLs)
// and returns the queries whose replies must survive a save and load.
func fillVsets(t *testing.T, tc *testConn) [][]string {
	r := rand.New(rand.NewPCG(5, 6))
	vec := func(d int) []float32 {
		v := make([]float32, d)
		for i := range v {
			v[i] = float32(r.NormFloat64())
		}
		return v
	}
	for i := range 300 {
		args := []string{"VADD", "va", "FP32", fp32(vec(16)), "e" + strconv.Itoa(i)}
		if i%3 == 0 {
			args = append(args, "SETATTR", `{"i": `+strconv.Itoa(i)+`}`)
		}
		if got := tc.do(args...); got != ":1\r\n" {
			t.Fatalf("VADD: %q", got)
		}
	}
	tc.do("VADD", "vr", "REDUCE", "4", "VALUES", "8", "1", "2", "3", "4", "5", "6", "7", "8", "x")
	if got := tc.do("VSIM.CREATEINDEX", "vh", "DIM", "8", "METRIC", "L2", "QUANT", "NOQUANT", "EFSEARCH", "50"); got != "+OK\r\n" {
		t.Fatalf("VSIM.CREATEINDEX: %q", got)
	}
	for i := range 50 {
		args := []string{"VSIM.SET", "vh"}
		if i%5 == 0 {
			args = append(args, "TTL", "100000")
		}
		args = append(args, "TAGS", "1", "t"+strconv.Itoa(i%4), "ITEMS", "1", "h"+strconv.Itoa(i), fp32(vec(8)))
		if got := tc.do(args...); got != ":1\r\n" {
			t.Fatalf("VSIM.SET: %q", got)
		}
	}
	q16, q8 := fp32(vec(16)), fp32(vec(8))
	return [][]string{
		{"VSIM", "va", "FP32", q16, "COUNT", "20", "WITHSCORES", "WITHATTRIBS"},
		{"VSIM", "va", "FP32", q16, "FILTER", ".i > 100", "COUNT", "5"},
		{"VINFO", "va"}, {"VCARD", "va"}, {"VEMB", "va", "e7", "RAW"}, {"VLINKS", "va", "e9", "WITHSCORES"},
		{"VINFO", "vr"}, {"VSIM", "vr", "VALUES", "8", "1", "2", "3", "4", "5", "6", "7", "8"},
		{"VSIM.SEARCH", "vh", "FP32", q8, "K", "5", "TAGS", "ANY", "1", "t1", "WITHSCORES"},
		{"VSIM.SEARCH", "vh", "FP32", q8, "K", "50", "EXACT"},
		{"VSIM.INFO", "vh"}, {"TYPE", "vh"},
	}
}

// TestVsetRDBAndDump saves vector sets in an RDB and DUMP payloads, loads them into other
// engines and checks every query answers the same (the graph loaded, not rebuilt: VLINKS too).
func TestVsetRDBAndDump(t *testing.T) {
	src := newTestEngine()
	tc := newTestConn(t, src)
	queries := fillVsets(t, tc)
	want := make([]string, len(queries))
	for i, q := range queries {
		want[i] = tc.do(q...)
	}
	file := writeRDB(t, src, RDBOptions{Compress: true, Checksum: true})
	dst := newTestEngine()
	if _, err := dst.LoadRDB(bytes.NewReader(file), LoadOptions{Size: int64(len(file))}); err != nil {
		t.Fatal(err)
	}
	dc := newTestConn(t, dst)
	for i, q := range queries {
		got := dc.do(q...)
		if q[0] == "VINFO" || q[0] == "VSIM.INFO" {
			got, want[i] = dropField(got, "vset-uid"), dropField(want[i], "vset-uid")
		}
		if got != want[i] {
			t.Errorf("after RDB load, %q:\n got %q\nwant %q", q[0]+" "+q[1], got, want[i])
		}
	}
	// DUMP / RESTORE under another name answers alike.
	for _, k := range []string{"va", "vh", "vr"} {
		payload := tc.do("DUMP", k)
		blob := bulkBody(t, payload)
		if got := dc.do("RESTORE", k+"2", "0", blob); got != "+OK\r\n" {
			t.Fatalf("RESTORE %s: %q", k, got)
		}
	}
	for i, q := range queries {
		q2 := append([]string{q[0], q[1] + "2"}, q[2:]...)
		got := dc.do(q2...)
		if q[0] == "VINFO" || q[0] == "VSIM.INFO" {
			got = dropField(got, "vset-uid")
		}
		if got != want[i] {
			t.Errorf("after RESTORE, %q:\n got %q\nwant %q", q2[0]+" "+q2[1], got, want[i])
		}
	}
	// A corrupt payload is refused, never a panic.
	blob := []byte(bulkBody(t, tc.do("DUMP", "vh")))
	for _, cut := range []int{3, 20, len(blob) / 2} {
		bad := append([]byte(nil), blob[:cut]...)
		if got := dc.do("RESTORE", "bad", "0", string(bad)); got[0] != '-' {
			t.Errorf("RESTORE of a payload cut at %d: %q", cut, got)
		}
	}
	if rdb.VectorSetModule>>10 == 0 {
		t.Error("module id")
	}
}

// dropField removes a VINFO field and its value from a flat reply.
func dropField(reply, field string) string {
	key := "+" + field + "\r\n"
	i := bytes.Index([]byte(reply), []byte(key))
	if i < 0 {
		return reply
	}
	j := i + len(key)
	j += bytes.Index([]byte(reply[j:]), []byte("\r\n")) + 2
	return reply[:i] + reply[j:]
}

// bulkBody returns a bulk reply's payload.
func bulkBody(t *testing.T, reply string) string {
	t.Helper()
	i := bytes.IndexByte([]byte(reply), '\n')
	if reply == "" || reply[0] != '$' || i < 0 {
		t.Fatalf("not a bulk reply: %q", reply)
	}
	return reply[i+1 : len(reply)-2]
}

// TestVsetGenericCommands: COPY (an independent copy), MOVE, SWAPDB, RANDOMKEY, UNLINK, SORT
// (WRONGTYPE), OBJECT, MEMORY USAGE (it grows with the set, and SAMPLES 0 agrees with the
// estimate) and DEBUG DIGEST-VALUE on a vector set.
func TestVsetGenericCommands(t *testing.T) {
	e := newTestEngine()
	tc := newTestConn(t, e)
	r := rand.New(rand.NewPCG(9, 9))
	for i := range 200 {
		tc.do("VADD", "v", "FP32", fp32([]float32{float32(r.NormFloat64()), float32(r.NormFloat64()), float32(r.NormFloat64())}), "e"+strconv.Itoa(i))
	}
	check := func(want string, args ...string) {
		t.Helper()
		if got := tc.do(args...); got != want {
			t.Errorf("%q = %q, want %q", args, got, want)
		}
	}
	check("-WRONGTYPE Operation against a key holding the wrong kind of value\r\n", "SORT", "v")
	check("$3\r\nraw\r\n", "OBJECT", "ENCODING", "v")
	check(":1\r\n", "COPY", "v", "w")
	check(":1\r\n", "VREM", "w", "e1")
	check(":200\r\n", "VCARD", "v")
	check(":199\r\n", "VCARD", "w")
	q := []string{"VSIM", "v", "ELE", "e3", "COUNT", "5"}
	want := tc.do(q...)
	check(want, "VSIM", "w", "ELE", "e3", "COUNT", "5", "TRUTH")
	if got := tc.do(append(q, "TRUTH")...); got != want {
		t.Fatalf("VSIM graph %q and TRUTH %q differ on 200 elements", want, got)
	}
	small := tc.do("MEMORY", "USAGE", "w")
	tc.do("VADD", "w", "VALUES", "3", "9", "9", "9", "big", "SETATTR", strings.Repeat("x", 5000))
	if a, b := atoiReply(t, small), atoiReply(t, tc.do("MEMORY", "USAGE", "w")); a <= 0 || b < a+5000 {
		t.Errorf("MEMORY USAGE %d then %d after a 5,000-byte attribute", a, b)
	}
	if a, b := atoiReply(t, tc.do("MEMORY", "USAGE", "v")), atoiReply(t, tc.do("MEMORY", "USAGE", "v", "SAMPLES", "0")); a < b*9/10 || a > b*11/10 {
		t.Errorf("MEMORY USAGE %d, SAMPLES 0 %d: the estimate is off by more than 10%%", a, b)
	}
	check(":1\r\n", "MOVE", "w", "1")
	check("+OK\r\n", "SWAPDB", "0", "1")
	check(":200\r\n", "VCARD", "w")
	check("+OK\r\n", "SWAPDB", "0", "1")
	check("$1\r\nv\r\n", "RANDOMKEY")
	tc.do("CONFIG", "SET", "enable-debug-command", "yes")
	if got := tc.do("DEBUG", "DIGEST-VALUE", "v"); !strings.HasPrefix(got, "*1\r\n+") || len(got) != 4+1+40+2 {
		t.Errorf("DEBUG DIGEST-VALUE %q", got)
	}
	check(":1\r\n", "UNLINK", "v")
	check(":0\r\n", "EXISTS", "v")
}

// FuzzVsetDecode: any payload decodes to a set or an error, never a panic, and what decodes
// encodes and decodes again to the same elements.
func FuzzVsetDecode(f *testing.F) {
	e := newTestEngine()
	tc := newTestConn(f, e)
	tc.do("VSIM.CREATEINDEX", "h", "DIM", "2", "METRIC", "L2")
	tc.do("VSIM.SET", "h", "TTL", "100000", "TAGS", "2", "a", "b", "ITEMS", "2", "x", fp32([]float32{1, 0}), "y", fp32([]float32{0, 1}))
	tc.do("VADD", "r", "REDUCE", "2", "VALUES", "3", "1", "2", "3", "e", "SETATTR", `{"a":1}`)
	for _, k := range []string{"h", "r"} {
		en := e.keyspace(0, []byte(k)).FindQuiet([]byte(k), 0)
		f.Add(appendVset(nil, keyspace.Obj[vsetValue](en)))
	}
	f.Add([]byte{1, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		v, err := decodeVset(e, b)
		if err != nil {
			return
		}
		again, err := decodeVset(e, appendVset(nil, v))
		if err != nil {
			t.Fatalf("a decoded set does not decode after encoding: %v", err)
		}
		if again.Len() != v.Len() || len(again.ttl) != len(v.ttl) || (v.tags == nil) != (again.tags == nil) {
			t.Fatalf("round trip: %d/%d elements, %d/%d expiring", again.Len(), v.Len(), len(again.ttl), len(v.ttl))
		}
	})
}
