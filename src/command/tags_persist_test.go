package command

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
)

// tagState reads every key's tags in databases 0..dbs-1 (keys k0..k<n>), and each tag's count.
func tagState(t *testing.T, tc *testConn, dbs, n int) string {
	t.Helper()
	var b bytes.Buffer
	for db := range dbs {
		tc.do("SELECT", strconv.Itoa(db))
		for i := range n {
			k := "k" + strconv.Itoa(i)
			if ts := replyStrings(t, tc.do("TAG.GET", k)); len(ts) > 0 {
				fmt.Fprintf(&b, "db%d %s %v %q\n", db, k, ts, tc.do("GET", k))
			}
		}
		for i := range 5 {
			fmt.Fprintf(&b, "db%d count t%d %q\n", db, i, tc.do("TAG.COUNT", "t"+strconv.Itoa(i)))
		}
	}
	tc.do("SELECT", "0")
	return b.String()
}

// fillTags writes n keys in databases 0 and 2, most with one to three of tags t0..t4, some with
// a TTL, one with a TTL already past at the save (kept in no file).
func fillTags(t *testing.T, tc *testConn, n int) {
	for _, db := range []string{"0", "2"} {
		tc.do("SELECT", db)
		for i := range n {
			k := "k" + strconv.Itoa(i)
			tc.do("SET", k, "v"+db+k)
			if i%7 == 0 {
				tc.do("PEXPIRE", k, "100000000")
			}
			if i%5 != 0 {
				tc.do("TAG.SET", k, "t"+strconv.Itoa(i%5), "t"+strconv.Itoa(i%3), "t"+strconv.Itoa(i%2))
			}
		}
	}
	tc.do("SELECT", "0")
}

// Tags survive a save and load (LoadRDB of WriteRDB's file, compressed or not), and
// redis-server 7.0.15 loads the same file, ignoring the hotkv-tags field: redis-check-rdb finds
// it valid and Redis serves every key.
func TestTagsRDBRestart(t *testing.T) {
	src := newTestEngine()
	tc := newTestConn(t, src)
	fillTags(t, tc, 300)
	want := tagState(t, tc, 3, 300)
	for _, o := range []RDBOptions{{Compress: true, Checksum: true}, {}} {
		file := writeRDB(t, src, o)
		if !bytes.Contains(file, []byte(tagsAux)) {
			t.Fatal("no hotkv-tags aux field in the file")
		}
		dst := newTestEngine()
		st, err := dst.LoadRDB(bytes.NewReader(file), LoadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, kv := range st.Aux {
			if kv[0] == tagsAux {
				t.Fatal("hotkv-tags handed back as a plain aux field")
			}
		}
		if got := tagState(t, newTestConn(t, dst), 3, 300); got != want {
			t.Fatalf("after load (%+v):\n%s\nwant:\n%s", o, got, want)
		}
		redisLoadsFile(t, file, tc)
	}
}

// redisLoadsFile checks file with redis-check-rdb and loads it into redis-server, which must
// hold every key tc's engine holds in databases 0 and 2, with the same values.
func redisLoadsFile(t *testing.T, file []byte, tc *testConn) {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "dump.rdb")
	if err := os.WriteFile(path, file, 0o600); err != nil {
		t.Fatal(err)
	}
	if bin, err := exec.LookPath("redis-check-rdb"); err == nil {
		out, err := exec.Command(bin, path).CombinedOutput()
		if err != nil || !bytes.Contains(out, []byte("RDB looks OK")) || !bytes.Contains(out, []byte("hotkv-tags")) {
			t.Fatalf("redis-check-rdb: %v\n%s", err, out)
		}
	}
	rs := startRedisIn(t, dir)
	for _, db := range []string{"0", "2"} {
		rs.do("SELECT", db)
		tc.do("SELECT", db)
		if got, want := rs.do("DBSIZE"), tc.do("DBSIZE"); got != want {
			t.Fatalf("db %s: redis-server DBSIZE %q, HotKV %q", db, got, want)
		}
		for i := range 300 {
			k := "k" + strconv.Itoa(i)
			if got, want := rs.do("GET", k), tc.do("GET", k); got != want {
				t.Fatalf("db %s: GET %s in redis-server %q, HotKV %q", db, k, got, want)
			}
		}
	}
	tc.do("SELECT", "0")
}

