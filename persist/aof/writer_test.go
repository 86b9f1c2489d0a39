package aof

import (
	"bytes"
	"errors"
	"io"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/hotkv/hotkv/pipeline/feed"
)

// Every policy writes every entry in order, with a SELECT at the start of the file and at each
// change of database, and Load gives them back.
func TestWriterPolicies(t *testing.T) {
	for _, p := range []Policy{Always, Everysec, No} {
		e := newEnv(t, p, nil)
		before := e.fs.Syncs() // the manifest's
		var last uint64
		for i := 1; i <= 100; i++ {
			last = e.set(i, i%3)
		}
		if err := e.w.WaitDurable(last, 5*time.Second); err != nil {
			t.Fatalf("policy %d: %v", p, err)
		}
		if p == Always && e.fs.Syncs() == before {
			t.Fatalf("always: durable without an fsync")
		}
		if p == No && e.fs.Syncs() != before {
			t.Fatalf("no: %d fsyncs of the AOF", e.fs.Syncs()-before)
		}
		if err := e.w.Close(); err != nil {
			t.Fatal(err)
		}
		raw, err := e.fs.ReadFile(e.dir + "/appendonly.aof.1.incr.aof")
		if err != nil {
			t.Fatal(err)
		}
		want := append(enc("SELECT", "1"), enc("SET", "k1", "1")...)
		want = append(want, enc("SELECT", "2")...)
		if !bytes.HasPrefix(raw, append(want, enc("SET", "k2", "2")...)) {
			t.Fatalf("policy %d: file starts %q", p, raw[:80])
		}
		got, _, err := loadAll(t, e.fs, e.dir, false)
		if err != nil {
			t.Fatal(err)
		}
		if n := checkPrefix(t, got, 100); n != 100 {
			t.Fatalf("loaded %d", n)
		}
	}
}

// No spinning: an idle writer calls its source only when woken or when a timer is due.
func TestWriterIdleDoesNotSpin(t *testing.T) {
	src := &countingSource{}
	fsys := NewCrashFS()
	fsys.MkdirAll("/d")
	w, err := Open(Config{FS: fsys, Dir: "/d/a", Filename: testFn, Fsync: Always}, src)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	time.Sleep(200 * time.Millisecond)
	if n := src.calls.Load(); n > 5 {
		t.Fatalf("idle writer called Next %d times in 200ms", n)
	}
	before := src.calls.Load()
	w.Notify()
	waitFor(t, "a call after Notify", func() bool { return src.calls.Load() > before })
}

type countingSource struct{ calls atomic.Int64 }

func (c *countingSource) Next() ([]feed.Entry, error) { c.calls.Add(1); return nil, nil }

// Group commit: many concurrent waiters share fsyncs, and each is released only when a crash at
// that moment would keep its write.
func TestGroupCommit(t *testing.T) {
	e := newEnv(t, Always, nil)
	e.fs.SetSyncDelay(2 * time.Millisecond)
	const n = 64
	var mu sync.Mutex
	next := 0
	before := e.fs.Syncs()
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for g := 0; g < n; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			mu.Lock()
			next++
			i := next
			seq := e.set(i, i%3)
			mu.Unlock()
			if err := e.w.WaitDurable(seq, 10*time.Second); err != nil {
				errs <- err
				return
			}
			got, _, err := loadAll(t, e.fs.CrashCopy(), e.dir, false)
			if err != nil {
				errs <- err
				return
			}
			if len(got) < i {
				errs <- errors.New("a released waiter's write is not in a crash copy")
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	syncs := e.fs.Syncs() - before
	t.Logf("%d waiters, %d fsyncs", n, syncs)
	if syncs >= n/2 {
		t.Fatalf("%d fsyncs for %d concurrent waiters: no group commit", syncs, n)
	}
}

// A write load under always, crashed while it runs: every acknowledged write is recovered, and
// what is recovered is a gap-free prefix.
func TestCrashAlwaysLosesNothingAcked(t *testing.T) {
	for round := 0; round < 3; round++ {
		e := newEnv(t, Always, nil)
		e.fs.SetSyncDelay(200 * time.Microsecond)
		var mu sync.Mutex
		next := 0
		var acked atomic.Int64 // highest write acknowledged
		stop := make(chan struct{})
		var wg sync.WaitGroup
		for g := 0; g < 8; g++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					select {
					case <-stop:
						return
					default:
					}
					mu.Lock()
					next++
					i := next
					seq := e.set(i, i%3)
					mu.Unlock()
					if e.w.WaitDurable(seq, 10*time.Second) != nil {
						return
					}
					for {
						a := acked.Load()
						if int64(i) <= a || acked.CompareAndSwap(a, int64(i)) {
							break
						}
					}
				}
			}()
		}
		time.Sleep(time.Duration(50+round*40) * time.Millisecond)
		ack := acked.Load()
		snap := e.fs.CrashCopy()
		close(stop)
		wg.Wait()
		got, _, err := loadAll(t, snap, e.dir, true)
		if err != nil {
			t.Fatal(err)
		}
		n := checkPrefix(t, got, int(ack))
		t.Logf("round %d: acknowledged %d, recovered %d, lost 0", round, ack, n)
	}
}

