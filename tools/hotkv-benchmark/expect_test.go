package main

import (
	"errors"
	"strings"
	"testing"
	"testing/iotest"
)

// matchReply checks one reply (real RESP bytes) against spec and returns what next said.
func matchReply(t *testing.T, spec, reply string, misses bool, data string) (*badReply, error) {
	t.Helper()
	e, err := parseExpect(spec, []byte(data))
	if err != nil {
		t.Fatal(err)
	}
	if misses {
		e.allowMisses()
	}
	// The reply, then a PING's, read through a small buffer one byte at a time: the check must
	// consume exactly the reply, bodies split over reads included.
	rd := newReplyReader(iotest.OneByteReader(strings.NewReader(reply+"+PONG\r\n")), 16)
	bad, err := rd.next(e)
	if err != nil {
		return bad, err
	}
	pong, _ := parseExpect("simple:PONG", nil)
	if after, err := rd.next(pong); after != nil || err != nil {
		t.Fatalf("%s against %q left the stream out of step: %+v %v", spec, reply, after, err)
	}
	return bad, nil
}

func TestExpectMatches(t *testing.T) {
	const data = "0123456789abcdefghijKLMNOPQRSTUVWXYZ!" // longer than the reader's 16-byte buffer
	// pass is a reply spec must accept; fail one it must refuse, got the start of what the message
	// says about it, miss whether --allow-misses would accept it.
	pass := func(spec, reply string) {
		t.Helper()
		if bad, err := matchReply(t, spec, reply, false, data); bad != nil || err != nil {
			t.Errorf("%s refused %q: %+v %v", spec, reply, bad, err)
		}
	}
	fail := func(spec, reply, got string, miss bool) {
		t.Helper()
		bad, err := matchReply(t, spec, reply, false, data)
		switch {
		case err != nil:
			t.Errorf("%s on %q: %v", spec, reply, err)
		case bad == nil:
			t.Errorf("%s accepted %q", spec, reply)
		case bad.errText != nil || !strings.HasPrefix(bad.got, got) || bad.miss != miss:
			t.Errorf("%s on %q: got %q (miss %v, error %q), want %q (miss %v)", spec, reply, bad.got, bad.miss, bad.errText, got, miss)
		}
		bad, err = matchReply(t, spec, reply, true, data)
		if accepted := err == nil && bad == nil; accepted != miss {
			t.Errorf("%s on %q with --allow-misses: accepted %v, want %v (%+v %v)", spec, reply, accepted, miss, bad, err)
		}
	}
	pass("any", "$-1\r\n")
	pass("any", "*2\r\n:1\r\n$-1\r\n")
	pass("value", ":0\r\n")
	fail("value", "$-1\r\n", "$-1 (nil)", true)
	fail("value", "_\r\n", "_ (null)", true)
	pass("nil", "$-1\r\n")
	pass("nil", "*-1\r\n")
	pass("nil", "_\r\n")
	fail("nil", "$1\r\na\r\n", `$1 "a"`, false)

	pass("ok", "+OK\r\n")
	fail("ok", "+QUEUED\r\n", "+QUEUED", false)
	fail("ok", "$2\r\nOK\r\n", `$2 "OK"`, false)
	fail("ok", ":0\r\n", ":0", false) // 0 is a miss only where an integer is expected
	pass("simple:PONG", "+PONG\r\n")
	fail("simple:PONG", "+PONGS\r\n", "+PONGS", false)

	pass("bulk", "$3\r\nabc\r\n")
	pass("bulk", "$0\r\n\r\n")
	pass("bulk", "=7\r\ntxt:abc\r\n") // RESP3 verbatim
	fail("bulk", "$-1\r\n", "$-1 (nil)", true)
	fail("bulk", "_\r\n", "_ (null)", true)
	fail("bulk", ":1\r\n", ":1", false)
	fail("bulk", "*1\r\n$1\r\na\r\n", "*1", false)
	pass("bulk:3", "$3\r\nabc\r\n")
	fail("bulk:3", "$4\r\nabcd\r\n", `$4 "abcd"`, false)
	fail("bulk:3", "$40\r\n"+strings.Repeat("x", 40)+"\r\n", `$40 "`+strings.Repeat("x", 32)+`"...`, false)

	pass("data", "$37\r\n"+data+"\r\n")
	fail("data", "$37\r\n"+data[:30]+"_"+data[31:]+"\r\n", "$37 whose bytes differ from __data__ from byte 30 on", false)
	fail("data", "$36\r\n"+data[:36]+"\r\n", `$36 "0123456789abcdefghijKLMNOPQRSTUV"...`, false)
	fail("data", "$-1\r\n", "$-1 (nil)", true)

	pass("double", ",1.5\r\n")
	pass("double", "$4\r\n0.25\r\n")
	pass("double", "$6\r\n-1e-05\r\n")
	pass("double", "$3\r\ninf\r\n")
	fail("double", "$3\r\nabc\r\n", `$3 "abc"`, false)
	fail("double", "$3\r\n1e+\r\n", `$3 "1e+"`, false)
	fail("double", "$1\r\n.\r\n", `$1 "."`, false)
	fail("double", "$-1\r\n", "$-1 (nil)", true)

	pass("int", ":0\r\n")
	pass("int", ":-5\r\n")
	fail("int", "+1\r\n", "+1", false)
	fail("int", "$1\r\n1\r\n", `$1 "1"`, false)
	pass("int:1", ":1\r\n")
	fail("int:1", ":0\r\n", ":0", true)
	fail("int:1", ":2\r\n", ":2", false)
	pass("int:>=1", ":7\r\n")
	fail("int:>=1", ":0\r\n", ":0", true)
	fail("int:>=1", ":-1\r\n", ":-1", false)
	pass("int:<=5", ":5\r\n")
	fail("int:<=5", ":6\r\n", ":6", false)
	pass("int:0..1", ":0\r\n")
	fail("int:0..1", ":2\r\n", ":2", false)
	pass("int:-3..-1", ":-2\r\n")

	mget := "*2\r\n$37\r\n" + data + "\r\n$37\r\n" + data + "\r\n"
	pass("array:2:data", mget)
	pass("array:2:bulk", "*2\r\n$1\r\na\r\n$1\r\nb\r\n")
	fail("array:2:bulk", "*2\r\n$1\r\na\r\n$-1\r\n", "element 2 of 2 is $-1 (nil)", true)
	fail("array:2:bulk", "*1\r\n$1\r\na\r\n", "*1", false)
	fail("array:2:bulk", "*-1\r\n", "*-1 (nil)", true)
	fail("array:2:bulk", "$-1\r\n", "$-1 (nil)", true)
	fail("array:2:bulk:1", "*2\r\n$1\r\na\r\n$2\r\nbb\r\n", `element 2 of 2 is $2 "bb"`, false)
	pass("array:3:int:1", "*3\r\n:1\r\n:1\r\n:1\r\n") // SMISMEMBER, all members
	fail("array:3:int:1", "*3\r\n:1\r\n:0\r\n:1\r\n", "element 2 of 3 is :0", true)
	pass("array:>=1", "*3\r\n$1\r\na\r\n:1\r\n+x\r\n")
	pass("array:>=1", "*2\r\n*2\r\n$1\r\na\r\n,1\r\n*2\r\n$1\r\nb\r\n,2\r\n") // ZRANGE WITHSCORES in RESP3
	fail("array:>=1", "*0\r\n", "*0 (empty)", true)
	fail("array:>=1", "*1\r\n_\r\n", "element 1 of 1 is _ (null)", true)
	pass("array:2", "%1\r\n$1\r\nf\r\n$1\r\nv\r\n") // a RESP3 map counts its keys and values
	pass("array:1..3", "~2\r\n$1\r\na\r\n$1\r\nb\r\n")
	fail("array:1..3", "*4\r\n:1\r\n:1\r\n:1\r\n:1\r\n", "*4", false)
	pass("array", "*0\r\n")
	pass("bulk", "|1\r\n+key\r\n:1\r\n$1\r\na\r\n") // an attribute before the reply is skipped
}

