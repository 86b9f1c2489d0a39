package aof

import (
	"io"
	"slices"
	"sync"
	"testing"
	"time"
)

// slowFS delays every write, fsync and stat by d: the forced slow path of the latency events.
type slowFS struct {
	FS
	d time.Duration
}

type slowFile struct {
	File
	d time.Duration
}

func (s slowFS) Create(name string) (File, error) {
	f, err := s.FS.Create(name)
	return slowFile{f, s.d}, err
}
func (s slowFS) OpenAppend(name string) (File, error) {
	f, err := s.FS.OpenAppend(name)
	return slowFile{f, s.d}, err
}
func (s slowFS) Stat(name string) (int64, error) { time.Sleep(s.d); return s.FS.Stat(name) }
func (f slowFile) Write(p []byte) (int, error)   { time.Sleep(f.d); return f.File.Write(p) }
func (f slowFile) Sync() error                   { time.Sleep(f.d); return f.File.Sync() }

// latencyLog collects Config.Latency's events.
type latencyLog struct {
	mu     sync.Mutex
	events map[string][]time.Duration
}

func (l *latencyLog) note(ev string, d time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.events == nil {
		l.events = map[string][]time.Duration{}
	}
	l.events[ev] = append(l.events[ev], d)
}

func (l *latencyLog) names() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for k := range l.events {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func (l *latencyLog) min(ev string) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Min(l.events[ev])
}

// TestLatencyEvents: with every file operation 3 ms slow, the writer reports Redis's event for
// each: every write as aof-write and aof-write-alone (nothing runs beside it), fsyncs under
// always as aof-fsync-always (under everysec the fsync runs in the background: no event, as in
// Redis), and the stat of the file it opens as aof-fstat, each at least the delay.
func TestLatencyEvents(t *testing.T) {
	const delay = 3 * time.Millisecond
	for _, p := range []Policy{Always, Everysec} {
		var log latencyLog
		e := newEnv(t, p, func(c *Config) {
			c.FS = slowFS{c.FS, delay}
			c.Latency = log.note
		})
		var last uint64
		for i := 1; i <= 20; i++ {
			last = e.set(i, 0)
		}
		if err := e.w.WaitDurable(last, 10*time.Second); err != nil {
			t.Fatalf("policy %d: %v", p, err)
		}
		want := []string{"aof-fstat", "aof-fsync-always", "aof-write", "aof-write-alone"}
		if p == Everysec {
			want = []string{"aof-fstat", "aof-write", "aof-write-alone"}
		}
		if got := log.names(); !slices.Equal(got, want) {
			t.Fatalf("policy %d: events %v, want %v", p, got, want)
		}
		for _, ev := range want {
			if d := log.min(ev); d < delay {
				t.Errorf("policy %d: %s took %v, under the %v every call sleeps", p, ev, d, delay)
			}
		}
	}
}

// TestLatencyWriteBesideFsync: a write while everysec's background fsync runs is
// aof-write-pending-fsync, as Redis's flushAppendOnlyFile names it.
func TestLatencyWriteBesideFsync(t *testing.T) {
	var log latencyLog
	e := newEnv(t, Everysec, func(c *Config) {
		c.FS = slowFS{c.FS, 300 * time.Millisecond} // a background fsync long enough to write beside
		c.Latency = log.note
	})
	deadline := time.Now().Add(10 * time.Second)
	for i := 1; !slices.Contains(log.names(), "aof-write-pending-fsync"); i++ {
		if time.Now().After(deadline) {
			t.Fatalf("no aof-write-pending-fsync in 10 s; events %v", log.names())
		}
		e.set(i, 0)
		time.Sleep(50 * time.Millisecond)
	}
}

// TestLatencyWriteDuringRewrite: a write while a rewrite runs (Redis's child) is
// aof-write-active-child.
func TestLatencyWriteDuringRewrite(t *testing.T) {
	var log latencyLog
	e := newEnv(t, Always, func(c *Config) {
		c.FS = slowFS{c.FS, time.Millisecond}
		c.Latency = log.note
	})
	var last uint64
	for i := 1; i <= 10; i++ {
		last = e.set(i, 0)
	}
	if err := e.w.WaitDurable(last, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	if err := e.w.StartRewrite(last, nil); err != nil {
		t.Fatal(err)
	}
	for i := 11; i <= 20; i++ {
		last = e.set(i, 0)
	}
	if err := e.w.WaitDurable(last, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(log.names(), "aof-write-active-child") {
		t.Errorf("no aof-write-active-child while a rewrite ran; events %v", log.names())
	}
	if err := e.w.FinishRewrite(func(w io.Writer) error { return writeSnapshot(w, 10) }, false); err != nil {
		t.Fatal(err)
	}
}
