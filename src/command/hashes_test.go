package command

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hotkv/hotkv/ds/hash"
	"github.com/hotkv/hotkv/ds/keyspace"
	"github.com/hotkv/hotkv/net/resp/resptest"
	"github.com/hotkv/hotkv/pipeline"
)

// hashDo returns an f-func that checks a command's raw reply.
func hashDo(t *testing.T, tc *testConn) func(want string, args ...string) {
	return func(want string, args ...string) {
		t.Helper()
		if got := tc.do(args...); got != want {
			t.Errorf("%q\n got: %q\nwant: %q", args, got, want)
		}
	}
}

// ints builds the RESP2 array reply of integers.
func ints(ns ...int64) string {
	var b strings.Builder
	fmt.Fprintf(&b, "*%d\r\n", len(ns))
	for _, n := range ns {
		fmt.Fprintf(&b, ":%d\r\n", n)
	}
	return b.String()
}

// Redis 7.4's per-field expiry commands: codes, conditions, and the errors in Redis's order.
func TestHashFieldExpiryCommands(t *testing.T) {
	for _, big := range []bool{false, true} {
		t.Run(fmt.Sprint("hashtable=", big), func(t *testing.T) {
			tc := newTestConn(t, newTestEngine())
			f := hashDo(t, tc)
			f(":3\r\n", "HSET", "h", "a", "1", "b", "2", "c", "3")
			if big {
				tc.do("HSET", "h", "long", strings.Repeat("x", 100))
				f("$9\r\nhashtable\r\n", "OBJECT", "ENCODING", "h")
			} else {
				f("$8\r\nlistpack\r\n", "OBJECT", "ENCODING", "h")
				f(ints(-2), "HPERSIST", "h", "FIELDS", "1", "zz")
				f("$8\r\nlistpack\r\n", "OBJECT", "ENCODING", "h") // HPERSIST does not convert
			}
			f(ints(1, -2), "HEXPIRE", "h", "100", "FIELDS", "2", "a", "nofield")
			if !big {
				f("$10\r\nlistpackex\r\n", "OBJECT", "ENCODING", "h")
			}
			f(ints(0), "HEXPIRE", "h", "200", "NX", "FIELDS", "1", "a")
			f(ints(1), "HEXPIRE", "h", "200", "xx", "fields", "1", "a")
			f(ints(1), "HEXPIRE", "h", "300", "GT", "FIELDS", "1", "a")
			f(ints(0), "HEXPIRE", "h", "299", "GT", "FIELDS", "1", "a")
			f(ints(0), "HEXPIRE", "h", "400", "LT", "FIELDS", "1", "a")
			f(ints(1), "HEXPIRE", "h", "50", "LT", "FIELDS", "1", "a")
			// A field without expiry expires never: XX and GT fail, LT and NX succeed.
			f(ints(0, 0), "HEXPIRE", "h", "100", "XX", "FIELDS", "2", "b", "c")
			f(ints(0, 0), "HEXPIRE", "h", "100", "GT", "FIELDS", "2", "b", "c")
			f(ints(1), "HEXPIRE", "h", "100", "LT", "FIELDS", "1", "b")
			f(ints(1), "HPEXPIRE", "h", "100000", "NX", "FIELDS", "1", "c")
			f(ints(50, 100, 100, -2), "HTTL", "h", "FIELDS", "4", "a", "b", "c", "nofield")
			pttl := tc.do("HPTTL", "h", "FIELDS", "1", "a")
			if n := replyInts(t, pttl); len(n) != 1 || n[0] <= 49000 || n[0] > 50000 {
				t.Errorf("HPTTL a = %q", pttl)
			}
			// Absolute times read back exactly; seconds round up.
			f(ints(1), "HPEXPIREAT", "h", "4102444800123", "FIELDS", "1", "a")
			f(ints(4102444800123), "HPEXPIRETIME", "h", "FIELDS", "1", "a")
			f(ints(4102444801), "HEXPIRETIME", "h", "FIELDS", "1", "a")
			f(ints(1), "HEXPIREAT", "h", "4102444800", "FIELDS", "1", "a")
			f(ints(4102444800000, -2), "HPEXPIRETIME", "h", "FIELDS", "2", "a", "x")
			f(ints(1, -1, -2), "HPERSIST", "h", "FIELDS", "3", "a", "a", "nofield")
			f(ints(-1), "HTTL", "h", "FIELDS", "1", "a")
			// HSET replaces a field and its expiry; HINCRBY keeps it.
			f(ints(1, 1), "HEXPIRE", "h", "100", "FIELDS", "2", "a", "b")
			f(":0\r\n", "HSET", "h", "a", "5")
			f(":6\r\n", "HINCRBY", "h", "b", "4")
			f(":1\r\n", "HSETNX", "h", "new", "v")
			f(ints(-1, 100), "HTTL", "h", "FIELDS", "2", "a", "b")
			// A time not in the future deletes the field; the last field's deletion the key.
			f(ints(2, -2), "HPEXPIREAT", "h", "1", "FIELDS", "2", "a", "a")
			f(ints(2), "HEXPIRE", "h", "0", "FIELDS", "1", "b")
			f("$-1\r\n", "HGET", "h", "b")
			tc.do("DEL", "h")
			tc.do("HSET", "h", "only", "1")
			f(ints(2), "HEXPIRE", "h", "0", "FIELDS", "1", "only")
			f(":0\r\n", "EXISTS", "h")
		})
	}
}

