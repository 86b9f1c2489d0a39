package lualib

import (
	"encoding/json"
	"errors"
	"math"
	"math/rand"
	"reflect"
	"sort"
	"strings"
	"testing"
	"unicode/utf8"

	lua "github.com/yuin/gopher-lua"
)

// The property tests generate values in a plain Go model (nil, bool,
// float64, string, []any, map[string]any), turn them into Lua values, and
// check the libraries against references that share no code with them:
// encoding/json reads what cjson.encode writes and writes what
// cjson.decode reads, and a msgpack round trip must give the model back.

type gen struct {
	r    *rand.Rand
	utf8 bool // strings valid UTF-8 (for encoding/json)
	json bool // numbers that %.14g keeps exactly
}

func (g *gen) str() string {
	n := g.r.Intn(12)
	if g.r.Intn(20) == 0 {
		n = 40 + g.r.Intn(300)
	}
	var b strings.Builder
	for b.Len() < n {
		switch {
		case g.utf8 && g.r.Intn(4) == 0:
			rs := []rune("é€😀/\"\\\n\t\u007f")
			b.WriteRune(rs[g.r.Intn(len(rs))])
		case g.utf8:
			b.WriteByte(byte(g.r.Intn(128)))
		default:
			b.WriteByte(byte(g.r.Intn(256)))
		}
	}
	s := b.String()
	if g.utf8 && !utf8.ValidString(s) {
		return "x"
	}
	return s
}

func (g *gen) num() float64 {
	switch g.r.Intn(6) {
	case 0:
		return float64(g.r.Intn(256) - 128)
	case 1:
		return float64(g.r.Int63n(1<<40) - 1<<39)
	case 2:
		return float64(g.r.Intn(1<<20)) / 8
	case 3:
		if g.json {
			return float64(g.r.Int63n(1e13))
		}
		return g.r.NormFloat64() * math.Pow(10, float64(g.r.Intn(40)-20))
	case 4:
		if g.json {
			return -float64(g.r.Intn(1e6)) / 4
		}
		return float64(g.r.Uint64())
	}
	if g.json {
		return float64(g.r.Intn(1000)) / 16
	}
	return float64(float32(g.r.Float64()))
}

func (g *gen) value(depth int) any {
	k := g.r.Intn(10)
	if depth >= 4 && k >= 5 {
		k = 0
	}
	switch k {
	case 0, 1:
		return g.num()
	case 2, 3:
		return g.str()
	case 4:
		return g.r.Intn(2) == 0
	case 5, 6:
		if g.r.Intn(8) == 0 {
			return map[string]any{}
		}
		a := make([]any, 1+g.r.Intn(6))
		for i := range a {
			a[i] = g.value(depth + 1)
		}
		return a
	}
	m := map[string]any{}
	for i := g.r.Intn(5); i > 0; i-- {
		m[g.str()] = g.value(depth + 1)
	}
	return m
}

func toLua(L *lua.LState, v any) lua.LValue {
	switch x := v.(type) {
	case nil:
		return lua.LNil
	case bool:
		return lua.LBool(x)
	case float64:
		return lua.LNumber(x)
	case string:
		return lua.LString(x)
	case []any:
		t := L.NewTable()
		for i, e := range x {
			t.RawSetInt(i+1, toLua(L, e))
		}
		return t
	case map[string]any:
		t := L.NewTable()
		for k, e := range x {
			t.RawSetString(k, toLua(L, e))
		}
		return t
	}
	panic("BUG: model type")
}

// sameValue compares a Lua value with the model; an empty table matches
// an empty array or map (neither library can tell them apart).
func sameValue(L *lua.LState, m any, v lua.LValue) bool {
	switch x := m.(type) {
	case nil:
		return v == lua.LNil || IsNull(L, v)
	case bool:
		return v == lua.LBool(x)
	case float64:
		n, ok := v.(lua.LNumber)
		return ok && float64(n) == x
	case string:
		return v == lua.LString(x)
	}
	t, ok := v.(*lua.LTable)
	if !ok {
		return false
	}
	count := 0
	for k, _ := t.Next(lua.LNil); k != lua.LNil; k, _ = t.Next(k) {
		count++
	}
	switch x := m.(type) {
	case []any:
		if count != len(x) {
			return false
		}
		for i, e := range x {
			if !sameValue(L, e, t.RawGetInt(i+1)) {
				return false
			}
		}
		return true
	case map[string]any:
		if count != len(x) {
			return false
		}
		for k, e := range x {
			if !sameValue(L, e, t.RawGetString(k)) {
				return false
			}
		}
		return true
	}
	return false
}

