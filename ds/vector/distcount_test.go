package vector

import (
	"compress/gzip"
	"io"
	"math"
	"os"
	"strconv"
	"testing"
)

// countKernel counts distance kernel calls: the work a build or search does, whatever the load of
// the machine it runs on.
type countKernel struct {
	kernel
	n *int64
}

func (k countKernel) dot(a, b []float32) float32 { *k.n++; return k.kernel.dot(a, b) }
func (k countKernel) l2(a, b []float32) float32  { *k.n++; return k.kernel.l2(a, b) }
func (k countKernel) dotI8(a, b []int8) int32    { *k.n++; return k.kernel.dotI8(a, b) }
func (k countKernel) dotF32I8(a []float32, b []int8) float32 {
	*k.n++
	return k.kernel.dotF32I8(a, b)
}

// readMNIST reads n images of a Fashion-MNIST idx3 file as pixels/255 (as benchmarks/vector does).
func readMNIST(t *testing.T, path string, n int) [][]float32 {
	f, err := os.Open(path)
	if err != nil {
		t.Skip(err)
	}
	defer f.Close()
	z, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	var hdr [16]byte
	if _, err := io.ReadFull(z, hdr[:]); err != nil {
		t.Fatal(err)
	}
	out := make([][]float32, n)
	buf := make([]byte, 784)
	for i := range out {
		if _, err := io.ReadFull(z, buf); err != nil {
			t.Fatal(err)
		}
		v := make([]float32, 784)
		for j, b := range buf {
			v[j] = float32(b) / 255
		}
		out[i] = v
	}
	return out
}

// TestQ8DistanceWork: on Fashion-MNIST (dataset-fashion-mnist, which benchmarks/vector.sh
// installs), a Q8 set computes about as many distances per insert and per search as an FP32 set
// of the same metric (within 5%), so a Q8 speed column far below FP32's in a results table is the
// machine, not extra work. HOTKV_DISTCOUNT_N=30000 runs it (about 2 minutes); skipped otherwise.
// Measured on 30,000 vectors and 500 queries: cosine FP32 1,226 per insert and 194 per EF-10
// search, cosine Q8 1,225 and 194; L2 FP32 and Q8 1,321 and 201-202.
func TestQ8DistanceWork(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("HOTKV_DISTCOUNT_N"))
	if n <= 0 {
		t.Skip("HOTKV_DISTCOUNT_N unset")
	}
	const dir = "/usr/share/datasets/fashion-mnist/"
	base := readMNIST(t, dir+"train-images-idx3-ubyte.gz", n)
	qs := readMNIST(t, dir+"t10k-images-idx3-ubyte.gz", 500)
	normalized := func(vs [][]float32) [][]float32 {
		out := make([][]float32, len(vs))
		for i, v := range vs {
			var s float64
			for _, x := range v {
				s += float64(x) * float64(x)
			}
			out[i] = make([]float32, len(v))
			for j, x := range v {
				out[i][j] = float32(float64(x) / math.Sqrt(s))
			}
		}
		return out
	}
	var cnt int64
	old := kern
	kern = countKernel{old, &cnt}
	defer func() { kern = old }()
	work := func(m Metric, q Quant) (perInsert, perSearch float64) {
		b, qq := base, qs
		if m == Cosine {
			b, qq = normalized(base), normalized(qs)
		}
		s, err := New(Config{Dim: 784, Metric: m, Quant: q, M: 16, EF: 200, Seed: 42})
		if err != nil {
			t.Fatal(err)
		}
		cnt = 0
		for i, v := range b {
			if _, err := s.Add([]byte(strconv.Itoa(i)), v, 0); err != nil {
				t.Fatal(err)
			}
		}
		perInsert = float64(cnt) / float64(len(b))
		cnt = 0
		for _, v := range qq {
			s.Search(v, 10, 10, nil, 0)
		}
		perSearch = float64(cnt) / float64(len(qq))
		t.Logf("%v %v, %d vectors: %.0f distances per insert, %.0f per EF-10 search", m, q, n, perInsert, perSearch)
		return perInsert, perSearch
	}
	for _, m := range []Metric{Cosine, L2} {
		fi, fs := work(m, NoQuant)
		qi, qs := work(m, Q8)
		if qi > 1.05*fi || qs > 1.05*fs {
			t.Errorf("%v: Q8 computes %.0f distances per insert and %.0f per search, FP32 %.0f and %.0f", m, qi, qs, fi, fs)
		}
	}
}
