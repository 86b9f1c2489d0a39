package vector

import (
	"unsafe"

	"golang.org/x/sys/cpu"
)

//go:noescape
func dotI8AVX2(a, b *int8, n int) int32

//go:noescape
func dotF32I8AVX2(a *float32, b *int8, n int) float32

var hasAVX2 = cpu.X86.HasAVX2 && cpu.X86.HasFMA

func (k simdKernel) dotI8(a, b []int8) int32 {
	if !hasAVX2 || len(a) == 0 {
		return k.goKernel.dotI8(a, b)
	}
	b = b[:len(a)]
	return dotI8AVX2(&a[0], &b[0], len(a))
}

func (k simdKernel) dotF32I8(a []float32, b []int8) float32 {
	if !hasAVX2 || len(a) == 0 {
		return k.goKernel.dotF32I8(a, b)
	}
	b = b[:len(a)]
	return dotF32I8AVX2(&a[0], &b[0], len(a))
}

// prefetchLines hints the CPU to load n cache lines from p; see store.go's prefetch.
//
//go:noescape
func prefetchLines(p unsafe.Pointer, n int)