// Under everysec a crash loses at most the writes of about the last second.
func TestCrashEverysecLossBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("takes 2.5s")
	}
	e := newEnv(t, Everysec, nil)
	var times []time.Time
	start := time.Now()
	for i := 1; time.Since(start) < 2500*time.Millisecond; i++ {
		seq := e.set(i, i%3)
		times = append(times, time.Now())
		if i%50 == 0 {
			if err := e.w.WaitDurable(seq, 5*time.Second); err != nil {
				t.Fatal(err)
			}
		}
		time.Sleep(200 * time.Microsecond)
	}
	age := e.w.UnsyncedAge()
	crash := time.Now()
	got, _, err := loadAll(t, e.fs.CrashCopy(), e.dir, true)
	if err != nil {
		t.Fatal(err)
	}
	n := checkPrefix(t, got, 1)
	lost := len(times) - n
	window := time.Duration(0)
	if lost > 0 {
		window = crash.Sub(times[n])
	}
	t.Logf("everysec: %d writes, %d lost, the oldest lost was %v old, UnsyncedAge %v", len(times), lost, window, age)
	// Redis's own bound under everysec is 2 s (it postpones a write up to 2 s while a background
	// fsync runs); a loaded machine delayed the once-a-second fsync to an unsynced age of 1.5005 s.
	if window > 2*time.Second || age > 2*time.Second {
		t.Fatalf("lost writes up to %v old (unsynced age %v): more than about a second", window, age)
	}
	if n == 0 {
		t.Fatal("nothing was fsynced in 2.5s")
	}
}

