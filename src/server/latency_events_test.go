package server

import (
	"strings"
	"testing"
	"time"

	"github.com/hotkv/hotkv/persist/aof"
)

// slowRemoveFS is a CrashFS whose Remove takes 5 ms: the forced slow path of
// rdb-unlink-temp-file.
type slowRemoveFS struct{ *aof.CrashFS }

func (f slowRemoveFS) Remove(name string) error {
	time.Sleep(5 * time.Millisecond)
	return f.CrashFS.Remove(name)
}

// A save that fails (a full disk) removes its temp file, timed as Redis's rdbRemoveTempFile:
// with latency-monitor-threshold 1 the slow unlink is the rdb-unlink-temp-file event.
func TestLatencyRDBUnlinkTempFile(t *testing.T) {
	fsys := aof.NewCrashFS()
	fsys.MkdirAll("/data")
	s := newPersistServer(t, "/data", slowRemoveFS{fsys})
	c := dialTestServer(t, s)
	c.query("CONFIG SET latency-monitor-threshold 1")
	c.query("SET big " + strings.Repeat("x", 10000))
	fsys.SetSpace(100)
	if got := c.query("SAVE"); !strings.HasPrefix(got, "-") {
		t.Fatalf("SAVE on a full disk: %q", got)
	}
	if got := c.query("LATENCY LATEST"); !strings.Contains(got, "rdb-unlink-temp-file") {
		t.Fatalf("LATENCY LATEST after a failed save with a 5 ms unlink: %q", got)
	}
}
