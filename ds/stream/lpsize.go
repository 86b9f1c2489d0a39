package stream

// Redis keeps each block as a listpack and decides where a new block starts by the listpack's
// size in bytes. These functions compute that size from what an entry holds, without building the
// listpack, so blocks here split where Redis's do (and `~` trims remove the same entries).

const lpHeader = 7 // total-bytes (4), element count (2), end marker (1)

// lpIntLen is the encoded size of an integer element, backlen included.
func lpIntLen(v int64) int {
	var n int
	switch {
	case v >= 0 && v <= 127:
		n = 1
	case v >= -4096 && v <= 4095:
		n = 2
	case v >= -32768 && v <= 32767:
		n = 3
	case v >= -8388608 && v <= 8388607:
		n = 4
	case v >= -2147483648 && v <= 2147483647:
		n = 5
	default:
		n = 9
	}
	return n + lpBacklen(n)
}

// lpStrLen is the encoded size of a string element: an integer when it reads as one
// (lpStringToInt64 is string2ll), else a length prefix and its bytes.
func lpStrLen(b []byte) int {
	if v, ok := strictInt(b); ok {
		return lpIntLen(v)
	}
	var n int
	switch l := len(b); {
	case l < 64:
		n = 1 + l
	case l < 4096:
		n = 2 + l
	default:
		n = 5 + l
	}
	return n + lpBacklen(n)
}

func lpBacklen(l int) int {
	switch {
	case l <= 127:
		return 1
	case l < 16383:
		return 2
	case l < 2097151:
		return 3
	case l < 268435455:
		return 4
	}
	return 5
}

// lpMasterLen is the size of a new block's listpack holding its master entry: count 1, deleted
// 0, the field count, the fields, the zero terminator.
func lpMasterLen(fv [][]byte) int {
	n := lpHeader + lpIntLen(1) + lpIntLen(0) + lpIntLen(int64(len(fv)/2)) + lpIntLen(0)
	for i := 0; i < len(fv); i += 2 {
		n += lpStrLen(fv[i])
	}
	return n
}

// lpEntryLen is the size of an entry's elements: flags, ms and seq deltas, the field count and
// fields unless same, the values, lp-count.
func lpEntryLen(flags int64, dms, dseq int64, fv [][]byte, same bool) int {
	n := lpIntLen(flags) + lpIntLen(dms) + lpIntLen(dseq)
	cnt := int64(len(fv)/2) + 3
	if !same {
		n += lpIntLen(int64(len(fv) / 2))
		cnt += int64(len(fv)/2) + 1
	}
	for i := 0; i < len(fv); i += 2 {
		if !same {
			n += lpStrLen(fv[i])
		}
		n += lpStrLen(fv[i+1])
	}
	return n + lpIntLen(cnt)
}
