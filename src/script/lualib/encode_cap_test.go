package lualib

import (
	"context"
	"strings"
	"testing"

	lua "github.com/yuin/gopher-lua"
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

// TestPackCapped: a table holding itself a thousand times packs 16 levels
// deep in cmsgpack (1000^16 elements); the cap stops it.
func TestPackCapped(t *testing.T) {
	saved := maxEncoded
	maxEncoded = 1 << 20
	defer func() { maxEncoded = saved }()
	got := runGopher("local t = {} for i = 1, 1000 do t[i] = t end return cmsgpack.pack(t)")
	if !strings.HasPrefix(got, "E:") || !strings.Contains(got, "not enough memory") {
		t.Fatalf("got %q", got[:min(len(got), 80)])
	}
	got = runGopher("local t = {} for i = 1, 1000 do t[i] = string.rep('x', 2000) end return cmsgpack.pack(t)")
	if !strings.HasPrefix(got, "E:") || !strings.Contains(got, "not enough memory") {
		t.Fatalf("got %q", got[:min(len(got), 80)])
	}
}

// TestEncodeCancelled: an encode that runs past the state's context ends
// with the context's error, as the Lua VM does, so a script kill reaches
// it. The guard looks every 1024 elements: a small table still encodes
// (so gopher-lua's call itself did not refuse), a large one stops.
func TestEncodeCancelled(t *testing.T) {
	L := lua.NewState()
	defer L.Close()
	Open(L)
	if err := L.DoString("SMALL = {1, 2, 3} BIG = {} for i = 1, 5000 do BIG[i] = {i} end"); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	L.SetContext(ctx)
	for _, c := range [][2]string{{"cjson", "encode"}, {"cmsgpack", "pack"}} {
		if _, err := callLib(L, c[0], c[1], L.GetGlobal("SMALL")); err != nil {
			t.Fatalf("%s.%s of a small table: %v", c[0], c[1], err)
		}
		_, err := callLib(L, c[0], c[1], L.GetGlobal("BIG"))
		if err == nil || !strings.Contains(err.Error(), context.Canceled.Error()) {
			t.Errorf("%s.%s with a cancelled context: %v", c[0], c[1], err)
		}
	}
}
