package aof

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// copyDir puts a testdata directory into a CrashFS at dir.
func copyDir(t *testing.T, src string, fsys *CrashFS, dir string) {
	t.Helper()
	ents, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	fsys.MkdirAll(dir)
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		fsys.WriteFile(dir+"/"+e.Name(), b)
	}
}

// loadCollect loads and returns "db:args" per command, and the bases loadBase was given.
func loadCollect(fsys FS, dir string, truncated bool) ([]string, [][]byte, *LoadResult, error) {
	var got []string
	var bases [][]byte
	res, err := Load(fsys, dir, testFn, func(r io.Reader, isRDB bool) error {
		b, err := io.ReadAll(r)
		bases = append(bases, b)
		return err
	}, func(db int, argv [][]byte) error {
		s := make([]string, len(argv))
		for i, a := range argv {
			s[i] = string(a)
		}
		got = append(got, strconv.Itoa(db)+":"+strings.Join(s, " "))
		return nil
	}, LoadOptions{Truncated: truncated})
	return got, bases, res, err
}

// What redis-server 7.0.15 wrote for these commands (testdata/redis-incr, appendonly yes,
// no rewrite): set k1 v1; set k2 v2 EX 100; -n 5 rpush l a b "c d"; MULTI INCR n SET s "x y"
// EXEC; expire k1 1000; set "key with\nnl" 1. Redis rewrote SET EX as SET PXAT and EXPIRE as
// PEXPIREAT, kept the client's spelling otherwise, and wrapped the transaction in MULTI/EXEC.
var redisIncr = []string{
	"0:set k1 v1",
	"0:SET k2 v2 PXAT 1796151126171",
	"5:rpush l a b c d",
	"0:INCR n",
	"0:SET s x y",
	"0:PEXPIREAT k1 1796152026222",
	`0:set key with\nnl 1`,
}

func TestLoadRedisIncr(t *testing.T) {
	fsys := NewCrashFS()
	copyDir(t, "testdata/redis-incr", fsys, "/r/appendonlydir")
	got, bases, res, err := loadCollect(fsys, "/r/appendonlydir", false)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, redisIncr) {
		t.Fatalf("got\n%q\nwant\n%q", got, redisIncr)
	}
	if len(bases) != 0 || res.BaseSize != 0 || res.TotalSize != 367 || res.Truncated {
		t.Fatalf("bases %d, result %+v", len(bases), res)
	}
}

// A base in AOF format (aof-use-rdb-preamble no) is replayed like the INCR file after it.
func TestLoadRedisAOFBase(t *testing.T) {
	fsys := NewCrashFS()
	copyDir(t, "testdata/redis-aof-base", fsys, "/r/appendonlydir")
	got, bases, res, err := loadCollect(fsys, "/r/appendonlydir", false)
	if err != nil {
		t.Fatal(err)
	}
	// Sent: set k1 v1; set k2 v2 EX 100; -n 3 rpush l a b c; BGREWRITEAOF; set k3 "va lue";
	// -n 2 hset h f v; incrbyfloat f 1.5 (propagated as SET f 1.5 KEEPTTL).
	want := []string{"0:SET k1 v1", "0:SET k2 v2", "0:PEXPIREAT k2 1796151118781", "3:RPUSH l a b c",
		"0:set k3 va lue", "2:hset h f v", "0:SET f 1.5 KEEPTTL"}
	if !reflect.DeepEqual(got, want) || len(bases) != 0 {
		t.Fatalf("got\n%q\nwant\n%q", got, want)
	}
	if res.BaseSize != 194 || res.TotalSize != 194+179 {
		t.Fatalf("sizes %+v (Redis's INFO said aof_base_size:194 aof_current_size:373)", res)
	}
}

// An RDB base goes to loadBase whole; the INCR file follows.
func TestLoadRedisRDBBase(t *testing.T) {
	fsys := NewCrashFS()
	copyDir(t, "testdata/redis-rdb-base", fsys, "/r/appendonlydir")
	got, bases, _, err := loadCollect(fsys, "/r/appendonlydir", false)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := os.ReadFile("testdata/redis-rdb-base/appendonly.aof.2.base.rdb")
	if len(bases) != 1 || !bytes.Equal(bases[0], raw) {
		t.Fatalf("loadBase got %d bases", len(bases))
	}
	want := []string{"0:set k3 va lue", "2:hset h f v", "0:SET f 1.5 KEEPTTL"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %q", got)
	}
}

