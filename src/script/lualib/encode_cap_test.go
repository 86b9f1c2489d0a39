package lualib

import (
	"strings"
	"testing"
)

// TestEncodeCapped: with the sparse-array check off, one key near 2^30
// asks cjson.encode for a billion nulls; the encoder stops at maxEncoded
// (lowered here to 1 MB to keep the test small) with Lua's out-of-memory
// text, and below the cap the same table shape encodes.
func TestEncodeCapped(t *testing.T) {
	saved := maxEncoded
	maxEncoded = 1 << 20
	defer func() { maxEncoded = saved }()
	got := runGopher("cjson.encode_sparse_array(false, 0) return cjson.encode({[2^30] = 1})")
	if !strings.HasPrefix(got, "E:") || !strings.Contains(got, "not enough memory") {
		t.Fatalf("got %q", got[:min(len(got), 80)])
	}
	got = runGopher("cjson.encode_sparse_array(false, 0) return cjson.encode({[1000] = 1})")
	if want := "S:[" + strings.Repeat("null,", 999) + "1]"; got != want {
		t.Fatalf("got %q", got[:min(len(got), 80)])
	}
}
