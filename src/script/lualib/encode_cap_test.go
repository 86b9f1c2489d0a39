package lualib

import (
	"strings"
	"testing"
)

// TestEncodeCapped: with the sparse-array check off, one key near 2^30
// asks cjson.encode for a billion nulls; the encoder stops at maxEncoded
// with Lua's out-of-memory text instead of building 5 GB.
func TestEncodeCapped(t *testing.T) {
	got := runGopher("cjson.encode_sparse_array(false, 0) return cjson.encode({[2^30] = 1})")
	if !strings.HasPrefix(got, "E:") || !strings.Contains(got, "not enough memory") {
		t.Fatalf("got %q", got[:min(len(got), 80)])
	}
}