// An error reply fails the run as an error even where an element was also unexpected, and
// whatever the expectation.
func TestExpectErrorReplies(t *testing.T) {
	f := func(spec, reply, want string) {
		t.Helper()
		bad, err := matchReply(t, spec, reply, false, "")
		if err != nil || bad == nil || string(bad.errText) != want {
			t.Errorf("%s on %q: %+v %v, want the error %q", spec, reply, bad, err, want)
		}
	}
	f("any", "-ERR boom\r\n", "ERR boom")
	f("bulk", "-WRONGTYPE x\r\n", "WRONGTYPE x")
	f("array:2:bulk", "*2\r\n$-1\r\n-ERR inner\r\n", "ERR inner")
	f("ok", "*1\r\n*1\r\n!3\r\nERR\r\n", "ERR")
}

func TestExpectParseErrors(t *testing.T) {
	for _, spec := range []string{"", "bogus", "ok:1", "any:x", "bulk:x", "bulk:-1", "int:a", "int:5..1", "int:>=",
		"simple:", "array:2:array:1", "array:2:nope", "array:x..y"} {
		if _, err := parseExpect(spec, nil); err == nil {
			t.Errorf("parseExpect(%q) accepted", spec)
		}
	}
}

func TestExpectInferred(t *testing.T) {
	f := func(command, want string) {
		t.Helper()
		tpl, err := compileTemplate(command, 8)
		if err != nil {
			t.Fatal(err)
		}
		if tpl.expect.spec != want || !tpl.expect.inferred {
			t.Errorf("%q: inferred %q, want %q", command, tpl.expect.spec, want)
		}
	}
	f("GET key:__key__", "bulk")
	f("get key:__key__", "bulk")
	f("MGET k:__key__ k:__key__ k:__key__", "array:3:bulk")
	f("HGET h:__key__ f", "bulk")
	f("HMGET h:__key__ a b", "array:2:bulk")
	f("LINDEX l:__key__ 0", "bulk")
	f("ZSCORE z:__key__ m", "double")
	f("SISMEMBER s:__key__ m", "int:1")
	f("SMISMEMBER s:__key__ a b c", "array:3:int:1")
	f("ZRANGE z:__key__ 0 9", "array:>=1")
	f("LPOP l:__key__", "bulk")
	f("SET key:__key__ __data__", "ok")
	f("SET key:__key__ __data__ EX 10", "ok")
	f("SET key:__key__ __data__ nx", "any")
	f("MSET a __data__ b __data__", "ok")
	f("PING", "simple:PONG")
	f("INCR counter:__key__", "int")
	f("LPUSH l:__key__ __data__", "int:>=1")
	f("DEL list:__key__", "int")
	f("HGETALL h:__key__", "any")
	f("XADD s * f v", "any")
}

