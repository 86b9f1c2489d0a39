package testfuzz

import (
	"strings"
	"testing"
)

// edgeSessions are fixed command sequences at the corners the random stream reaches only rarely.
// Each runs on one connection of each server; every reply must match Redis's byte for byte.
var edgeSessions = []struct {
	name  string
	steps [][]string
}{
	{"expiry at the end of time", [][]string{
		{"SET", "e", "v", "PXAT", "9223372036854775807"},
		{"PEXPIRETIME", "e"},
		{"EXPIRETIME", "e"},
		{"PEXPIREAT", "e", "9223372036854775807", "GT"},
		{"PEXPIREAT", "e", "9223372036854775806", "LT"},
		{"PEXPIRETIME", "e"},
		{"EXPIREAT", "e", "9223372036854775"},
		{"PEXPIRETIME", "e"},
		{"EXPIREAT", "e", "9223372036854776"},
		{"PEXPIRE", "e", "9223372036854775807"},
		{"SET", "e", "v", "EXAT", "9223372036854775"},
		{"PEXPIRETIME", "e"},
		{"GETEX", "e", "PXAT", "9223372036854775807"},
		{"PEXPIRETIME", "e"},
	}},
	{"fixed absolute expiry", [][]string{
		{"SET", "f", "v", "PXAT", "4102444800123"},
		{"PEXPIRETIME", "f"},
		{"EXPIRETIME", "f"},
		{"EXPIREAT", "f", "4102444800", "GT"},
		{"EXPIREAT", "f", "4102444800", "LT"},
		{"PEXPIRETIME", "f"},
		{"COPY", "f", "g"},
		{"PEXPIRETIME", "g"},
		{"RENAME", "g", "h"},
		{"PEXPIRETIME", "h"},
		{"SET", "h", "w", "KEEPTTL"},
		{"PEXPIRETIME", "h"},
		{"SET", "h", "w"},
		{"PEXPIRETIME", "h"},
	}},
	{"unknown command error text", [][]string{
		{"nosuch", "a\r\nb", "c d"},
		{"nosuch", "bin\x00\xff", "x"},
		{"nosuch", strings.Repeat("z", 200), "y"},
		{"nosuch", strings.Repeat("z", 100), strings.Repeat("y", 100)},
		{"nosuch\r\n", "x"},
		{"PING"},
	}},
	{"error text with binary arguments", [][]string{
		{"SET", "k\x00\r\n", "v", "EX", "bad\r\n"},
		{"INCRBY", "k\x00\r\n", "1\x00"},
		{"SELECT", "1\r\n"},
		{"PING"},
	}},
}

func TestEdgeSessions(t *testing.T) {
	redis := startRedis(t)
	hotkv, _ := startHotKV(t)
	for _, session := range edgeSessions {
		hk, rd := dial(t, hotkv), dial(t, redis)
		for _, args := range session.steps {
			want := rd.do(args...)
			got, err := hk.doErr(args...)
			if got != want {
				t.Errorf("%s: %s\n    HotKV: %s (%v)\n    Redis: %s", session.name, quoteArgs(args), quote(got), err, quote(want))
			}
			if got != want {
				// HotKV's stream may be out of step now (a reply with a raw CRLF); carry on with a
				// fresh pair of connections, the keys live on in the servers.
				hk.c.Close()
				hk, rd = dial(t, hotkv), dial(t, redis)
			}
		}
	}
}
