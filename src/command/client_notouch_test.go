package command

import (
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// CLIENT NO-TOUCH on: reads and writes of existing keys leave OBJECT IDLETIME alone; TOUCH still
// touches; another client's read does; OFF restores the default.
func TestClientNoTouch(t *testing.T) {
	e := newTestEngine()
	quiet, other := newTestConn(t, e), newTestConn(t, e)
	age := func(key string) {
		en := e.keyspace(0, []byte(key)).Peek([]byte(key), time.Now().UnixNano())
		atomic.StoreUint32(&en.Access, uint32(time.Now().Unix()-100))
	}
	idle := func(key string) int {
		r := other.do("OBJECT", "IDLETIME", key)
		n, _ := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(r, ":")))
		return n
	}
	other.do("SET", "s", "v")
	other.do("RPUSH", "l", "a")
	other.do("SADD", "set", "m")
	if r := quiet.do("CLIENT", "NO-TOUCH", "on"); r != "+OK\r\n" {
		t.Fatal(r)
	}
	for _, step := range [][]string{
		{"GET", "s"}, {"STRLEN", "s"}, {"SET", "s", "w", "KEEPTTL"}, {"LRANGE", "l", "0", "-1"},
		{"RPUSH", "l", "b"}, {"SISMEMBER", "set", "m"}, {"SADD", "set", "n"}, {"MGET", "s", "s"},
	} {
		key := step[1]
		age(key)
		quiet.do(step...)
		if n := idle(key); n < 99 {
			t.Errorf("%v from a NO-TOUCH client: IDLETIME %d, want about 100", step, n)
		}
	}
	age("s")
	quiet.do("TOUCH", "s")
	if n := idle("s"); n > 1 {
		t.Errorf("TOUCH from a NO-TOUCH client: IDLETIME %d, want 0", n)
	}
	age("s")
	other.do("GET", "s")
	if n := idle("s"); n > 1 {
		t.Errorf("GET from another client: IDLETIME %d, want 0", n)
	}
	quiet.do("CLIENT", "NO-TOUCH", "off")
	age("s")
	quiet.do("GET", "s")
	if n := idle("s"); n > 1 {
		t.Errorf("GET after NO-TOUCH off: IDLETIME %d, want 0", n)
	}
}
