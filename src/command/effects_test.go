package command

import (
	"fmt"
	"strings"
	"testing"

	"github.com/hotkv/hotkv/net/resp/resptest"
	"github.com/hotkv/hotkv/pipeline/feed"

	"github.com/hotkv/hotkv/src/config"
)

// The event classes are notify-keyspace-events' bits as src/config parses them.
func TestClassesMatchConfig(t *testing.T) {
	pairs := []struct {
		c Class
		n int64
	}{
		{NotifyKeyspace, config.NotifyKeyspace}, {NotifyKeyevent, config.NotifyKeyevent},
		{NotifyGeneric, config.NotifyGeneric}, {NotifyString, config.NotifyString},
		{NotifyList, config.NotifyList}, {NotifySet, config.NotifySet}, {NotifyHash, config.NotifyHash},
		{NotifyZSet, config.NotifyZset}, {NotifyExpired, config.NotifyExpired},
		{NotifyEvicted, config.NotifyEvicted}, {NotifyStream, config.NotifyStream},
		{NotifyKeyMiss, config.NotifyKeyMiss}, {NotifyModule, config.NotifyModule}, {NotifyNew, config.NotifyNew},
	}
	for _, p := range pairs {
		if int64(p.c) != p.n {
			t.Errorf("class %d is %d in src/config", p.c, p.n)
		}
	}
}

// commandLen finds the end of each command appendCommand wrote.
func TestCommandLen(t *testing.T) {
	var b []byte
	b = appendCommand(b, [][]byte{[]byte("SET"), []byte("k\r\n"), []byte("")})
	first := len(b)
	b = appendCommand(b, [][]byte{[]byte("DEL"), []byte("0123456789abc")})
	if n := commandLen(b); n != first {
		t.Fatalf("commandLen = %d, want %d", n, first)
	}
	if n := commandLen(b[first:]); n != len(b)-first {
		t.Fatalf("second commandLen = %d, want %d", n, len(b)-first)
	}
}

// feedEntries reads what the feed holds now, an entry a line: "db<N>: CMD args; CMD args" (the
// commands of a MULTI … EXEC entry joined by "; ").
func feedEntries(t *testing.T, rd *feed.Reader) []string {
	t.Helper()
	es, err := rd.Next()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, en := range es {
		vs, err := resptest.ParseAll(en.Cmd)
		if err != nil {
			t.Fatal(err)
		}
		var parts []string
		for _, v := range vs {
			args, _ := v.Strings()
			parts = append(parts, strings.Join(args, " "))
		}
		out = append(out, fmt.Sprintf("db%d: %s", en.DB, strings.Join(parts, "; ")))
	}
	return out
}
