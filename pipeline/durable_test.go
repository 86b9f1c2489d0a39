package pipeline

import (
	"errors"
	"testing"
)

// Env.Durable runs before every Completed call (final only for the last) and before the
// replies are written; false keeps the batch's replies unwritten and ends the connection.
func TestDurableBeforeCompletedAndReplies(t *testing.T) {
	env := toyEnv(4)
	var log []string
	env.Completed = func(_ any, slots []Slot) { log = append(log, "completed") }
	ok := true
	env.Durable = func(_ any, final bool) bool {
		if final {
			log = append(log, "durable final")
		} else {
			log = append(log, "durable")
		}
		return ok
	}
	m := &chanStream{in: append(append(cmd("INCR", "a"), cmd("SUM", "a")...), cmd("INCR", "b")...)}
	c := NewConn(env, m, nil)
	if err := c.Serve(); err != nil {
		t.Fatal(err)
	}
	want := []string{"durable", "completed", "durable final", "completed"}
	if len(log) != len(want) {
		t.Fatalf("calls %v, want %v", log, want)
	}
	for i := range want {
		if log[i] != want[i] {
			t.Fatalf("calls %v, want %v", log, want)
		}
	}
	if m.out.String() != ":1\r\n:1\r\n:1\r\n" {
		t.Fatalf("replies %q", m.out.String())
	}
	ok = false
	m.in, m.off, log = cmd("INCR", "a"), 0, nil
	m.out.Reset()
	if err := c.Serve(); !errors.Is(err, ErrNotDurable) {
		t.Fatalf("Serve with Durable false: %v", err)
	}
	if m.out.Len() != 0 {
		t.Fatalf("replies written although not durable: %q", m.out.String())
	}
}
