package aofcheck

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hotkv/hotkv/tools/hotkv-check-rdb/redistest"
)

// fixtures are AOF directories written by redis-server 7.0.15, made once per
// test binary: "preamble" (BGREWRITEAOF with aof-use-rdb-preamble yes: an RDB
// base) and "resp" (without: a command base), each with an INCR file of
// timestamped commands and MULTI blocks after the rewrite.
var fixtures struct {
	once sync.Once
	dir  string
	err  string
	ts   []int64 // the #TS annotations of resp's INCR file
}

func TestMain(m *testing.M) {
	code := m.Run()
	if fixtures.dir != "" {
		os.RemoveAll(fixtures.dir)
	}
	os.Exit(code)
}

// fixture returns a fresh copy of the named fixture directory.
func fixture(t *testing.T, name string) string {
	t.Helper()
	fixtures.once.Do(func() { makeFixtures(t) })
	if fixtures.dir == "" {
		t.Skip(fixtures.err)
	}
	dst := filepath.Join(t.TempDir(), name)
	copyDir(t, filepath.Join(fixtures.dir, name), dst)
	return dst
}

func makeFixtures(t *testing.T) {
	dir, err := os.MkdirTemp("", "aofcheck-fixtures")
	if err != nil {
		t.Fatal(err)
	}
	run := filepath.Join(dir, "run")
	os.Mkdir(run, 0o755)
	fixtures.err = "redis-server not installed"
	s := redistest.Start(t, run, "--appendonly", "yes", "--aof-timestamp-enabled", "yes", "--aof-use-rdb-preamble", "yes")
	defer s.Stop()
	redistest.FillAll(t, s)
	writes := func(round int) {
		for i := range 30 {
			s.MustDo(t, "SET", fmt.Sprintf("k%d:%d", round, i), strings.Repeat("v", i*7))
			if i%10 == 0 {
				s.MustDo(t, "MULTI")
				s.MustDo(t, "INCR", "counter")
				s.MustDo(t, "LPUSH", "txlist", "a", "b")
				s.MustDo(t, "EXEC")
				time.Sleep(1100 * time.Millisecond) // a new second: a new #TS annotation
			}
		}
	}
	s.MustDo(t, "BGREWRITEAOF")
	s.WaitPersistence(t)
	writes(1)
	copyDir(t, filepath.Join(run, "appendonlydir"), filepath.Join(dir, "preamble"))
	s.MustDo(t, "CONFIG", "SET", "aof-use-rdb-preamble", "no")
	s.MustDo(t, "BGREWRITEAOF")
	s.WaitPersistence(t)
	writes(2)
	copyDir(t, filepath.Join(run, "appendonlydir"), filepath.Join(dir, "resp"))
	fixtures.dir = dir
	incr, _ := filepath.Glob(filepath.Join(dir, "resp", "*.incr.aof"))
	b, _ := os.ReadFile(incr[0])
	for _, m := range regexp.MustCompile(`(?m)^#TS:(\d+)\r$`).FindAllSubmatch(b, -1) {
		v, _ := strconv.ParseInt(string(m[1]), 10, 64)
		fixtures.ts = append(fixtures.ts, v)
	}
}

