package script

import (
	"bytes"
	"encoding/binary"
	"strings"
	"testing"

	"github.com/hotkv/hotkv/net/resp/resptest"
	"github.com/hotkv/hotkv/persist/rdb"
)

// TestDumpRestoreDifferential moves payloads both ways between redis-server and the engine and
// compares every reply: Redis's payload (its large library LZF-compressed) restored here, ours
// restored there, and the errors of each policy and of broken payloads.
func TestDumpRestoreDifferential(t *testing.T) {
	redisAddr(t)
	cn := dial(t, 2)
	small := "#!lua name=small\nredis.register_function('s1', function() return 1 end)"
	large := "#!lua name=large\n" + strings.Repeat("-- a comment that repeats so that LZF can shrink it\n", 40) +
		"redis.register_function{function_name='l1', callback=function(k, a) return a[1] end, flags={'no-writes'}, description='d'}"
	cn.do(t, "FUNCTION", "FLUSH")
	cn.do(t, "FUNCTION", "LOAD", small)
	cn.do(t, "FUNCTION", "LOAD", large)
	raw := cn.do(t, "FUNCTION", "DUMP")
	v, err := resptest.Parse(raw)
	if err != nil || v.Kind != '$' {
		t.Fatalf("DUMP: %q", raw)
	}
	redisPayload := []byte(v.Str)
	if !bytes.Contains(redisPayload, []byte{rdbOpFunction2, 0xC3}) {
		t.Fatalf("Redis did not LZF-compress the large library, so the LZF path would go untested: %q", redisPayload)
	}

	e := New(Config{})
	defer e.Close()
	h := newRedisHost(t)
	reply := func(errReply string) string {
		if errReply == "" {
			return "+OK\r\n"
		}
		return "-" + errReply + "\r\n"
	}
	listOf := func(name string) (string, string) {
		want := string(cn.do(t, "FUNCTION", "LIST", "WITHCODE", "LIBRARYNAME", name))
		return want, string(renderList(e.FunctionList([]byte(name)), true, 2))
	}

	// Redis's payload into the engine.
	if got := reply(e.FunctionRestore(h, redisPayload, RestoreAppend)); got != "+OK\r\n" {
		t.Fatalf("restore of Redis's payload: %s", got)
	}
	for _, name := range []string{"small", "large"} {
		if want, got := listOf(name); want != got {
			t.Errorf("%s after restore:\nredis  %q\nengine %q", name, want, got)
		}
	}
	if got := string(e.FCall(nil, h, []byte("l1"), nil, byteSlices([]string{"x"}), RunOptions{Proto: 2})); got != "$1\r\nx\r\n" {
		t.Errorf("FCALL l1: %q", got)
	}

	// The same requests on both sides.
	bad := append([]byte{}, redisPayload...)
	bad[len(bad)-1] ^= 1
	wrongType := []byte{7, 1, 'x'}
	wrongType = binary.LittleEndian.AppendUint16(wrongType, rdbVersion)
	wrongType = binary.LittleEndian.AppendUint64(wrongType, rdb.CRC64(0, wrongType))
	one := New(Config{}) // a payload of one library: which of two collides first is Redis's hash order
	defer one.Close()
	if _, errReply := one.FunctionLoad(nil, []byte(small), false); errReply != "" {
		t.Fatal(errReply)
	}
	truncated := []byte{rdbOpFunction2, 0x40}
	truncated = binary.LittleEndian.AppendUint16(truncated, rdbVersion)
	truncated = binary.LittleEndian.AppendUint64(truncated, rdb.CRC64(0, truncated))
	for _, c := range []struct {
		name    string
		payload []byte
		policy  string
	}{
		{"replace", redisPayload, "REPLACE"},
		{"flush", redisPayload, "FLUSH"},
		{"bad checksum", bad, "APPEND"},
		{"garbage", []byte("garbage"), "APPEND"},
		{"wrong type", wrongType, "FLUSH"},
		{"truncated", truncated, "FLUSH"},
		{"engine's payload", e.FunctionDump(), "FLUSH"},
		{"engine's payload again", one.FunctionDump(), "APPEND"},
		{"engine's payload replace", one.FunctionDump(), "REPLACE"},
	} {
		want := string(cn.do(t, "FUNCTION", "RESTORE", string(c.payload), c.policy))
		p, errReply := ParseRestorePolicy([]byte(c.policy))
		if errReply != "" {
			t.Fatal(errReply)
		}
		got := reply(e.FunctionRestore(h, c.payload, p))
		if want != got {
			t.Errorf("%s: redis %q, engine %q", c.name, want, got)
		}
		for _, name := range []string{"small", "large"} {
			if want, got := listOf(name); want != got {
				t.Errorf("%s: %s:\nredis  %q\nengine %q", c.name, name, want, got)
			}
		}
	}
	if _, errReply := ParseRestorePolicy([]byte("bogus")); errReply != string(bytes.Trim(cn.do(t, "FUNCTION", "RESTORE", string(redisPayload), "bogus"), "-\r\n")) {
		t.Errorf("policy error %q", errReply)
	}
}

// FuzzRestore: any payload is refused or restored without panicking, and what is restored
// dumps to a payload that restores to the same libraries.
func FuzzRestore(f *testing.F) {
	e := New(Config{})
	defer e.Close()
	e.FunctionLoad(nil, []byte("#!lua name=a\nredis.register_function('f', function() return 1 end)"), false)
	f.Add(e.FunctionDump())
	f.Add([]byte{rdbOpFunction2, 0xC3, 3, 5, 1, 'a', 'b', 0x20, 0})
	f.Fuzz(func(t *testing.T, payload []byte) {
		e.FunctionFlush()
		if e.FunctionRestore(nil, payload, RestoreFlush) != "" {
			return
		}
		dump := e.FunctionDump()
		e.FunctionFlush()
		if errReply := e.FunctionRestore(nil, dump, RestoreFlush); errReply != "" {
			t.Fatalf("our own dump %q: %s", dump, errReply)
		}
		if again := e.FunctionDump(); !bytes.Equal(again, dump) {
			t.Fatalf("dump changed: %q then %q", dump, again)
		}
	})
}