func TestHashFieldExpiryErrors(t *testing.T) {
	tc := newTestConn(t, newTestEngine())
	f := hashDo(t, tc)
	tc.do("HSET", "h", "a", "1")
	tc.do("SET", "s", "x")
	// Redis 7.4's wording, written out here rather than taken from errors_hashes.go, so that a
	// changed constant fails the test. redis/redis src/t_hash.c: parseExpireTime (expireNeg),
	// hexpireGenericCommand (fieldsArg, expireFields, count), httlGenericCommand and
	// hpersistCommand (numFields, and fieldsArg, count); src/server.c and src/object.c for
	// WRONGTYPE and the integer error (shared.wrongtypeerr, getLongLongFromObjectOrReply).
	const (
		wrongType    = "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"
		notInt       = "-ERR value is not an integer or out of range\r\n"
		expireNeg    = "-ERR invalid expire time, must be >= 0\r\n"
		fieldsArg    = "-ERR Mandatory argument FIELDS is missing or not at the right position\r\n"
		expireFields = "-ERR Parameter `numFields` should be greater than 0\r\n"
		numFields    = "-ERR Number of fields must be a positive integer\r\n"
		count        = "-ERR The `numfields` parameter must match the number of arguments\r\n"
	)
	f(wrongType, "HEXPIRE", "s", "abc", "FIELDS", "0", "a")
	f(wrongType, "HTTL", "s", "NOTFIELDS", "0", "a")
	f(wrongType, "HPERSIST", "s", "FIELDS", "1", "a")
	f(notInt, "HEXPIRE", "h", "abc", "FIELDS", "1", "a")
	f(expireNeg, "HEXPIRE", "h", "-1", "FIELDS", "1", "a")
	f("-ERR invalid expire time in 'hexpire' command\r\n", "HEXPIRE", "h", "70368744177664", "FIELDS", "1", "a")
	f("-ERR invalid expire time in 'hpexpireat' command\r\n", "HPEXPIREAT", "h", "70368744177664", "FIELDS", "1", "a")
	f("-ERR invalid expire time in 'hpexpire' command\r\n", "HPEXPIRE", "h", "70368744177663", "FIELDS", "1", "a")
	f(ints(1), "HPEXPIREAT", "h", "70368744177663", "FIELDS", "1", "a")
	f(fieldsArg, "HEXPIRE", "h", "10", "BAD", "FIELDS", "1", "a")
	f(fieldsArg, "HEXPIRE", "h", "10", "NX", "XX", "FIELDS", "1")
	f(expireFields, "HEXPIRE", "h", "10", "FIELDS", "0", "a")
	f(expireFields, "HEXPIRE", "h", "10", "FIELDS", "x", "a")
	f(count, "HEXPIRE", "h", "10", "FIELDS", "2", "a")
	f(count, "HEXPIRE", "h", "10", "FIELDS", "1", "a", "b")
	f(count, "HEXPIRE", "h", "10", "NX", "FIELDS", "1")
	f(fieldsArg, "HTTL", "h", "NOTFIELDS", "1", "a")
	f(numFields, "HTTL", "h", "FIELDS", "0", "a")
	f(numFields, "HPERSIST", "h", "FIELDS", "-1", "a")
	f(count, "HPEXPIRETIME", "h", "FIELDS", "2", "a")
	f("-ERR wrong number of arguments for 'hexpire' command\r\n", "HEXPIRE", "h", "10", "FIELDS", "1")
	f("-ERR wrong number of arguments for 'httl' command\r\n", "HTTL", "h", "FIELDS", "1")
	// A missing key is a hash without those fields, after the arguments were checked.
	f(ints(-2, -2), "HEXPIRE", "nokey", "10", "FIELDS", "2", "a", "b")
	f(fieldsArg, "HEXPIRE", "nokey", "10", "FIELD", "1", "a")
	f(ints(-2), "HTTL", "nokey", "FIELDS", "1", "a")
	f(ints(-2), "HPERSIST", "nokey", "FIELDS", "1", "a")
	f(":0\r\n", "EXISTS", "nokey")
}

