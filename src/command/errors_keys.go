package command

// Wire errors of the keys and expiry families (DEL … SWAPDB, SCAN, OBJECT, EXPIRE …), exact
// Redis 7.0 bytes without the leading '-'.
const (
	ErrInvalidCursor   = "ERR invalid cursor"
	ErrIntArgRange     = "ERR value is out of range, value must between -2147483648 and 2147483647"
	ErrFirstDBIndex    = "ERR invalid first DB index"
	ErrSecondDBIndex   = "ERR invalid second DB index"
	ErrUnknownObject   = "ERR unknown type object"
	ErrExpireOption    = "ERR Unsupported option %s"
	ErrExpireNXAndMore = "ERR NX and XX, GT or LT options at the same time are not compatible"
	ErrExpireGTAndLT   = "ERR GT and LT options at the same time are not compatible"
	ErrNoLFUPolicy     = "ERR An LFU maxmemory policy is not selected, access frequency not tracked. Please note that when switching between policies at runtime LRU and LFU data will take some time to adjust."
	ErrLFUPolicy       = "ERR An LFU maxmemory policy is selected, idle time not tracked. Please note that when switching between policies at runtime LRU and LFU data will take some time to adjust."
)
