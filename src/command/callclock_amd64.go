package command

import (
	"bytes"
	"os"
)

func rdtsc() int64

// tscTrusted reports whether the kernel keeps time with the time-stamp counter: it chooses the
// tsc clocksource only when the counter runs at a constant rate, does not stop in idle states,
// and agrees across CPUs, which is what a duration measured on one CPU and ended on another
// needs.
func tscTrusted() bool {
	b, err := os.ReadFile("/sys/devices/system/clocksource/clocksource0/current_clocksource")
	return err == nil && bytes.Equal(bytes.TrimSpace(b), []byte("tsc"))
}
