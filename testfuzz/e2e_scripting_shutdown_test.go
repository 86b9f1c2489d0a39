package testfuzz

import (
	"testing"
	"time"
)

// While a script is busy, SHUTDOWN NOSAVE still ends the server (issue 16's limits): the looping
// script's connection is closed without a reply and the server exits. SHUTDOWN and SHUTDOWN SAVE
// first get Redis's reply, compared with redis-server 7.0.15 run through the same steps. The
// server ends promptly, as Redis's does, not after its stop grace.
func TestScriptBusyShutdownNoSave(t *testing.T) {
	if !haveRedis() {
		t.Skip("redis-server not on PATH")
	}
	var saving []string
	for _, kind := range []string{"redis", "hotkv"} {
		t.Run(kind, func(t *testing.T) {
			n := startNode(t, kind, t.TempDir(), "--busy-reply-threshold", "50")
			runner, other := dial(t, n.addr), dial(t, n.addr)
			runner.write(appendCommand(nil, "EVAL", "while true do end", "0"))
			busy := "-BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.\r\n"
			for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(10 * time.Millisecond) {
				got := other.do("FUNCTION", "KILL") // allow-busy: NOTBUSY until the script is busy
				if got == busy {
					break
				}
				if got != "-NOTBUSY No scripts in execution right now.\r\n" || time.Now().After(deadline) {
					t.Fatalf("FUNCTION KILL while the script starts: %q", got)
				}
			}
			saving = append(saving, other.do("SHUTDOWN")+other.do("SHUTDOWN", "SAVE"))
			start := time.Now()
			n.shutdown(t, "NOSAVE")
			if got, err := runner.readUntilClosed(10 * time.Second); err != nil || got != "" {
				t.Errorf("the looping script's connection: %q, %v; want closed without a reply", got, err)
			}
			took := time.Since(start)
			t.Logf("%s: SHUTDOWN NOSAVE ended the server %v after it was sent", kind, took)
			// Redis exits in about 3 ms; HotKV waited for the looping connection for the whole
			// stop grace (5 s) until the stop ended busy runs (script.Engine.StopRuns).
			if took > 2*time.Second {
				t.Errorf("%s: SHUTDOWN NOSAVE took %v to end the server; want well under 2 s", kind, took)
			}
		})
	}
	if len(saving) == 2 && saving[0] != saving[1] {
		t.Errorf("SHUTDOWN and SHUTDOWN SAVE during a busy script: Redis %q, HotKV %q", saving[0], saving[1])
	}
}
