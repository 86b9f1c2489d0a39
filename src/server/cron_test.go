package server

import (
	"strings"
	"testing"
	"time"
)

// A panic in one tick of the cron is logged once, at Error with its value and stack; the cron
// runs its next tick and clients are still served.
func TestCronPanic(t *testing.T) {
	s := newTestServer(t)
	logs := captureLog(s)
	later := make(chan struct{})
	calls := 0 // only the cron goroutine counts
	s.reclaim = func() {
		calls++
		switch calls {
		case 1:
			panic("reclaim broke")
		case 2:
			close(later)
		}
	}
	serveTestServer(t, s)
	select {
	case <-later:
	case <-time.After(10 * time.Second):
		t.Fatal("the cron ran no tick after the one that panicked")
	}
	if got := dialTestServer(t, s).do("PING"); got != "+PONG\r\n" {
		t.Fatalf("PING after the panic: %q", got)
	}
	log := logs.String()
	if n := strings.Count(log, "background work panicked"); n != 1 {
		t.Fatalf("the panic was logged %d times, want once:\n%s", n, log)
	}
	for _, want := range []string{"level=ERROR", "work=reclaim", `panic="reclaim broke"`, "TestCronPanic"} {
		if !strings.Contains(log, want) {
			t.Fatalf("the log has no %s:\n%s", want, log)
		}
	}
}
