package command

// Wire errors of the hashes family (exact Redis bytes, without '-' and CRLF): Redis 7.0.15's for
// the 7.0 commands, Redis 7.4's for per-field expiry (HEXPIRE … HPERSIST).
const (
	ErrHashNotInt       = "ERR hash value is not an integer"
	ErrHashNotFloat     = "ERR hash value is not a float"
	ErrHashNaNInf       = "ERR value is NaN or Infinity"
	ErrHashRandRange    = "ERR value is out of range"
	ErrHashRandCount    = "ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807"
	ErrHashFieldsArg    = "ERR Mandatory argument FIELDS is missing or not at the right position"
	ErrHashExpireFields = "ERR Parameter `numFields` should be greater than 0"
	ErrHashNumFields    = "ERR Number of fields must be a positive integer"
	ErrHashFieldsCount  = "ERR The `numfields` parameter must match the number of arguments"
	ErrHashExpireNeg    = "ERR invalid expire time, must be >= 0"
)
