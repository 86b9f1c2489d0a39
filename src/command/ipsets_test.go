package command

import (
	"fmt"
	"testing"
)

// TestIPSetTranscript replays testdata/hotkv/ipset.txt (HotKV's IPSET.* commands).
func TestIPSetTranscript(t *testing.T) { hotkvTranscript(t, "ipset") }

// TestIPSetExpiry: per-entry expiry on a fixed clock: TTL and PX count from now, EXAT and PXAT
// are absolute, MATCH replies the time left, expired entries are never reported, CARD leaves them
// out, and a write removes them (the key too when nothing is left).
func TestIPSetExpiry(t *testing.T) {
	e := newTestEngine()
	const now = int64(1_700_000_000_000) * 1e6 // unix ns, a whole ms
	const ms = now / 1e6
	f := func(at int64, want string, args ...string) {
		t.Helper()
		if got := ktCall(e, 0, at, args...); got != want {
			t.Errorf("%v at +%d ms = %q, want %q", args, (at-now)/1e6, got, want)
		}
	}
	f(now, ":2\r\n", "IPSET.ADD", "k", "TTL", "10", "10.0.0.0/8", "::1")
	f(now, ":1\r\n", "IPSET.ADD", "k", "PX", "500", "LABEL", "short", "10.1.0.0/16")
	f(now, ":1\r\n", "IPSET.ADD", "k", "PXAT", fmt.Sprint(ms+20000), "10.1.2.0/24")
	f(now, ":1\r\n", "IPSET.ADD", "k", "EXAT", fmt.Sprint(ms/1000+30), "NOMATCH", "10.1.2.3")
	f(now, ":1\r\n", "IPSET.ADD", "k", "9.9.9.9")
	f(now, "*3\r\n$11\r\n10.1.0.0/16\r\n$5\r\nshort\r\n:500\r\n", "IPSET.MATCH", "k", "10.1.9.9")
	f(now+100e6, "*3\r\n$11\r\n10.1.0.0/16\r\n$5\r\nshort\r\n:400\r\n", "IPSET.MATCH", "k", "10.1.9.9")
	f(now, ":6\r\n", "IPSET.CARD", "k")
	// at +500 ms the /16 has expired: the /8 decides
	f(now+500e6, "*3\r\n$10\r\n10.0.0.0/8\r\n$-1\r\n:9500\r\n", "IPSET.MATCH", "k", "10.1.9.9")
	f(now+500e6, ":5\r\n", "IPSET.CARD", "k")
	// at +10 s the /8 and ::1 are gone; 10.1.2.3 is NOMATCH until +30 s
	f(now+10000e6, "*4\r\n:0\r\n:0\r\n:1\r\n:0\r\n", "IPSET.MCONTAINS", "k", "10.9.9.9", "::1", "10.1.2.4", "10.1.2.3")
	f(now+10000e6, ":3\r\n", "IPSET.CARD", "k")
	f(now+30000e6, ":1\r\n", "IPSET.CONTAINS", "k", "9.9.9.9")
	f(now+30000e6, ":1\r\n", "IPSET.CARD", "k")
	// a write removes what expired
	f(now+30000e6, ":0\r\n", "IPSET.DEL", "k", "1.1.1.1")
	f(now+30000e6, "*2\r\n$1\r\n0\r\n*1\r\n$7\r\n9.9.9.9\r\n", "IPSET.SCAN", "k", "0")
	f(now+30000e6, ":1\r\n", "IPSET.ADD", "k", "PX", "1", "1.1.1.1")
	f(now+30000e6, ":1\r\n", "IPSET.DEL", "k", "9.9.9.9")
	f(now+30002e6, ":0\r\n", "IPSET.ADD", "k", "XX", "2.2.2.2")
	f(now+30002e6, ":0\r\n", "EXISTS", "k")
}
