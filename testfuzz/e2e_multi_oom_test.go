package testfuzz

import "testing"

// Over maxmemory (noeviction), a command queued in MULTI is refused with -OOM, whether or not it
// is denyoom (a queue may grow without bound), MULTI/DISCARD/EXEC themselves are not refused,
// and EXEC then answers EXECABORT; outside MULTI a read is served and a write refused. Replies
// compared byte for byte with redis-server 7.0.15.
func TestMultiOOMAgainstRedis(t *testing.T) {
	steps := [][]string{
		{"MULTI"}, {"SET", "k", "v"}, {"GET", "a"}, {"PING"}, {"EXEC"},
		{"MULTI"}, {"GET", "a"}, {"DISCARD"},
		{"GET", "a"}, {"SET", "k", "v"},
	}
	var got []string
	for _, name := range []string{"redis", "hotkv"} {
		var addr string
		if name == "redis" {
			addr = startRedis(t)
		} else {
			addr, _ = startHotKV(t)
		}
		c := dial(t, addr)
		c.do("SET", "a", "1")
		if r := c.do("CONFIG", "SET", "maxmemory", "1"); r != "+OK\r\n" {
			t.Fatalf("%s: CONFIG SET maxmemory: %q", name, r)
		}
		out := ""
		for _, s := range steps {
			out += c.do(s...)
		}
		c.do("CONFIG", "SET", "maxmemory", "0")
		got = append(got, out)
	}
	if got[0] != got[1] {
		t.Errorf("Redis  %q\nHotKV %q", got[0], got[1])
	}
	t.Logf("equal: %q", got[1])
}