func callLib(L *lua.LState, lib, fn string, args ...lua.LValue) ([]lua.LValue, error) {
	f := L.GetField(L.GetGlobal(lib), fn)
	top := L.GetTop()
	if err := L.CallByParam(lua.P{Fn: f, NRet: lua.MultRet, Protect: true}, args...); err != nil {
		var ae *lua.ApiError
		if errors.As(err, &ae) && ae.Type == lua.ApiErrorPanic {
			panic(err)
		}
		return nil, err
	}
	out := make([]lua.LValue, 0, L.GetTop()-top)
	for i := top + 1; i <= L.GetTop(); i++ {
		out = append(out, L.Get(i))
	}
	L.SetTop(top)
	return out, nil
}

// normJSON maps encoding/json's view of a value onto the model: an empty
// array is an empty map, as cjson writes every empty table as {}.
func normJSON(v any) any {
	switch x := v.(type) {
	case []any:
		if len(x) == 0 {
			return map[string]any{}
		}
		for i := range x {
			x[i] = normJSON(x[i])
		}
	case map[string]any:
		for k := range x {
			x[k] = normJSON(x[k])
		}
	}
	return v
}

func TestCJSONAgainstEncodingJSON(t *testing.T) {
	L := lua.NewState()
	defer L.Close()
	Open(L)
	g := &gen{r: rand.New(rand.NewSource(16)), utf8: true, json: true}
	for i := 0; i < 3000; i++ {
		m := normJSON(g.value(0))
		out, err := callLib(L, "cjson", "encode", toLua(L, m))
		if err != nil {
			t.Fatalf("encode %#v: %v", m, err)
		}
		enc := out[0].String()
		var back any
		if err := json.Unmarshal([]byte(enc), &back); err != nil {
			t.Fatalf("encoding/json cannot read cjson's %q: %v", enc, err)
		}
		if back = normJSON(back); !reflect.DeepEqual(back, m) {
			t.Fatalf("cjson wrote %q for %#v; encoding/json reads %#v", enc, m, back)
		}
		ref, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		out, err = callLib(L, "cjson", "decode", lua.LString(ref))
		if err != nil {
			t.Fatalf("decode of encoding/json's %s: %v", ref, err)
		}
		if !sameValue(L, m, out[0]) {
			t.Fatalf("cjson.decode(%s) differs from %#v", ref, m)
		}
	}
}

func TestCMsgpackRoundTrip(t *testing.T) {
	L := lua.NewState()
	defer L.Close()
	Open(L)
	g := &gen{r: rand.New(rand.NewSource(16))}
	for i := 0; i < 3000; i++ {
		n := 1 + g.r.Intn(3)
		ms := make([]any, n)
		args := make([]lua.LValue, n)
		for j := range ms {
			ms[j] = g.value(0)
			args[j] = toLua(L, ms[j])
		}
		out, err := callLib(L, "cmsgpack", "pack", args...)
		if err != nil {
			t.Fatalf("pack %#v: %v", ms, err)
		}
		packed := out[0]
		vals, err := callLib(L, "cmsgpack", "unpack", packed)
		if err != nil {
			t.Fatalf("unpack %x: %v", packed.String(), err)
		}
		if len(vals) != n {
			t.Fatalf("unpack gave %d values for %d", len(vals), n)
		}
		for j := range ms {
			if !sameValue(L, ms[j], vals[j]) {
				t.Fatalf("round trip of %#v through %x differs", ms[j], packed.String())
			}
		}
		// unpack_one walks the same stream one value at a time.
		off := lua.LValue(lua.LNumber(0))
		for j := 0; j < n; j++ {
			one, err := callLib(L, "cmsgpack", "unpack_one", packed, off)
			if err != nil || len(one) != 2 || !sameValue(L, ms[j], one[1]) {
				t.Fatalf("unpack_one %d of %x: %v %v", j, packed.String(), one, err)
			}
			off = one[0]
		}
		if off != lua.LNumber(-1) {
			t.Fatalf("unpack_one ended at %v, not -1", off)
		}
	}
}

