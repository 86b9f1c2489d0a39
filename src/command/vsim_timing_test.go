package command

import (
	"math/rand/v2"
	"strconv"
	"testing"
)

// BenchmarkVsim is one VSIM FP32 … COUNT 10 through the command layer (parse, route, shared
// read, search, encode) on a 10,000-element 128-d cosine Q8 set; allocations are per command.
func BenchmarkVsim(b *testing.B) {
	e := newTestEngine()
	tc := newTestConn(b, e)
	r := rand.New(rand.NewPCG(1, 1))
	vec := func() string {
		v := make([]float32, 128)
		for i := range v {
			v[i] = float32(r.NormFloat64())
		}
		return fp32(v)
	}
	for i := range 10000 {
		tc.do("VADD", "v", "FP32", vec(), "e"+strconv.Itoa(i))
	}
	for _, c := range []struct {
		name string
		args []string
	}{
		{"graph", []string{"VSIM", "v", "FP32", vec(), "COUNT", "10"}},
		{"withscores", []string{"VSIM", "v", "FP32", vec(), "COUNT", "10", "WITHSCORES"}},
		{"filter", []string{"VSIM", "v", "FP32", vec(), "COUNT", "10", "FILTER", ".a > 1"}},
	} {
		req := encodeCommand(c.args)
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				tc.send(req)
			}
		})
	}
}
