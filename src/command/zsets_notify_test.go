package command

import (
	"os"
	"strconv"
	"strings"
	"testing"
)

// notifyZSetsFile is the keyspace-notification transcript of the sorted sets and SORT ... STORE,
// in TestTranscripts' format ("## sync", several connections), recorded from redis-server
// 7.0.15 with `go test ./src/command -run TestNotifyZSets -update`.
const notifyZSetsFile = "testdata/notify/zsets.txt"

// TestNotifyZSets replays notifyZSetsFile (and its RESP3 twin). It lies outside testdata/*.txt
// and runs here, not in TestTranscripts, because TestTranscripts' engine (newTestEngine) keeps
// notify-keyspace-events at its default whatever CONFIG SET says; this one applies it, as
// server.New does.
func TestNotifyZSets(t *testing.T) {
	data, err := os.ReadFile(notifyZSetsFile)
	if err != nil {
		t.Fatal(err)
	}
	steps, sync := parseTranscript(t, data), isSync(data)
	f3 := strings.TrimSuffix(notifyZSetsFile, ".txt") + ".resp3.txt"
	if *update {
		recordTranscript(t, notifyZSetsFile, steps, 2, sync)
		recordTranscript(t, f3, steps, 3, sync)
		return
	}
	data3, err := os.ReadFile(f3)
	if err != nil {
		t.Fatalf("missing RESP3 transcript (run with -update): %v", err)
	}
	t.Run("resp2", func(t *testing.T) { replayNotify(t, steps, 2) })
	t.Run("resp3", func(t *testing.T) { replayNotify(t, parseTranscript(t, data3), 3) })
}

// newNotifyEngine is a test engine whose CONFIG SET notify-keyspace-events takes effect.
func newNotifyEngine() *Engine {
	e := newTestEngine()
	st := e.Config.(testStore)
	st.OnChange("notify-keyspace-events", func(string) {
		s := *e.Settings()
		s.NotifyKeyspaceEvents = st.Int("notify-keyspace-events")
		e.SetSettings(s)
	})
	return e
}

// replayNotify is checkTranscript on a newNotifyEngine.
func replayNotify(t *testing.T, steps []step, proto int) {
	e := newNotifyEngine()
	conns := map[string]*testConn{}
	conn := func(name string) *testConn {
		if conns[name] == nil {
			conns[name] = newTestConn(t, e)
			if proto == 3 {
				conns[name].do("HELLO", "3")
			}
		}
		return conns[name]
	}
	ids := func(name string) string { return strconv.FormatUint(conn(name).client.ID, 10) }
	for i, s := range steps {
		tc := conn(s.conn)
		var out []byte
		if s.mode != "<" {
			out, _ = tc.send(encodeArgs(withIDs(s.args, ids)))
		} else {
			out, _ = tc.send(nil)
		}
		if !replyMatches(t, s, string(out), s.want) {
			t.Errorf("step %d: %s\n got: %q\nwant: %q", i+1, s.header(), out, s.want)
		}
	}
}
