package command

import (
	"testing"
	"time"
)

// The call clock converts to the same nanoseconds as the runtime's monotonic clock: over a
// sleep, both measure the same interval within 1% (plus the paired readings' skew).
func TestCallClockAgreesWithNanotime(t *testing.T) {
	t.Logf("time-stamp counter in use: %v, %.4f ns a tick", useTSC, nsPerTick)
	for range 3 {
		a, n0 := callTicks(), nanotime()
		time.Sleep(30 * time.Millisecond)
		b, n1 := callTicks(), nanotime()
		got, want := ticksToNs(b-a), n1-n0
		if want < 30e6 {
			t.Fatalf("nanotime measured %d ns over a 30 ms sleep", want)
		}
		if diff := got - want; diff > want/100+100e3 || -diff > want/100+100e3 {
			t.Fatalf("call clock measured %d ns where nanotime measured %d", got, want)
		}
	}
}

// measureTickRate finds a plausible rate, the counter is used only where the kernel trusts it,
// and a negative difference is no time.
func TestMeasureTickRate(t *testing.T) {
	r, ok := measureTickRate(1e6)
	if !ok || r < 0.1 || r > 10 {
		t.Fatalf("measureTickRate = %v, %v", r, ok)
	}
	if useTSC && !tscTrusted() {
		t.Fatal("the counter is used where the kernel does not keep time with it")
	}
	if ticksToNs(-5) != 0 || ticksToNs(0) != 0 {
		t.Fatal("a negative difference must be 0 ns")
	}
}
