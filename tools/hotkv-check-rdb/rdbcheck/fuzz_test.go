package rdbcheck

import (
	"bytes"
	"os"
	"testing"

	"github.com/hotkv/hotkv/persist/rdb"
)

// FuzzCheck checks arbitrary files: no panic, and a report that adds up
// (keys per database and per type sum to the total, offsets within the
// file, an error exactly when not OK).
func FuzzCheck(f *testing.F) {
	if b, err := os.ReadFile("../../../persist/rdb/testdata/redis-7.0.15.rdb"); err == nil {
		f.Add(b)
		z := bytes.Clone(b)
		clear(z[len(z)-8:]) // no checksum: mutations reach the decoder's own checks
		f.Add(z)
	}
	e := &rdb.Encoder{}
	e.Header(rdb.Version)
	e.Aux("redis-ver", "7.0.15")
	e.FunctionLib([]byte("#!lua name=l\nredis.register_function('f', function() return 1 end)"))
	e.SelectDB(1)
	e.ResizeDB(3, 1)
	e.ExpireMs(5)
	e.StringValue([]byte("k"), []byte("v"))
	e.ListValue([]byte("l"), 2, seq([]byte("a"), []byte("1")))
	e.ZSetValue([]byte("z"), 1, func() ([]byte, float64) { return []byte("m"), 1.5 })
	e.EOF(0)
	f.Add(e.Buf)
	f.Fuzz(func(t *testing.T, b []byte) {
		rep := Check("fuzz", bytes.NewReader(b), int64(len(b)), Options{})
		if rep.OK != (rep.Error == nil) {
			t.Fatalf("OK %v with error %+v", rep.OK, rep.Error)
		}
		if rep.End < 0 || rep.End > rep.Size {
			t.Fatalf("end %d of %d", rep.End, rep.Size)
		}
		var perDB, perType int64
		for _, db := range rep.DBs {
			perDB += db.Keys
		}
		for _, tc := range rep.Types {
			perType += tc.Keys
		}
		if perDB != rep.Keys || perType != rep.Keys || rep.Expires > rep.Keys {
			t.Fatalf("keys %d, per db %d, per type %d, expires %d", rep.Keys, perDB, perType, rep.Expires)
		}
		var out bytes.Buffer
		rep.WriteText(&out)
	})
}