func copyDir(t *testing.T, src, dst string) {
	t.Helper()
	os.MkdirAll(dst, 0o755)
	ents, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, e.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// parts are a fixture's manifest, base and INCR file paths.
func parts(t *testing.T, dir string) (manifest, base, incr string) {
	m, _ := filepath.Glob(filepath.Join(dir, "*.manifest"))
	b, _ := filepath.Glob(filepath.Join(dir, "*.base.*"))
	i, _ := filepath.Glob(filepath.Join(dir, "*.incr.aof"))
	if len(m) != 1 || len(b) != 1 || len(i) != 1 {
		t.Fatalf("%s: manifest %v base %v incr %v", dir, m, b, i)
	}
	return m[0], b[0], i[0]
}

// ours runs hotkv-check-aof and returns its exit status, output, and the
// offset it would truncate the damaged file to (-1 when none).
func ours(stdin string, args ...string) (int, string, int64) {
	var out bytes.Buffer
	code := Main(args, strings.NewReader(stdin), &out, nil)
	okUpTo := int64(-1)
	if m := regexp.MustCompile(`whole commands end at (?:offset )?(\d+)|after offset (\d+), where`).FindStringSubmatch(out.String()); m != nil {
		okUpTo, _ = strconv.ParseInt(m[1]+m[2], 10, 64)
	}
	return code, out.String(), okUpTo
}

// agree runs both checkers on the manifest and compares exit status and,
// for a damaged command stream, where its valid part ends.
func agree(t *testing.T, what, manifest string) (redis redistest.Verdict) {
	t.Helper()
	theirs := redistest.CheckAOF(t, "", manifest)
	code, out, okUpTo := ours("", manifest)
	if (code == 0) != theirs.OK {
		t.Fatalf("%s: ours exit %d, redis-check-aof OK=%v\nours:\n%s\nredis-check-aof:\n%s", what, code, theirs.OK, out, theirs.Output)
	}
	if okUpTo != theirs.Offset {
		t.Fatalf("%s: ours valid up to %d, redis-check-aof up to %d\nours:\n%s\nredis-check-aof:\n%s", what, okUpTo, theirs.Offset, out, theirs.Output)
	}
	return theirs
}

// TestValidFixtures: both fixtures are valid to both checkers, and ours counts
// every MULTI block Redis wrote into the INCR files.
func TestValidFixtures(t *testing.T) {
	for _, name := range []string{"preamble", "resp"} {
		m, _, _ := parts(t, fixture(t, name))
		agree(t, name, m)
		_, out, _ := ours("", m)
		if !strings.Contains(out, "(3 MULTI blocks)") || !strings.Contains(out, "all AOF files and the manifest are valid") {
			t.Errorf("%s:\n%s", name, out)
		}
	}
}

// TestDamageAgreesWithRedis cuts and flips bytes of the INCR file and of the
// base of both fixtures: ours gives redis-check-aof's verdict and ends the
// valid part at its ok_up_to, every time.
func TestDamageAgreesWithRedis(t *testing.T) {
	n := 0
	for _, name := range []string{"preamble", "resp"} {
		dir := fixture(t, name)
		m, base, incr := parts(t, dir)
		for _, file := range []string{incr, base} {
			good, _ := os.ReadFile(file)
			size := len(good)
			for i := 1; i < 16; i++ {
				cut := i * size / 16
				os.WriteFile(file, good[:cut], 0o644)
				agree(t, fmt.Sprintf("%s cut at %d", filepath.Base(file), cut), m)
				n++
			}
			for i := 0; i < 16; i++ {
				p := i * size / 16
				b := bytes.Clone(good)
				b[p] ^= 0x5a
				os.WriteFile(file, b, 0o644)
				agree(t, fmt.Sprintf("%s flip at %d", filepath.Base(file), p), m)
				n++
			}
			os.WriteFile(file, good, 0o644)
		}
	}
	t.Logf("%d damaged AOFs: same verdict and valid prefix as redis-check-aof", n)
}

// TestFixTornTail: --fix of a cut INCR file asks, truncates to the byte where
// redis-check-aof --fix truncates a copy, leaves a file redis-check-aof calls
// valid, and redis-server (aof-load-truncated no) loads it; "n" changes nothing.
func TestFixTornTail(t *testing.T) {
	dir := fixture(t, "resp")
	m, _, incr := parts(t, dir)
	good, _ := os.ReadFile(incr)
	for _, cut := range []int{len(good) - 1, len(good) * 2 / 3, 40} {
		os.WriteFile(incr, good[:cut], 0o644)
		code, out, _ := ours("n\n", "--fix", m)
		if st, _ := os.Stat(incr); code != 1 || st.Size() != int64(cut) || !strings.Contains(out, "Continue? [y/N]") {
			t.Fatalf("cut %d answered n: exit %d, size %d\n%s", cut, code, st.Size(), out)
		}
		code, out, _ = ours("y\n", "--fix", m)
		if code != 0 || !strings.Contains(out, "a torn tail") {
			t.Fatalf("cut %d: exit %d\n%s", cut, code, out)
		}
		fixed, _ := os.ReadFile(incr)
		os.WriteFile(incr, good[:cut], 0o644)
		if v := redistest.CheckAOF(t, "y\n", "--fix", m); !v.OK {
			t.Fatalf("redis-check-aof --fix: %s", v.Output)
		}
		theirs, _ := os.ReadFile(incr)
		if !bytes.Equal(fixed, theirs) {
			t.Fatalf("cut %d: ours truncated to %d, redis-check-aof to %d", cut, len(fixed), len(theirs))
		}
		os.WriteFile(incr, fixed, 0o644)
		if v := redistest.CheckAOF(t, "", m); !v.OK {
			t.Fatalf("redis-check-aof after our fix:\n%s", v.Output)
		}
	}
	s := redistest.Start(t, filepath.Dir(dir), "--appendonly", "yes", "--appenddirname", filepath.Base(dir), "--aof-load-truncated", "no")
	if n := s.MustDo(t, "DBSIZE").(int64); n == 0 {
		t.Fatal("redis-server loaded no keys from the fixed AOF")
	}
	if v := s.MustDo(t, "GET", "str"); v != "hello" {
		t.Fatalf("GET str after loading: %v", v)
	}
}

// TestFixMiddleDamage: a flipped byte in the middle of the INCR file is
// reported as damage followed by whole commands; --fix truncates only after a
// yes, to redis-check-aof's ok_up_to, and redis-check-aof calls the result valid.
func TestFixMiddleDamage(t *testing.T) {
	dir := fixture(t, "resp")
	m, _, incr := parts(t, dir)
	good, _ := os.ReadFile(incr)
	b := bytes.Clone(good)
	p := bytes.Index(b[len(b)/3:], []byte("\r\n$")) + len(b)/3
	b[p] = 'X'
	os.WriteFile(incr, b, 0o644)
	theirs := redistest.CheckAOF(t, "", m)
	code, out, okUpTo := ours("\n", "--fix", m)
	if code != 1 || okUpTo != theirs.Offset || !strings.Contains(out, "damage in the middle") || !strings.Contains(out, "Truncate everything after the damage? [y/N]") {
		t.Fatalf("exit %d, ok up to %d (redis-check-aof %d)\n%s", code, okUpTo, theirs.Offset, out)
	}
	if cur, _ := os.ReadFile(incr); !bytes.Equal(cur, b) {
		t.Fatal("changed without a yes")
	}
	if code, out, _ = ours("yes\n", "--fix", m); code != 0 {
		t.Fatalf("exit %d\n%s", code, out)
	}
	if st, _ := os.Stat(incr); st.Size() != theirs.Offset {
		t.Fatalf("size %d, want %d", st.Size(), theirs.Offset)
	}
	if v := redistest.CheckAOF(t, "", m); !v.OK {
		t.Fatalf("redis-check-aof after the fix:\n%s", v.Output)
	}
}

// TestFixRefusedBeforeLast: damage in the base (not the last file) is not
// fixed, by either checker.
func TestFixRefusedBeforeLast(t *testing.T) {
	m, base, _ := parts(t, fixture(t, "resp"))
	good, _ := os.ReadFile(base)
	os.WriteFile(base, good[:len(good)-5], 0o644)
	theirs := redistest.CheckAOF(t, "y\n", "--fix", m)
	code, out, _ := ours("y\n", "--fix", m)
	if theirs.OK || code != 1 || !strings.Contains(out, "not the last file") {
		t.Fatalf("redis-check-aof OK=%v; ours exit %d\n%s", theirs.OK, code, out)
	}
	if st, _ := os.Stat(base); st.Size() != int64(len(good)-5) {
		t.Fatal("the base was changed")
	}
}

// TestTruncateToTimestamp: for every annotation's time (and one before the
// first), ours and redis-check-aof leave the same file and exit status.
func TestTruncateToTimestamp(t *testing.T) {
	dir := fixture(t, "resp")
	m, _, incr := parts(t, dir)
	good, _ := os.ReadFile(incr)
	if len(fixtures.ts) < 3 {
		t.Fatalf("only %d annotations", len(fixtures.ts))
	}
	for _, ts := range append([]int64{fixtures.ts[0] - 1}, fixtures.ts...) {
		arg := strconv.FormatInt(ts, 10)
		os.WriteFile(incr, good, 0o644)
		theirs := redistest.CheckAOF(t, "", "--truncate-to-timestamp", arg, m)
		want, _ := os.ReadFile(incr)
		os.WriteFile(incr, good, 0o644)
		code, out, _ := ours("", "--truncate-to-timestamp", arg, m)
		got, _ := os.ReadFile(incr)
		if (code == 0) != theirs.OK || !bytes.Equal(got, want) {
			t.Fatalf("ts %d: ours exit %d size %d; redis-check-aof OK=%v size %d\n%s\n%s", ts, code, len(got), theirs.OK, len(want), out, theirs.Output)
		}
	}
}

// TestOldStyle: single files (an RDB preamble with its AOF tail, and a
// command stream), whole and cut, get redis-check-aof's verdict and prefix;
// --fix of a cut tail leaves what redis-check-aof calls valid.
func TestOldStyle(t *testing.T) {
	for _, name := range []string{"preamble", "resp"} {
		dir := fixture(t, name)
		_, base, incr := parts(t, dir)
		b, _ := os.ReadFile(base)
		i, _ := os.ReadFile(incr)
		whole := append(b, i...)
		file := filepath.Join(dir, "appendonly.aof")
		for _, cut := range []int{len(whole), len(whole) - 3, len(b) + len(i)/2, len(b) - 2} {
			os.WriteFile(file, whole[:cut], 0o644)
			theirs := agree(t, fmt.Sprintf("%s old-style cut at %d of %d", name, cut, len(whole)), file)
			if theirs.Offset < 0 {
				continue
			}
			code, out, _ := ours("y\n", "--fix", file)
			st, _ := os.Stat(file)
			if code != 0 || st.Size() != theirs.Offset {
				t.Fatalf("%s cut %d --fix: exit %d size %d, redis-check-aof ok_up_to %d\n%s", name, cut, code, st.Size(), theirs.Offset, out)
			}
			if v := redistest.CheckAOF(t, "", file); !v.OK {
				t.Fatalf("redis-check-aof after our --fix:\n%s", v.Output)
			}
		}
	}
}

// TestMissingAndEmpty: a missing INCR file fails both; an empty one is valid to both.
func TestMissingAndEmpty(t *testing.T) {
	m, _, incr := parts(t, fixture(t, "preamble"))
	os.WriteFile(incr, nil, 0o644)
	agree(t, "empty incr", m)
	os.Remove(incr)
	agree(t, "missing incr", m)
}

// TestUsage: bad command lines exit 1 for both checkers, as do a missing file,
// a manifest line Redis refuses and a timestamp that is not a number.
func TestUsage(t *testing.T) {
	dir := fixture(t, "resp")
	m, _, _ := parts(t, dir)
	badManifest := filepath.Join(dir, "bad.manifest")
	os.WriteFile(badManifest, []byte("filexyz\n"), 0o644)
	for _, args := range [][]string{
		{badManifest},
		nil,
		{"--fix"},
		{"--bogus", m},
		{"--fix", "--truncate-to-timestamp", "5", m},
		{"--truncate-to-timestamp", "abc", m},
		{filepath.Join(t.TempDir(), "none.aof")},
	} {
		theirs := redistest.CheckAOF(t, "", args...)
		code, out, _ := ours("", args...)
		if code != 1 || theirs.OK {
			t.Errorf("%q: ours exit %d, redis-check-aof OK=%v\n%s", args, code, theirs.OK, out)
		}
	}
}
