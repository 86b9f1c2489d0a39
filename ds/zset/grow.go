package zset

import (
	"slices"
	"unsafe"
)

// Growth of a large set's item slab. Most large sets are small: a member past
// zset-max-listpack-value makes a one-member set large, and a keyspace may hold millions of
// those, so the slab holds what it needs, rounded up to the allocator's size class (which is
// where Redis's allocator puts a realloc too), until it passes growExact bytes; past it, it grows
// by a quarter at least, so that growing copies O(1) per byte. (Member bytes are not grown by
// copying at all, see arena.go: each copy leaves the old buffer as garbage for the collector.)

const growExact = 8 << 10

// grow returns s with room for n more elements, and a capacity of at most limit when that holds
// them; a new buffer is allocated only when s has no room.
func grow[T any](s []T, n, limit int) []T {
	need := len(s) + n
	if need <= cap(s) {
		return s
	}
	c := need
	if need*int(unsafe.Sizeof(*new(T))) > growExact {
		c = max(need, min(cap(s)+cap(s)/4, limit))
	}
	ns := sized[T](c)[:len(s)]
	copy(ns, s)
	return ns
}

// sized returns an empty slice with room for n elements: the allocator's size class for them.
func sized[T any](n int) []T { return slices.Grow([]T(nil), n) }
