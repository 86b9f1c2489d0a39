package aof

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hotkv/hotkv/pipeline/feed"
)

// enc is the RESP of one command, written here (not with the project's encoder) so that the
// tests check the format independently.
func enc(args ...string) []byte {
	b := []byte("*" + strconv.Itoa(len(args)) + "\r\n")
	for _, a := range args {
		b = append(b, "$"+strconv.Itoa(len(a))+"\r\n"+a+"\r\n"...)
	}
	return b
}

// env is a writer on a CrashFS fed by a real feed.
type env struct {
	t   *testing.T
	fs  *CrashFS
	f   *feed.Feed
	rd  *feed.Reader
	w   *Writer
	dir string
}

const testFn = "appendonly.aof"

func newEnv(t *testing.T, p Policy, mod func(*Config)) *env {
	t.Helper()
	e := &env{t: t, fs: NewCrashFS(), f: feed.New(4, 1<<20), dir: "/data/appendonlydir"}
	e.fs.MkdirAll("/data")
	e.rd = e.f.Attach()
	cfg := Config{FS: e.fs, Dir: e.dir, Filename: testFn, Fsync: p}
	if mod != nil {
		mod(&cfg)
	}
	w, err := Open(cfg, e.rd)
	if err != nil {
		t.Fatal(err)
	}
	e.w = w
	t.Cleanup(func() { e.w.Close(); e.rd.Close() })
	return e
}

// set appends SET k<i> <i> in database db to ring i%4 and wakes the writer.
func (e *env) set(i, db int) uint64 {
	seq := e.f.Append(i%4, db, enc("SET", "k"+strconv.Itoa(i), strconv.Itoa(i)))
	e.w.Notify()
	return seq
}

// loaded is what Load gives back: one "db:ARG ARG…" string per command.
func loadAll(t *testing.T, fsys FS, dir string, truncated bool) ([]string, *LoadResult, error) {
	t.Helper()
	var got []string
	res, err := Load(fsys, dir, testFn, func(r io.Reader, isRDB bool) error {
		return fmt.Errorf("unexpected base")
	}, func(db int, argv [][]byte) error {
		s := make([]string, len(argv))
		for i, a := range argv {
			s[i] = string(a)
		}
		got = append(got, strconv.Itoa(db)+":"+strings.Join(s, " "))
		return nil
	}, LoadOptions{Truncated: truncated})
	return got, res, err
}

// checkPrefix asserts that got is exactly SET k1..kn in order for some n >= min (the writes of
// set(i, i%3) for i = 1..), and returns n.
func checkPrefix(t *testing.T, got []string, min int) int {
	t.Helper()
	for i, g := range got {
		want := fmt.Sprintf("%d:SET k%d %d", (i+1)%3, i+1, i+1)
		if g != want {
			t.Fatalf("command %d: got %q, want %q", i, g, want)
		}
	}
	if len(got) < min {
		t.Fatalf("loaded %d writes, want at least %d (acknowledged)", len(got), min)
	}
	return len(got)
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// writeSnapshot writes a base in AOF format holding writes 1..n as set(i, i%3) made them.
func writeSnapshot(w io.Writer, n int) error {
	db := -1
	for i := 1; i <= n; i++ {
		if i%3 != db {
			db = i % 3
			if _, err := w.Write(enc("SELECT", strconv.Itoa(db))); err != nil {
				return err
			}
		}
		if _, err := w.Write(enc("SET", "k"+strconv.Itoa(i), strconv.Itoa(i))); err != nil {
			return err
		}
	}
	return nil
}
