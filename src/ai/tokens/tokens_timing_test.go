package tokens

import (
	"strings"
	"testing"
)

var prose = []byte(strings.Repeat("Much of what an AI application pays for is sending a model a question it has already answered. ", 4))

func BenchmarkCount(b *testing.B) {
	for _, enc := range []Encoding{Cl100k, O200k} {
		b.Run(enc.String(), func(b *testing.B) {
			Load(enc)
			b.ReportAllocs()
			b.SetBytes(int64(len(prose)))
			n := 0
			for b.Loop() {
				n = Count(enc, prose)
			}
			b.ReportMetric(float64(n), "tokens")
		})
	}
}