// An fsync error under always: MISCONF, nothing acknowledged, recovery when the disk recovers.
func TestFsyncErrorAlways(t *testing.T) {
	e := newEnv(t, Always, nil)
	s1 := e.set(1, 1)
	if err := e.w.WaitDurable(s1, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	e.fs.SetSyncErr(syscall.EIO)
	s2 := e.set(2, 2)
	err := e.w.WaitDurable(s2, 300*time.Millisecond)
	if !errors.Is(err, ErrTimeout) || !errors.Is(err, syscall.EIO) {
		t.Fatalf("WaitDurable during fsync errors: %v", err)
	}
	if got := MisconfMessage(e.w.Err()); got != "MISCONF Errors writing to the AOF file: Input/output error" {
		t.Fatalf("MISCONF text %q", got)
	}
	if e.w.Durable() != s1 {
		t.Fatalf("durable %d moved past %d while fsync fails", e.w.Durable(), s1)
	}
	if st := e.w.Stats(); st.LastWriteStatus != "err" {
		t.Fatalf("aof_last_write_status %q", st.LastWriteStatus)
	}
	e.fs.SetSyncErr(nil)
	if err := e.w.WaitDurable(s2, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	if e.w.Err() != nil || e.w.Stats().LastWriteStatus != "ok" {
		t.Fatalf("error state not cleared: %v", e.w.Err())
	}
	got, _, _ := loadAll(t, e.fs.CrashCopy(), e.dir, false)
	checkPrefix(t, got, 2)
}

// Under everysec, writes after an fsync error are not durable until an fsync succeeds.
func TestFsyncErrorEverysec(t *testing.T) {
	e := newEnv(t, Everysec, nil)
	s1 := e.set(1, 1)
	if err := e.w.WaitDurable(s1, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	e.fs.SetSyncErr(syscall.EIO)
	waitFor(t, "the background fsync to fail", func() bool { return e.w.Err() != nil })
	s3 := e.set(2, 2)
	if err := e.w.WaitDurable(s3, 300*time.Millisecond); !errors.Is(err, ErrTimeout) {
		t.Fatalf("a write after an fsync error was reported durable: %v", err)
	}
	e.fs.SetSyncErr(nil)
	if err := e.w.WaitDurable(s3, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	got, _, _ := loadAll(t, e.fs.CrashCopy(), e.dir, false)
	checkPrefix(t, got, 2)
}

// A full disk: the short write is cut back (no partial command stays in the file), MISCONF with
// ENOSPC's text, and the writer goes on when space comes back.
func TestDiskFull(t *testing.T) {
	e := newEnv(t, Everysec, nil)
	s1 := e.set(1, 1)
	if err := e.w.WaitDurable(s1, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	name := e.dir + "/appendonly.aof.1.incr.aof"
	good, _ := e.fs.ReadFile(name)
	used := int64(len(good))
	for _, p := range []string{e.dir + "/appendonly.aof.manifest"} {
		b, _ := e.fs.ReadFile(p)
		used += int64(len(b))
	}
	e.fs.SetSpace(used + 10)
	s2 := e.set(2, 2)
	waitFor(t, "the write error", func() bool { return e.w.Err() != nil })
	if got := MisconfMessage(e.w.Err()); got != "MISCONF Errors writing to the AOF file: No space left on device" {
		t.Fatalf("MISCONF text %q", got)
	}
	if now, _ := e.fs.ReadFile(name); !bytes.Equal(now, good) {
		t.Fatalf("the short write was not cut back: %d bytes, %d before", len(now), len(good))
	}
	if e.w.Durable() >= s2 {
		t.Fatal("a write that failed was reported durable")
	}
	e.fs.SetSpace(0)
	if err := e.w.WaitDurable(s2, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "recovery", func() bool { return e.w.Err() == nil })
	got, _, err := loadAll(t, e.fs.CrashCopy(), e.dir, false)
	if err != nil {
		t.Fatal(err)
	}
	checkPrefix(t, got, 2)
}

// Strerror gives glibc's words for the errnos an AOF write meets.
func TestStrerror(t *testing.T) {
	// Texts of glibc's strerror (what redis-server prints), checked on this machine with
	// python3 -c 'import os; print(os.strerror(n))'.
	for en, want := range map[syscall.Errno]string{syscall.EIO: "Input/output error",
		syscall.ENOSPC: "No space left on device", syscall.EDQUOT: "Disk quota exceeded",
		syscall.EROFS: "Read-only file system", syscall.EBADF: "Bad file descriptor"} {
		if got := Strerror(&osPathErr{en}); got != want {
			t.Errorf("%d: %q, want %q", en, got, want)
		}
	}
}

type osPathErr struct{ en syscall.Errno }

func (e *osPathErr) Error() string { return "write x: " + e.en.Error() }
func (e *osPathErr) Unwrap() error { return e.en }

// Feed loss: the writer stops, reports it, holds Durable, and a rewrite from a new reader
// continues with nothing lost.
func TestLostFeedThenRewrite(t *testing.T) {
	lostSrc := &lossySource{}
	lostCalled := make(chan struct{}, 1)
	e := newEnv(t, Always, func(c *Config) {
		c.OnLost = func() { lostCalled <- struct{}{} }
	})
	lostSrc.rd = e.rd
	// Re-open the writer on the lossy source.
	e.w.Close()
	w, err := Open(Config{FS: e.fs, Dir: e.dir, Filename: testFn, Fsync: Always,
		OnLost: func() { lostCalled <- struct{}{} }}, lostSrc)
	if err != nil {
		t.Fatal(err)
	}
	e.w = w
	var last uint64
	for i := 1; i <= 10; i++ {
		last = e.set(i, i%3)
	}
	if err := w.WaitDurable(last, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	lostSrc.lose.Store(true)
	s11 := e.set(11, 11%3)
	<-lostCalled
	if err := w.WaitDurable(s11, 200*time.Millisecond); !errors.Is(err, ErrTimeout) {
		t.Fatalf("durable moved after the feed was lost: %v", err)
	}
	// The server attaches a new reader, snapshots at the current point, and rewrites.
	rd2 := e.f.Attach()
	defer rd2.Close()
	for i := 12; i <= 15; i++ {
		e.set(i, i%3)
	}
	at := uint64(15)
	if err := w.StartRewrite(at, rd2); err != nil {
		t.Fatal(err)
	}
	for i := 16; i <= 20; i++ {
		last = e.set(i, i%3)
	}
	// A crash before the base is in loads the old files: a gap-free prefix with every write
	// durable before the loss; the temp INCR file is not listed.
	waitFor(t, "the temp INCR file", func() bool {
		b, _ := e.fs.ReadFile(e.dir + "/temp-appendonly.aof.incr")
		return len(b) > 0
	})
	got, _, err := loadAll(t, e.fs.CrashCopy(), e.dir, false)
	if err != nil {
		t.Fatal(err)
	}
	if n := checkPrefix(t, got, 10); n > 11 {
		t.Fatalf("loaded %d writes from the old files; they hold at most 11", n)
	}
	err = w.FinishRewrite(func(bw io.Writer) error { return writeSnapshot(bw, 15) }, false)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.WaitDurable(last, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	got, res, err := loadAll(t, e.fs.CrashCopy(), e.dir, false)
	if err != nil {
		t.Fatal(err)
	}
	checkPrefix(t, got, 20)
	if res.Manifest.Base == nil || res.Manifest.Base.Name != "appendonly.aof.1.base.aof" ||
		len(res.Manifest.Incr) != 1 || res.Manifest.Incr[0].Name != "appendonly.aof.2.incr.aof" {
		t.Fatalf("manifest after the rewrite: %s", res.Manifest.Format())
	}
}

type lossySource struct {
	rd   *feed.Reader
	lose atomic.Bool
}

func (l *lossySource) Next() ([]feed.Entry, error) {
	if l.lose.Load() {
		return nil, feed.ErrLost
	}
	return l.rd.Next()
}

// After feed loss, a rewrite whose base fails keeps Durable capped and needs another new
// source; the retry succeeds with nothing lost.
func TestLostFeedRewriteFailsThenRetries(t *testing.T) {
	lostSrc := &lossySource{}
	lost := make(chan struct{}, 4)
	fsys := NewCrashFS()
	fsys.MkdirAll("/data")
	f := feed.New(4, 1<<20)
	lostSrc.rd = f.Attach()
	defer lostSrc.rd.Close()
	w, err := Open(Config{FS: fsys, Dir: "/data/appendonlydir", Filename: testFn, Fsync: Always,
		OnLost: func() { lost <- struct{}{} }}, lostSrc)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	e := &env{t: t, fs: fsys, f: f, w: w, dir: "/data/appendonlydir"}
	for i := 1; i <= 5; i++ {
		e.set(i, i%3)
	}
	waitFor(t, "5 durable", func() bool { return w.Durable() == 5 })
	lostSrc.lose.Store(true)
	e.set(6, 0)
	<-lost
	rd2 := f.Attach()
	defer rd2.Close()
	if err := w.StartRewrite(6, rd2); err != nil {
		t.Fatal(err)
	}
	e.set(7, 1)
	if err := w.FinishRewrite(func(io.Writer) error { return io.ErrUnexpectedEOF }, false); err == nil {
		t.Fatal("failed base installed")
	}
	if err := w.WaitDurable(7, 200*time.Millisecond); !errors.Is(err, ErrTimeout) {
		t.Fatalf("durable moved past the loss after a failed rewrite: %v", err)
	}
	if err := w.StartRewrite(7, nil); err != nil {
		t.Fatal(err)
	}
	if err := w.FinishRewrite(func(bw io.Writer) error { return writeSnapshot(bw, 7) }, false); !errors.Is(err, ErrNeedSource) {
		t.Fatalf("rewrite without a new source after loss: %v", err)
	}
	rd3 := f.Attach()
	defer rd3.Close()
	if err := w.StartRewrite(7, rd3); err != nil {
		t.Fatal(err)
	}
	last := e.set(8, 2)
	if err := w.FinishRewrite(func(bw io.Writer) error { return writeSnapshot(bw, 7) }, false); err != nil {
		t.Fatal(err)
	}
	if err := w.WaitDurable(last, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	got, _, err := loadAll(t, fsys.CrashCopy(), e.dir, false)
	if err != nil {
		t.Fatal(err)
	}
	if checkPrefix(t, got, 8) != 8 {
		t.Fatal("extra writes")
	}
}

// A restart: Load, then Open on what it found appends to the same INCR file (with a SELECT
// first), and no goroutine is left behind by closed writers.
func TestReopenAppends(t *testing.T) {
	base := runtime.NumGoroutine()
	fsys := NewCrashFS()
	fsys.MkdirAll("/data")
	dir := "/data/appendonlydir"
	for round := 0; round < 2; round++ {
		f := feed.New(4, 1<<20)
		rd := f.Attach()
		_, res, err := loadAll(t, fsys, dir, false)
		if err != nil {
			t.Fatal(err)
		}
		w, err := Open(Config{FS: fsys, Dir: dir, Filename: testFn, Fsync: Always, Manifest: res.Manifest}, rd)
		if err != nil {
			t.Fatal(err)
		}
		e := &env{t: t, fs: fsys, f: f, w: w, dir: dir}
		var last uint64
		for i := round*10 + 1; i <= round*10+10; i++ {
			last = e.set(i, i%3)
		}
		if err := w.WaitDurable(last, 5*time.Second); err != nil {
			t.Fatal(err)
		}
		w.Close()
		rd.Close()
	}
	got, res, err := loadAll(t, fsys.CrashCopy(), dir, false)
	if err != nil {
		t.Fatal(err)
	}
	checkPrefix(t, got, 20)
	if len(res.Manifest.Incr) != 1 {
		t.Fatalf("manifest %s", res.Manifest.Format())
	}
	waitFor(t, "writer goroutines to end", func() bool { return runtime.NumGoroutine() <= base })
}

// A Pending writer (CONFIG SET appendonly yes) leaves the AOF directory as it was until its
// first rewrite from a new source: a crash before then loads the old files exactly, nothing
// past Start is durable, and the rewrite installs its base with the temp INCR file.
func TestPendingOpenUntilRewrite(t *testing.T) {
	e := newEnv(t, Always, nil)
	var last uint64
	for i := 1; i <= 5; i++ {
		last = e.set(i, i%3)
	}
	if err := e.w.WaitDurable(last, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	e.w.Close()
	before, err := e.fs.ReadFile(e.dir + "/" + testFn + ".manifest")
	if err != nil {
		t.Fatal(err)
	}
	rd := e.f.Attach() // as the server attaches it: at Start
	defer rd.Close()
	w, err := Open(Config{FS: e.fs, Dir: e.dir, Filename: testFn, Fsync: Always, Start: last,
		Pending: true}, rd)
	if err != nil {
		t.Fatal(err)
	}
	e.w = w
	if !w.Capped() {
		t.Fatal("a pending writer is not capped")
	}
	for i := 6; i <= 10; i++ {
		last = e.set(i, i%3)
	}
	if err := w.WaitDurable(last, 100*time.Millisecond); !errors.Is(err, ErrTimeout) {
		t.Fatalf("a pending writer made writes durable: %v", err)
	}
	crashed := e.fs.CrashCopy()
	after, _ := crashed.ReadFile(e.dir + "/" + testFn + ".manifest")
	if string(after) != string(before) {
		t.Fatalf("the manifest changed before the rewrite:\n%s\nwas\n%s", after, before)
	}
	got, _, err := loadAll(t, crashed, e.dir, false)
	if err != nil {
		t.Fatal(err)
	}
	if n := checkPrefix(t, got, 5); n != 5 {
		t.Fatalf("a crash before the rewrite loaded %d writes; the old files hold 5", n)
	}
	// The rewrite: a reader attached before its snapshot at 10, the base holding 1..10.
	rd2 := e.f.Attach()
	defer rd2.Close()
	if err := w.StartRewrite(last, rd2); err != nil {
		t.Fatal(err)
	}
	for i := 11; i <= 15; i++ {
		last = e.set(i, i%3)
	}
	if err := w.FinishRewrite(func(bw io.Writer) error { return writeSnapshot(bw, 10) }, false); err != nil {
		t.Fatal(err)
	}
	if err := w.WaitDurable(last, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	if w.Capped() {
		t.Fatal("still capped after the rewrite")
	}
	got, res, err := loadAll(t, e.fs.CrashCopy(), e.dir, false)
	if err != nil {
		t.Fatal(err)
	}
	if n := checkPrefix(t, got, 15); n != 15 {
		t.Fatalf("loaded %d writes after the rewrite, want 15", n)
	}
	if res.Manifest.Base == nil || len(res.Manifest.Incr) != 1 || res.Manifest.Incr[0].Name == "temp-"+testFn+".incr" {
		t.Fatalf("manifest after the rewrite: %s", res.Manifest.Format())
	}
}
