package server

import (
	"io"
	"log/slog"
	"math"
	"runtime"
	"runtime/debug"
	"testing"

	"github.com/hotkv/hotkv/src/config"
)

func TestMemoryLimit(t *testing.T) {
	for _, c := range []struct {
		limit, maxmemory uint64
		want             int64
	}{
		{0, 0, math.MaxInt64},
		{0, 200 << 20, 300<<20 - 4<<20 - rssReserve}, // 1.5x less 2% and the reserve
		{0, 100 << 20, 150<<20 - 2<<20 - rssReserve}, // 134 MB
		{0, 64 << 20, 72<<20 + 16<<20},               // the floor: 1.125x plus 16 MB
		{0, 16 << 20, 18<<20 + 16<<20},
		{0, 1 << 30, 1536<<20 - (1<<30)/50 - rssReserve},
		{64 << 20, 100 << 20, 64 << 20},
		{math.MaxUint64, 0, math.MaxInt64},
		{0, math.MaxUint64, math.MaxInt64},
	} {
		if got := memoryLimit(c.limit, c.maxmemory); got != c.want {
			t.Errorf("memoryLimit(%d, %d) = %d, want %d", c.limit, c.maxmemory, got, c.want)
		}
	}
}

// TestGCSettingsApply checks that the directives reach the runtime, at start and on CONFIG SET.
func TestGCSettingsApply(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(math.MaxInt64))
	t.Setenv("GOGC", "")
	t.Setenv("GOMEMLIMIT", "")
	cfg, err := config.Load([]string{"--gc-percent", "37", "--maxmemory", "200mb", "--port", "0"})
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	_ = s // not started: New applies the settings
	gogc := func() int { v := debug.SetGCPercent(-1); debug.SetGCPercent(v); return v }
	if got := gogc(); got != 37 {
		t.Errorf("GOGC = %d, want 37", got)
	}
	if want := int64(300<<20 - (200<<20)/50 - rssReserve); debug.SetMemoryLimit(-1) != want {
		t.Errorf("memory limit = %d, want maxmemory*1.5 less 2%% and rssReserve = %d", debug.SetMemoryLimit(-1), want)
	}
	if err := cfg.Set([][2]string{{"gc-memory-limit", "1gb"}}); err != nil {
		t.Fatal(err)
	}
	if got := debug.SetMemoryLimit(-1); got != 1<<30 {
		t.Errorf("memory limit after CONFIG SET = %d, want 1gb", got)
	}
	if err := cfg.Set([][2]string{{"gc-percent", "250"}}); err != nil {
		t.Fatal(err)
	}
	if got := gogc(); got != 250 {
		t.Errorf("GOGC after CONFIG SET = %d, want 250", got)
	}
}

// TestIdleCollection: a collection starts after an idle second with garbage in the heap, not
// while commands run, not twice in one idle spell, and not with gc-idle no.
func TestIdleCollection(t *testing.T) {
	cfg, err := config.Load([]string{"--port", "0"})
	if err != nil {
		t.Fatal(err)
	}
	ops := int64(0)
	g := newGCTuner(cfg, slog.New(slog.NewTextHandler(io.Discard, nil)), func() int64 { return ops })
	calls := make(chan struct{}, 10)
	g.collect = func() { calls <- struct{}{} }
	defer debug.SetGCPercent(debug.SetGCPercent(-1)) // only the test's own collections
	// and none from a soft memory limit an earlier test or server left set (in the full suite
	// the heap nears it, a collection took the 64 MB first, and the idle one had nothing to do)
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(math.MaxInt64))
	runtime.GC()
	garbage := func() {
		for range 64 {
			sink = make([]byte, 1<<20)
		}
		sink = nil
	}
	wait := func(want bool, what string) {
		t.Helper()
		for g.collecting.Load() {
			runtime.Gosched()
		}
		select {
		case <-calls:
			if !want {
				t.Fatalf("%s: collected", what)
			}
		default:
			if want {
				t.Fatalf("%s: did not collect", what)
			}
		}
	}
	garbage()
	ops++
	g.check() // commands ran in the last second
	wait(false, "busy")
	g.check()
	wait(true, "first idle second with 64 MB of garbage")
	g.check()
	wait(false, "second idle second")
	ops++
	g.check()
	runtime.GC()
	g.check()
	wait(false, "idle without garbage")
	if err := cfg.Set([][2]string{{"gc-idle", "no"}}); err != nil {
		t.Fatal(err)
	}
	garbage()
	ops++
	g.check()
	g.check()
	wait(false, "gc-idle no")
}

var sink []byte