// The file holds the tags of the snapshot's instant although TAG.SET, TAG.DEL, TAG.CLEAR, SET,
// RENAME, DEL, TAG.INVALIDATE, SWAPDB and FLUSHDB change them while the image is written.
func TestTagsRDBPointInTime(t *testing.T) {
	src := newTestEngine()
	tc := newTestConn(t, src)
	fillTags(t, tc, 2000)
	want := tagState(t, tc, 3, 2000)
	// Small chunks and a short queue: the walk waits for the consumer, which reads only after
	// the changes, so they meet keys the walk has not reached.
	snapshotLimitsFor = func() snapshotLimits {
		return snapshotLimits{stepEntries: 16, stepBytes: 1 << 10, chunkBytes: 1 << 10, maxQueued: 4 << 10}
	}
	t.Cleanup(func() { snapshotLimitsFor = func() snapshotLimits { return defaultSnapshotLimits } })
	other := newTestConn(t, src)
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	var st RDBStats
	go func() {
		var err error
		st, err = src.WriteRDB(context.Background(), pw, RDBOptions{Instant: func(uint64) error {
			for i := 0; i < 2000; i += 3 {
				k := "k" + strconv.Itoa(i)
				other.do("TAG.SET", k, "t4", "new")
				other.do("TAG.DEL", "k"+strconv.Itoa(i+1), "t1")
				other.do("TAG.CLEAR", "k"+strconv.Itoa(i+2))
			}
			other.do("SET", "k1", "over")
			other.do("RENAME", "k3", "k4")
			other.do("DEL", "k6")
			other.do("TAG.INVALIDATE", "t2")
			other.do("SWAPDB", "0", "2")
			other.do("FLUSHDB") // the old database 2, now 0
			return nil
		}})
		pw.CloseWithError(err)
		done <- err
	}()
	file, err := io.ReadAll(pr)
	if err != nil || <-done != nil {
		t.Fatal(err)
	}
	if st.Snapshot.Copied < 1000 {
		t.Fatalf("only %d keys emitted before a change (copy-on-write): the walk outran the changes", st.Snapshot.Copied)
	}
	dst := newTestEngine()
	if _, err := dst.LoadRDB(bytes.NewReader(file), LoadOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := tagState(t, newTestConn(t, dst), 3, 2000); got != want {
		d := 0
		for d < min(len(got), len(want)) && got[d] == want[d] {
			d++
		}
		t.Fatalf("the image's tags differ from the instant's at byte %d:\n%s\nwant:\n%s", d,
			got[max(0, d-200):min(len(got), d+200)], want[max(0, d-200):min(len(want), d+200)])
	}
	if slices.Equal([]byte(tagState(t, tc, 3, 2000)), []byte(want)) {
		t.Fatal("the changes during the save changed nothing: the test tests nothing")
	}
}

// A hotkv-tags field that is cut short fails the load with a clear error.
func TestTagsRDBMalformed(t *testing.T) {
	src := newTestEngine()
	tc := newTestConn(t, src)
	fillTags(t, tc, 20)
	file := writeRDB(t, src, RDBOptions{})
	i := bytes.Index(file, []byte(tagsAux))
	if i < 0 {
		t.Fatal("no hotkv-tags field")
	}
	// The value's length byte follows the name: shorten the value by one byte so that its
	// last record is cut, keeping the stream well formed (checksum 0: not checked).
	j := i + len(tagsAux)
	if file[j] >= 0x40 {
		t.Skipf("the field's length is not one byte (%#x)", file[j])
	}
	bad := append(append(append([]byte{}, file[:j]...), file[j]-1), file[j+1:j+int(file[j])]...)
	bad = append(bad, file[j+1+int(file[j]):]...)
	_, err := newTestEngine().LoadRDB(bytes.NewReader(bad), LoadOptions{})
	if err == nil || !bytes.Contains([]byte(err.Error()), []byte("hotkv-tags")) {
		t.Fatalf("load of a cut hotkv-tags field: %v", err)
	}
}