// Expired fields are invisible to every hash command, and a hash whose fields all expired is
// gone: lazily when a command touches it, actively otherwise.
func TestHashFieldsExpire(t *testing.T) {
	for _, big := range []bool{false, true} {
		t.Run(fmt.Sprint("hashtable=", big), func(t *testing.T) {
			e := newTestEngine()
			tc := newTestConn(t, e)
			f := hashDo(t, tc)
			tc.do("HSET", "h", "keep", "1", "gone", "2", "gone2", "3")
			tc.do("HSET", "all", "x", "1", "y", "2")
			if big {
				tc.do("HSET", "h", "pad", strings.Repeat("p", 100))
				tc.do("HSET", "all", "pad", strings.Repeat("p", 100))
				tc.do("HDEL", "all", "pad")
			}
			f(ints(1, 1), "HPEXPIRE", "h", "30", "FIELDS", "2", "gone", "gone2")
			f(ints(1, 1), "HPEXPIRE", "all", "30", "FIELDS", "2", "x", "y")
			tc.do("HSET", "idle", "x", "1")
			f(ints(1), "HPEXPIRE", "idle", "30", "FIELDS", "1", "x")
			time.Sleep(60 * time.Millisecond)
			f("$-1\r\n", "HGET", "h", "gone")
			f(":0\r\n", "HEXISTS", "h", "gone2")
			f(":0\r\n", "HSTRLEN", "h", "gone2")
			want := 1 + boolInt(big)
			f(fmt.Sprintf(":%d\r\n", want), "HLEN", "h")
			if got := tc.do("HKEYS", "h"); strings.Contains(got, "gone") {
				t.Errorf("HKEYS shows expired fields: %q", got)
			}
			if got := tc.do("HSCAN", "h", "0"); strings.Contains(got, "gone") {
				t.Errorf("HSCAN shows expired fields: %q", got)
			}
			f(":1\r\n", "HSETNX", "h", "gone", "back")
			f(ints(-1), "HTTL", "h", "FIELDS", "1", "gone")
			f(":0\r\n", "HLEN", "all") // a command finds the hash empty: the key is gone
			f(":0\r\n", "EXISTS", "all")
			f(":1\r\n", "EXISTS", "idle") // untouched: still there until the active cycle
			e.ActiveExpire(time.Second)
			f(":0\r\n", "EXISTS", "idle")
		})
	}
}

