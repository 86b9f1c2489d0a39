package aof

import (
	"bufio"
	"io"
	"reflect"
	"strconv"
	"sync"
	"testing"
	"time"
)

// A crash after each step of a rewrite (new INCR opened, base written, base renamed, manifest
// persisted, history deleted), with writes going on, loads a gap-free prefix holding every write durable at that
// moment; after the rewrite the directory holds the base, the new INCR file and the manifest.
func TestRewriteCrashPoints(t *testing.T) {
	steps := []string{"incr-opened", "base-written", "base-renamed", "manifest-persisted", "history-deleted"}
	for _, rdb := range []bool{false, true} {
		for _, step := range steps {
			e := newEnv(t, Always, nil)
			var last uint64
			for i := 1; i <= 50; i++ {
				last = e.set(i, i%3)
			}
			if err := e.w.WaitDurable(last, 5*time.Second); err != nil {
				t.Fatal(err)
			}
			var mu sync.Mutex
			var snap *CrashFS
			var durableAt uint64
			testHook = func(s string) {
				if s == step {
					mu.Lock()
					durableAt = e.w.Durable()
					snap = e.fs.CrashCopy()
					mu.Unlock()
				}
			}
			if err := e.w.StartRewrite(50, nil); err != nil {
				t.Fatal(err)
			}
			for i := 51; i <= 80; i++ {
				last = e.set(i, i%3)
			}
			err := e.w.FinishRewrite(func(w io.Writer) error {
				for i := 81; i <= 90; i++ { // writes while the base streams
					last = e.set(i, i%3)
				}
				if rdb {
					// A stand-in RDB: the magic, then writes 1..50 as commands, which the
					// test's loadBase replays.
					if _, err := w.Write([]byte("REDIS0010")); err != nil {
						return err
					}
				}
				return writeSnapshot(w, 50)
			}, rdb)
			testHook = nil
			if err != nil {
				t.Fatal(err)
			}
			if err := e.w.WaitDurable(last, 5*time.Second); err != nil {
				t.Fatal(err)
			}
			mu.Lock()
			got, err := loadRDBStandIn(t, snap, e.dir)
			if err != nil {
				t.Fatalf("%s: %v", step, err)
			}
			n := checkPrefix(t, got, int(durableAt))
			mu.Unlock()
			got, err = loadRDBStandIn(t, e.fs.CrashCopy(), e.dir)
			if err != nil {
				t.Fatal(err)
			}
			checkPrefix(t, got, 90)
			names, _ := e.fs.ReadDir(e.dir)
			want := []string{BaseName(testFn, 1, rdb), IncrName(testFn, 2), ManifestName(testFn)}
			if !reflect.DeepEqual(names, want) {
				t.Fatalf("directory after the rewrite: %q", names)
			}
			st := e.w.Stats()
			bsz, _ := e.fs.Stat(e.dir + "/" + want[0])
			isz, _ := e.fs.Stat(e.dir + "/" + want[1])
			if st.CurrentSize != bsz+isz || st.BaseSize != bsz {
				t.Fatalf("aof_current_size %d, aof_base_size %d; files: base %d, incr %d", st.CurrentSize, st.BaseSize, bsz, isz)
			}
			if st.Rewrites != 1 || st.LastBgrewriteStatus != "ok" || st.RewriteInProgress || st.BaseSize == 0 {
				t.Fatalf("stats %+v", st)
			}
			t.Logf("rdb=%v crash after %s: durable %d, recovered %d", rdb, step, durableAt, n)
		}
	}
}

