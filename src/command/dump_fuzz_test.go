package command

import (
	"bytes"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/hotkv/hotkv/persist/rdb"
)

// FuzzRestore: any object, given a valid footer so the decoder is reached, is restored or
// refused with one of RESTORE's errors; nothing panics, and a restored value DUMPs to a payload
// that restores again. What a RESTORE allocates is bounded by its payload's size.
func FuzzRestore(f *testing.F) {
	tc := newTestConn(f, newTestEngine())
	fillEveryType(f, tc.do, true)
	for _, k := range replyStrings(f, tc.do("KEYS", "*")) {
		p := replyText(f, tc.do("DUMP", k))
		f.Add([]byte(p[:len(p)-10]))
	}
	f.Add([]byte{rdb.TypeListZiplist, 0x0b, 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0, 0, 0, 0xff})
	f.Add([]byte{rdb.TypeHashZipmap, 0x05, 0x02, 0x01, 'a', 0x01, 0x00, 'b'})
	c := newTestConn(f, newTestEngine()) // one engine for every input: FLUSHALL between them
	f.Fuzz(func(t *testing.T, obj []byte) {
		c.t = t
		c.do("FLUSHALL")
		done := make(chan struct{})
		defer close(done)
		go func() { // a hang is a finding too: crash the worker with the input
			select {
			case <-done:
			case <-time.After(10 * time.Second):
				panic(fmt.Sprintf("RESTORE of %x did not finish in 10s", obj))
			}
		}()
		payload := string(rdb.DumpPayload(nil, obj, rdb.Version))
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		r := c.do("RESTORE", "k", "0", payload)
		runtime.ReadMemStats(&after)
		if got, limit := after.TotalAlloc-before.TotalAlloc, uint64(4<<20+200*len(obj)); got > limit {
			t.Fatalf("RESTORE of %d bytes allocated %d", len(obj), got)
		}
		switch r {
		case "+OK\r\n":
		case "-" + ErrBadDataFormat + "\r\n":
			return
		default:
			t.Fatalf("RESTORE replied %q", r)
		}
		p := replyText(t, c.do("DUMP", "k"))
		if r := c.do("RESTORE", "k2", "0", p); r != "+OK\r\n" {
			t.Fatalf("a restored value's DUMP does not restore: %q", r)
		}
		if a, b := canonOne(t, c.do, "k"), canonOne(t, c.do, "k2"); a != b && !strings.Contains(a, "stream") {
			t.Fatalf("round trip:\n%q\n%q", a, b)
		}
	})
}

// FuzzLoadRDB: any file either loads or fails with an error; nothing panics, and what loaded
// saves again to a file that loads into a fresh engine with as many keys.
func FuzzLoadRDB(f *testing.F) {
	tc := newTestConn(f, newTestEngine())
	fillEveryType(f, tc.do, false)
	tc.do("FUNCTION", "LOAD", "#!lua name=mylib\nredis.register_function('f1', function() return 1 end)")
	f.Add(writeRDB(f, tc.client.e, RDBOptions{Checksum: false}))
	f.Add(rdbFile(true, 1, 3))
	f.Add(rdbFile(false, 20, 1))
	f.Fuzz(func(t *testing.T, file []byte) {
		e := newTestEngine()
		st, err := e.LoadRDB(bytes.NewReader(file), LoadOptions{KeepExpired: true})
		if err != nil {
			return
		}
		e2 := newTestEngine()
		st2, err := e2.LoadRDB(bytes.NewReader(writeRDB(t, e, RDBOptions{Checksum: true})), LoadOptions{KeepExpired: true})
		if err != nil || st2.Keys != st.Keys {
			t.Fatalf("reloading the saved file: %d keys (%v), loaded %d", st2.Keys, err, st.Keys)
		}
	})
}