// The active cycle reclaims fields of hashes that are never touched, a few at a time for a big
// hash, and keeps hashes with fields left.
func TestHashFieldsActiveExpiry(t *testing.T) {
	e := newTestEngine()
	tc := newTestConn(t, e)
	f := hashDo(t, tc)
	args := []string{"HSET", "big"}
	var fields []string
	for i := range 3000 {
		args = append(args, fmt.Sprint("f", i), "v")
		fields = append(fields, fmt.Sprint("f", i))
	}
	tc.do(args...)
	exp := append([]string{"HPEXPIRE", "big", "20", "FIELDS", "2990"}, fields[:2990]...)
	tc.do(exp...)
	for i := range 20 {
		tc.do("HSET", fmt.Sprint("small", i), "a", "1", "b", "2")
		tc.do("HPEXPIRE", fmt.Sprint("small", i), "20", "FIELDS", "1", "a")
	}
	time.Sleep(40 * time.Millisecond)
	for range 10 {
		e.ActiveExpire(time.Second)
	}
	k := e.keyspace(0, []byte("big"))
	ent := k.Peek([]byte("big"), time.Now().UnixNano())
	if ent == nil || hashLen(hashOfEntry(ent)) != 10 {
		t.Fatalf("active expiry left %d fields in big", hashLen(hashOfEntry(ent)))
	}
	for i := range 20 {
		key := fmt.Sprint("small", i)
		ent := e.keyspace(0, []byte(key)).Peek([]byte(key), time.Now().UnixNano())
		if ent == nil || hashLen(hashOfEntry(ent)) != 1 {
			t.Fatalf("%s after active expiry: %v", key, ent)
		}
	}
	f(":10\r\n", "HLEN", "big")
}

// HSCAN over a hashtable returns every field present for the whole scan, whatever COUNT, and
// MATCH filters fields.
func TestHashScanHashtable(t *testing.T) {
	tc := newTestConn(t, newTestEngine())
	args := []string{"HSET", "h"}
	want := map[string]bool{}
	for i := range 2000 {
		args = append(args, fmt.Sprint("field:", i), fmt.Sprint("v", i))
		want[fmt.Sprint("field:", i)] = true
	}
	tc.do(args...)
	for _, count := range []string{"1", "10", "1000"} {
		seen := map[string]bool{}
		cursor := "0"
		for steps := 0; ; steps++ {
			reply := tc.do("HSCAN", "h", cursor, "COUNT", count, "MATCH", "field:1*")
			var elems []string
			cursor, elems = parseScanReply(t, reply)
			for i := 0; i < len(elems); i += 2 {
				if !strings.HasPrefix(elems[i], "field:1") || "v"+strings.TrimPrefix(elems[i], "field:") != elems[i+1] {
					t.Fatalf("HSCAN pair %q %q", elems[i], elems[i+1])
				}
				seen[elems[i]] = true
			}
			if cursor == "0" {
				break
			}
			if steps > 100000 {
				t.Fatal("HSCAN does not end")
			}
		}
		for f := range want {
			if strings.HasPrefix(f, "field:1") && !seen[f] {
				t.Fatalf("COUNT %s: HSCAN missed %s", count, f)
			}
		}
	}
}

// parseScanReply splits a SCAN-family reply into the cursor and the elements.
func parseScanReply(t *testing.T, reply string) (string, []string) {
	t.Helper()
	v, err := resptest.Parse([]byte(reply))
	if err != nil || v.Kind != '*' || len(v.Elems) != 2 {
		t.Fatalf("bad HSCAN reply %q (%v)", reply, err)
	}
	cursor, err := v.Elems[0].Text()
	if err != nil {
		t.Fatalf("HSCAN cursor in %q: %v", reply, err)
	}
	elems, err := v.Elems[1].Strings()
	if err != nil {
		t.Fatalf("HSCAN elements in %q: %v", reply, err)
	}
	return cursor, elems
}

// HRANDFIELD on a hashtable: distinct fields for a positive count, repeats for a negative one,
// RESP3 pairs with WITHVALUES.
func TestHashRandFieldHashtable(t *testing.T) {
	tc := newTestConn(t, newTestEngine())
	args := []string{"HSET", "h"}
	for i := range 1000 {
		args = append(args, fmt.Sprint("f", i), fmt.Sprint("v", i))
	}
	tc.do(args...)
	for _, n := range []int{5, 400, 999} {
		_, elems := parseArray(t, tc.do("HRANDFIELD", "h", fmt.Sprint(n), "WITHVALUES"))
		seen := map[string]bool{}
		for i := 0; i < len(elems); i += 2 {
			if seen[elems[i]] || "v"+elems[i][1:] != elems[i+1] {
				t.Fatalf("count %d: duplicate or wrong pair %q %q", n, elems[i], elems[i+1])
			}
			seen[elems[i]] = true
		}
		if len(seen) != n {
			t.Fatalf("count %d: %d fields", n, len(seen))
		}
	}
	if _, elems := parseArray(t, tc.do("HRANDFIELD", "h", "-3000")); len(elems) != 3000 {
		t.Fatalf("negative count: %d fields", len(elems))
	}
	tc.do("HELLO", "3")
	got := tc.do("HRANDFIELD", "h", "2", "WITHVALUES")
	if !strings.HasPrefix(got, "*2\r\n*2\r\n$") || strings.Count(got, "*2\r\n") != 3 {
		t.Fatalf("RESP3 HRANDFIELD WITHVALUES: %q", got)
	}
}

