package server

import (
	"strings"
	"testing"
)

// statsField returns field's value from INFO stats on c.
func statsField(t *testing.T, c *testClient, field string) string {
	t.Helper()
	return sectionField(t, c, "stats", field)
}

// value-compression and its threshold reach the engine from the command line and from CONFIG
// SET: values written while it is on are packed (INFO counts them), values written before a
// change keep their form, and bad values get Redis's CONFIG SET error. A SAVE and a restart on
// the same directory serve the same bytes, packed again by the load.
func TestValueCompressionConfig(t *testing.T) {
	dir := t.TempDir()
	s := newPersistServer(t, dir, nil, "--value-compression", "lz4", "--dir", dir)
	c := dialTestServer(t, s)
	big := strings.Repeat("abcdefgh", 256) // 2 KB, compressible, no spaces (inline commands)
	want := "$2048\r\n" + big + "\r\n"
	for _, cmd := range []string{"SET a " + big, "CONFIG SET value-compression no", "SET b " + big,
		"CONFIG SET value-compression zstd", "SET c " + big, "CONFIG SET value-compression-threshold 4096",
		"SET d " + big} {
		if got := c.do(cmd); got != "+OK\r\n" {
			t.Fatalf("%.40s: %q", cmd, got)
		}
	}
	if got := statsField(t, c, "value_compressed_keys"); got != "2" { // a (lz4) and c (zstd)
		t.Fatalf("value_compressed_keys %s, want 2", got)
	}
	if got := c.query("CONFIG GET value-compression"); got != "*2\r\n$17\r\nvalue-compression\r\n$4\r\nzstd\r\n" {
		t.Fatalf("CONFIG GET: %q", got)
	}
	if got := c.do("CONFIG SET value-compression gzip"); !strings.HasPrefix(got, "-ERR CONFIG SET failed (possibly related to argument 'value-compression')") {
		t.Fatalf("bad value: %q", got)
	}
	for _, k := range []string{"a", "b", "c", "d"} {
		if got := c.query("GET " + k); got != want {
			t.Fatalf("GET %s: %.60q", k, got)
		}
	}
	c.do("CONFIG SET value-compression-threshold 512")
	if got := c.do("SAVE"); got != "+OK\r\n" {
		t.Fatalf("SAVE: %q", got)
	}
	s.Stop()
	s2 := newPersistServer(t, dir, nil, "--value-compression", "lz4", "--dir", dir) // serves once loaded
	c2 := dialTestServer(t, s2)
	for _, k := range []string{"a", "b", "c", "d"} {
		if got := c2.query("GET " + k); got != want {
			t.Fatalf("after restart GET %s: %.60q", k, got)
		}
	}
	if got := statsField(t, c2, "value_compressed_keys"); got != "4" {
		t.Fatalf("after restart value_compressed_keys %s, want 4", got)
	}
}
