package command

// Wire errors of the SORT family (exact Redis 7.0 bytes, without '-' and CRLF).
const (
	// ErrSortWeight is replied when a weight (the element, or the BY key's value) of a numeric
	// sort is not a number strtod reads whole.
	ErrSortWeight = "ERR One or more scores can't be converted into double"
)
