package command

// Wire errors of the strings family (exact Redis 7.0 bytes, without '-' and CRLF).
const (
	ErrDecrOverflow  = "ERR decrement would overflow"
	ErrLCSNotStrings = "ERR The specified keys must contain string values"
	ErrLCSLenAndIdx  = "ERR If you want both the length and indexes, please just use IDX."
	ErrLCSTooLong    = "ERR String too long for LCS"
	ErrLCSMemory     = "ERR Insufficient memory, transient memory for LCS exceeds proto-max-bulk-len"
	ErrLCSAlloc      = "ERR Insufficient memory, failed allocating transient memory for LCS"
)