// A torn last command, cut at every byte: loads (and is truncated) with aof-load-truncated,
// fails without it.
func TestLoadTornTail(t *testing.T) {
	raw, _ := os.ReadFile("testdata/redis-incr/appendonly.aof.1.incr.aof")
	last := bytes.LastIndex(raw, []byte("*3\r\n$3\r\nset"))
	for cut := last; cut < len(raw); cut++ {
		fsys := NewCrashFS()
		copyDir(t, "testdata/redis-incr", fsys, "/r/d")
		fsys.WriteFile("/r/d/appendonly.aof.1.incr.aof", raw[:cut])
		got, _, res, err := loadCollect(fsys, "/r/d", true)
		if err != nil {
			t.Fatalf("cut %d: %v", cut, err)
		}
		if !reflect.DeepEqual(got, redisIncr[:6]) || res.Truncated != (cut > last) {
			t.Fatalf("cut %d: %q truncated=%v", cut, got, res.Truncated)
		}
		if now, _ := fsys.ReadFile("/r/d/appendonly.aof.1.incr.aof"); len(now) != last {
			t.Fatalf("cut %d: file is %d bytes after truncation, want %d", cut, len(now), last)
		}
		if cut == last {
			continue
		}
		fsys.WriteFile("/r/d/appendonly.aof.1.incr.aof", raw[:cut])
		if _, _, _, err := loadCollect(fsys, "/r/d", false); !errors.Is(err, ErrTruncated) {
			t.Fatalf("cut %d without aof-load-truncated: %v", cut, err)
		}
	}
}

// A MULTI block without its EXEC at the tail is dropped and cut off, as Redis reverts it.
func TestLoadMultiWithoutExec(t *testing.T) {
	raw, _ := os.ReadFile("testdata/redis-incr/appendonly.aof.1.incr.aof")
	multi := bytes.Index(raw, []byte("*1\r\n$5\r\nMULTI"))
	exec := bytes.Index(raw, []byte("*1\r\n$4\r\nEXEC"))
	for _, cut := range []int{multi + 10, exec, exec + 5} {
		fsys := NewCrashFS()
		copyDir(t, "testdata/redis-incr", fsys, "/r/d")
		fsys.WriteFile("/r/d/appendonly.aof.1.incr.aof", raw[:cut])
		got, _, res, err := loadCollect(fsys, "/r/d", true)
		if err != nil || !reflect.DeepEqual(got, redisIncr[:3]) || !res.Truncated {
			t.Fatalf("cut %d: %q %v", cut, got, err)
		}
		// A whole block minus EXEC: Redis cuts back to before MULTI. Torn inside the block,
		// Redis cuts after the last whole command and the dangling MULTI goes at the next
		// load; this loader cuts before the MULTI at once.
		if now, _ := fsys.ReadFile("/r/d/appendonly.aof.1.incr.aof"); len(now) != multi {
			t.Fatalf("cut %d: truncated to %d, want %d", cut, len(now), multi)
		}
	}
}

// A corrupt command in the middle fails with its offset, whatever aof-load-truncated says.
func TestLoadCorruptMiddle(t *testing.T) {
	raw, _ := os.ReadFile("testdata/redis-incr/appendonly.aof.1.incr.aof")
	at := bytes.Index(raw, []byte("*5\r\n$5\r\nrpush"))
	for _, c := range []struct {
		off  int
		b    byte
		msg  string
		want int
	}{
		{at, '!', "expected '*'", at},
		{at + 4, '%', "expected '$'", at},
		{at + 4 + 4 + 5, 'X', "expected CRLF after a bulk argument", at},
		{at + 1, '0', "invalid multibulk length", at},
	} {
		bad := bytes.Clone(raw)
		bad[c.off] = c.b
		for _, tr := range []bool{false, true} {
			fsys := NewCrashFS()
			copyDir(t, "testdata/redis-incr", fsys, "/r/d")
			fsys.WriteFile("/r/d/appendonly.aof.1.incr.aof", bad)
			_, _, _, err := loadCollect(fsys, "/r/d", tr)
			var fe *FormatError
			if !errors.As(err, &fe) || fe.Offset != int64(c.want) || fe.Msg != c.msg {
				t.Fatalf("corrupt byte %d: %v", c.off, err)
			}
		}
	}
}