// The message names the template, the reply and the expectation, and says how to run on when misses
// are meant.
func TestUnexpectedReplyMessage(t *testing.T) {
	tpl, _ := compileTemplate("GET key:__key__", 256)
	bad, _ := matchReply(t, tpl.expect.spec, "$-1\r\n", false, "")
	err := tpl.failure(bad)
	want := "unexpected reply to GET key:__key__: $-1 (nil); expected a bulk string (inferred from GET; --expect sets another); " +
		"is the data loaded (--prefill)? use --allow-misses to count misses as successes"
	if err.Error() != want {
		t.Fatalf("message\n%s\nwant\n%s", err, want)
	}
	tpl, _ = compileTemplate("MGET k:__key__ k:__key__", 3)
	if err := tpl.setExpect("array:2:data", []byte("abc")); err != nil {
		t.Fatal(err)
	}
	bad, _ = matchReply(t, "array:2:data", "*2\r\n$3\r\nabc\r\n$3\r\nabd\r\n", false, "abc")
	var ue *unexpectedReply
	if err := tpl.failure(bad); !errors.As(err, &ue) || err.Error() != "unexpected reply to MGET k:__key__ k:__key__: "+
		"element 2 of 2 is $3 whose bytes differ from __data__ from byte 2 on; expected an array of 2 elements, "+
		"each a bulk string holding __data__ (3 bytes)" {
		t.Fatalf("message %v", err)
	}
}

func TestExpectFlags(t *testing.T) {
	cfg, err := parseFlags([]string{"--command", "GET k:__key__", "--expect", "data", "--command", "SET k:__key__ __data__",
		"--command", "SISMEMBER s m", "--expect", "int:0..1", "--allow-misses", "--prefill-expect", "any"}, &strings.Builder{})
	if err != nil {
		t.Fatal(err)
	}
	tpls, _, err := cfg.compile()
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []string{"data", "ok", "int:0..1"} {
		if tpls[i].expect.spec != want || !tpls[i].expect.misses {
			t.Errorf("template %d: expectation %q (misses %v), want %q with misses", i, tpls[i].expect.spec, tpls[i].expect.misses, want)
		}
	}
	if pre, _ := cfg.compilePrefill(); pre.expect.spec != "any" {
		t.Errorf("prefill expectation %q", pre.expect.spec)
	}
	for _, bad := range [][]string{
		{"--expect", "ok", "--command", "SET k v"},
		{"--command", "SET k v", "--expect", "ok", "--expect", "any"},
		{"--command", "GET k", "--expect", "bulk:x"},
		{"--command", "GET k", "--expect", ""},
		{"--prefill-expect", "nope"},
	} {
		if _, err := parseFlags(bad, &strings.Builder{}); err == nil {
			t.Errorf("parseFlags(%q) accepted", bad)
		}
	}
}
