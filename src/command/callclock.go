package command

import "math"

// The call clock, which times each call while latency tracking, the slowlog or the latency
// monitor is on (stats_call.go). runtime.nanotime is a vDSO call that switches to the system
// stack and reads the counter serialized: 26 ns in a loop and about 45 ns a command in
// BenchmarkMulti's profile (17% of a MULTI/SET/INCR/EXEC transaction's CPU), where Redis's
// call() reads CLOCK_MONOTONIC twice. Where the kernel trusts the CPU's time-stamp counter
// (tscTrusted), callTicks reads it directly and ticksToNs converts a difference with a rate
// measured against nanotime at start; elsewhere callTicks is nanotime and the rate is 1.
//
// Only differences of callTicks readings mean anything; they are never mixed with nanotime's.

var (
	useTSC    bool
	nsPerTick = 1.0
)

func init() {
	if tscTrusted() {
		if r, ok := measureTickRate(calibrateNs); ok {
			useTSC, nsPerTick = true, r
		}
	}
}

// calibrateNs is how long measureTickRate compares the two clocks: two paired readings this far
// apart bound the rate's error by the readings' own skew (tens of ns, the least of several tries)
// over it, a few parts in 100,000.
const calibrateNs = 2e6

// callTicks is the call clock's reading.
func callTicks() int64 {
	if useTSC {
		return rdtsc()
	}
	return nanotime()
}

// ticksToNs converts a difference of callTicks readings to nanoseconds. A negative difference
// (counters a few cycles apart on two CPUs) is 0.
func ticksToNs(d int64) int64 {
	if d <= 0 {
		return 0
	}
	return int64(float64(d) * nsPerTick)
}

// measureTickRate returns nanoseconds per counter tick, from pairs of readings of both clocks
// about span ns apart, or false if the counter does not advance at a plausible rate (between
// 100 MHz and 10 GHz).
func measureTickRate(span int64) (float64, bool) {
	t0, n0 := pairedReading()
	for nanotime()-n0 < span {
	}
	t1, n1 := pairedReading()
	if t1 <= t0 || n1 <= n0 {
		return 0, false
	}
	r := float64(n1-n0) / float64(t1-t0)
	if math.IsNaN(r) || r < 0.1 || r > 10 {
		return 0, false
	}
	return r, true
}

// pairedReading reads the counter on either side of a nanotime reading, five times, and keeps
// the tightest pair: a preemption between the reads shows as a wide gap and is dropped.
func pairedReading() (ticks, ns int64) {
	best := int64(math.MaxInt64)
	for range 5 {
		a := rdtsc()
		n := nanotime()
		b := rdtsc()
		if b-a < best {
			best, ticks, ns = b-a, a+(b-a)/2, n
		}
	}
	return ticks, ns
}
