package lualib

import (
	"math"
	"math/rand"
	"strconv"
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

// TestDifferentialRandomEncode builds random values (arrays, one-key
// tables, so that pairs order cannot matter, strings of any bytes and
// numbers of every range) as Lua source and compares cjson.encode,
// cmsgpack.pack and their round trips with redis-server.
func TestDifferentialRandomEncode(t *testing.T) {
	if _, ok := lookRedis(); !ok {
		t.Skip("no redis-server on PATH")
	}
	r := startRedis(t)
	rnd := rand.New(rand.NewSource(16))
	for i := 0; i < 300; i++ {
		v := luaLiteral(rnd, 0)
		for _, code := range []string{
			"return cjson.encode(" + v + ")",
			"return hex(cmsgpack.pack(" + v + "))",
			"return R(cmsgpack.unpack(cmsgpack.pack(" + v + ")))",
			"return R(cjson.decode(cjson.encode(" + v + ")))",
		} {
			want := r.eval(t, prelude+code)
			if got := runGopher(code); got != want {
				t.Errorf("%s\n redis: %q\n  ours: %q", clip(code), clip(want), clip(got))
			}
		}
	}
}

func luaLiteral(r *rand.Rand, depth int) string {
	k := r.Intn(9)
	if depth > 2 && k >= 5 {
		k = 0
	}
	switch k {
	case 0, 1:
		switch r.Intn(5) {
		case 0:
			return strconv.Itoa(r.Intn(70000) - 35000)
		case 1:
			return strconv.FormatFloat(r.NormFloat64()*math.Pow(10, float64(r.Intn(60)-30)), 'g', -1, 64)
		case 2:
			return strconv.FormatInt(r.Int63()>>uint(r.Intn(63)), 10)
		case 3:
			return strconv.FormatFloat(float64(float32(r.Float64()*1000)), 'g', -1, 64)
		}
		// Not "-0": Lua 5.1's compiler folds that literal to 0 where
		// gopher-lua's keeps -0 (a difference of the engines, not of the
		// libraries: -(tonumber('0')) is -0 in both).
		return "-" + strconv.FormatInt(1+r.Int63()>>uint(r.Intn(63)), 10)
	case 2, 3:
		b := make([]byte, r.Intn(40))
		r.Read(b)
		var s strings.Builder
		s.WriteByte('"')
		for _, c := range b {
			s.WriteString("\\" + strconv.Itoa(int(c)))
		}
		s.WriteByte('"')
		return s.String()
	case 4:
		return []string{"true", "false", "cjson.null"}[r.Intn(3)]
	case 5, 6:
		n := r.Intn(7)
		if depth == 0 && r.Intn(5) == 0 {
			n = 12 + r.Intn(10)
		}
		parts := make([]string, n)
		for i := range parts {
			parts[i] = luaLiteral(r, depth+1)
		}
		return "{" + strings.Join(parts, ",") + "}"
	}
	// Keys: strings, booleans or small numbers. gopher-lua stores an
	// integer key below 2^26 in its array part and fills the gap with
	// nils, so {[6e7] = 1} costs it a gigabyte.
	key := luaLiteral(r, 4)
	if n, err := strconv.ParseFloat(key, 64); err == nil && math.Abs(n) > 1e5 {
		key = strconv.Itoa(int(n) % 1000)
	}
	return "{[" + key + "] = " + luaLiteral(r, depth+1) + "}"
}
