package command

// Wire errors of the sets family (exact Redis 7.0 bytes, without '-' and CRLF).
const (
	ErrSetPopCount      = "ERR value is out of range, must be positive"
	ErrSetRandCount     = "ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807"
	ErrSetNumkeys       = "ERR numkeys should be greater than 0"
	ErrSetNumkeysArgs   = "ERR Number of keys can't be greater than number of args"
	ErrSetLimitNegative = "ERR LIMIT can't be negative"
)