// parseArray reads a flat array of strings: its length and its elements.
func parseArray(t *testing.T, reply string) (int, []string) {
	t.Helper()
	v, err := resptest.Parse([]byte(reply))
	if err != nil || v.Kind != '*' {
		t.Fatalf("not an array: %q (%v)", reply, err)
	}
	elems, err := v.Strings()
	if err != nil {
		t.Fatalf("array %q: %v", reply, err)
	}
	return len(v.Elems), elems
}

// replyInts reads an array of integers.
func replyInts(t *testing.T, reply string) []int64 {
	t.Helper()
	v, err := resptest.Parse([]byte(reply))
	if err != nil || v.Kind != '*' {
		t.Fatalf("not an array: %q (%v)", reply, err)
	}
	out := make([]int64, len(v.Elems))
	for i, e := range v.Elems {
		if out[i], err = e.Int(); err != nil {
			t.Fatalf("array %q: %v", reply, err)
		}
	}
	return out
}

// The listpack thresholds come from the configuration in force when a hash grows.
func TestHashEncodingFollowsSettings(t *testing.T) {
	e := newTestEngine()
	tc := newTestConn(t, e)
	f := hashDo(t, tc)
	s := DefaultSettings()
	s.HashMaxListpackEntries, s.HashMaxListpackValue = 2, 4
	e.SetSettings(s)
	tc.do("HSET", "h", "a", "1234", "b", "1")
	f("$8\r\nlistpack\r\n", "OBJECT", "ENCODING", "h")
	tc.do("HSET", "h", "c", "1")
	f("$9\r\nhashtable\r\n", "OBJECT", "ENCODING", "h")
	tc.do("HSET", "v", "a", "12345")
	f("$9\r\nhashtable\r\n", "OBJECT", "ENCODING", "v")
	tc.do("HINCRBYFLOAT", "w", "a", "1.5")
	f("$8\r\nlistpack\r\n", "OBJECT", "ENCODING", "w")
	tc.do("HINCRBYFLOAT", "w", "a", "0.125")
	f("$9\r\nhashtable\r\n", "OBJECT", "ENCODING", "w")
	f("$5\r\n1.625\r\n", "HGET", "w", "a")
	s.HashMaxListpackEntries = 0
	e.SetSettings(s)
	tc.do("HSET", "z", "a", "1")
	f("$9\r\nhashtable\r\n", "OBJECT", "ENCODING", "z")
}

// COPY duplicates a hash with its field expiries; the copies are independent.
func TestHashCopy(t *testing.T) {
	for _, big := range []bool{false, true} {
		tc := newTestConn(t, newTestEngine())
		f := hashDo(t, tc)
		tc.do("HSET", "h", "a", "1", "b", "2")
		if big {
			tc.do("HSET", "h", "long", strings.Repeat("x", 100))
		}
		tc.do("HEXPIRE", "h", "100", "FIELDS", "1", "a")
		f(":1\r\n", "COPY", "h", "c")
		tc.do("HSET", "c", "a", "changed")
		tc.do("HDEL", "c", "b")
		f("$1\r\n1\r\n", "HGET", "h", "a")
		f("$1\r\n2\r\n", "HGET", "h", "b")
		f(ints(100), "HTTL", "h", "FIELDS", "1", "a")
		f(ints(-1), "HTTL", "c", "FIELDS", "1", "a")
		f("$7\r\nchanged\r\n", "HGET", "c", "a")
	}
}