// TestStructRoundTrip packs random integers and floats with random
// endianness and alignment and unpacks them, checking values and sizes
// (struct.size against the packed length).
func TestStructRoundTrip(t *testing.T) {
	L := lua.NewState()
	defer L.Close()
	Open(L)
	r := rand.New(rand.NewSource(16))
	type item struct {
		opt  string
		bits uint
		sign bool
	}
	items := []item{{"b", 8, true}, {"B", 8, false}, {"h", 16, true}, {"H", 16, false},
		{"i", 32, true}, {"I", 32, false}, {"i3", 24, true}, {"I6", 48, false}, {"l", 53, true}, {"L", 53, false}}
	for n := 0; n < 2000; n++ {
		fmtStr := []string{"<", ">", "!", "!4", "!2"}[r.Intn(5)]
		var args []lua.LValue
		var want []float64
		for k := 1 + r.Intn(6); k > 0; k-- {
			if r.Intn(4) == 0 {
				f := float64(float32(r.NormFloat64()))
				fmtStr += " " + []string{"f", "d"}[r.Intn(2)]
				args, want = append(args, lua.LNumber(f)), append(want, f)
				continue
			}
			it := items[r.Intn(len(items))]
			v := float64(r.Int63n(1 << (it.bits - 1)))
			if it.sign && r.Intn(2) == 0 {
				v = -v
			} else if !it.sign {
				v *= 2
			}
			fmtStr += it.opt
			args, want = append(args, lua.LNumber(v)), append(want, v)
		}
		out, err := callLib(L, "struct", "pack", append([]lua.LValue{lua.LString(fmtStr)}, args...)...)
		if err != nil {
			t.Fatalf("pack %q %v: %v", fmtStr, args, err)
		}
		size, err := callLib(L, "struct", "size", lua.LString(fmtStr))
		if err != nil || float64(size[0].(lua.LNumber)) != float64(len(out[0].String())) {
			t.Fatalf("size %q = %v, packed %d bytes (%v)", fmtStr, size, len(out[0].String()), err)
		}
		got, err := callLib(L, "struct", "unpack", lua.LString(fmtStr), out[0])
		if err != nil {
			t.Fatalf("unpack %q: %v", fmtStr, err)
		}
		vals := make([]float64, 0, len(got)-1)
		for _, v := range got[:len(got)-1] {
			vals = append(vals, float64(v.(lua.LNumber)))
		}
		if !reflect.DeepEqual(vals, want) || float64(got[len(got)-1].(lua.LNumber)) != float64(len(out[0].String())+1) {
			t.Fatalf("%q: packed %v, unpacked %v", fmtStr, want, got)
		}
	}
}

// TestBitAgainstIntegers checks bit's operations against Go's int32
// arithmetic on integers (where LuaBitOp's normalisation is exact).
func TestBitAgainstIntegers(t *testing.T) {
	L := lua.NewState()
	defer L.Close()
	Open(L)
	r := rand.New(rand.NewSource(16))
	ops := map[string]func(a, b uint32) uint32{
		"band": func(a, b uint32) uint32 { return a & b }, "bor": func(a, b uint32) uint32 { return a | b },
		"bxor": func(a, b uint32) uint32 { return a ^ b }, "lshift": func(a, b uint32) uint32 { return a << (b & 31) },
		"rshift": func(a, b uint32) uint32 { return a >> (b & 31) }, "arshift": func(a, b uint32) uint32 { return uint32(int32(a) >> (b & 31)) },
		"rol": func(a, b uint32) uint32 { s := b & 31; return a<<s | a>>(32-s) }, "ror": func(a, b uint32) uint32 { s := b & 31; return a>>s | a<<(32-s) },
	}
	names := make([]string, 0, len(ops))
	for k := range ops {
		names = append(names, k)
	}
	sort.Strings(names)
	for i := 0; i < 20000; i++ {
		a := r.Int63n(1<<40) - 1<<39
		b := r.Int63n(64)
		if r.Intn(2) == 0 {
			b = r.Int63n(1<<33) - 1<<32
		}
		name := names[r.Intn(len(names))]
		out, err := callLib(L, "bit", name, lua.LNumber(a), lua.LNumber(b))
		want := int32(ops[name](uint32(a), uint32(b)))
		if err != nil || out[0] != lua.LNumber(want) {
			t.Fatalf("bit.%s(%d, %d) = %v (%v), want %d", name, a, b, out, err, want)
		}
	}
}