// loadRDBStandIn loads with a loadBase that replays the stand-in RDB's commands.
func loadRDBStandIn(t *testing.T, fsys FS, dir string) ([]string, error) {
	var got []string
	applyFn := func(db int, argv [][]byte) error {
		s := strconv.Itoa(db) + ":"
		for i, a := range argv {
			if i > 0 {
				s += " "
			}
			s += string(a)
		}
		got = append(got, s)
		return nil
	}
	_, err := Load(fsys, dir, testFn, func(r io.Reader, isRDB bool) error {
		magic := make([]byte, 9)
		if _, err := io.ReadFull(r, magic); err != nil || !isRDB {
			return err
		}
		l := &loader{apply: applyFn, res: &LoadResult{}}
		_, err := l.stream("base", newBufReader(r), 9)
		return err
	}, applyFn, LoadOptions{})
	return got, err
}

// A second rewrite while one runs gets Redis's error; a failing writeBase leaves the AOF whole
// and counts a failure.
func TestRewriteBusyAndFailure(t *testing.T) {
	e := newEnv(t, Always, nil)
	for i := 1; i <= 5; i++ {
		e.set(i, i%3)
	}
	waitFor(t, "5 durable", func() bool { return e.w.Durable() == 5 })
	if err := e.w.StartRewrite(5, nil); err != nil {
		t.Fatal(err)
	}
	if err := e.w.StartRewrite(5, nil); err != ErrRewriteInProgress {
		t.Fatalf("second rewrite: %v", err)
	}
	e.set(6, 0)
	err := e.w.FinishRewrite(func(w io.Writer) error { return io.ErrShortWrite }, false)
	if err == nil {
		t.Fatal("a failing base was installed")
	}
	st := e.w.Stats()
	if st.LastBgrewriteStatus != "err" || st.RewritesConsecutiveFailures != 1 || st.RewriteInProgress {
		t.Fatalf("stats %+v", st)
	}
	if err := e.w.WaitDurable(6, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	got, _, err := loadAll(t, e.fs.CrashCopy(), e.dir, false)
	if err != nil {
		t.Fatal(err)
	}
	checkPrefix(t, got, 6)
	// Like Redis after a failed rewrite: two INCR files, the next rewrite goes on from there.
	if err := e.w.Rewrite(6, func(w io.Writer) error { return writeSnapshot(w, 6) }, false); err != nil {
		t.Fatal(err)
	}
	e.set(7, 1)
	if err := e.w.WaitDurable(7, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	got, res, err := loadAll(t, e.fs.CrashCopy(), e.dir, false)
	if err != nil {
		t.Fatal(err)
	}
	checkPrefix(t, got, 7)
	if res.Manifest.Base.Name != "appendonly.aof.1.base.aof" || res.Manifest.Incr[0].Name != "appendonly.aof.3.incr.aof" {
		t.Fatalf("manifest %s", res.Manifest.Format())
	}
}

// A rewrite registered after the writer already wrote past its point is refused, not wrong.
func TestRewriteLate(t *testing.T) {
	e := newEnv(t, Always, nil)
	for i := 1; i <= 5; i++ {
		e.set(i, i%3)
	}
	waitFor(t, "5 durable", func() bool { return e.w.Durable() == 5 })
	if err := e.w.Rewrite(3, func(w io.Writer) error { return writeSnapshot(w, 3) }, false); err != ErrRewriteLate {
		t.Fatalf("got %v", err)
	}
}

// Auto rewrite follows serverCron's rule in server.c: current > min size and
// current*100/max(base,1) - 100 >= percentage.
func TestShouldRewrite(t *testing.T) {
	for _, c := range []struct {
		cur, base int64
		pct       int
		min       int64
		want      bool
	}{
		{200, 100, 100, 64, true}, {199, 100, 100, 64, false}, {200, 100, 100, 200, false},
		{100, 0, 100, 64, true}, {500, 100, 0, 64, false},
	} {
		s := Stats{CurrentSize: c.cur, BaseSize: c.base}
		if got := s.ShouldRewrite(c.pct, c.min); got != c.want {
			t.Errorf("%+v: %v", c, got)
		}
	}
}

func newBufReader(r io.Reader) *bufio.Reader { return bufio.NewReader(r) }