func TestHashGetAllResp3(t *testing.T) {
	tc := newTestConn(t, newTestEngine())
	f := hashDo(t, tc)
	tc.do("HELLO", "3")
	tc.do("HSET", "h", "a", "1", "b", "2")
	f("%2\r\n$1\r\na\r\n$1\r\n1\r\n$1\r\nb\r\n$1\r\n2\r\n", "HGETALL", "h")
	f("%0\r\n", "HGETALL", "nokey")
	f("*2\r\n$1\r\na\r\n$1\r\nb\r\n", "HKEYS", "h")
	f("*2\r\n$1\r\n1\r\n_\r\n", "HMGET", "h", "a", "zz")
}

// Many small hashes and one big one through the command path, checked against a map.
func TestHashesMatchModelThroughCommands(t *testing.T) {
	tc := newTestConn(t, newTestEngine())
	model := map[string]map[string]string{}
	for i := range 3000 {
		key := fmt.Sprint("k", i%7)
		if model[key] == nil {
			model[key] = map[string]string{}
		}
		field := fmt.Sprint("field:", (i*31)%(50+i%600))
		switch i % 5 {
		case 0, 1, 2:
			v := strings.Repeat(fmt.Sprint(i%10), i%70)
			tc.do("HSET", key, field, v)
			model[key][field] = v
		case 3:
			tc.do("HDEL", key, field)
			delete(model[key], field)
		default:
			n, isInt := int64(0), true
			prev, ok := model[key][field]
			if ok {
				n, isInt = string2ll(prev)
			}
			want := "-ERR hash value is not an integer\r\n"
			if isInt {
				want = fmt.Sprintf(":%d\r\n", n+3)
				model[key][field] = strconv.FormatInt(n+3, 10)
			}
			if got := tc.do("HINCRBY", key, field, "3"); got != want {
				t.Fatalf("HINCRBY %s %s 3 on %q = %q, want %q", key, field, prev, got, want)
			}
		}
	}
	for key, m := range model {
		_, elems := parseArray(t, tc.do("HGETALL", key))
		got := map[string]string{}
		for i := 0; i < len(elems); i += 2 {
			got[elems[i]] = elems[i+1]
		}
		if len(got) != len(m) {
			t.Fatalf("%s: %d fields, want %d", key, len(got), len(m))
		}
		for k, v := range m {
			if got[k] != v {
				t.Fatalf("%s.%s = %q, want %q", key, k, got[k], v)
			}
		}
		keys := slices.Sorted(maps.Keys(m))
		if len(keys) > 0 && tc.do("HGET", key, keys[0]) != fmt.Sprintf("$%d\r\n%s\r\n", len(m[keys[0]]), m[keys[0]]) {
			t.Fatalf("HGET %s %s", key, keys[0])
		}
	}
}

// string2ll is the rule HINCRBY applies to a stored value, Redis's string2ll (redis/redis:
// src/util.c) written out rather than taken from the package (ParseInt): decimal digits with an
// optional leading '-', no '+', no spaces, no leading zeros ("-0" neither), within int64. The
// values generated here stay far from the int64 ends, so the +3 never overflows.
func string2ll(s string) (int64, bool) {
	digits := strings.TrimPrefix(s, "-")
	if digits == "" || strings.TrimLeft(digits, "0123456789") != "" || (digits[0] == '0' && s != "0") {
		return 0, false
	}
	n, err := strconv.ParseInt(s, 10, 64)
	return n, err == nil
}

// hashOfEntry returns an entry's hash, or nil.
func hashOfEntry(e *keyspace.Entry) *hash.Hash {
	if e == nil {
		return nil
	}
	return keyspace.Obj[hash.Hash](e)
}

// storedFields is how many fields key's hash in db 0 holds, expired or not, read under its
// shard's token.
func storedFields(e *Engine, key string) int {
	k := []byte(key)
	sh := e.shardOf(k)
	n := -1
	e.Group.Do(int(sh), func(*pipeline.Shard) {
		if ent := e.data(sh).dbs[0].Peek(k, time.Now().UnixNano()); ent != nil && ent.Kind == keyspace.KindHash {
			n = keyspace.Obj[hash.Hash](ent).Len()
		}
	})
	return n
}