// A truncated file that is not the last one is fatal even with aof-load-truncated.
func TestLoadTruncatedNotLast(t *testing.T) {
	fsys := NewCrashFS()
	copyDir(t, "testdata/redis-aof-base", fsys, "/r/d")
	base, _ := fsys.ReadFile("/r/d/appendonly.aof.2.base.aof")
	fsys.WriteFile("/r/d/appendonly.aof.2.base.aof", base[:len(base)-3])
	if _, _, _, err := loadCollect(fsys, "/r/d", true); !errors.Is(err, ErrTruncated) {
		t.Fatalf("got %v", err)
	}
}

// A declared length of 2^31 followed by 3 bytes reserves about what arrived, not 2 GiB.
func TestLoadBoundedAllocation(t *testing.T) {
	fsys := NewCrashFS()
	fsys.MkdirAll("/r/d")
	fsys.WriteFile("/r/d/appendonly.aof.manifest", []byte("file appendonly.aof.1.incr.aof seq 1 type i\n"))
	fsys.WriteFile("/r/d/appendonly.aof.1.incr.aof", []byte("*2147483647\r\n$2147483648\r\nabc"))
	var ms0, ms1 runtime.MemStats
	runtime.ReadMemStats(&ms0)
	_, _, res, err := loadCollect(fsys, "/r/d", true)
	runtime.ReadMemStats(&ms1)
	if err != nil || !res.Truncated {
		t.Fatalf("%v %+v", err, res)
	}
	if d := ms1.TotalAlloc - ms0.TotalAlloc; d > 4<<20 {
		t.Fatalf("loading 30 bytes allocated %d bytes", d)
	}
}

// An old single appendonly.aof beside the directory is moved in and given a manifest, as
// Redis 7 upgrades one.
func TestLoadOldSingleFile(t *testing.T) {
	fsys := NewCrashFS()
	fsys.MkdirAll("/r")
	old := append(enc("SELECT", "0"), enc("SET", "a", "1")...)
	fsys.WriteFile("/r/appendonly.aof", old)
	got, _, res, err := loadCollect(fsys, "/r/appendonlydir", false)
	if err != nil || !reflect.DeepEqual(got, []string{"0:SET a 1"}) || !res.Upgraded {
		t.Fatalf("%q %v %+v", got, err, res)
	}
	m, _ := fsys.CrashCopy().ReadFile("/r/appendonlydir/appendonly.aof.manifest")
	if string(m) != "file appendonly.aof seq 1 type b\n" {
		t.Fatalf("manifest %q", m)
	}
	if _, err := fsys.Stat("/r/appendonly.aof"); err == nil {
		t.Fatal("old file still beside the directory")
	}
}

// No AOF at all is not an error.
func TestLoadNothing(t *testing.T) {
	fsys := NewCrashFS()
	fsys.MkdirAll("/r")
	_, _, res, err := loadCollect(fsys, "/r/appendonlydir", false)
	if err != nil || res.Manifest != nil {
		t.Fatal(res, err)
	}
}

// An old-style single file with an RDB preamble: loadBase reads the RDB part, the AOF tail
// after it is replayed; Progress reaches the total.
func TestLoadOldPreambleTail(t *testing.T) {
	fsys := NewCrashFS()
	fsys.MkdirAll("/r")
	rdb := []byte("REDIS0010<stand-in payload>\xff12345678") // what the stand-in loadBase reads
	tail := append(enc("SELECT", "4"), enc("SET", "a", "1")...)
	fsys.WriteFile("/r/appendonly.aof", append(bytes.Clone(rdb), tail...))
	var got []string
	var base []byte
	var last, total int64
	res, err := Load(fsys, "/r/appendonlydir", testFn, func(r io.Reader, isRDB bool) error {
		base = make([]byte, len(rdb))
		_, err := io.ReadFull(r, base)
		return err
	}, func(db int, argv [][]byte) error {
		got = append(got, strconv.Itoa(db)+":"+string(bytes.Join(argv, []byte(" "))))
		return nil
	}, LoadOptions{Progress: func(read, tot int64) { last, total = read, tot }})
	if err != nil || !bytes.Equal(base, rdb) || !reflect.DeepEqual(got, []string{"4:SET a 1"}) {
		t.Fatalf("%v %q %q", err, base, got)
	}
	if n := int64(len(rdb) + len(tail)); total != n || last != n || res.TotalSize != n {
		t.Fatalf("progress %d/%d, size %d, want %d", last, total, res.TotalSize, n)
	}
}
