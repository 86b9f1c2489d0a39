package command

// Wire errors of the lists family (exact Redis 7.0 bytes, without '-' and CRLF). The names carry
// the family so they never clash with another family's constant for the same text.
const (
	ErrListIndexRange = "ERR index out of range"
	ErrListPositive   = "ERR value is out of range, must be positive"
	ErrListNumKeys    = "ERR numkeys should be greater than 0"
	ErrListCount      = "ERR count should be greater than 0"
	ErrLPosRank       = "ERR RANK can't be zero: use 1 to start from the first match, 2 from the second ... or use negative to start from the end of the list"
	ErrLPosCount      = "ERR COUNT can't be negative"
	ErrLPosMaxLen     = "ERR MAXLEN can't be negative"
	ErrUnblockReason  = "ERR CLIENT UNBLOCK reason should be TIMEOUT or ERROR"
)