// TestPauseHidesExpiredHashFields: while a pause holds the dataset still (as on a replica), a
// read of a hash whose fields are past their time answers as if they were gone, and leaves them
// stored for the primary's HDELs or the end of the pause (Redis 7.4's hashTypeGetValue); after the
// pause the next read reclaims them. Small (listpackex) and large (hashtable) hashes, point reads
// and whole-hash reads.
func TestPauseHidesExpiredHashFields(t *testing.T) {
	e := newTestEngine()
	tc := newTestConn(t, e)
	check := func(what string, want string, args ...string) {
		t.Helper()
		if got := tc.do(args...); got != want {
			t.Fatalf("%s: %s = %q, want %q", what, strings.Join(args, " "), got, want)
		}
	}
	for _, size := range []int{3, 200} {
		what := "hash of " + strconv.Itoa(size)
		key := "h" + strconv.Itoa(size)
		args := []string{"HSET", key}
		for i := range size {
			args = append(args, "f"+strconv.Itoa(i), "v"+strconv.Itoa(i))
		}
		tc.do(args...)
		tc.do("HPEXPIRE", key, "20", "FIELDS", "1", "f1")
		tc.do("HPEXPIRE", "all"+key, "20", "FIELDS", "1", "x") // no such key: nothing
		tc.do("HSET", "all"+key, "x", "1")
		tc.do("HPEXPIRE", "all"+key, "20", "FIELDS", "1", "x")
		e.SetFailoverPause(true)
		time.Sleep(40 * time.Millisecond)
		for range 3 {
			e.ActiveExpire(10 * time.Millisecond)
		}
		check(what, "$-1\r\n", "HGET", key, "f1")
		check(what, "$2\r\nv0\r\n", "HGET", key, "f0")
		check(what, "*2\r\n$2\r\nv0\r\n$-1\r\n", "HMGET", key, "f0", "f1")
		check(what, ":0\r\n", "HEXISTS", key, "f1")
		check(what, ":0\r\n", "HSTRLEN", key, "f1")
		check(what, "*2\r\n:-2\r\n:-1\r\n", "HPTTL", key, "FIELDS", "2", "f1", "f0")
		check(what, ":"+strconv.Itoa(size-1)+"\r\n", "HLEN", key)
		if got := tc.do("HGETALL", key); strings.Contains(got, "$2\r\nf1\r\n") || !strings.HasPrefix(got, "*"+strconv.Itoa(2*(size-1))+"\r\n") {
			t.Fatalf("%s: HGETALL while paused = %q", what, got)
		}
		if got := tc.do("HSCAN", key, "0", "COUNT", "1000"); strings.Contains(got, "$2\r\nf1\r\n") {
			t.Fatalf("%s: HSCAN shows the expired field: %q", what, got)
		}
		if got := tc.do("HRANDFIELD", key, "-2000"); strings.Contains(got, "$2\r\nf1\r\n") {
			t.Fatalf("%s: HRANDFIELD draws the expired field", what)
		}
		check(what, "*0\r\n", "HGETALL", "all"+key)
		check(what, ":0\r\n", "HLEN", "all"+key)
		check(what, "$-1\r\n", "HRANDFIELD", "all"+key)
		check(what, "*2\r\n$1\r\n0\r\n*0\r\n", "HSCAN", "all"+key, "0")
		if n := storedFields(e, key); n != size {
			t.Fatalf("%s: %d fields stored while paused, want all %d", what, n, size)
		}
		if n := storedFields(e, "all"+key); n != 1 {
			t.Fatalf("%s: the all-expired hash holds %d fields while paused, want 1", what, n)
		}
		e.SetFailoverPause(false)
		check(what, "$-1\r\n", "HGET", key, "f1")
		if n := storedFields(e, key); n != size-1 {
			t.Fatalf("%s: %d fields stored after the pause and a read, want %d", what, n, size-1)
		}
		for range 3 {
			e.ActiveExpire(10 * time.Millisecond)
		}
		check(what, ":0\r\n", "EXISTS", "all"+key) // the active expiry's, now that it runs
	}
}
