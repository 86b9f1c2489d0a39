package hll

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
)

// AppendDecode appends PFDEBUG DECODE's text for the sparse HLL b: "z:len" for ZERO, "Z:len"
// for XZERO, "v:value,len" for VAL, separated by spaces.
func AppendDecode(dst, b []byte) []byte {
	start := len(dst)
	for p := HeaderSize; p < len(b); {
		o, n := opAt(b, p)
		p += n
		if len(dst) > start {
			dst = append(dst, ' ')
		}
		switch {
		case o.val != 0:
			dst = append(dst, "v:"...)
			dst = strconv.AppendInt(dst, int64(o.val), 10)
			dst = append(dst, ',')
		case n == 2:
			dst = append(dst, "Z:"...)
		default:
			dst = append(dst, "z:"...)
		}
		dst = strconv.AppendInt(dst, int64(o.run), 10)
	}
	return dst
}

// SelfTest is PFSELFTEST's body: dense registers read back what was written, and sparse and
// dense HLLs fed the same elements agree and stay within the estimator's error. It returns ""
// or what failed.
func SelfTest() string {
	r := rand.New(rand.NewPCG(1, 2))
	regs := make([]byte, DenseSize-HeaderSize)
	want := make([]uint8, Registers)
	for range 1000 {
		for i := range want {
			want[i] = uint8(r.IntN(regMax + 1))
			denseStore(regs, i, want[i])
		}
		for i, v := range want {
			if got := denseGet(regs, i); got != v {
				return fmt.Sprintf("Register error at %d", i)
			}
		}
	}
	sparse, dense := New(), New()
	dense, _ = ToDense(dense)
	var ele [8]byte
	relErr := 1.04 / math.Sqrt(Registers)
	for j := uint64(1); j <= 100000; j++ {
		binary.LittleEndian.PutUint64(ele[:], j)
		sparse, _, _ = Add(sparse, ele[:], Fixed(3000))
		dense, _, _ = Add(dense, ele[:], Fixed(3000))
		if j%1000 != 0 && j > 10 {
			continue
		}
		a, _ := Count(sparse)
		d, _ := Count(dense)
		if a != d {
			return fmt.Sprintf("Sparse and dense encodings differ at %d: %d against %d", j, a, d)
		}
		if math.Abs(float64(d)-float64(j)) > 5*relErr*float64(j) && j > 100 {
			return fmt.Sprintf("Error too big at %d: %d", j, d)
		}
	}
	return ""
}
