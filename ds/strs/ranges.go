package strs

// Range returns the bytes of s from start to end inclusive, with GETRANGE's index rules: negative
// indexes count from the end, both ends are clamped into the string, and an empty result is
// returned when the range is empty or both indexes are negative and reversed.
func Range(s []byte, start, end int64) []byte {
	lo, hi, ok := Bounds(int64(len(s)), start, end)
	if !ok {
		return s[:0]
	}
	return s[lo : hi+1]
}

// Bounds applies Range's index rules to a string of n bytes: the inclusive range [lo, hi] it
// selects, or ok false when it selects nothing.
func Bounds(n, start, end int64) (lo, hi int64, ok bool) {
	if start < 0 && end < 0 && start > end {
		return 0, 0, false
	}
	if start < 0 {
		start += n
	}
	if end < 0 {
		end += n
	}
	start, end = max(start, 0), max(end, 0)
	if end >= n {
		end = n - 1
	}
	if n == 0 || start > end {
		return 0, 0, false
	}
	return start, end, true
}

// CheckLen reports whether a string of size bytes may grow by add bytes without exceeding limit
// (proto-max-bulk-len), as Redis's checkStringLength does, overflow included.
func CheckLen(size, add, limit int64) error {
	total := int64(uint64(size) + uint64(add))
	if total > limit || total < size || total < add {
		return ErrTooBig
	}
	return nil
}

// SetRange overwrites b from offset with v, first growing b with zero bytes when it is shorter
// than offset+len(v), and returns the result, which reuses b's storage when it fits. The caller
// checks the final length with CheckLen.
func SetRange(b []byte, offset int, v []byte) []byte {
	end := offset + len(v)
	if old := len(b); end > old {
		if end > cap(b) {
			// Exact size: the caller asked for this length, and SETRANGE is not usually repeated
			// at growing offsets the way APPEND is.
			nb := make([]byte, end)
			copy(nb, b)
			b = nb
		} else {
			b = b[:end]
			clear(b[old:])
		}
	}
	copy(b[offset:], v)
	return b
}
