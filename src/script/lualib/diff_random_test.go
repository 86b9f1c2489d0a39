package lualib

import (
	"math/rand"
	"strings"
	"testing"
)

// TestDifferentialRandom feeds the decoders inputs made by mutating valid
// encodings (flipped, inserted, deleted and truncated bytes) and random
// struct formats, on redis-server and here, and compares results exactly.
// It needs a live redis-server (the random inputs are not recorded).
func TestDifferentialRandom(t *testing.T) {
	if _, ok := lookRedis(); !ok {
		t.Skip("no redis-server on PATH")
	}
	r := startRedis(t)
	rnd := rand.New(rand.NewSource(16))
	jsonSeeds := []string{`{"a":[1,2.5,-3e7,{"b":null}],"c":"\u00e9\/\n"}`, `[true,false,null,"x",0.1,-0,1e400]`, `"\ud83d\ude00"`, `[[[[[]]]]]`, `{"k":{"k":{"k":"v"}}}`}
	mpSeeds := []string{"\x93\x01\xa1a\xc3", "\x82\xa1k\x92\xcb\x3f\xf0\x00\x00\x00\x00\x00\x00\xc0\x01\xd0\x80", "\xdc\x00\x02\xcd\xff\xff\xd2\x80\x00\x00\x00", "\x91\x91\x91\x81\xa1a\xca\x3f\xc0\x00\x00", "\xd9\x03abc\xda\x00\x01z\xcf\x00\x00\x00\x00\x00\x00\x01\x00"}
	const structChars = "bBhHlLTiIcsfdx<>! 0123489"
	n := 0
	check := func(code string, argv ...string) {
		n++
		want := r.eval(t, prelude+code, argv...)
		if got := runGopher(code, argv...); got != want {
			t.Errorf("%s %q\n redis: %q\n  ours: %q", code, argv, clip(want), clip(got))
		}
	}
	for i := 0; i < 400; i++ {
		check("return R(cjson.decode(ARGV[1]))", mutate(rnd, jsonSeeds[rnd.Intn(len(jsonSeeds))]))
		check("return R(cmsgpack.unpack(ARGV[1]))", mutate(rnd, mpSeeds[rnd.Intn(len(mpSeeds))]))
		var f strings.Builder
		for k := rnd.Intn(8); k >= 0; k-- {
			f.WriteByte(structChars[rnd.Intn(len(structChars))])
		}
		data := make([]byte, rnd.Intn(40))
		rnd.Read(data)
		check("return R(struct.unpack(ARGV[1], ARGV[2]))", f.String(), string(data))
		check("return R(struct.size(ARGV[1]))", f.String())
		check("return hex(struct.pack(ARGV[1], 1, 2, 3, 4, 5, 6, 7, 8, 9))", f.String())
	}
	t.Logf("%d random cases compared", n)
}

// mutate changes a few bytes of s.
func mutate(r *rand.Rand, s string) string {
	b := []byte(s)
	for k := 1 + r.Intn(3); k > 0 && len(b) > 0; k-- {
		i := r.Intn(len(b))
		switch r.Intn(4) {
		case 0:
			b[i] = byte(r.Intn(256))
		case 1:
			b = append(b[:i], append([]byte{byte(r.Intn(256))}, b[i:]...)...)
		case 2:
			b = append(b[:i], b[i+1:]...)
		default:
			b = b[:i]
		}
	}
	return string(b)
}
